"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic, select.

Binary primitives broadcast like NumPy and need operands of one dtype;
`funcad.numpy` promotes dtypes first. Transposes undo broadcasting in one
place, `unbroadcast`.
"""
from __future__ import annotations

import numpy as np
from ..core.narrow import kind as _kind

import builtins

from ..core.avals import ShapedArray
from ..core.eager import WeakEagerArray, wrap_weak
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_map
from ..core.trace import Tracer, batch_rules, impl_rules, jvp_rules, lowering_rules, sharding_rules, transpose_rules, some_weak, weak_type_from_some
from ..core.typed_sharding import broadcasting_rule
from ..lowering.stablehlo import (binary, broadcast_operands, compare, compare_rule, convert,
                                  elementwise_rule, select)
from .dot_algorithm import AccuracyMode, accuracy_attr, check_accuracy
from ._base import (broadcast_shapes, broadcast_to, const, defjvp, deflinear, defpython, defzero,
                    dtype_of, full, is_undefined, new_primitive, shape_of, type_error, unbroadcast,
                    zeros_like)
from .structural import moveaxis0, reshape


class _LazyScipySpecial:
    """scipy.special, imported on first use: it takes ~0.2 s, more than the
    rest of `import funcad`, and only a few impls need it."""

    def __getattr__(self, name):
        import scipy.special  # SciPy loads on a special function's first eager call
        globals()["sp"] = scipy.special
        return getattr(scipy.special, name)


sp = _LazyScipySpecial()


# ------------------------------------------------------------ combinators ----

def _unary_aval(name, kinds):
    def rule(x, **_):
        if _kind(x.dtype) not in kinds:
            want = {"fc": "a float or complex", "f": "a float", "c": "a complex",
                    "biu": "an integer or boolean", "fciu": "a numeric", "b": "a boolean"}.get(kinds, kinds)
            raise type_error(name, f"it needs {want} array; cast with .astype(...)", x)
        return x
    return rule


def _vectorized_batch(prim):
    """The batching rule of a unary elementwise primitive: apply it to the batch as is."""
    def rule(vals, dims, *, axis_size, **params):
        return prim.bind(*vals, **params), dims[0]
    return rule


def _broadcasting_batch(prim):
    """The batching rule of an n-ary NumPy-broadcasting primitive: batch axes first, ranks padded."""
    def rule(vals, dims, *, axis_size, **params):
        rank = builtins.max(len(shape_of(v)) - (d is not None) for v, d in zip(vals, dims))
        out = []
        for v, d in zip(vals, dims):
            if d is None:
                out.append(v)
                continue
            v = moveaxis0(v, d, axis_size)
            s = shape_of(v)
            pad = rank - (len(s) - 1)
            out.append(reshape(v, (s[0],) + (1,) * pad + tuple(s[1:])) if pad else v)
        return prim.bind(*out, **params), 0
    return rule


# The primitives unop and binop made: each output entry depends on the inputs'
# entries at its own (broadcast) position, which the sparsity detector reads.
ELEMENTWISE: list = []


def unop(name, impl, kinds="fc", *, hlo, py, aval=None):
    """A unary elementwise primitive with its shape rule (operand dtype kinds
    `kinds`, or the rule `aval`), batching rule, StableHLO rule (`hlo`: an op
    name or a rule) and to_python template (`py`). Add its jvp with `defjvp`."""
    p = new_primitive(name, impl, aval or _unary_aval(name, kinds))
    ELEMENTWISE.append(p)
    sharding_rules[p] = broadcasting_rule(name)
    batch_rules[p] = _vectorized_batch(p)
    lowering_rules[p] = elementwise_rule(hlo) if isinstance(hlo, str) else hlo
    defpython(p, py)
    return p


def _bind1(p):
    def f(x):
        return p.bind(x)
    f.__name__ = p.name
    return f


# ---------------------------------------------------------------- unary ----
# One block per primitive: the primitive, its function, its jvp.

neg_p = unop("neg", np.negative, "fciu", hlo="stablehlo.negate", py="-{0}")
neg = _bind1(neg_p)
deflinear(neg_p, lambda ct, x: [neg(ct)])

sin_p = unop("sin", np.sin, hlo="stablehlo.sine", py="np.sin({0})")
sin = _bind1(sin_p)
defjvp(sin_p, lambda t, ans, x: mul(t, cos(x)))

cos_p = unop("cos", np.cos, hlo="stablehlo.cosine", py="np.cos({0})")
cos = _bind1(cos_p)
defjvp(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))

# tan is its own primitive (not sin/cos) so that it lowers to XLA's tangent and its values
# equal JAX's to the bit (random.cauchy relies on that).
tan_p = unop("tan", np.tan, hlo="stablehlo.tan", py="np.tan({0})")
tan = _bind1(tan_p)
defjvp(tan_p, lambda t, ans, x: mul(t, add(const(x, 1), square(ans))))

asin_p = unop("asin", np.arcsin, hlo="chlo.asin", py="np.arcsin({0})")
asin = _bind1(asin_p)
defjvp(asin_p, lambda t, ans, x: mul(t, rsqrt(sub(const(x, 1), square(x)))))

acos_p = unop("acos", np.arccos, hlo="chlo.acos", py="np.arccos({0})")
acos = _bind1(acos_p)
defjvp(acos_p, lambda t, ans, x: neg(mul(t, rsqrt(sub(const(x, 1), square(x))))))

atan_p = unop("atan", np.arctan, hlo="chlo.atan", py="np.arctan({0})")
atan = _bind1(atan_p)
defjvp(atan_p, lambda t, ans, x: div(t, add(const(x, 1), square(x))))

sinh_p = unop("sinh", np.sinh, hlo="chlo.sinh", py="np.sinh({0})")
sinh = _bind1(sinh_p)
defjvp(sinh_p, lambda t, ans, x: mul(t, cosh(x)))

cosh_p = unop("cosh", np.cosh, hlo="chlo.cosh", py="np.cosh({0})")
cosh = _bind1(cosh_p)
defjvp(cosh_p, lambda t, ans, x: mul(t, sinh(x)))

def _one_minus_square_lowering(ctx, x):
    one = ctx.full(1, x.aval.dtype, x.aval.shape)
    return binary(ctx, "stablehlo.multiply", binary(ctx, "stablehlo.add", one, x),
                  binary(ctx, "stablehlo.subtract", one, x))


# 1 - x² evaluated as (1 + x)(1 - x), exact near |x| = 1 (JAX's lax.one_minus_square).
# A primitive, not that product: its derivative -2x stays exact near 0, where the
# product rule's (1 - x) - (1 + x) cancels, and tanh's n-th derivative stages half the
# equations.
one_minus_square_p = unop("one_minus_square", lambda x: (1 + x) * (1 - x), hlo=_one_minus_square_lowering,
                          py="((1 + {0}) * (1 - {0}))")
one_minus_square = _bind1(one_minus_square_p)
defjvp(one_minus_square_p, lambda t, ans, x: mul(t, mul(const(x, -2), x)))

tanh_p = unop("tanh", np.tanh, hlo="stablehlo.tanh", py="np.tanh({0})")
tanh = _bind1(tanh_p)
defjvp(tanh_p, lambda t, ans, x: mul(t, sub(const(x, 1), square(ans))))

asinh_p = unop("asinh", np.arcsinh, hlo="chlo.asinh", py="np.arcsinh({0})")
asinh = _bind1(asinh_p)
defjvp(asinh_p, lambda t, ans, x: mul(t, rsqrt(add(square(x), const(x, 1)))))

acosh_p = unop("acosh", np.arccosh, hlo="chlo.acosh", py="np.arccosh({0})")
acosh = _bind1(acosh_p)
defjvp(acosh_p, lambda t, ans, x: mul(t, mul(rsqrt(sub(x, const(x, 1))), rsqrt(add(x, const(x, 1))))))

atanh_p = unop("atanh", np.arctanh, hlo="chlo.atanh", py="np.arctanh({0})")
atanh = _bind1(atanh_p)
defjvp(atanh_p, lambda t, ans, x: div(t, sub(const(x, 1), square(x))))

exp_p = unop("exp", np.exp, hlo="stablehlo.exponential", py="np.exp({0})")
exp = _bind1(exp_p)
defjvp(exp_p, lambda t, ans, x: mul(t, ans))


def _exp2_lowering(ctx, x):
    # As XLA has no exp2: exp(x · ln 2), which is also what JAX emits.
    ln2 = ctx.full(np.log(2.0), x.aval.dtype, x.aval.shape)
    return ctx.op1("stablehlo.exponential", [binary(ctx, "stablehlo.multiply", x, ln2)], x.aval)


# A primitive, not exp(x · ln 2) eagerly: NumPy's exp2 is exact at integers (exp2(3) == 8), as XLA's is.
exp2_p = unop("exp2", np.exp2, hlo=_exp2_lowering, py="np.exp2({0})")
exp2 = _bind1(exp2_p)
defjvp(exp2_p, lambda t, ans, x: mul(t, mul(ans, const(x, np.log(2)))))

log_p = unop("log", np.log, hlo="stablehlo.log", py="np.log({0})")
log = _bind1(log_p)
defjvp(log_p, lambda t, ans, x: div(t, x))

log1p_p = unop("log1p", np.log1p, hlo="stablehlo.log_plus_one", py="np.log1p({0})")
log1p = _bind1(log1p_p)
defjvp(log1p_p, lambda t, ans, x: div(t, add(x, const(x, 1))))

expm1_p = unop("expm1", np.expm1, hlo="stablehlo.exponential_minus_one", py="np.expm1({0})")
expm1 = _bind1(expm1_p)
defjvp(expm1_p, lambda t, ans, x: mul(t, add(ans, const(x, 1))))

def _logistic_impl(x):
    x = np.asarray(x)
    if x.dtype.kind == "c":  # SciPy's expit is real-only; 1 / (1 + e^-x), as XLA's
        return np.reciprocal(1 + np.exp(-x))
    return _in_dtype("expit")(x)


logistic_p = unop("logistic", _logistic_impl, hlo="stablehlo.logistic", py="special.expit({0})")
logistic = _bind1(logistic_p)
defjvp(logistic_p, lambda t, ans, x: mul(t, mul(ans, sub(const(x, 1), ans))))

sqrt_p = unop("sqrt", np.sqrt, hlo="stablehlo.sqrt", py="np.sqrt({0})")
sqrt = _bind1(sqrt_p)
defjvp(sqrt_p, lambda t, ans, x: mul(t, div(const(x, 0.5), ans)))  # JAX's rounding

rsqrt_p = unop("rsqrt", lambda x: np.reciprocal(np.sqrt(x)), hlo="stablehlo.rsqrt", py="1 / np.sqrt({0})")
rsqrt = _bind1(rsqrt_p)
defjvp(rsqrt_p, lambda t, ans, x: mul(t, mul(const(x, -0.5), div(ans, x))))

cbrt_p = unop("cbrt", np.cbrt, "f", hlo="stablehlo.cbrt", py="np.cbrt({0})")
cbrt = _bind1(cbrt_p)
defjvp(cbrt_p, lambda t, ans, x: mul(t, mul(const(x, 1 / 3), integer_pow(ans, -2))))



# ---- accuracy= (JAX's result_accuracy) on the transcendental ops that take it ----
# The param is bound only when given, so programs without it are unchanged. Eagerly it
# changes nothing (NumPy has one implementation per op); under jit it becomes the op's
# `result_accuracy` attribute, which XLA's CPU backend accepts and, like JAX's, ignores.
# The jvp keeps it on the primal only (defjvp drops it for the tangent), as JAX does.
def _accuracy_lowering(p, hlo):
    plain = lowering_rules[p]

    def rule(ctx, x, accuracy=None):
        if accuracy is None:
            return plain(ctx, x)
        attrs = f"result_accuracy = {accuracy_attr(accuracy)}"
        if p is exp2_p:  # exp(x · ln 2), as JAX emits it, with the accuracy on the exp
            ln2 = ctx.full(np.log(2.0), x.aval.dtype, x.aval.shape)
            x = binary(ctx, "stablehlo.multiply", x, ln2)
        return ctx.op1(hlo, [x], ctx.out_aval, attrs)
    return rule


def _bind_accuracy(p):
    def f(x, accuracy=None):
        if accuracy is None:
            return p.bind(x)
        return p.bind(x, accuracy=check_accuracy(accuracy, p.name))
    f.__name__ = p.name
    return f


for _p, _hlo in ((exp_p, "stablehlo.exponential"), (exp2_p, "stablehlo.exponential"),
                 (expm1_p, "stablehlo.exponential_minus_one"), (log_p, "stablehlo.log"),
                 (log1p_p, "stablehlo.log_plus_one"), (tanh_p, "stablehlo.tanh"),
                 (logistic_p, "stablehlo.logistic"), (sin_p, "stablehlo.sine"), (cos_p, "stablehlo.cosine"),
                 (tan_p, "stablehlo.tan"), (sqrt_p, "stablehlo.sqrt"), (rsqrt_p, "stablehlo.rsqrt"),
                 (cbrt_p, "stablehlo.cbrt")):
    _impl = impl_rules[_p]
    impl_rules[_p] = (lambda impl: lambda x, accuracy=None: impl(x))(_impl)
    lowering_rules[_p] = _accuracy_lowering(_p, _hlo)
    globals()[_p.name] = _bind_accuracy(_p)
def _logistic_lowering(ctx, x, accuracy=None):
    """1 / (1 + exp(-x)), as JAX lowers logistic off TPU (whatever the accuracy): XLA's
    own `logistic` rounds otherwise, and NUTS's acceptance rates would part from JAX's."""
    one = ctx.full(1, x.aval.dtype, x.aval.shape)
    e = ctx.op1("stablehlo.exponential", [ctx.op1("stablehlo.negate", [x], x.aval)], x.aval)
    return binary(ctx, "stablehlo.divide", one, binary(ctx, "stablehlo.add", one, e))


lowering_rules[logistic_p] = _logistic_lowering


def _accuracy_jvp(p, tangent):
    """A jvp whose tangent uses the accuracy too (JAX's rules for sin, cos, expm1, and
    tanh/logistic at HIGHEST): tangent(t, ans, x, accuracy)."""
    def rule(primals, tangents, accuracy=None):
        (x,), (t,) = primals, tangents
        ans = p.bind(x) if accuracy is None else p.bind(x, accuracy=accuracy)
        return ans, None if t is None else tangent(t, ans, x, accuracy)
    jvp_rules[p] = rule


_HIGHEST = AccuracyMode.HIGHEST
_accuracy_jvp(sin_p, lambda t, ans, x, acc: mul(t, cos(x, acc)))
_accuracy_jvp(cos_p, lambda t, ans, x, acc: neg(mul(t, sin(x, acc))))
_accuracy_jvp(expm1_p, lambda t, ans, x, acc: mul(t, exp(x, acc)))
_accuracy_jvp(tanh_p, lambda t, ans, x, acc: mul(t, mul(const(x, 4), mul(logistic(mul(const(x, 2), x), acc),
                                                                       logistic(mul(const(x, -2), x), acc))))
              if acc is _HIGHEST else mul(t, one_minus_square(ans)))
_accuracy_jvp(logistic_p, lambda t, ans, x, acc: mul(t, mul(ans, logistic(neg(x), acc))) if acc is _HIGHEST
              else mul(t, mul(ans, sub(const(x, 1), ans))))


ACCURACY_PRIMITIVES = frozenset({exp_p, exp2_p, expm1_p, log_p, log1p_p, tanh_p, logistic_p, sin_p, cos_p,
                                 tan_p, sqrt_p, rsqrt_p, cbrt_p})

def _abs_lowering(ctx, x):
    if _kind(x.aval.dtype) == "u":
        return x
    r = ctx.op1("stablehlo.abs", [x], ctx.out_aval)
    if _kind(x.aval.dtype) != "c":
        return r
    # XLA's complex abs is nan at inf + nan j; C99's hypot (NumPy's and JAX's) is inf
    # whenever a part is infinite.
    part = ctx.out_aval
    inf = ctx.full(np.inf, part.dtype, part.shape)
    re, im = [ctx.op1("stablehlo.abs", [ctx.op1(f"stablehlo.{k}", [x], part)], part) for k in ("real", "imag")]
    return select(ctx, binary(ctx, "stablehlo.or", compare(ctx, re, inf, "EQ"), compare(ctx, im, inf, "EQ")), inf, r)


def _abs_jvp(t, ans, x):
    if _kind(dtype_of(x)) == "c":
        # d|x| = Re(conj(x) dx) / |x|, taken as 0 at x == 0 (as JAX).
        a = convert_element_type(ans, dtype_of(x))
        safe = select_n(eq(a, const(a, 0)), a, full(shape_of(a), 1, dtype_of(a)))
        return real(mul(t, div(conj(x), safe)))
    # As in JAX, the derivative at 0 is taken from the right (+1), so norms and hinges get a subgradient.
    return select_n(ge(x, const(x, 0)), neg(t), t)


abs_p = unop("abs", np.abs, "fciu", hlo=_abs_lowering, py="np.abs({0})",
             aval=lambda x: _real_of(_unary_aval("abs", "fciu")(x)))
abs = _bind1(abs_p)
defjvp(abs_p, _abs_jvp)


def _sign_lowering(ctx, x):
    if _kind(x.aval.dtype) == "u":  # 0 or 1
        zero = ctx.full(0, x.aval.dtype, x.aval.shape)
        return convert(ctx, compare(ctx, x, zero, "NE"), x.aval.dtype)
    return ctx.op1("stablehlo.sign", [x], x.aval)


def _sign_jvp(t, ans, x):
    if _kind(dtype_of(x)) != "c":
        return None  # piecewise constant
    # sign(x) = exp(i·angle(x)): d sign = i·sign(x)·dθ with dθ = Im(conj(sign x)·dx) / |x|,
    # which is 0 at x == 0 (as JAX).
    ax = abs(x)
    safe = select_n(eq(ax, const(ax, 0)), ax, full(shape_of(ax), 1, dtype_of(ax)))
    dtheta = div(imag(mul(conj(ans), t)), safe)
    return mul(ans, complex(zeros_like(dtheta), dtheta))


sign_p = unop("sign", np.sign, "fciu", hlo=_sign_lowering, py="np.sign({0})")
sign = _bind1(sign_p)
defjvp(sign_p, _sign_jvp)

floor_p = unop("floor", np.floor, "f", hlo="stablehlo.floor", py="np.floor({0})")
floor = _bind1(floor_p)
defzero(floor_p)

ceil_p = unop("ceil", np.ceil, "f", hlo="stablehlo.ceil", py="np.ceil({0})")
ceil = _bind1(ceil_p)
defzero(ceil_p)

round_p = unop("round", np.rint, "f", hlo="stablehlo.round_nearest_even", py="np.rint({0})")  # half to even
round = _bind1(round_p)
defzero(round_p)

def _in_dtype(name):
    """scipy.special's `name`, whose float16 result is float32, giving x's dtype
    (looked up at call time: scipy.special loads on first use)."""
    def impl(x):
        x = np.asarray(x)
        return np.asarray(getattr(sp, name)(x)).astype(x.dtype, copy=False)
    return impl


erf_p = unop("erf", _in_dtype("erf"), "f", hlo="chlo.erf", py="special.erf({0})")
erf = _bind1(erf_p)
defjvp(erf_p, lambda t, ans, x: mul(t, mul(const(x, 2 / np.sqrt(np.pi)), exp(neg(square(x))))))

# 1 - erf(x) loses every digit in the tail, where erfc is tiny.
erfc_p = unop("erfc", _in_dtype("erfc"), "f", hlo="chlo.erfc", py="special.erfc({0})")
erfc = _bind1(erfc_p)
defjvp(erfc_p, lambda t, ans, x: mul(t, mul(const(x, -2 / np.sqrt(np.pi)), exp(neg(square(x))))))


def _erf_inv(x):
    out, dtype = sp.erfinv(x), np.result_type(x)
    return out if out.dtype == dtype else out.astype(dtype)  # SciPy gives float32 for float16


erf_inv_p = unop("erf_inv", _erf_inv, "f", hlo="chlo.erf_inv", py="special.erfinv({0})")
erf_inv = _bind1(erf_inv_p)
defjvp(erf_inv_p, lambda t, ans, x: mul(t, mul(const(x, np.sqrt(np.pi) / 2), exp(square(ans)))))

lgamma_p = unop("lgamma", _in_dtype("gammaln"), "f", hlo="chlo.lgamma", py="special.gammaln({0})")
lgamma = _bind1(lgamma_p)
defjvp(lgamma_p, lambda t, ans, x: mul(t, digamma(x)))

digamma_p = unop("digamma", _in_dtype("digamma"), "f", hlo="chlo.digamma", py="special.digamma({0})")
digamma = _bind1(digamma_p)
defjvp(digamma_p, lambda t, ans, x: mul(t, polygamma(1, x)))

def _is_finite_lowering(ctx, x):
    out = ctx.out_aval
    if _kind(x.aval.dtype) != "c":
        return ctx.op1("stablehlo.is_finite", [x], out)
    # XLA's is_finite takes floats only: both parts finite.
    part = ShapedArray(x.aval.shape, _REAL_OF[x.aval.dtype])
    re, im = [ctx.op1("stablehlo.is_finite", [ctx.op1(f"stablehlo.{k}", [x], part)], out)
              for k in ("real", "imag")]
    return binary(ctx, "stablehlo.and", re, im)


is_finite_p = unop("is_finite", np.isfinite, hlo=_is_finite_lowering, py="np.isfinite({0})",
                   aval=lambda x: ShapedArray(x.shape, np.bool_, x.weak_type))
is_finite = _bind1(is_finite_p)
defzero(is_finite_p)

not_p = unop("not", np.invert, "biu", hlo="stablehlo.not", py="np.invert({0})")
bitwise_not = _bind1(not_p)
defzero(not_p)


# (polygamma, binary, follows the binary primitives below.)


def _integer_pow_impl(x, y):
    x = np.asarray(x)
    if y < 0 and _kind(x.dtype) in "iu":
        raise ValueError("integer_pow of an integer array to a negative power")
    return x ** y if y >= 0 else 1 / x ** -y


def _integer_pow_lowering(ctx, x, *, y):
    # Square-and-multiply, as XLA has no integer power of a float.
    if y == 0:
        return ctx.full(1, x.aval.dtype, x.aval.shape)
    acc, base, n = None, x, builtins.abs(y)
    while n:
        if n & 1:
            acc = base if acc is None else binary(ctx, "stablehlo.multiply", acc, base)
        n >>= 1
        if n:
            base = binary(ctx, "stablehlo.multiply", base, base)
    if y < 0:
        acc = binary(ctx, "stablehlo.divide", ctx.full(1, x.aval.dtype, x.aval.shape), acc)
    return acc


integer_pow_p = unop("integer_pow", lambda x, *, y: _integer_pow_impl(x, y), "fciu",
                     hlo=_integer_pow_lowering,
                     py=lambda eqn, a: f"{a[0]} ** {eqn.params['y']}" if eqn.params["y"] >= 0
                     else f"1 / {a[0]} ** {-eqn.params['y']}")


def integer_pow(x, y: int):
    if int(y) != y:
        raise FuncadTypeError(f"integer_pow needs an integer exponent, got {y!r}; use lax.pow "
                              "(funcad.numpy.power) for real exponents")
    return integer_pow_p.bind(x, y=int(y))


def square(x):
    return integer_pow(x, 2)


defjvp(integer_pow_p, lambda t, ans, x, *, y:
       full(shape_of(x), 0, dtype_of(x)) if y == 0 else
       mul(t, mul(const(x, y), x if y == 2 else integer_pow(x, y - 1))))


# -------------------------------------------------------------- complex ----
# JAX's conventions: transposes are plain transposes (no conjugation), so
# real's is complex(ct, 0), imag's complex(0, -ct), complex's (Re ct, -Im ct).

_COMPLEX_OF = {np.dtype(np.float32): np.dtype(np.complex64), np.dtype(np.float64): np.dtype(np.complex128)}
_REAL_OF = {c: f for f, c in _COMPLEX_OF.items()}


def _real_of(aval):
    """The aval with a complex dtype replaced by its real part's dtype."""
    return aval.update(dtype=_REAL_OF[aval.dtype]) if _kind(aval.dtype) == "c" else aval


def _complex_dtype(dtype) -> np.dtype:
    dtype = np.dtype(dtype)
    return dtype if _kind(dtype) == "c" else _COMPLEX_OF.get(dtype, np.dtype(np.complex128))


real_p = unop("real", np.real, "c", hlo="stablehlo.real", py="np.real({0})",
              aval=lambda x: _real_of(_unary_aval("real", "c")(x)))
real = _bind1(real_p)
deflinear(real_p, lambda ct, x: [complex(ct, zeros_like(ct))])

imag_p = unop("imag", np.imag, "c", hlo="stablehlo.imag", py="np.imag({0})",
              aval=lambda x: _real_of(_unary_aval("imag", "c")(x)))
imag = _bind1(imag_p)
deflinear(imag_p, lambda ct, x: [complex(zeros_like(ct), neg(ct))])


def _conj_lowering(ctx, x):
    out = ctx.out_aval
    part = ShapedArray(out.shape, _REAL_OF[out.dtype])
    if _kind(x.aval.dtype) == "c":
        re, im = ctx.op1("stablehlo.real", [x], part), ctx.op1("stablehlo.imag", [x], part)
        im = ctx.op1("stablehlo.negate", [im], part)
    else:
        re, im = convert(ctx, x, part.dtype), ctx.full(0, part.dtype, part.shape)
    return ctx.op1("stablehlo.complex", [re, im], out)


def _conj_transpose(ct, x):
    # Of a real input (promoted to complex by conj), the real part, as JAX.
    return [conj(ct) if _kind(x.aval.dtype) == "c" else real(ct)]


# As in JAX, conj of a real array is complex (funcad.numpy.conj keeps reals real).
conj_p = unop("conj", lambda x: np.conj(x).astype(_complex_dtype(np.result_type(x))), hlo=_conj_lowering,
              py=lambda eqn, a: f"np.conj({a[0]}).astype(np.{eqn.outvars[0].aval.dtype.name})",
              aval=lambda x: _unary_aval("conj", "fc")(x).update(dtype=_complex_dtype(x.dtype)))
conj = _bind1(conj_p)
deflinear(conj_p, _conj_transpose)


def _complex_impl(x, y):
    out = np.empty(np.broadcast_shapes(np.shape(x), np.shape(y)), _COMPLEX_OF[np.result_type(x)])
    out.real, out.imag = x, y
    return out


def _complex_lowering(ctx, x, y):
    (x, y), _ = broadcast_operands(ctx, x, y)
    return ctx.op1("stablehlo.complex", [x, y], ctx.out_aval)


def _complex_transpose(ct, x, y):
    return [unbroadcast(real(ct), shape_of(x)) if is_undefined(x) else None,
            unbroadcast(neg(imag(ct)), shape_of(y)) if is_undefined(y) else None]


def _complex_aval(x, y):
    if x.dtype not in _COMPLEX_OF or y.dtype != x.dtype:
        raise type_error("complex", "it needs two float32 or two float64 operands "
                         "(cast them with .astype)", x, y)
    return _binary_aval("complex", "f")(x, y).update(dtype=_COMPLEX_OF[x.dtype])


complex_p = new_primitive("complex", _complex_impl, _complex_aval)


def complex(x, y):
    """x + i·y elementwise, from two float arrays of one dtype (lax.complex)."""
    return complex_p.bind(x, y)


deflinear(complex_p, _complex_transpose)
batch_rules[complex_p] = _broadcasting_batch(complex_p)
lowering_rules[complex_p] = _complex_lowering
defpython(complex_p, "({0} + 1j * {1})")


# --------------------------------------------------------------- binary ----

def _binary_aval(name, kinds="fciub", out_dtype=None):
    def rule(x, y, **_):
        if x.dtype != y.dtype:
            raise type_error(name, "operands must have one dtype; funcad.numpy promotes them, "
                             "funcad.lax does not (cast one with .astype)", x, y)
        if _kind(x.dtype) not in kinds:
            raise type_error(name, f"dtype {x.dtype} is not supported here", x, y)
        try:
            shape = broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise type_error(name, "shapes do not broadcast together", x, y) from None
        return ShapedArray(shape, out_dtype or x.dtype, x.weak_type and y.weak_type)
    return rule


def binop(name, impl, kinds="fciub", out_dtype=None, *, hlo, py):
    """A binary NumPy-broadcasting elementwise primitive with its shape rule
    (operands of one dtype of kinds `kinds`), batching rule, StableHLO rule
    (`hlo`: a rule, or an op name or (op, op on booleans)) and to_python
    template (`py`). Add its jvp with `defjvp`."""
    p = new_primitive(name, impl, _binary_aval(name, kinds, out_dtype))
    ELEMENTWISE.append(p)
    sharding_rules[p] = broadcasting_rule(name)
    batch_rules[p] = _broadcasting_batch(p)
    if isinstance(hlo, str):
        hlo = elementwise_rule(hlo)
    elif isinstance(hlo, tuple):
        hlo = elementwise_rule(*hlo)
    lowering_rules[p] = hlo
    defpython(p, py)
    return p


def _polygamma_impl(m, x):
    # SciPy computes in float64; keep the operands' dtype (a Python float is float64).
    with np.errstate(invalid="ignore"):
        return np.asarray(sp.polygamma(m, x)).astype(np.result_type(m, x))


def _int_div(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if _kind(x.dtype) in "iu":
        # C (and XLA) integer division truncates toward zero.
        with np.errstate(divide="ignore"):
            q = np.floor_divide(x, y)
            q = q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(q.dtype)
            # x / 0 is all ones (-1, or the largest unsigned), as XLA's (NumPy gives 0)
            return np.where(y == 0, np.array(-1).astype(q.dtype), q)
    return np.true_divide(x, y)


def _rem(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        r = np.fmod(x, y)
        # an integer x % 0 is x, as XLA's (NumPy gives 0)
        return np.where(y == 0, x, r) if _kind(r.dtype) in "iu" else r


def _div_source(eqn, a):
    if _kind(eqn.outvars[0].aval.dtype) in "fc":
        return f"{a[0]} / {a[1]}"
    return f"np.trunc({a[0]} / {a[1]}).astype({a[0]}.dtype)"


# (On booleans XLA has no add or max: they are `or`, mul and min are `and`.)
add_p = binop("add", np.add, "fciu", hlo=("stablehlo.add", "stablehlo.or"), py="{0} + {1}")
sub_p = binop("sub", np.subtract, "fciu", hlo="stablehlo.subtract", py="{0} - {1}")
mul_p = binop("mul", np.multiply, "fciub", hlo=("stablehlo.multiply", "stablehlo.and"), py="{0} * {1}")
div_p = binop("div", _int_div, "fciu", hlo="stablehlo.divide", py=_div_source)
rem_p = binop("rem", _rem, "fiu", hlo="stablehlo.remainder", py="np.fmod({0}, {1})")
# pow also takes an integer exponent with a float or complex base (as JAX's lax.pow);
# the exponent is converted to the base's dtype, so eager and XLA compute the same thing.
_pow_same_dtype_aval = _binary_aval("pow", "fc")


def _pow_aval(x, y, **params):
    if x.dtype != y.dtype and _kind(x.dtype) in "fc" and _kind(y.dtype) in "iu":
        return _pow_same_dtype_aval(x, y.update(dtype=x.dtype))
    if x.dtype != y.dtype:
        raise type_error("pow", "the base must be float or complex and the exponent of its dtype "
                         "or an integer (cast one with .astype)", x, y)
    return _pow_same_dtype_aval(x, y)


def _pow_impl(x, y):
    x, y = np.asarray(x), np.asarray(y)
    return np.power(x, y.astype(x.dtype, copy=False))


def _pow_lowering(ctx, x, y):
    if y.aval.dtype != x.aval.dtype:
        y = ctx.op1("stablehlo.convert", [y], ShapedArray(y.aval.shape, x.aval.dtype))
    return _pow_same_dtype(ctx, x, y)


_pow_same_dtype = elementwise_rule("stablehlo.power")
pow_p = new_primitive("pow", _pow_impl, _pow_aval)
ELEMENTWISE.append(pow_p)
sharding_rules[pow_p] = broadcasting_rule("pow")
batch_rules[pow_p] = _broadcasting_batch(pow_p)
lowering_rules[pow_p] = _pow_lowering
defpython(pow_p, lambda eqn, a: f"{a[0]} ** {a[1]}" if eqn.invars[0].aval.dtype == eqn.invars[1].aval.dtype
          else f"np.power({a[0]}, np.asarray({a[1]}).astype({a[0]}.dtype))")


def _minmax_lowering(op, bool_op, direction):
    real_rule = elementwise_rule(op, bool_op)

    def rule(ctx, x, y):
        if _kind(x.aval.dtype) != "c":
            return real_rule(ctx, x, y)
        # XLA orders complex numbers by real part only; NumPy lexicographically, NaNs first.
        (x, y), shape = broadcast_operands(ctx, x, y)
        part = ShapedArray(shape, _REAL_OF[x.aval.dtype])
        rx, ix, ry, iy = [ctx.op1(f"stablehlo.{k}", [v], part) for v in (x, y) for k in ("real", "imag")]
        both = lambda k, a, b: binary(ctx, f"stablehlo.{k}", a, b)  # noqa: E731
        pick_x = both("or", compare(ctx, rx, ry, direction),
                      both("and", compare(ctx, rx, ry, "EQ"), compare(ctx, ix, iy, direction[0] + "E")))
        x_nan = both("or", compare(ctx, rx, rx, "NE"), compare(ctx, ix, ix, "NE"))
        y_nan = both("or", compare(ctx, ry, ry, "NE"), compare(ctx, iy, iy, "NE"))
        pick_x = both("or", x_nan, both("and", pick_x, ctx.op1("stablehlo.not", [y_nan], y_nan.aval)))
        return select(ctx, pick_x, x, y)
    return rule


max_p = binop("max", np.maximum, "fciub", hlo=_minmax_lowering("stablehlo.maximum", "stablehlo.or", "GT"),
              py="np.maximum({0}, {1})")
min_p = binop("min", np.minimum, "fciub", hlo=_minmax_lowering("stablehlo.minimum", "stablehlo.and", "LT"),
              py="np.minimum({0}, {1})")
def _atan2(y, x):
    y, x = np.asarray(y), np.asarray(x)
    if y.dtype.kind != "c":
        return np.arctan2(y, x)
    # XLA's complex atan2 (NumPy has none): -i log((x + iy) / sqrt(x^2 + y^2)); nan where
    # x^2 + y^2 is 0, as XLA's
    d, y, x = y.dtype, y.astype(np.complex128), x.astype(np.complex128)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        return (-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))).astype(d)


_ATAN2_HELPER = """def _atan2(y, x):
    if np.iscomplexobj(y):
        return (-1j * np.log((x + 1j * y) / np.sqrt(x * x + y * y))).astype(y.dtype)
    return np.arctan2(y, x)
"""
atan2_p = binop("atan2", _atan2, "fc", hlo="stablehlo.atan2", py="np.arctan2({0}, {1})")
defpython(atan2_p, "_atan2({0}, {1})", _ATAN2_HELPER)
and_p = binop("and", np.bitwise_and, "biu", hlo="stablehlo.and", py="{0} & {1}")
or_p = binop("or", np.bitwise_or, "biu", hlo="stablehlo.or", py="{0} | {1}")
xor_p = binop("xor", np.bitwise_xor, "biu", hlo="stablehlo.xor", py="{0} ^ {1}")
eq_p = binop("eq", np.equal, out_dtype=np.bool_, hlo=compare_rule("EQ"), py="{0} == {1}")
ne_p = binop("ne", np.not_equal, out_dtype=np.bool_, hlo=compare_rule("NE"), py="{0} != {1}")
lt_p = binop("lt", np.less, "fiub", np.bool_, hlo=compare_rule("LT"), py="{0} < {1}")
le_p = binop("le", np.less_equal, "fiub", np.bool_, hlo=compare_rule("LE"), py="{0} <= {1}")
gt_p = binop("gt", np.greater, "fiub", np.bool_, hlo=compare_rule("GT"), py="{0} > {1}")
ge_p = binop("ge", np.greater_equal, "fiub", np.bool_, hlo=compare_rule("GE"), py="{0} >= {1}")


polygamma_p = binop("polygamma", _polygamma_impl, "f", hlo="chlo.polygamma",
                    py="special.polygamma({0}, {1})")


def polygamma(m, x):
    """psi^(m)(x), the m-th derivative of digamma; m is a float of x's dtype (a Python
    number is converted) holding an integer, and is not differentiable (as in JAX)."""
    if isinstance(m, (int, float, np.integer, np.floating)):
        m = const(x, m)
    return polygamma_p.bind(m, x)


def _polygamma_m(t, ans, m, x):
    raise FuncadValueError("polygamma gradient with respect to m is not supported (as in JAX); "
                     "the order m is an integer")


defjvp(polygamma_p, _polygamma_m, lambda t, ans, m, x: mul(t, polygamma(add(m, const(m, 1)), x)))


def _bind2(p):
    def f(x, y):
        return p.bind(x, y)
    f.__name__ = p.name
    return f


add, sub, mul, div, rem, pow, atan2 = map(_bind2, (add_p, sub_p, mul_p, div_p, rem_p, pow_p, atan2_p))
max, min, bitwise_and, bitwise_or, bitwise_xor = map(_bind2, (max_p, min_p, and_p, or_p, xor_p))
eq, ne, lt, le, gt, ge = map(_bind2, (eq_p, ne_p, lt_p, le_p, gt_p, ge_p))


def _add_jvp(primals, tangents, negate=False):
    x, y = primals
    tx, ty = tangents
    ans = (sub if negate else add)(x, y)
    shape = shape_of(ans)
    if tx is None and ty is None:
        return ans, None
    if ty is None:
        return ans, broadcast_to(tx, shape)
    ty = neg(ty) if negate else ty
    if tx is None:
        return ans, broadcast_to(ty, shape)
    return ans, add(tx, ty)


def _add_transpose(ct, x, y, negate=False):
    cx = unbroadcast(ct, shape_of(x)) if is_undefined(x) else None
    cy = None
    if is_undefined(y):
        cy = unbroadcast(neg(ct) if negate else ct, shape_of(y))
    return [cx, cy]


jvp_rules[add_p] = lambda p, t: _add_jvp(p, t)
jvp_rules[sub_p] = lambda p, t: _add_jvp(p, t, negate=True)
transpose_rules[add_p] = _add_transpose
transpose_rules[sub_p] = lambda ct, x, y: _add_transpose(ct, x, y, negate=True)

defjvp(mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
transpose_rules[mul_p] = lambda ct, x, y: [
    unbroadcast(mul(ct, y), shape_of(x)) if is_undefined(x) else None,
    unbroadcast(mul(x, ct), shape_of(y)) if is_undefined(y) else None]

# JAX's formula for the denominator, -t * x * y**-2: (x / y) / y rounds differently, and an
# MCMC chain started from a gradient one ulp off goes elsewhere.
defjvp(div_p, lambda t, ans, x, y: div(t, y),
       lambda t, ans, x, y: mul(mul(neg(t), x), integer_pow(y, -2)))
transpose_rules[div_p] = lambda ct, x, y: [unbroadcast(div(ct, y), shape_of(x)), None]


def _rem_jvp_y(t, ans, x, y):
    q = div(x, y)
    return neg(mul(t, mul(sign(q), floor(abs(q)))))


defjvp(rem_p, lambda t, ans, x, y: broadcast_to(t, shape_of(ans)), _rem_jvp_y)


def _pow_jvp_x(t, ans, x, y):
    # y * x**(y-1), taken as 0 where y == 0 so that x = 0 gives no NaN.
    ym1 = sub(y, const(y, 1))
    d = mul(convert_element_type(y, dtype_of(x)), pow(x, ym1))
    d = select_n(broadcast_to(eq(y, const(y, 0)), shape_of(d)), d, zeros_like(d))
    return mul(t, d)


def _pow_jvp_y(t, ans, x, y):
    # log(x) * x**y, taken as 0 where x == 0 (its limit for y > 0).
    x_is_0 = eq(x, const(x, 0))
    safe_x = select_n(x_is_0, x, full(shape_of(x), 1, dtype_of(x)))
    d = mul(log(safe_x), ans)
    return mul(t, select_n(broadcast_to(x_is_0, shape_of(d)), d, zeros_like(d)))


defjvp(pow_p, _pow_jvp_x, _pow_jvp_y)


def _balanced_eq(x, z, y):
    # 1 where x alone attains the max/min, 0.5 on ties, 0 elsewhere (as JAX).
    one, half, zero = const(z, 1), const(z, 0.5), const(z, 0)
    return select_n(eq(x, z), broadcast_to(zero, shape_of(z)),
                    select_n(eq(y, z), broadcast_to(one, shape_of(z)), broadcast_to(half, shape_of(z))))


defjvp(max_p, lambda t, ans, x, y: mul(t, _balanced_eq(x, ans, y)),
       lambda t, ans, x, y: mul(t, _balanced_eq(y, ans, x)))
defjvp(min_p, lambda t, ans, x, y: mul(t, _balanced_eq(x, ans, y)),
       lambda t, ans, x, y: mul(t, _balanced_eq(y, ans, x)))
defjvp(atan2_p, lambda t, ans, x, y: mul(t, div(y, add(square(x), square(y)))),
       lambda t, ans, x, y: neg(mul(t, div(x, add(square(x), square(y))))))
for _p in (and_p, or_p, xor_p, eq_p, ne_p, lt_p, le_p, gt_p, ge_p):
    defzero(_p)


# ------------------------------------------------------ select and clamp ----

def _select_n_aval(which, *cases):
    if not cases:
        raise type_error("select_n", "needs at least one case", which)
    if _kind(which.dtype) not in "bi":
        raise type_error("select_n", "the selector must be boolean or integer", which)
    if which.dtype == np.bool_ and len(cases) > 2:
        raise type_error("select_n", "a boolean selector picks from at most 2 cases", which, *cases)
    if any(c.dtype != cases[0].dtype for c in cases):
        raise type_error("select_n", "cases must have one dtype", *cases)
    try:
        shape = broadcast_shapes(which.shape, *[c.shape for c in cases])
    except ValueError:
        raise type_error("select_n", "shapes do not broadcast together", which, *cases) from None
    return ShapedArray(shape, cases[0].dtype, all(c.weak_type for c in cases))


def _select_n_impl(which, *cases):
    if len(cases) == 1:
        return np.broadcast_to(cases[0], np.broadcast_shapes(np.shape(which), np.shape(cases[0]))).copy()
    if len(cases) == 2:
        return np.where(which, cases[1], cases[0])
    return np.choose(np.asarray(which, np.int64), cases, mode="clip")


select_n_p = new_primitive("select_n", _select_n_impl, _select_n_aval)
weak_type_from_some[select_n_p] = some_weak


def select_n(which, *cases):
    """cases[which], elementwise (which is a bool or an int array)."""
    return select_n_p.bind(which, *cases)


def _select_n_jvp(primals, tangents):
    which, *cases = primals
    ans = select_n(which, *cases)
    if all(t is None for t in tangents[1:]):
        return ans, None
    ts = [zeros_like(c) if t is None else t for c, t in zip(cases, tangents[1:])]
    return ans, select_n(which, *ts)


def _select_n_transpose(ct, which, *cases):
    zeros = zeros_like(ct)
    out = [None]
    for i, c in enumerate(cases):
        if is_undefined(c):
            picks = [zeros] * len(cases)
            picks[i] = ct
            out.append(unbroadcast(select_n(which, *picks), shape_of(c)))
        else:
            out.append(None)
    return out


def _select_n_lowering(ctx, which, *cases):
    (which, *cases), shape = broadcast_operands(ctx, which, *cases)
    if len(cases) == 1:
        return cases[0]
    if which.aval.dtype == np.bool_:
        return select(ctx, which, cases[1], cases[0])
    # Integer selector, clipped like np.choose(mode="clip"): later cases win from i on.
    out = cases[0]
    for i, c in enumerate(cases[1:], 1):
        ge_i = compare(ctx, which, ctx.full(i, which.aval.dtype, shape), "GE")
        out = select(ctx, ge_i, c, out)
    return out


def _select_n_source(eqn, a):
    if len(a) == 3:
        return f"np.where({a[0]}, {a[2]}, {a[1]})"
    return f"np.choose({a[0]}, [{', '.join(a[1:])}])"


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose
batch_rules[select_n_p] = _broadcasting_batch(select_n_p)
lowering_rules[select_n_p] = _select_n_lowering
defpython(select_n_p, _select_n_source)


def _clamp_aval(lo, x, hi):
    if not (lo.dtype == x.dtype == hi.dtype):
        raise type_error("clamp", "operands must have one dtype", lo, x, hi)
    for b in (lo, hi):
        if b.shape not in ((), x.shape):
            raise type_error("clamp", "bounds must be scalars or have the operand's shape", lo, x, hi)
    return x.update(weak_type=lo.weak_type and x.weak_type and hi.weak_type)


clamp_p = new_primitive("clamp", lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), _clamp_aval)


def clamp(lo, x, hi):
    return clamp_p.bind(lo, x, hi)


defjvp(clamp_p,
       lambda t, ans, lo, x, hi: select_n(bitwise_and(gt(lo, x), lt(lo, hi)), zeros_like(ans), broadcast_to(t, shape_of(ans))),
       lambda t, ans, lo, x, hi: select_n(bitwise_and(gt(x, lo), lt(x, hi)), zeros_like(ans), broadcast_to(t, shape_of(ans))),
       lambda t, ans, lo, x, hi: select_n(lt(hi, x), zeros_like(ans), broadcast_to(t, shape_of(ans))))


def _clamp_batch(vals, dims, *, axis_size):
    lo, x, hi = vals
    if dims[0] is None and dims[2] is None and not shape_of(lo) and not shape_of(hi):
        return clamp(lo, x, hi), dims[1]
    # Batched bounds: every operand gets the batched operand's full shape, which clamp accepts.
    x = moveaxis0(x, dims[1], axis_size)
    shape = shape_of(x)
    lo, hi = [broadcast_to(moveaxis0(b, d, axis_size), shape) if d is not None else
              broadcast_to(b, shape) for b, d in ((lo, dims[0]), (hi, dims[2]))]
    return clamp(lo, x, hi), 0


batch_rules[clamp_p] = _clamp_batch
lowering_rules[clamp_p] = lambda ctx, lo, x, hi: ctx.op1("stablehlo.clamp", [lo, x, hi], x.aval)
defpython(clamp_p, "np.clip({1}, {0}, {2})")


# ------------------------------------------------------- dtype conversion ----

def _convert_aval(x, *, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, *, new_dtype, weak_type=False):
    x = np.asarray(x)
    if _kind(x.dtype) == "c" and _kind(np.dtype(new_dtype)) != "c":
        x = x.real
    try:
        out = x.astype(new_dtype)
    except TypeError:  # ml_dtypes has no direct cast between two narrow integer types
        out = x.astype(np.int64).astype(new_dtype)
    # The one primitive whose param makes its result weak: weak as such, since an eager
    # bind types a plain result by its operands, and a NumPy operand is strong
    return wrap_weak(out) if weak_type else out


convert_element_type_p = new_primitive("convert_element_type", _convert_impl, _convert_aval)
weak_type_from_some[convert_element_type_p] = lambda args, params: params.get("weak_type", False)  # its param says


def convert_element_type(x, new_dtype, weak_type: bool = False):
    try:
        new_dtype = np.dtype(new_dtype)
    except TypeError:
        if hasattr(new_dtype, "_rules") and isinstance(getattr(new_dtype, "type", None), type):
            raise FuncadTypeError(
                f"convert_element_type: {new_dtype!r} is a user-defined extended dtype (a subclass of "
                "JAX's private jax._src.dtypes.ExtendedDType with `_rules`, as flax's fp8 metadata "
                "types); funcad has extended dtypes only for PRNG keys and does not take JAX's private "
                "rules protocol. Keep such values in their physical dtype (e.g. float32)") from None
        raise FuncadTypeError(f"convert_element_type: {new_dtype!r} is not a dtype; pass e.g. "
                              "numpy.float32 or 'float32'") from None
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def weakly(x, weak: bool):
    """`x` weakly typed where `weak` (a value whose type JAX takes from a weak one: a
    creation function's fill, a scatter's operand, a gradient's primal)."""
    if not weak:
        return x
    if isinstance(x, Tracer):
        a = x.aval
        return x if a.weak_type else convert_element_type(x, a.dtype, True)
    return x if type(x) is WeakEagerArray else wrap_weak(x)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype, weak_type)
    if t is None or _kind(np.dtype(new_dtype)) not in "fc" or _kind(dtype_of(x)) not in "fc":
        return ans, None
    return ans, convert_element_type(t, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False):
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


def _convert_lowering(ctx, x, *, new_dtype, weak_type=False):
    new_dtype = np.dtype(new_dtype)
    src = x.aval.dtype
    if new_dtype == src:
        return x
    if _kind(src) == "c" and _kind(new_dtype) != "c":  # NumPy keeps the real part
        x = ctx.op1("stablehlo.real", [x], ShapedArray(x.aval.shape, np.finfo(src).dtype))
    if new_dtype == np.bool_:  # nonzero -> True, whatever the source type
        return compare(ctx, x, ctx.full(0, x.aval.dtype, x.aval.shape), "NE")
    return convert(ctx, x, new_dtype)


jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = _convert_transpose
batch_rules[convert_element_type_p] = _vectorized_batch(convert_element_type_p)
lowering_rules[convert_element_type_p] = _convert_lowering
defpython(convert_element_type_p,
          lambda eqn, a: f"np.asarray({a[0]}).astype(np.{np.dtype(eqn.params['new_dtype']).name})")


# ---------------------------------------------------------- stop_gradient ----

stop_gradient_p = unop("stop_gradient", lambda x: x, hlo=lambda ctx, x: x, py="{0}", aval=lambda x: x)


def stop_gradient(x):
    """The identity, with a zero derivative; on every leaf of a pytree, as JAX's.

    >>> import funcad
    >>> funcad.grad(lambda p: p["w"] * funcad.lax.stop_gradient(p)["w"])({"w": 3.0})["w"]
    Array(3., dtype=float64, weak_type=True)
    """
    return tree_map(stop_gradient_p.bind, x)


defzero(stop_gradient_p)


# Elementwise results are split as their operands agree to be (core/typed_sharding.py).
for _p in [select_n_p, clamp_p, convert_element_type_p, complex_p]:
    sharding_rules[_p] = broadcasting_rule(_p.name)
