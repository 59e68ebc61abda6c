"""Elementwise primitives: unary math, binary arithmetic, comparisons, logic, select.

Binary primitives broadcast like NumPy and need operands of one dtype;
`funcad.numpy` promotes dtypes first. Transposes undo broadcasting in one
place, `unbroadcast`.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError
from ..core.trace import transpose_rules
from ._base import broadcast_shapes
from ._base import (const, defjvp, deflinear, defzero, full, is_undefined, new_primitive,
                    shape_of, type_error, unbroadcast, broadcast_to, zeros_like, dtype_of)




class _LazyScipySpecial:
    """scipy.special, imported on first use: it takes ~0.2 s, more than the
    rest of `import funcad`, and only a few impls need it."""

    def __getattr__(self, name):
        import scipy.special
        globals()["sp"] = scipy.special
        return getattr(scipy.special, name)


sp = _LazyScipySpecial()

# ---------------------------------------------------------------- unary ----

def _unary_aval(name, kinds):
    def rule(x, **_):
        if x.dtype.kind not in kinds:
            want = {"fc": "a float or complex", "f": "a float", "biu": "an integer or boolean",
                    "fciu": "a numeric", "b": "a boolean"}.get(kinds, kinds)
            raise type_error(name, f"it needs {want} array; cast with .astype(...)", x)
        return x
    return rule


def unop(name, impl, kinds="fc"):
    return new_primitive(name, impl, _unary_aval(name, kinds))


def _erf_inv(x):
    out, dtype = sp.erfinv(x), np.result_type(x)
    return out if out.dtype == dtype else out.astype(dtype)  # SciPy gives float32 for float16


neg_p = unop("neg", np.negative, "fciu")
sin_p = unop("sin", np.sin)
cos_p = unop("cos", np.cos)
asin_p = unop("asin", np.arcsin)
acos_p = unop("acos", np.arccos)
atan_p = unop("atan", np.arctan)
sinh_p = unop("sinh", np.sinh)
cosh_p = unop("cosh", np.cosh)
tanh_p = unop("tanh", np.tanh)
asinh_p = unop("asinh", np.arcsinh)
acosh_p = unop("acosh", np.arccosh)
atanh_p = unop("atanh", np.arctanh)
exp_p = unop("exp", np.exp)
exp2_p = unop("exp2", np.exp2)
log_p = unop("log", np.log)
log1p_p = unop("log1p", np.log1p)
expm1_p = unop("expm1", np.expm1)
logistic_p = unop("logistic", lambda x: sp.expit(x))
sqrt_p = unop("sqrt", np.sqrt)
rsqrt_p = unop("rsqrt", lambda x: np.reciprocal(np.sqrt(x)))
cbrt_p = unop("cbrt", np.cbrt, "f")
abs_p = unop("abs", np.abs, "fiu")
sign_p = unop("sign", np.sign, "fiu")
floor_p = unop("floor", np.floor, "f")
ceil_p = unop("ceil", np.ceil, "f")
round_p = unop("round", np.rint, "f")  # half to even, as NumPy's round
erf_p = unop("erf", lambda x: sp.erf(x), "f")
erfc_p = unop("erfc", lambda x: sp.erfc(x), "f")  # 1 - erf(x) loses every digit in the tail, where erfc is tiny
erf_inv_p = unop("erf_inv", _erf_inv, "f")
lgamma_p = unop("lgamma", lambda x: sp.gammaln(x), "f")
digamma_p = unop("digamma", lambda x: sp.digamma(x), "f")
is_finite_p = new_primitive("is_finite", np.isfinite,
                            lambda x: ShapedArray(x.shape, np.bool_))
not_p = unop("not", np.invert, "biu")
polygamma_p = new_primitive("polygamma", lambda x, *, m: _polygamma_impl(x, m),
                            _unary_aval("polygamma", "f"))
integer_pow_p = new_primitive(
    "integer_pow", lambda x, *, y: _integer_pow_impl(x, y), _unary_aval("integer_pow", "fciu"))


def _polygamma_impl(x, m):
    # SciPy computes in float64; keep the operand's dtype (a Python float is float64).
    return np.asarray(sp.polygamma(m, x)).astype(np.result_type(x))


def _integer_pow_impl(x, y):
    x = np.asarray(x)
    if y < 0 and x.dtype.kind in "iu":
        raise ValueError("integer_pow of an integer array to a negative power")
    return x ** y if y >= 0 else 1 / x ** -y


def _bind1(p):
    def f(x):
        return p.bind(x)
    f.__name__ = p.name
    return f


neg, sin, cos, asin, acos, atan = map(_bind1, (neg_p, sin_p, cos_p, asin_p, acos_p, atan_p))
sinh, cosh, tanh, asinh, acosh, atanh = map(_bind1, (sinh_p, cosh_p, tanh_p, asinh_p, acosh_p, atanh_p))
exp, exp2, log, log1p, expm1, logistic = map(_bind1, (exp_p, exp2_p, log_p, log1p_p, expm1_p, logistic_p))
sqrt, rsqrt, cbrt, abs, sign = map(_bind1, (sqrt_p, rsqrt_p, cbrt_p, abs_p, sign_p))
floor, ceil, round, erf, erf_inv = map(_bind1, (floor_p, ceil_p, round_p, erf_p, erf_inv_p))
lgamma, digamma, is_finite, bitwise_not = map(_bind1, (lgamma_p, digamma_p, is_finite_p, not_p))
erfc = _bind1(erfc_p)


def polygamma(m: int, x):
    return polygamma_p.bind(x, m=int(m))


def integer_pow(x, y: int):
    if int(y) != y:
        raise FuncadTypeError(f"integer_pow needs an integer exponent, got {y!r}; use lax.pow "
                              "(funcad.numpy.power) for real exponents")
    return integer_pow_p.bind(x, y=int(y))


def square(x):
    return integer_pow(x, 2)


deflinear(neg_p, lambda ct, x: [neg(ct)])
defjvp(sin_p, lambda t, ans, x: mul(t, cos(x)))
defjvp(cos_p, lambda t, ans, x: neg(mul(t, sin(x))))
defjvp(asin_p, lambda t, ans, x: mul(t, rsqrt(sub(const(x, 1), square(x)))))
defjvp(acos_p, lambda t, ans, x: neg(mul(t, rsqrt(sub(const(x, 1), square(x))))))
defjvp(atan_p, lambda t, ans, x: div(t, add(const(x, 1), square(x))))
defjvp(sinh_p, lambda t, ans, x: mul(t, cosh(x)))
defjvp(cosh_p, lambda t, ans, x: mul(t, sinh(x)))
defjvp(tanh_p, lambda t, ans, x: mul(t, sub(const(x, 1), square(ans))))
defjvp(asinh_p, lambda t, ans, x: mul(t, rsqrt(add(square(x), const(x, 1)))))
defjvp(acosh_p, lambda t, ans, x: mul(t, mul(rsqrt(sub(x, const(x, 1))), rsqrt(add(x, const(x, 1))))))
defjvp(atanh_p, lambda t, ans, x: div(t, sub(const(x, 1), square(x))))
defjvp(exp_p, lambda t, ans, x: mul(t, ans))
defjvp(exp2_p, lambda t, ans, x: mul(t, mul(ans, const(x, np.log(2)))))
defjvp(log_p, lambda t, ans, x: div(t, x))
defjvp(log1p_p, lambda t, ans, x: div(t, add(x, const(x, 1))))
defjvp(expm1_p, lambda t, ans, x: mul(t, add(ans, const(x, 1))))
defjvp(logistic_p, lambda t, ans, x: mul(t, mul(ans, sub(const(x, 1), ans))))
defjvp(sqrt_p, lambda t, ans, x: div(t, mul(const(x, 2), ans)))
defjvp(rsqrt_p, lambda t, ans, x: mul(t, mul(const(x, -0.5), div(ans, x))))
defjvp(cbrt_p, lambda t, ans, x: mul(t, mul(const(x, 1 / 3), integer_pow(ans, -2))))
# As in JAX, the derivative at 0 is taken from the right (+1), so norms and hinges get a subgradient.
defjvp(abs_p, lambda t, ans, x: select_n(ge(x, const(x, 0)), neg(t), t))
defjvp(erf_p, lambda t, ans, x: mul(t, mul(const(x, 2 / np.sqrt(np.pi)), exp(neg(square(x))))))
defjvp(erfc_p, lambda t, ans, x: mul(t, mul(const(x, -2 / np.sqrt(np.pi)), exp(neg(square(x))))))
defjvp(erf_inv_p, lambda t, ans, x: mul(t, mul(const(x, np.sqrt(np.pi) / 2), exp(square(ans)))))
defjvp(lgamma_p, lambda t, ans, x: mul(t, digamma(x)))
defjvp(digamma_p, lambda t, ans, x: mul(t, polygamma(1, x)))
defjvp(polygamma_p, lambda t, ans, x, *, m: mul(t, polygamma(m + 1, x)))
defjvp(integer_pow_p, lambda t, ans, x, *, y:
       full(shape_of(x), 0, dtype_of(x)) if y == 0 else
       mul(t, mul(const(x, y), x if y == 2 else integer_pow(x, y - 1))))
for _p in (sign_p, floor_p, ceil_p, round_p, is_finite_p, not_p):
    defzero(_p)


# --------------------------------------------------------------- binary ----

def _binary_aval(name, kinds="fciub", out_dtype=None):
    def rule(x, y, **_):
        if x.dtype != y.dtype:
            raise type_error(name, "operands must have one dtype; funcad.numpy promotes them, "
                             "funcad.lax does not (cast one with .astype)", x, y)
        if x.dtype.kind not in kinds:
            raise type_error(name, f"dtype {x.dtype} is not supported here", x, y)
        try:
            shape = broadcast_shapes(x.shape, y.shape)
        except ValueError:
            raise type_error(name, "shapes do not broadcast together", x, y) from None
        return ShapedArray(shape, out_dtype or x.dtype, x.weak_type and y.weak_type)
    return rule


def binop(name, impl, kinds="fciub", out_dtype=None):
    return new_primitive(name, impl, _binary_aval(name, kinds, out_dtype))


def _int_div(x, y):
    x, y = np.asarray(x), np.asarray(y)
    if x.dtype.kind in "iu":
        # C (and XLA) integer division truncates toward zero.
        with np.errstate(divide="ignore"):
            q = np.floor_divide(x, y)
            return q + ((np.remainder(x, y) != 0) & ((x < 0) != (y < 0))).astype(q.dtype)
    return np.true_divide(x, y)


def _rem(x, y):
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.fmod(x, y)


add_p = binop("add", np.add, "fciu")
sub_p = binop("sub", np.subtract, "fciu")
mul_p = binop("mul", np.multiply, "fciub")
div_p = binop("div", _int_div, "fciu")
rem_p = binop("rem", _rem, "fiu")
pow_p = binop("pow", np.power, "fc")
max_p = binop("max", np.maximum, "fiub")
min_p = binop("min", np.minimum, "fiub")
atan2_p = binop("atan2", np.arctan2, "f")
and_p = binop("and", np.bitwise_and, "biu")
or_p = binop("or", np.bitwise_or, "biu")
xor_p = binop("xor", np.bitwise_xor, "biu")
eq_p = binop("eq", np.equal, out_dtype=np.bool_)
ne_p = binop("ne", np.not_equal, out_dtype=np.bool_)
lt_p = binop("lt", np.less, "fiub", np.bool_)
le_p = binop("le", np.less_equal, "fiub", np.bool_)
gt_p = binop("gt", np.greater, "fiub", np.bool_)
ge_p = binop("ge", np.greater_equal, "fiub", np.bool_)


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


from ..core.trace import jvp_rules  # noqa: E402

jvp_rules[add_p] = lambda p, t: _add_jvp(p, t)
jvp_rules[sub_p] = lambda p, t: _add_jvp(p, t, negate=True)
transpose_rules[add_p] = _add_transpose
transpose_rules[sub_p] = lambda ct, x, y: _add_transpose(ct, x, y, negate=True)

defjvp(mul_p, lambda t, ans, x, y: mul(t, y), lambda t, ans, x, y: mul(x, t))
transpose_rules[mul_p] = lambda ct, x, y: [
    unbroadcast(mul(ct, y), shape_of(x)) if is_undefined(x) else None,
    unbroadcast(mul(x, ct), shape_of(y)) if is_undefined(y) else None]

defjvp(div_p, lambda t, ans, x, y: div(t, y),
       lambda t, ans, x, y: neg(mul(t, div(ans, y))))
transpose_rules[div_p] = lambda ct, x, y: [unbroadcast(div(ct, y), shape_of(x)), None]


def _rem_jvp_y(t, ans, x, y):
    q = div(x, y)
    return neg(mul(t, mul(sign(q), floor(abs(q)))))


defjvp(rem_p, lambda t, ans, x, y: broadcast_to(t, shape_of(ans)), _rem_jvp_y)


def _pow_jvp_x(t, ans, x, y):
    # y * x**(y-1), taken as 0 where y == 0 so that x = 0 gives no NaN.
    ym1 = sub(y, const(y, 1))
    d = mul(y, pow(x, ym1))
    d = select_n(eq(y, const(y, 0)), d, zeros_like(d))
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
    if which.dtype.kind not in "bi":
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


jvp_rules[select_n_p] = _select_n_jvp
transpose_rules[select_n_p] = _select_n_transpose


def _clamp_aval(lo, x, hi):
    if not (lo.dtype == x.dtype == hi.dtype):
        raise type_error("clamp", "operands must have one dtype", lo, x, hi)
    for b in (lo, hi):
        if b.shape not in ((), x.shape):
            raise type_error("clamp", "bounds must be scalars or have the operand's shape", lo, x, hi)
    return x


clamp_p = new_primitive("clamp", lambda lo, x, hi: np.minimum(np.maximum(x, lo), hi), _clamp_aval)


def clamp(lo, x, hi):
    return clamp_p.bind(lo, x, hi)


defjvp(clamp_p,
       lambda t, ans, lo, x, hi: select_n(bitwise_and(gt(lo, x), lt(lo, hi)), zeros_like(ans), broadcast_to(t, shape_of(ans))),
       lambda t, ans, lo, x, hi: select_n(bitwise_and(gt(x, lo), lt(x, hi)), zeros_like(ans), broadcast_to(t, shape_of(ans))),
       lambda t, ans, lo, x, hi: select_n(lt(hi, x), zeros_like(ans), broadcast_to(t, shape_of(ans))))


# ------------------------------------------------------- dtype conversion ----

def _convert_aval(x, *, new_dtype, weak_type=False):
    return ShapedArray(x.shape, new_dtype, weak_type)


def _convert_impl(x, *, new_dtype, weak_type=False):
    x = np.asarray(x)
    if x.dtype.kind == "c" and np.dtype(new_dtype).kind != "c":
        x = x.real
    return x.astype(new_dtype)


convert_element_type_p = new_primitive("convert_element_type", _convert_impl, _convert_aval)


def convert_element_type(x, new_dtype, weak_type: bool = False):
    try:
        new_dtype = np.dtype(new_dtype)
    except TypeError:
        raise FuncadTypeError(f"convert_element_type: {new_dtype!r} is not a dtype; pass e.g. "
                              "numpy.float32 or 'float32'") from None
    return convert_element_type_p.bind(x, new_dtype=new_dtype, weak_type=weak_type)


def _convert_jvp(primals, tangents, *, new_dtype, weak_type=False):
    (x,), (t,) = primals, tangents
    ans = convert_element_type(x, new_dtype, weak_type)
    if t is None or np.dtype(new_dtype).kind not in "fc" or dtype_of(x).kind not in "fc":
        return ans, None
    return ans, convert_element_type(t, new_dtype, weak_type)


def _convert_transpose(ct, x, *, new_dtype, weak_type=False):
    return [convert_element_type(ct, x.aval.dtype, x.aval.weak_type)]


jvp_rules[convert_element_type_p] = _convert_jvp
transpose_rules[convert_element_type_p] = _convert_transpose


# ---------------------------------------------------------- stop_gradient ----

stop_gradient_p = new_primitive("stop_gradient", lambda x: x, lambda x: x)


def stop_gradient(x):
    """The identity, with a zero derivative."""
    return stop_gradient_p.bind(x)


defzero(stop_gradient_p)
