"""The op-spec table shared by every test file: one row per op.

Each row gives a funcad function of positional array arguments, the NumPy
reference with the same signature, an input generator, and (where one exists)
the same computation written with jax.numpy / jax.lax as an oracle.

Conventions the rows follow, so table-driven tests can rely on them:
- `args(rng, dtype)` returns a tuple of NumPy arrays. Floating inputs get
  `dtype`; integer index arguments (dynamic_slice starts, tracer indices) are
  always int64 and are never differentiated.
- Inputs are small and inside the op's smooth domain: positive for log/sqrt,
  |x| < 1 for atanh/erf_inv, distinct entries (gaps >= 0.3) for max/min/sort,
  away from kinks for abs/clip/remainder. So `diff=True` rows pass
  finite-difference checks at orders 1 and 2.
- `diff=False` marks rows whose output is piecewise constant (comparisons,
  argmax, floor...) or whose gradient is not the derivative of the value
  (stop_gradient); grad checks skip them. Grad checks use the floating dtypes
  of `dtypes` only.
- Outputs are one array, or a tuple of arrays (split, sort with two operands).

>>> from tests.op_table import by_name
>>> import numpy as np
>>> s = by_name("sin")
>>> x, = s.args(np.random.default_rng(0), np.float64)
>>> bool(np.allclose(s.fun(x), s.ref(x)))
True
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

import numpy as np
import scipy.special as sps

import funcad.lax as lax
import funcad.numpy as fnp
from funcad.arrays.indexing import _IndexUpdateHelper, getitem

F = (np.float32, np.float64)
FI = (np.float32, np.float64, np.int32, np.int64)
I = (np.int32, np.int64)
B = (np.bool_,)


@dataclass(frozen=True)
class OpSpec:
    name: str                      # unique test id
    fun: Callable                  # funcad function of positional array args
    ref: Callable                  # NumPy reference with the same signature
    args: Callable                 # args(rng, dtype) -> tuple of np.ndarray inputs
    jax_fun: Callable | None = None  # jax.numpy/jax.lax counterpart (imported lazily), the oracle
    diff: bool = True              # differentiable w.r.t. its float inputs
    dtypes: tuple = F
    rtol: float | None = None      # extra looseness where needed


def _jnp():
    import jax.numpy as jnp
    return jnp


def _jlax():
    import jax.lax as jl
    return jl


def _at(x):
    """`x.at` for tracers and for eager NumPy arrays alike."""
    return _IndexUpdateHelper(x)


# ------------------------------------------------------ input generators ----

def U(*shapes, lo=-2.0, hi=2.0):
    """Uniform floats in [lo, hi), one array per shape (ints/bools for int/bool dtypes)."""
    def gen(rng, dtype):
        dt = np.dtype(dtype)
        if dt.kind == "b":
            return tuple(rng.random(s) > 0.5 for s in shapes)
        if dt.kind in "iu":
            return tuple(rng.integers(max(int(lo), -5) if lo < 0 else 1, max(int(hi), 2) + 3, s).astype(dt)
                         for s in shapes)
        return tuple(rng.uniform(lo, hi, s).astype(dt) for s in shapes)
    return gen


def AWAY(*shapes, lo=0.3, hi=2.0):
    """Floats with |x| in [lo, hi) and random signs: away from the kink at 0."""
    def gen(rng, dtype):
        return tuple((rng.uniform(lo, hi, s) * rng.choice([-1.0, 1.0], s)).astype(dtype) for s in shapes)
    return gen


def DISTINCT(*shapes, gap=0.5):
    """Floats (or ints) that are pairwise distinct, with gaps >= gap across all arrays: no ties."""
    def gen(rng, dtype):
        n = sum(int(np.prod(s)) for s in shapes)
        vals = (rng.permutation(n) - n // 2) * (gap if np.dtype(dtype).kind == "f" else 1)
        if np.dtype(dtype).kind == "f":
            vals = vals + rng.uniform(0, 0.1 * gap)
        out, k = [], 0
        for s in shapes:
            m = int(np.prod(s))
            out.append(vals[k:k + m].reshape(s).astype(dtype))
            k += m
        return tuple(out)
    return gen


def WITH_INT(gen, *ints):
    """Append fixed int64 index arguments to the inputs of `gen`."""
    return lambda rng, dtype: gen(rng, dtype) + tuple(np.array(i, np.int64) for i in ints)


def HALF_EQUAL(shape):
    """Two arrays equal in about half of their entries (for equal/not_equal)."""
    def gen(rng, dtype):
        (a,) = U(shape)(rng, dtype)
        return a, np.where(rng.random(shape) > 0.5, a, a + 1).astype(dtype)
    return gen


def _np_add_at(x, idx, u):
    """NumPy reference of x.at[idx].add(u): unbuffered, so repeated indices accumulate."""
    out = x.copy()
    np.add.at(out, idx, u)
    return out


def _np_set(x, idx, v):
    """NumPy reference of x.at[idx].set(v)."""
    out = x.copy()
    out[idx] = v
    return out


def MASK_ROWS():
    """A (3, 4) float input plus a boolean `which` of shape (3, 4)."""
    def gen(rng, dtype):
        return (rng.random((3, 4)) > 0.5,) + U((3, 4), (3, 4))(rng, dtype)
    return gen


OPS: list[OpSpec] = []


def op(name, fun, ref, args, jax_fun=None, diff=True, dtypes=F, rtol=None):
    OPS.append(OpSpec(name, fun, ref, args, jax_fun, diff, dtypes, rtol))


S3, S23, S234 = (3,), (2, 3), (2, 3, 4)

# ------------------------------------------------------------ unary math ----
# (name, funcad, numpy, jax.numpy attribute, generator, diff)
_UNARY = [
    ("sin", fnp.sin, np.sin, "sin", U(S23), True),
    ("cos", fnp.cos, np.cos, "cos", U(S23), True),
    ("tan", fnp.tan, np.tan, "tan", U(S23, lo=-1.2, hi=1.2), True),
    ("arcsin", fnp.arcsin, np.arcsin, "arcsin", U(S23, lo=-0.8, hi=0.8), True),
    ("arccos", fnp.arccos, np.arccos, "arccos", U(S23, lo=-0.8, hi=0.8), True),
    ("arctan", fnp.arctan, np.arctan, "arctan", U(S23), True),
    ("sinh", fnp.sinh, np.sinh, "sinh", U(S23), True),
    ("cosh", fnp.cosh, np.cosh, "cosh", U(S23), True),
    ("tanh", fnp.tanh, np.tanh, "tanh", U(S23), True),
    ("arcsinh", fnp.arcsinh, np.arcsinh, "arcsinh", U(S23), True),
    ("arccosh", fnp.arccosh, np.arccosh, "arccosh", U(S23, lo=1.2, hi=3.0), True),
    ("arctanh", fnp.arctanh, np.arctanh, "arctanh", U(S23, lo=-0.8, hi=0.8), True),
    ("exp", fnp.exp, np.exp, "exp", U(S23), True),
    ("exp2", fnp.exp2, np.exp2, "exp2", U(S23), True),
    ("expm1", fnp.expm1, np.expm1, "expm1", U(S23), True),
    ("log", fnp.log, np.log, "log", U(S23, lo=0.3, hi=3.0), True),
    ("log1p", fnp.log1p, np.log1p, "log1p", U(S23, lo=-0.7, hi=2.0), True),
    ("log2", fnp.log2, np.log2, "log2", U(S23, lo=0.3, hi=3.0), True),
    ("log10", fnp.log10, np.log10, "log10", U(S23, lo=0.3, hi=3.0), True),
    ("sqrt", fnp.sqrt, np.sqrt, "sqrt", U(S23, lo=0.3, hi=3.0), True),
    ("cbrt", fnp.cbrt, np.cbrt, "cbrt", AWAY(S23), True),
    ("square", fnp.square, np.square, "square", U(S23), True),
    ("reciprocal", fnp.reciprocal, np.reciprocal, "reciprocal", AWAY(S23), True),
    ("negative", fnp.negative, np.negative, "negative", U(S23), True),
    ("positive", fnp.positive, np.positive, "positive", U(S23), True),
    ("abs", fnp.abs, np.abs, "abs", AWAY(S23), True),
    ("sign", fnp.sign, np.sign, "sign", AWAY(S23), False),
    ("floor", fnp.floor, np.floor, "floor", U(S23, lo=-3, hi=3), False),
    ("ceil", fnp.ceil, np.ceil, "ceil", U(S23, lo=-3, hi=3), False),
    ("rint", fnp.rint, np.rint, "rint", U(S23, lo=-3, hi=3), False),
    ("trunc", fnp.trunc, np.trunc, "trunc", U(S23, lo=-3, hi=3), False),
    ("sinc", fnp.sinc, np.sinc, "sinc", AWAY(S23, lo=0.2, hi=0.9), True),
    ("deg2rad", fnp.deg2rad, np.deg2rad, "deg2rad", U(S23), True),
    ("rad2deg", fnp.rad2deg, np.rad2deg, "rad2deg", U(S23), True),
]
for _n, _f, _r, _j, _g, _d in _UNARY:
    op(_n, _f, _r, _g, (lambda j: lambda x: getattr(_jnp(), j)(x))(_j), _d)

op("isfinite", fnp.isfinite, np.isfinite, U(S23), lambda x: _jnp().isfinite(x), diff=False)
op("isnan", lambda x: fnp.isnan(fnp.log(x)), lambda x: np.isnan(np.log(x)), U(S23, lo=0.5),
   lambda x: _jnp().isnan(_jnp().log(x)), diff=False)
op("isinf", fnp.isinf, np.isinf, U(S23), lambda x: _jnp().isinf(x), diff=False)
op("round_decimals", lambda x: fnp.round(x, 1), lambda x: np.round(x, 1), U(S23),
   lambda x: _jnp().round(x, 1), diff=False)
op("abs_int", fnp.abs, np.abs, U(S23), lambda x: _jnp().abs(x), diff=False, dtypes=I)
op("negative_int", fnp.negative, np.negative, U(S23), lambda x: _jnp().negative(x), diff=False, dtypes=I)

# lax-only unary primitives
op("lax_logistic", lax.logistic, sps.expit, U(S23), lambda x: _jlax().logistic(x))
op("lax_rsqrt", lax.rsqrt, lambda x: 1 / np.sqrt(x), U(S23, lo=0.3, hi=3.0), lambda x: _jlax().rsqrt(x))
op("lax_erf", lax.erf, sps.erf, U(S23), lambda x: _jlax().erf(x))
op("lax_erf_inv", lax.erf_inv, sps.erfinv, U(S23, lo=-0.8, hi=0.8), lambda x: _jlax().erf_inv(x), rtol=1e-4)
op("lax_lgamma", lax.lgamma, sps.gammaln, U(S23, lo=0.5, hi=4.0), lambda x: _jlax().lgamma(x), rtol=1e-4)
op("lax_digamma", lax.digamma, sps.digamma, U(S23, lo=0.5, hi=4.0), lambda x: _jlax().digamma(x), rtol=1e-4)
op("lax_polygamma1", lambda x: lax.polygamma(1, x), lambda x: sps.polygamma(1, x).astype(x.dtype),
   U(S23, lo=0.5, hi=4.0), lambda x: _jax_polygamma(1, x), rtol=1e-4)
op("lax_integer_pow3", lambda x: lax.integer_pow(x, 3), lambda x: x ** 3, U(S23),
   lambda x: _jlax().integer_pow(x, 3))
op("lax_integer_pow_neg2", lambda x: lax.integer_pow(x, -2), lambda x: x ** -2.0, AWAY(S23, lo=0.5),
   lambda x: _jlax().integer_pow(x, -2))
op("lax_integer_pow0", lambda x: lax.integer_pow(x, 0), lambda x: x ** 0, U(S23),
   lambda x: _jlax().integer_pow(x, 0))
op("lax_exp2", lax.exp2, np.exp2, U(S23), lambda x: _jlax().exp2(x))
op("lax_round", lax.round, np.rint, U(S23, lo=-3, hi=3), None, diff=False)
op("lax_sign", lax.sign, np.sign, AWAY(S23), lambda x: _jlax().sign(x), diff=False)
op("lax_is_finite", lax.is_finite, np.isfinite, U(S23), lambda x: _jlax().is_finite(x), diff=False)
op("lax_tan", lax.tan, np.tan, U(S23, lo=-1.2, hi=1.2), lambda x: _jlax().tan(x))
op("lax_neg", lax.neg, np.negative, U(S23), lambda x: _jlax().neg(x))


def _jax_polygamma(m, x):
    import jax.scipy.special as jss
    return jss.polygamma(m, x)


# ----------------------------------------------------------------- binary ----
_BINARY = [
    ("add", fnp.add, np.add, "add", U(S23, S23), True, FI),
    ("subtract", fnp.subtract, np.subtract, "subtract", U(S23, S23), True, FI),
    ("multiply", fnp.multiply, np.multiply, "multiply", U(S23, S23), True, FI),
    ("divide", fnp.divide, np.divide, "divide", lambda r, d: U(S23)(r, d) + AWAY(S23)(r, d), True, F),
    ("power", fnp.power, np.power, "power", lambda r, d: U(S23, lo=0.5, hi=2.0)(r, d) + U(S23)(r, d), True, F),
    ("maximum", fnp.maximum, np.maximum, "maximum", DISTINCT(S23, S23), True, FI),
    ("minimum", fnp.minimum, np.minimum, "minimum", DISTINCT(S23, S23), True, FI),
    ("hypot", fnp.hypot, np.hypot, "hypot", AWAY(S23, S23), True, F),
    ("logaddexp", fnp.logaddexp, np.logaddexp, "logaddexp", U(S23, S23), True, F),
    ("logaddexp2", fnp.logaddexp2, np.logaddexp2, "logaddexp2", U(S23, S23), True, F),
    ("arctan2", fnp.arctan2, np.arctan2, "arctan2", AWAY(S23, S23), True, F),
    # x/y stays in (1.09, 1.8): one branch of the sawtooth, away from its jumps.
    ("remainder", fnp.remainder, np.remainder, "remainder",
     lambda r, d: U(S23, lo=1.2, hi=1.8)(r, d) + U(S23, lo=1.0, hi=1.1)(r, d), True, F),
    ("fmod", fnp.fmod, np.fmod, "fmod",
     lambda r, d: U(S23, lo=1.2, hi=1.8)(r, d) + U(S23, lo=1.0, hi=1.1)(r, d), True, F),
    ("floor_divide", fnp.floor_divide, np.floor_divide, "floor_divide",
     lambda r, d: U(S23, lo=1.2, hi=5.0)(r, d) + U(S23, lo=1.0, hi=1.1)(r, d), False, F),
    ("copysign", fnp.copysign, np.copysign, "copysign", AWAY(S23, S23), True, F),
    ("heaviside", fnp.heaviside, np.heaviside, "heaviside", AWAY(S23, S23), False, F),
    ("equal", fnp.equal, np.equal, "equal", HALF_EQUAL(S23), False, FI),
    ("not_equal", fnp.not_equal, np.not_equal, "not_equal", HALF_EQUAL(S23), False, FI),
    ("less", fnp.less, np.less, "less", DISTINCT(S23, S23), False, FI),
    ("less_equal", fnp.less_equal, np.less_equal, "less_equal", DISTINCT(S23, S23), False, FI),
    ("greater", fnp.greater, np.greater, "greater", DISTINCT(S23, S23), False, FI),
    ("greater_equal", fnp.greater_equal, np.greater_equal, "greater_equal", DISTINCT(S23, S23), False, FI),
]
for _n, _f, _r, _j, _g, _d, _t in _BINARY:
    op(_n, _f, _r, _g, (lambda j: lambda x, y: getattr(_jnp(), j)(x, y))(_j), _d, _t)

# NumPy's float_power always computes in float64; JAX's keeps float32, so the oracle casts first.
op("float_power", fnp.float_power, np.float_power, lambda r, d: U(S23, lo=0.5, hi=2.0)(r, d) + U(S23)(r, d),
   lambda x, y: _jnp().float_power(_jnp().asarray(x, np.float64), _jnp().asarray(y, np.float64)))
op("add_broadcast", fnp.add, np.add, U((2, 3), (3,)), lambda x, y: _jnp().add(x, y), dtypes=FI)
op("multiply_broadcast", fnp.multiply, np.multiply, U((2, 1), (1, 3)), lambda x, y: _jnp().multiply(x, y))
op("subtract_broadcast_3d", fnp.subtract, np.subtract, U((2, 1, 4), (3, 1)), lambda x, y: _jnp().subtract(x, y))
op("mul_weak_scalar", lambda x: x * 2.5 + 1, lambda x: x * 2.5 + 1, U(S23), lambda x: x * 2.5 + 1)
op("rsub_weak_scalar", lambda x: 1.5 - x / 3, lambda x: 1.5 - x / 3, U(S23), lambda x: 1.5 - x / 3)
op("pow_scalar2", lambda x: x ** 2, lambda x: x ** 2, U(S23), lambda x: x ** 2)
op("rpow_scalar", lambda x: 2.0 ** x, lambda x: 2.0 ** x, U(S23), lambda x: 2.0 ** x)
op("power_int", fnp.power, np.power,
   lambda r, d: (r.integers(-3, 4, S23).astype(d), r.integers(0, 4, S23).astype(d)),
   lambda x, y: _jnp().power(x, y), diff=False, dtypes=I)
op("pow_half", lambda x: fnp.power(x, 0.5), lambda x: np.power(x, 0.5), U(S23, lo=0.3, hi=3.0),
   lambda x: _jnp().power(x, 0.5))
op("mixed_f32_f64", lambda x, y: x * y.astype(np.float64), lambda x, y: x * y.astype(np.float64), U(S23, S23),
   lambda x, y: x * y.astype(_jnp().float64), dtypes=(np.float32,))
op("int_plus_float", lambda x, y: fnp.add(x.astype(np.int32), y), lambda x, y: np.add(x.astype(np.int32), y),
   U(S23, S23, lo=-3, hi=3),  # NumPy: int32 + float32 -> float64; JAX would keep float32
   lambda x, y: _jnp().add(x.astype(np.int32).astype(np.result_type(np.int32, y.dtype)),
                           y.astype(np.result_type(np.int32, y.dtype))))

op("lax_max", lax.max, np.maximum, DISTINCT(S23, S23), lambda x, y: _jlax().max(x, y), dtypes=FI)
op("lax_min", lax.min, np.minimum, DISTINCT(S23, S23), lambda x, y: _jlax().min(x, y), dtypes=FI)
op("lax_rem", lax.rem, np.fmod, lambda r, d: U(S23, lo=1.2, hi=1.8)(r, d) + U(S23, lo=1.0, hi=1.1)(r, d),
   lambda x, y: _jlax().rem(x, y))
op("lax_pow", lax.pow, np.power, lambda r, d: U(S23, lo=0.5, hi=2.0)(r, d) + U(S23)(r, d),
   lambda x, y: _jlax().pow(x, y))
# An integer exponent with a float base (JAX converts it to the base's dtype); the exponent is
# closed over, so the derivatives are in the base.
_POW_EXP = np.array([[0, 1, -2], [3, 2, -1]], np.int32)
op("lax_pow_int_exponent", lambda x: lax.pow(x, _POW_EXP), lambda x: x ** _POW_EXP.astype(x.dtype),
   AWAY(S23, lo=0.5), lambda x: _jlax().pow(x, _POW_EXP))
op("lax_atan2", lax.atan2, np.arctan2, AWAY(S23, S23), lambda x, y: _jlax().atan2(x, y))
op("lax_div_int", lax.div, lambda x, y: (np.sign(x) * np.sign(y) * (np.abs(x) // np.abs(y))).astype(x.dtype),
   lambda r, d: (r.integers(-9, 10, S23).astype(d), (r.integers(1, 4, S23) * r.choice([-1, 1], S23)).astype(d)),
   lambda x, y: _jlax().div(x, y), diff=False, dtypes=I)

# ---------------------------------------------------------------- logical ----
op("logical_and", fnp.logical_and, np.logical_and, U(S23, S23), lambda x, y: _jnp().logical_and(x, y), False, B)
op("logical_or", fnp.logical_or, np.logical_or, U(S23, S23), lambda x, y: _jnp().logical_or(x, y), False, B)
op("logical_xor", fnp.logical_xor, np.logical_xor, U(S23, S23), lambda x, y: _jnp().logical_xor(x, y), False, B)
op("logical_not", fnp.logical_not, np.logical_not, U(S23), lambda x: _jnp().logical_not(x), False, B)
op("logical_and_float", fnp.logical_and, np.logical_and, AWAY(S23, S23),
   lambda x, y: _jnp().logical_and(x, y), False)
op("bitwise_and", fnp.bitwise_and, np.bitwise_and, U(S23, S23), lambda x, y: _jnp().bitwise_and(x, y), False, I + B)
op("bitwise_or", fnp.bitwise_or, np.bitwise_or, U(S23, S23), lambda x, y: _jnp().bitwise_or(x, y), False, I + B)
op("bitwise_xor", fnp.bitwise_xor, np.bitwise_xor, U(S23, S23), lambda x, y: _jnp().bitwise_xor(x, y), False, I + B)
op("invert", fnp.invert, np.invert, U(S23), lambda x: _jnp().invert(x), False, I + B)

# ---------------------------------------------------- select, clamp, cast ----
op("where", lambda x, y: fnp.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y), AWAY(S23, S23),
   lambda x, y: _jnp().where(x > 0, x, y), dtypes=FI)
op("where_scalar_branch", lambda x: fnp.where(x > 0, x, 0.0), lambda x: np.where(x > 0, x, 0.0).astype(x.dtype),
   AWAY(S23), lambda x: _jnp().where(x > 0, x, 0.0))
op("where_broadcast", lambda x, y: fnp.where(x > 0, x, y), lambda x, y: np.where(x > 0, x, y),
   lambda r, d: AWAY((2, 3))(r, d) + U((3,))(r, d), lambda x, y: _jnp().where(x > 0, x, y))
op("lax_select_n_bool", lambda w, x, y: lax.select_n(w, x, y), lambda w, x, y: np.where(w, y, x), MASK_ROWS(),
   lambda w, x, y: _jlax().select_n(w, x, y))
op("lax_select_n_int3", lambda x, y, z: lax.select_n(np.array([[0, 1, 2], [2, 1, 0]], np.int32), x, y, z),
   lambda x, y, z: np.choose(np.array([[0, 1, 2], [2, 1, 0]]), (x, y, z)), U(S23, S23, S23),
   lambda x, y, z: _jlax().select_n(_jnp().array([[0, 1, 2], [2, 1, 0]], _jnp().int32), x, y, z))
op("clip", lambda x: fnp.clip(x, -0.5, 0.5), lambda x: np.clip(x, -0.5, 0.5),
   lambda r, d: ((r.uniform(0.7, 2.0, S23) * r.choice([-1, 1], S23) * (r.random(S23) > 0.5)
                  + r.uniform(-0.4, 0.4, S23)).astype(d),),
   lambda x: _jnp().clip(x, -0.5, 0.5))
op("clip_arrays", lambda x, lo, hi: fnp.clip(x, lo, hi), lambda x, lo, hi: np.clip(x, lo, hi),
   lambda r, d: (np.array([-2.0, 0.1, 2.0], d), np.array([-1.0, -1.0, -1.0], d), np.array([1.0, 1.0, 1.0], d)),
   lambda x, lo, hi: _jnp().clip(x, lo, hi))
op("lax_clamp", lambda x: lax.clamp(np.array(-0.5, x.dtype), x, np.array(0.5, x.dtype)),
   lambda x: np.clip(x, -0.5, 0.5), lambda r, d: (np.array([-1.3, -0.2, 0.3, 0.9, 0.1, -0.7], d).reshape(2, 3),),
   lambda x: _jlax().clamp(_jnp().array(-0.5, x.dtype), x, _jnp().array(0.5, x.dtype)))
op("astype_f64", lambda x: fnp.astype(x, np.float64), lambda x: x.astype(np.float64), U(S23),
   lambda x: x.astype(_jnp().float64))
op("astype_f32", lambda x: fnp.astype(x, np.float32), lambda x: x.astype(np.float32), U(S23),
   lambda x: x.astype(_jnp().float32), rtol=1e-2)  # float32 output: finite differences are coarse
op("astype_int32", lambda x: fnp.astype(x, np.int32), lambda x: x.astype(np.int32), U(S23, lo=-3, hi=3),
   lambda x: x.astype(_jnp().int32), diff=False)
op("astype_bool", lambda x: fnp.astype(x, np.bool_), lambda x: x.astype(np.bool_), AWAY(S23),
   lambda x: x.astype(_jnp().bool_), diff=False)
op("int_to_float", lambda x: fnp.astype(x, np.float32), lambda x: x.astype(np.float32), U(S23),
   lambda x: x.astype(_jnp().float32), diff=False, dtypes=I + B)
op("lax_convert_element_type", lambda x: lax.convert_element_type(x, np.float32), lambda x: x.astype(np.float32),
   U(S23), lambda x: _jlax().convert_element_type(x, _jnp().float32), rtol=1e-2)
op("stop_gradient", lambda x: x * lax.stop_gradient(x), lambda x: x * x, U(S23),
   lambda x: x * _jlax().stop_gradient(x), diff=False)

# -------------------------------------------------------------- structural ----
op("lax_broadcast_in_dim", lambda x: lax.broadcast_in_dim(x, (2, 3, 4), (1,)),
   lambda x: np.broadcast_to(x[None, :, None], (2, 3, 4)), U(S3),
   lambda x: _jlax().broadcast_in_dim(x, (2, 3, 4), (1,)))
op("broadcast_to", lambda x: fnp.broadcast_to(x, (2, 2, 3)), lambda x: np.broadcast_to(x, (2, 2, 3)), U((2, 1, 3)),
   lambda x: _jnp().broadcast_to(x, (2, 2, 3)))
op("lax_reshape", lambda x: lax.reshape(x, (3, 2)), lambda x: x.reshape(3, 2), U(S23),
   lambda x: _jlax().reshape(x, (3, 2)))
op("reshape_neg1", lambda x: fnp.reshape(x, (4, -1)), lambda x: x.reshape(4, -1), U(S234),
   lambda x: _jnp().reshape(x, (4, -1)))
op("ravel", fnp.ravel, np.ravel, U(S234), lambda x: _jnp().ravel(x))
op("lax_transpose", lambda x: lax.transpose(x, (2, 0, 1)), lambda x: x.transpose(2, 0, 1), U(S234),
   lambda x: _jlax().transpose(x, (2, 0, 1)))
op("transpose", fnp.transpose, np.transpose, U(S234), lambda x: _jnp().transpose(x))
op("swapaxes", lambda x: fnp.swapaxes(x, 0, 2), lambda x: np.swapaxes(x, 0, 2), U(S234),
   lambda x: _jnp().swapaxes(x, 0, 2))
op("moveaxis", lambda x: fnp.moveaxis(x, 0, -1), lambda x: np.moveaxis(x, 0, -1), U(S234),
   lambda x: _jnp().moveaxis(x, 0, -1))
op("lax_squeeze", lambda x: lax.squeeze(x, (1,)), lambda x: x.squeeze(1), U((2, 1, 3)),
   lambda x: _jlax().squeeze(x, (1,)))
op("squeeze", fnp.squeeze, np.squeeze, U((1, 3, 1)), lambda x: _jnp().squeeze(x))
op("lax_expand_dims", lambda x: lax.expand_dims(x, (0, 2)), lambda x: np.expand_dims(x, (0, 2)), U(S23),
   lambda x: _jlax().expand_dims(x, (0, 2)))
op("expand_dims", lambda x: fnp.expand_dims(x, -1), lambda x: np.expand_dims(x, -1), U(S23),
   lambda x: _jnp().expand_dims(x, -1))
op("lax_rev", lambda x: lax.rev(x, (0, 2)), lambda x: x[::-1, :, ::-1], U(S234), lambda x: _jlax().rev(x, (0, 2)))
op("flip", lambda x: fnp.flip(x, 1), lambda x: np.flip(x, 1), U(S23), lambda x: _jnp().flip(x, 1))
op("flip_all", fnp.flip, np.flip, U(S23), lambda x: _jnp().flip(x))
op("fliplr", fnp.fliplr, np.fliplr, U(S23), lambda x: _jnp().fliplr(x))
op("flipud", fnp.flipud, np.flipud, U(S23), lambda x: _jnp().flipud(x))
op("roll", lambda x: fnp.roll(x, 2, axis=1), lambda x: np.roll(x, 2, axis=1), U(S234),
   lambda x: _jnp().roll(x, 2, axis=1))
op("roll_flat", lambda x: fnp.roll(x, -1), lambda x: np.roll(x, -1), U(S23), lambda x: _jnp().roll(x, -1))
op("atleast_2d", fnp.atleast_2d, np.atleast_2d, U(S3), lambda x: _jnp().atleast_2d(x))


def _np_pad(x, v, config):
    """NumPy reference of lax.pad with (low, high, interior) triples (negative low/high crop)."""
    for d, (lo, hi, it) in enumerate(config):
        n = x.shape[d]
        if it and n:
            shape = list(x.shape)
            shape[d] = n + (n - 1) * it
            y = np.full(shape, v, x.dtype)
            y[(slice(None),) * d + (slice(None, None, it + 1),)] = x
            x = y
        parts = []
        if lo > 0:
            parts.append(np.full(x.shape[:d] + (lo,) + x.shape[d + 1:], v, x.dtype))
        parts.append(x[(slice(None),) * d + (slice(max(-lo, 0), x.shape[d] - max(-hi, 0)),)])
        if hi > 0:
            parts.append(np.full(x.shape[:d] + (hi,) + x.shape[d + 1:], v, x.dtype))
        x = np.concatenate(parts, d)
    return x


op("lax_pad", lambda x, v: lax.pad(x, v, ((1, 2, 0), (0, 1, 1))),
   lambda x, v: _np_pad(x, v, ((1, 2, 0), (0, 1, 1))), lambda r, d: U(S23)(r, d) + U(())(r, d),
   lambda x, v: _jlax().pad(x, v, ((1, 2, 0), (0, 1, 1))))
op("lax_pad_negative", lambda x, v: lax.pad(x, v, ((-1, 1, 0), (1, -2, 1))),
   lambda x, v: _np_pad(x, v, ((-1, 1, 0), (1, -2, 1))), lambda r, d: U(S23)(r, d) + U(())(r, d),
   lambda x, v: _jlax().pad(x, v, ((-1, 1, 0), (1, -2, 1))))
op("lax_concatenate", lambda x, y: lax.concatenate([x, y], 0), lambda x, y: np.concatenate([x, y], 0),
   U((2, 3), (1, 3)), lambda x, y: _jlax().concatenate([x, y], 0))
op("concatenate", lambda x, y: fnp.concatenate([x, y], axis=1), lambda x, y: np.concatenate([x, y], axis=1),
   U((2, 3), (2, 2)), lambda x, y: _jnp().concatenate([x, y], axis=1))
op("concatenate_none", lambda x, y: fnp.concatenate([x, y], axis=None),
   lambda x, y: np.concatenate([x, y], axis=None), U((2, 3), (4,)),
   lambda x, y: _jnp().concatenate([x, y], axis=None))
op("stack", lambda x, y: fnp.stack([x, y], axis=1), lambda x, y: np.stack([x, y], axis=1), U(S23, S23),
   lambda x, y: _jnp().stack([x, y], axis=1))
op("hstack", lambda x, y: fnp.hstack([x, y]), lambda x, y: np.hstack([x, y]), U(S3, (2,)),
   lambda x, y: _jnp().hstack([x, y]))
op("vstack", lambda x, y: fnp.vstack([x, y]), lambda x, y: np.vstack([x, y]), U(S3, S3),
   lambda x, y: _jnp().vstack([x, y]))
op("column_stack", lambda x, y: fnp.column_stack([x, y]), lambda x, y: np.column_stack([x, y]), U(S3, S3),
   lambda x, y: _jnp().column_stack([x, y]))
op("split", lambda x: tuple(fnp.split(x, 3, axis=1)), lambda x: tuple(np.split(x, 3, axis=1)), U((2, 6)),
   lambda x: tuple(_jnp().split(x, 3, axis=1)))
op("split_sections", lambda x: tuple(fnp.split(x, [1, 3])), lambda x: tuple(np.split(x, [1, 3])), U((5, 2)),
   lambda x: tuple(_jnp().split(x, [1, 3])))
op("array_split", lambda x: tuple(fnp.array_split(x, 3)), lambda x: tuple(np.array_split(x, 3)), U((7,)),
   lambda x: tuple(_jnp().array_split(x, 3)))
op("tile", lambda x: fnp.tile(x, (2, 1, 2)), lambda x: np.tile(x, (2, 1, 2)), U(S23),
   lambda x: _jnp().tile(x, (2, 1, 2)))
op("repeat", lambda x: fnp.repeat(x, 2, axis=1), lambda x: np.repeat(x, 2, axis=1), U(S23),
   lambda x: _jnp().repeat(x, 2, axis=1))
op("repeat_flat", lambda x: fnp.repeat(x, 3), lambda x: np.repeat(x, 3), U(S23), lambda x: _jnp().repeat(x, 3))
op("diag_vec", fnp.diag, np.diag, U(S3), lambda x: _jnp().diag(x))
op("diag_mat", fnp.diag, np.diag, U((3, 3)), lambda x: _jnp().diag(x))
op("diag_offset", lambda x: fnp.diag(x, 1), lambda x: np.diag(x, 1), U((3, 4)), lambda x: _jnp().diag(x, 1))
op("diagonal", lambda x: fnp.diagonal(x, -1, 1, 2), lambda x: np.diagonal(x, -1, 1, 2), U(S234),
   lambda x: _jnp().diagonal(x, -1, 1, 2))
op("trace", fnp.trace, np.trace, U((3, 3)), lambda x: _jnp().trace(x))
op("tril", fnp.tril, np.tril, U((3, 4)), lambda x: _jnp().tril(x))
op("triu", lambda x: fnp.triu(x, 1), lambda x: np.triu(x, 1), U((3, 4)), lambda x: _jnp().triu(x, 1))
op("lax_iota", lambda x: x * lax.iota(x.dtype, (2, 3), 1), lambda x: x * np.arange(3, dtype=x.dtype), U(S23),
   lambda x: x * _jlax().broadcasted_iota(x.dtype, (2, 3), 1))
op("arange_mul", lambda x: x * fnp.arange(3.0), lambda x: x * np.arange(3.0), U(S23),
   lambda x: x * _jnp().arange(3.0), dtypes=(np.float64,))
op("eye_mul", lambda x: fnp.eye(3, dtype=x.dtype) @ x, lambda x: np.eye(3, dtype=x.dtype) @ x, U((3, 2)),
   lambda x: _jnp().eye(3, dtype=x.dtype) @ x)
op("zeros_like_plus", lambda x: fnp.zeros_like(x) + fnp.ones_like(x) * x, lambda x: x, U(S23),
   lambda x: _jnp().zeros_like(x) + _jnp().ones_like(x) * x)

# -------------------------------------------------------------- reductions ----
op("lax_reduce_sum", lambda x: lax.reduce_sum(x, (0, 2)), lambda x: x.sum((0, 2), dtype=x.dtype), U(S234),
   lambda x: _jnp().sum(x, (0, 2), dtype=x.dtype), dtypes=FI)
op("lax_reduce_max", lambda x: lax.reduce_max(x, (1,)), lambda x: x.max(1), DISTINCT(S234),
   lambda x: _jnp().max(x, 1), dtypes=FI)
op("lax_reduce_min", lambda x: lax.reduce_min(x, (0, 1)), lambda x: x.min((0, 1)), DISTINCT(S234),
   lambda x: _jnp().min(x, (0, 1)), dtypes=FI)
op("lax_reduce_prod", lambda x: lax.reduce_prod(x, (1,)), lambda x: x.prod(1), AWAY(S234, lo=0.5, hi=1.5),
   lambda x: _jnp().prod(x, 1))
op("sum", fnp.sum, np.sum, U(S234), lambda x: _jnp().sum(x), dtypes=FI)
op("sum_axis_keepdims", lambda x: fnp.sum(x, axis=-1, keepdims=True), lambda x: np.sum(x, axis=-1, keepdims=True),
   U(S234), lambda x: _jnp().sum(x, axis=-1, keepdims=True))
op("sum_bool", lambda x: fnp.sum(x > 0), lambda x: np.sum(x > 0), U(S23), lambda x: _jnp().sum(x > 0), diff=False)
op("prod", lambda x: fnp.prod(x, axis=0), lambda x: np.prod(x, axis=0), AWAY(S234, lo=0.5, hi=1.5),
   lambda x: _jnp().prod(x, axis=0))
op("prod_all", fnp.prod, np.prod, AWAY(S23, lo=0.5, hi=1.5), lambda x: _jnp().prod(x))
op("max", lambda x: fnp.max(x, axis=1), lambda x: np.max(x, axis=1), DISTINCT(S234), lambda x: _jnp().max(x, axis=1),
   dtypes=FI)
op("max_all", fnp.max, np.max, DISTINCT(S23), lambda x: _jnp().max(x))
op("min_keepdims", lambda x: fnp.min(x, axis=(0, 2), keepdims=True),
   lambda x: np.min(x, axis=(0, 2), keepdims=True), DISTINCT(S234),
   lambda x: _jnp().min(x, axis=(0, 2), keepdims=True))
op("amax", lambda x: fnp.amax(x, 0), lambda x: np.amax(x, 0), DISTINCT(S23), lambda x: _jnp().amax(x, 0))
op("mean", fnp.mean, np.mean, U(S234), lambda x: _jnp().mean(x))
op("mean_axis", lambda x: fnp.mean(x, axis=(0, 2)), lambda x: np.mean(x, axis=(0, 2)), U(S234),
   lambda x: _jnp().mean(x, axis=(0, 2)))
# JAX's dtype table: integers up to 32 bits average in float32, int64 in float64.
op("mean_int", fnp.mean, lambda x: np.mean(x, dtype=np.float32 if x.dtype.itemsize < 8 else np.float64), U(S23),
   lambda x: _jnp().mean(x), diff=False, dtypes=I)
op("var", fnp.var, np.var, U(S234), lambda x: _jnp().var(x))
op("var_axis_ddof", lambda x: fnp.var(x, axis=1, ddof=1), lambda x: np.var(x, axis=1, ddof=1), U(S234),
   lambda x: _jnp().var(x, axis=1, ddof=1))
op("std", lambda x: fnp.std(x, axis=0), lambda x: np.std(x, axis=0), U(S234), lambda x: _jnp().std(x, axis=0))
op("logsumexp", fnp.logsumexp, lambda x: sps.logsumexp(x).astype(x.dtype), U(S234),
   lambda x: _jax_logsumexp(x))
op("logsumexp_axis", lambda x: fnp.logsumexp(x, axis=1), lambda x: sps.logsumexp(x, axis=1).astype(x.dtype),
   U(S234), lambda x: _jax_logsumexp(x, axis=1))
op("all", lambda x: fnp.all(x > -1.5, axis=1), lambda x: np.all(x > -1.5, axis=1), U(S234),
   lambda x: _jnp().all(x > -1.5, axis=1), diff=False)
op("any", lambda x: fnp.any(x > 1.5), lambda x: np.any(x > 1.5), U(S234), lambda x: _jnp().any(x > 1.5), diff=False)
op("argmax", lambda x: fnp.argmax(x, axis=1), lambda x: np.argmax(x, axis=1), DISTINCT(S234),
   lambda x: _jnp().argmax(x, axis=1), diff=False, dtypes=FI)
op("argmin_flat", fnp.argmin, np.argmin, DISTINCT(S23), lambda x: _jnp().argmin(x), diff=False)
op("lax_argmax", lambda x: lax.argmax(x, 0), lambda x: np.argmax(x, 0), DISTINCT(S23),
   lambda x: _jnp().argmax(x, 0), diff=False)
op("lax_argmin", lambda x: lax.argmin(x, 1), lambda x: np.argmin(x, 1), DISTINCT(S23),
   lambda x: _jnp().argmin(x, 1), diff=False)
op("lax_cumsum", lambda x: lax.cumsum(x, 1), lambda x: np.cumsum(x, 1, dtype=x.dtype), U(S234),
   lambda x: _jlax().cumsum(x, 1), dtypes=FI)
op("lax_cumsum_reverse", lambda x: lax.cumsum(x, 0, reverse=True), lambda x: np.cumsum(x[::-1], 0)[::-1],
   U(S23), lambda x: _jlax().cumsum(x, 0, reverse=True))
op("lax_cumprod", lambda x: lax.cumprod(x, 1), lambda x: np.cumprod(x, 1), AWAY(S234, lo=0.5, hi=1.5),
   lambda x: _jlax().cumprod(x, 1))
op("lax_cummax", lambda x: lax.cummax(x, 1), lambda x: np.maximum.accumulate(x, 1), DISTINCT(S234),
   lambda x: _jlax().cummax(x, 1))
op("lax_cummin", lambda x: lax.cummin(x, 0), lambda x: np.minimum.accumulate(x, 0), DISTINCT(S234),
   lambda x: _jlax().cummin(x, 0))
op("lax_cummax_reverse", lambda x: lax.cummax(x, 1, reverse=True),
   lambda x: np.maximum.accumulate(x[:, ::-1], 1)[:, ::-1], DISTINCT(S23),
   lambda x: _jlax().cummax(x, 1, reverse=True))
op("cumsum", lambda x: fnp.cumsum(x, axis=0), lambda x: np.cumsum(x, axis=0), U(S23),
   lambda x: _jnp().cumsum(x, axis=0))
op("cumsum_flat", fnp.cumsum, np.cumsum, U(S23), lambda x: _jnp().cumsum(x))
op("cumprod", lambda x: fnp.cumprod(x, axis=1), lambda x: np.cumprod(x, axis=1), AWAY(S23, lo=0.5, hi=1.5),
   lambda x: _jnp().cumprod(x, axis=1))
op("norm", fnp.linalg.norm, np.linalg.norm, U(S3), lambda x: _jnp().linalg.norm(x))
op("norm_fro", fnp.linalg.norm, np.linalg.norm, U(S23), lambda x: _jnp().linalg.norm(x))
op("norm_ord1_axis", lambda x: fnp.linalg.norm(x, 1, axis=1), lambda x: np.linalg.norm(x, 1, axis=1),
   AWAY(S23), lambda x: _jnp().linalg.norm(x, 1, axis=1))
op("norm_inf", lambda x: fnp.linalg.norm(x, np.inf), lambda x: np.linalg.norm(x, np.inf), DISTINCT(S3),
   lambda x: _jnp().linalg.norm(x, _jnp().inf))
op("norm_p3", lambda x: fnp.linalg.norm(x, 3), lambda x: np.linalg.norm(x, 3), AWAY(S3),
   lambda x: _jnp().linalg.norm(x, 3))
op("norm_matrix_1", lambda x: fnp.linalg.norm(x, 1), lambda x: np.linalg.norm(x, 1),
   lambda r, d: (np.array([[1.0, -2.0, 0.5], [3.0, 0.25, -1.0]], d),), lambda x: _jnp().linalg.norm(x, 1))


def _jax_logsumexp(x, axis=None):
    import jax.scipy.special as jss
    return jss.logsumexp(x, axis=axis)


# -------------------------------------------------------------- contraction ----
op("lax_dot_general", lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ()))), np.dot, U((2, 3), (3, 4)),
   lambda x, y: _jlax().dot_general(x, y, (((1,), (0,)), ((), ()))))
op("lax_dot_general_batch", lambda x, y: lax.dot_general(x, y, (((2,), (1,)), ((0,), (0,)))), np.matmul,
   U((2, 3, 4), (2, 4, 2)), lambda x, y: _jlax().dot_general(x, y, (((2,), (1,)), ((0,), (0,)))))
op("lax_dot_general_odd", lambda x, y: lax.dot_general(x, y, (((0, 2), (2, 1)), ((1,), (0,)))),
   lambda x, y: np.einsum("abc,bcad->bd", x, y), U((2, 3, 4), (3, 4, 2, 2)),
   lambda x, y: _jlax().dot_general(x, y, (((0, 2), (2, 1)), ((1,), (0,)))))
op("matmul_2d", fnp.matmul, np.matmul, U((2, 3), (3, 4)), lambda x, y: _jnp().matmul(x, y), dtypes=FI)
op("matmul_batched", fnp.matmul, np.matmul, U((2, 2, 3), (3, 4)), lambda x, y: _jnp().matmul(x, y))
op("matmul_broadcast_batch", fnp.matmul, np.matmul, U((2, 1, 2, 3), (3, 3, 2)), lambda x, y: _jnp().matmul(x, y))
op("matvec", fnp.matmul, np.matmul, U((2, 3), (3,)), lambda x, y: _jnp().matmul(x, y))
op("vecmat", fnp.matmul, np.matmul, U((3,), (3, 2)), lambda x, y: _jnp().matmul(x, y))
op("matmul_operator", lambda x, y: x @ y, lambda x, y: x @ y, U((2, 3), (3, 2)), lambda x, y: x @ y)
op("dot_1d", fnp.dot, np.dot, U(S3, S3), lambda x, y: _jnp().dot(x, y))
op("dot_nd", fnp.dot, np.dot, U((2, 3), (2, 3, 2)), lambda x, y: _jnp().dot(x, y))
op("vdot", fnp.vdot, np.vdot, U(S23, S23), lambda x, y: _jnp().vdot(x, y))
op("inner", fnp.inner, np.inner, U((2, 3), (4, 3)), lambda x, y: _jnp().inner(x, y))
op("outer", fnp.outer, np.outer, U(S3, (2,)), lambda x, y: _jnp().outer(x, y))
op("tensordot", lambda x, y: fnp.tensordot(x, y, axes=([1, 2], [0, 1])),
   lambda x, y: np.tensordot(x, y, axes=([1, 2], [0, 1])), U((2, 3, 4), (3, 4, 2)),
   lambda x, y: _jnp().tensordot(x, y, axes=([1, 2], [0, 1])))
op("tensordot_int", lambda x, y: fnp.tensordot(x, y, 1), lambda x, y: np.tensordot(x, y, 1), U((2, 3), (3, 2)),
   lambda x, y: _jnp().tensordot(x, y, 1))
op("einsum_matmul", lambda x, y: fnp.einsum("ij,jk->ik", x, y), lambda x, y: np.einsum("ij,jk->ik", x, y),
   U((2, 3), (3, 4)), lambda x, y: _jnp().einsum("ij,jk->ik", x, y))
op("einsum_batch", lambda x, y: fnp.einsum("bij,bjk->bik", x, y), lambda x, y: np.einsum("bij,bjk->bik", x, y),
   U((2, 2, 3), (2, 3, 2)), lambda x, y: _jnp().einsum("bij,bjk->bik", x, y))
op("einsum_trace", lambda x: fnp.einsum("ii->", x), lambda x: np.einsum("ii->", x), U((3, 3)),
   lambda x: _jnp().einsum("ii->", x))
op("einsum_diag", lambda x: fnp.einsum("ii->i", x), lambda x: np.einsum("ii->i", x), U((3, 3)),
   lambda x: _jnp().einsum("ii->i", x))
op("einsum_implicit", lambda x, y: fnp.einsum("ij,kj", x, y), lambda x, y: np.einsum("ij,kj", x, y),
   U((2, 3), (4, 3)), lambda x, y: _jnp().einsum("ij,kj", x, y))
op("einsum_three", lambda x, y, z: fnp.einsum("i,ij,j->", x, y, z), lambda x, y, z: np.einsum("i,ij,j->", x, y, z),
   U((2,), (2, 3), (3,)), lambda x, y, z: _jnp().einsum("i,ij,j->", x, y, z))
op("einsum_ellipsis", lambda x, y: fnp.einsum("...ij,...jk->...ik", x, y),
   lambda x, y: np.einsum("...ij,...jk->...ik", x, y), U((2, 2, 3), (2, 3, 2)),
   lambda x, y: _jnp().einsum("...ij,...jk->...ik", x, y))

# ---------------------------------------------------------------- indexing ----
_IDX = [
    ("getitem_int", 1, S23),
    ("getitem_neg_int", -1, S234),
    ("getitem_slice", (slice(None), slice(1, None)), S23),
    ("getitem_neg_step", (slice(None, None, -1), slice(None, None, -2)), S234),
    ("getitem_neg_step_bounds", slice(-1, 0, -1), (4,)),
    ("getitem_step", (Ellipsis, slice(None, None, 2)), S234),
    ("getitem_none_ellipsis", (None, Ellipsis, 1), S234),
    ("getitem_none_middle", (slice(None), None, slice(0, 2)), S23),
    ("getitem_int_array", np.array([2, 0, 2]), (3, 2)),
    ("getitem_neg_int_array", (slice(None), np.array([-1, 0])), S23),
    ("getitem_adv", (np.array([0, 1, 1]), np.array([2, 0, 1])), S23),
    ("getitem_adv_2d", (np.array([[0, 1], [1, 0]]), slice(None), np.array([[3, 2], [0, 1]])), S234),
    ("getitem_adv_list", [0, 0, 1], S23),
    ("getitem_bool_mask", np.array([True, False, True]), (3, 2)),
    ("getitem_bool_mask_2d", np.array([[True, False, True], [False, True, True]]), S23),
    ("getitem_mixed", (1, slice(None, None, -1), np.array([0, 3])), S234),
]
for _n, _i, _s in _IDX:
    # JAX refuses list indices (a list is not a tuple of indices there); give it the array.
    _ji = np.asarray(_i) if isinstance(_i, list) else _i
    op(_n, (lambda i: lambda x: getitem(x, i))(_i), (lambda i: lambda x: x[i])(_i), U(_s),
       (lambda i: lambda x: x[i])(_ji))

op("getitem_tracer_index", lambda x, i: getitem(x, i), lambda x, i: x[i], WITH_INT(U(S23), 1),
   lambda x, i: x[i])
op("getitem_tracer_index_neg", lambda x, i: getitem(x, (slice(None), i)), lambda x, i: x[:, i],
   WITH_INT(U(S23), -1), lambda x, i: x[:, i])
op("lax_slice", lambda x: lax.slice(x, (0, 1), (2, 3)), lambda x: x[0:2, 1:3], U(S23),
   lambda x: _jlax().slice(x, (0, 1), (2, 3)))
op("lax_slice_strided", lambda x: lax.slice(x, (0, 0, 1), (2, 3, 4), (1, 2, 2)), lambda x: x[0:2, 0:3:2, 1:4:2],
   U(S234), lambda x: _jlax().slice(x, (0, 0, 1), (2, 3, 4), (1, 2, 2)))
op("lax_dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, np.array(1)), (2, 2)), lambda x, i: x[i:i + 2, 1:3],
   WITH_INT(U((4, 3)), 1), lambda x, i: _jlax().dynamic_slice(x, (i, 1), (2, 2)))
op("lax_dynamic_slice_clamped", lambda x, i: lax.dynamic_slice(x, (i,), (2,)), lambda x, i: x[2:4],
   WITH_INT(U((4,)), 3), lambda x, i: _jlax().dynamic_slice(x, (i,), (2,)))
op("lax_dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, np.array(0))),
   lambda x, u, i: np.concatenate([x[:i], u, x[i + 2:]]), WITH_INT(U((4, 3), (2, 3)), 1),
   lambda x, u, i: _jlax().dynamic_update_slice(x, u, (i, 0)))
op("lax_gather", lambda x: lax.gather(x, np.array([[2], [0], [2]])), lambda x: x[[2, 0, 2]], U((3, 4)),
   None)
op("lax_gather_2", lambda x: lax.gather(x, np.array([[[1, 0]], [[0, 2]]])),
   lambda x: x[np.array([[1], [0]]), np.array([[0], [2]])], U(S234), None)
op("lax_scatter_add", lambda x, u: lax.scatter_add(x, np.array([[1], [0], [1]]), u),
   lambda x, u: _np_add_at(x, [1, 0, 1], u), U((3, 2), (3, 2)), None)
op("at_add", lambda x, u: _at(x)[np.array([0, 2, 0])].add(u),
   lambda x, u: _np_add_at(x, [0, 2, 0], u), U((3, 2), (3, 2)),
   lambda x, u: _jnp().asarray(x).at[_jnp().array([0, 2, 0])].add(u))
op("at_add_slice_scalar", lambda x: _at(x)[1:, ::2].add(1.5),
   lambda x: _np_set(x, np.s_[1:, ::2], x[1:, ::2] + 1.5),
   U(S23), lambda x: _jnp().asarray(x).at[1:, ::2].add(1.5))
op("at_set", lambda x, v: _at(x)[:, 1].set(v), lambda x, v: _np_set(x, np.s_[:, 1], v), U(S23, (2,)),
   lambda x, v: _jnp().asarray(x).at[:, 1].set(v))
op("at_multiply", lambda x: _at(x)[0].multiply(3.0), lambda x: _np_set(x, 0, x[0] * 3.0), U(S23),
   lambda x: _jnp().asarray(x).at[0].multiply(3.0))
op("at_get", lambda x: _at(x)[::-1, 0].get(), lambda x: x[::-1, 0], U(S23),
   lambda x: _jnp().asarray(x).at[::-1, 0].get())
op("take", lambda x: fnp.take(x, np.array([2, 0, 1, 2]), axis=1), lambda x: np.take(x, [2, 0, 1, 2], axis=1),
   U(S23), lambda x: _jnp().take(x, _jnp().array([2, 0, 1, 2]), axis=1))
op("take_flat", lambda x: fnp.take(x, np.array([[5, 0], [1, 1]])), lambda x: np.take(x, [[5, 0], [1, 1]]), U(S23),
   lambda x: _jnp().take(x, _jnp().array([[5, 0], [1, 1]])))
op("take_along_axis", lambda x: fnp.take_along_axis(x, np.array([[2, 0, 1], [1, 1, 0]]), axis=1),
   lambda x: np.take_along_axis(x, np.array([[2, 0, 1], [1, 1, 0]]), axis=1), U(S23),
   lambda x: _jnp().take_along_axis(x, _jnp().array([[2, 0, 1], [1, 1, 0]]), axis=1))

# ------------------------------------------------------------------- sort ----
op("lax_sort", lambda x: lax.sort([x], 1)[0], lambda x: np.sort(x, 1), DISTINCT(S234),
   lambda x: _jlax().sort(x, dimension=1))
op("lax_sort_two", lambda k, v: tuple(lax.sort([k, v], 0, num_keys=1)),
   lambda k, v: (np.sort(k, 0), np.take_along_axis(v, np.argsort(k, 0), 0)), DISTINCT(S23, S23),
   lambda k, v: tuple(_jlax().sort((k, v), dimension=0, num_keys=1)))
op("sort", fnp.sort, np.sort, DISTINCT(S23), lambda x: _jnp().sort(x), dtypes=FI)
op("sort_axis0", lambda x: fnp.sort(x, axis=0), lambda x: np.sort(x, axis=0), DISTINCT(S234),
   lambda x: _jnp().sort(x, axis=0))
op("argsort", fnp.argsort, np.argsort, DISTINCT(S23), lambda x: _jnp().argsort(x), diff=False, dtypes=FI)

# ------------------------------------------------------------- compositions ----
op("softplus_like", lambda x: fnp.logaddexp(x, 0.0), lambda x: np.logaddexp(x, 0.0).astype(x.dtype), U(S23),
   lambda x: _jnp().logaddexp(x, 0.0))
op("softmax", lambda x: fnp.exp(x - fnp.logsumexp(x, axis=-1, keepdims=True)),
   lambda x: np.exp(x - sps.logsumexp(x, axis=-1, keepdims=True)).astype(x.dtype), U(S23),
   lambda x: _jnp().exp(x - _jax_logsumexp_kd(x)))
op("mlp_layer", lambda x, w, b: fnp.tanh(x @ w + b), lambda x, w, b: np.tanh(x @ w + b), U((2, 3), (3, 4), (4,)),
   lambda x, w, b: _jnp().tanh(x @ w + b))
op("methods_chain", lambda x: (x.T.reshape(-1) ** 2).sum() / x.mean(),
   lambda x: (x.T.reshape(-1) ** 2).sum() / x.mean(), U(S23, lo=0.5, hi=2.0),
   lambda x: (x.T.reshape(-1) ** 2).sum() / x.mean())


def _jax_logsumexp_kd(x):
    import jax.scipy.special as jss
    return jss.logsumexp(x, axis=-1, keepdims=True)


# Rows of the newer namespaces live in tests/op_rows/, one module each.
import importlib as _importlib  # noqa: E402
import pkgutil as _pkgutil  # noqa: E402

from tests import op_rows as _op_rows  # noqa: E402

for _m in sorted(_pkgutil.iter_modules(_op_rows.__path__), key=lambda m: m.name):
    _importlib.import_module(f"tests.op_rows.{_m.name}")

_BY_NAME = {s.name: s for s in OPS}
assert len(_BY_NAME) == len(OPS), "op names must be unique"


def by_name(name: str) -> OpSpec:
    """The row called `name`."""
    return _BY_NAME[name]
