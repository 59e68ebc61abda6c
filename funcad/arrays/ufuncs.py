"""Elementwise functions with NumPy's names, dtype rules and broadcasting."""
from __future__ import annotations

import inspect
import warnings as _warnings

import numpy as np
from ..core.narrow import kind as _kind

from ..core import ieee_warnings as _ieee
from ..core import options as _options
from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.eager import EagerArray, lane_dtypes, plain, transcendental_lane_dtypes, wrap
from ..primitives import elementwise as E
from ..primitives._base import const
from .dtypes import asarray_or_tracer, cast, is_weak, promote, strong, to_inexact, ufunc_dtype
from ..core.trace import Tracer, bind_custom_jvp, ctx
from ..core.errors import FuncadValueError
from ..transforms.eager_xla import jitted_like_jax

# The eager fast lane. With no transformation and no debug_nans, an op on real floating
# NumPy or eager arrays whose dtype the x64 mode keeps, and on Python numbers or arrays of
# the same dtype, is its NumPy ufunc: NumPy's NEP 50 dtype rules and broadcasting agree with
# funcad's there, so promotion and `Primitive.bind`'s checks are skipped (the issue's goal:
# NumPy's time plus at most 1 µs). `_LANE` is core/eager.py's `lane_dtypes`, which is empty
# while debug_nans is on and loses float64 with x64 off, so one membership test checks all three.
# The lane also needs funcad's warnings filter in the current filter list (one identity
# check; see core/ieee_warnings.py): else the op takes `Primitive.bind`, which puts it there.
_LANE = lane_dtypes
# Transcendental functions leave the lane while eager_backend="xla" (XLA rounds them).
_TLANE = transcendental_lane_dtypes
_nd, _view, _setflags = np.ndarray, np.ndarray.view, np.ndarray.setflags


def _lane_out(out):
    if type(out) is _nd:
        out = _view(out, EagerArray)
        _setflags(out, False)
        return out
    return wrap(out)  # a NumPy scalar, from 0-d operands


def _float_unary(prim_fn, ufunc, name, prepare=to_inexact, exact=False):
    """`prepare(x, ufunc)`: the operand off the lane (to_inexact: integers become floats);
    `exact`: NumPy rounds it as XLA does (sqrt, rint, negative), so it stays on the lane
    whatever the eager_backend."""
    lane = _LANE if exact else _TLANE

    def f(x):
        t = type(x)
        if (t is EagerArray or t is _nd) and x.dtype in lane and ctx.trace is None:
            # a new catch_warnings list, or a filter put before funcad's (NumPy's IEEE warnings stay hidden)
            if _warnings.filters is not _ieee.installed or \
                    (_ieee.installed or _ieee.NONE)[0] is not _ieee.first:
                _ieee.install()
            return _lane_out(ufunc(_view(x, _nd) if t is EagerArray else x))
        return prim_fn(prepare(x, ufunc))
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{ufunc.__name__}."
    return f


sin = _float_unary(E.sin, np.sin, "sin")
cos = _float_unary(E.cos, np.cos, "cos")
tan = _float_unary(E.tan, np.tan, "tan")
arcsin = _float_unary(E.asin, np.arcsin, "arcsin")
arccos = _float_unary(E.acos, np.arccos, "arccos")
arctan = _float_unary(E.atan, np.arctan, "arctan")
sinh = _float_unary(E.sinh, np.sinh, "sinh")
cosh = _float_unary(E.cosh, np.cosh, "cosh")
tanh = _float_unary(E.tanh, np.tanh, "tanh")
arcsinh = _float_unary(E.asinh, np.arcsinh, "arcsinh")
arccosh = _float_unary(E.acosh, np.arccosh, "arccosh")
arctanh = _float_unary(E.atanh, np.arctanh, "arctanh")
exp = _float_unary(E.exp, np.exp, "exp")
exp2 = _float_unary(E.exp2, np.exp2, "exp2")
log = _float_unary(E.log, np.log, "log")
log1p = _float_unary(E.log1p, np.log1p, "log1p")
expm1 = _float_unary(E.expm1, np.expm1, "expm1")
sqrt = _float_unary(E.sqrt, np.sqrt, "sqrt", exact=True)
cbrt = _float_unary(E.cbrt, np.cbrt, "cbrt")


def _rounding(prim_fn, name):
    def f(x):
        x = asarray_or_tracer(x)
        if _kind(aval_of(x).dtype) in "iub":  # integers are whole (JAX's)
            return _x64.canonicalize(x)
        return prim_fn(x)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}, as numpy.{name} (integers and bools unchanged)."
    return f


floor = _rounding(E.floor, "floor")
ceil = _rounding(E.ceil, "ceil")
rint = _float_unary(E.round, np.rint, "rint", exact=True)
asin, acos, atan, asinh, acosh, atanh = arcsin, arccos, arctan, arcsinh, arccosh, arctanh


@jitted_like_jax()
def log2(x):
    x = to_inexact(x, np.log2)
    # log(x) · (1 / ln 2), as JAX computes it (a division rounds otherwise)
    return _times_real(E.log(x), 1 / np.log(2))


@jitted_like_jax()
def log10(x):
    x = to_inexact(x, np.log10)
    # JAX's constant here is strong (log2's is made like x): the result is too
    return _times_real(E.log(x), 1 / np.log(10), like_z=False)


def _times_real(z, c: float, like_z: bool = True):
    """z · c for a real constant c: of each part of a complex z (as JAX's log10); the
    constant is as weak as z where `like_z`."""
    k = const if like_z else (lambda x, v: np.array(v, aval_of(x).dtype))
    if _kind(aval_of(z).dtype) == "c":
        re, im = E.real(z), E.imag(z)
        return E.complex(E.mul(re, k(re, c)), E.mul(im, k(im, c)))
    return E.mul(z, k(z, c))


@jitted_like_jax(static_argnames=('decimals',))
def round(a, decimals=0, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.round is not supported.")
    a = asarray_or_tracer(a)
    if _kind(aval_of(a).dtype) in "iub":
        return _x64.canonicalize(a)
    if decimals == 0:
        return E.round(a)
    s = np.array(10.0 ** decimals, aval_of(a).dtype)
    return E.div(E.round(E.mul(a, s)), s)


around = round


def trunc(x):
    x = asarray_or_tracer(x)
    if _kind(aval_of(x).dtype) in "iub":
        return _x64.canonicalize(x)
    return E.select_n(E.lt(x, np.array(0, aval_of(x).dtype)), E.floor(x), E.ceil(x))


fix = trunc


# Also `x.__neg__` (funcad/numpy/_methods.py): one call.
neg_operator = _float_unary(E.neg, np.negative, "negative", prepare=lambda x, _: asarray_or_tracer(x),
                            exact=True)


def negative(x, /, out=None, where=None):
    if out is not None or where is not None:
        refuse_ufunc_out('negative', out, where)
    return neg_operator(x)


def positive(x):
    return wrap(_x64.canonicalize(asarray_or_tracer(x)))


def absolute(x):
    x = asarray_or_tracer(x)
    return x if _kind(aval_of(x).dtype) in "ub" else E.abs(x)


abs = absolute


def sign(x):
    return E.sign(asarray_or_tracer(x))


def square(x):
    return E.integer_pow(_bool_as_int(asarray_or_tracer(x)), 2)


def reciprocal(x):
    x = asarray_or_tracer(x)
    if not _x64.enabled:  # JAX's 1/x of an integer is a float (NumPy's, in 64-bit mode, an int)
        x = to_inexact(x)
    return E.div(const(x, 1), x)


def isfinite(x):
    x = asarray_or_tracer(x)
    if _kind(aval_of(x).dtype) not in "fc":
        return E.eq(x, x)
    return E.is_finite(x)


def isnan(x):
    x = asarray_or_tracer(x)
    return E.ne(x, x)


def isinf(x):
    a = E.abs(to_inexact(x))  # real for complex x: inf where either part is
    return E.eq(a, np.array(np.inf, aval_of(a).dtype))


def logical_not(x):
    return E.bitwise_not(_as_bool(x))


def invert(x):
    return E.bitwise_not(asarray_or_tracer(x))


bitwise_not = invert


def _as_bool(x):
    x = asarray_or_tracer(x)
    return x if aval_of(x).dtype == np.bool_ else E.ne(x, np.zeros((), aval_of(x).dtype))


def check_rank_promotion(name: str, *xs) -> None:
    """funcad.config's numpy_rank_promotion ('warn'/'raise'): JAX's warning or error when
    operands of different nonzero ranks would broadcast."""
    shapes = [np.shape(x) for x in xs]
    if len({len(s) for s in shapes if s}) < 2:
        return
    shown = " ".join(map(str, shapes))
    if _options.numpy_rank_promotion == "raise":
        raise ValueError(f"Operands could not be broadcast together for {name} on shapes {shown} and "
                         "with the config option jax_numpy_rank_promotion='raise'. Add the missing "
                         "axes explicitly (x[:, None], expand_dims), or allow it with "
                         "funcad.config.update('jax_numpy_rank_promotion', 'allow').")
    _warnings.warn(f"Following NumPy automatic rank promotion for {name} on shapes {shown}. Set the "
                  "jax_numpy_rank_promotion config option to 'allow' to disable this warning.",
                  stacklevel=3)


def refuse_ufunc_out(name: str, out, where) -> None:
    """JAX's refusal of NumPy's ufunc `out=` and `where=` (funcad arrays are immutable:
    use the result, and `where(mask, f(x), x)` for a masked update)."""
    if out is not None:
        raise NotImplementedError(f"out argument of <jnp.ufunc '{name}'>")
    if where is not None:
        raise NotImplementedError(f"where argument of <jnp.ufunc '{name}'>")


def accepted_operand(other) -> bool:
    """Whether an operator method of a funcad array takes `other`; else it returns
    NotImplemented, as JAX's do, so that `x == pytest.approx(1.0)` asks the other object."""
    return (isinstance(other, (np.ndarray, np.generic, int, float, complex, list, tuple, Tracer))
            or hasattr(other, "__funcad_array__"))


# The operator methods of the lane's binary functions, `{add: (__add__, __radd__), ...}`,
# installed on funcad's arrays by funcad/numpy/_methods.py.
OPERATORS: dict = {}


def _binary(prim_fn, name, ufunc=None, lane=None, names=("x1", "x2"), lane_dtypes=_LANE):
    """`lane`: the NumPy ufunc that is the primitive's impl on real floats (the fast lane),
    taken for the dtypes of `lane_dtypes`;
    `names`: JAX's names of the two positional-only operands, shown by `inspect`.
    With a lane, also the operator methods (OPERATORS): the same body, so that `x + y`
    is one Python call."""
    def build(swap: bool, method: bool):
        # method: an operator method, which defers to operands it does not know;
        # swap: the reflected one (`y.__radd__(x)` is `add(x, y)`).
        def f(x1, x2, /, out=None, where=None):
            if swap:
                x1, x2 = x2, x1
            if out is not None or where is not None:
                refuse_ufunc_out(name, out, where)
            if lane is not None and ctx.trace is None:
                tx, ty = type(x1), type(x2)
                if tx is EagerArray or tx is _nd:
                    d = x1.dtype
                    if not (ty is float or ty is int or (ty is EagerArray or ty is _nd) and x2.dtype is d
                            and _options.numpy_rank_promotion == "allow"):
                        d = None
                elif (tx is float or tx is int) and (ty is EagerArray or ty is _nd):
                    d = x2.dtype
                else:
                    d = None
                if d in lane_dtypes:
                    # a new catch_warnings list, or a filter put before funcad's (NumPy's IEEE
                    # warnings stay hidden)
                    if _warnings.filters is not _ieee.installed or \
                            (_ieee.installed or _ieee.NONE)[0] is not _ieee.first:
                        _ieee.install()
                    try:
                        out = lane(_view(x1, _nd) if tx is EagerArray else x1,
                                   _view(x2, _nd) if ty is EagerArray else x2)
                    except ValueError:
                        pass  # shapes that do not broadcast: funcad's error, below
                    else:
                        if type(out) is _nd:  # `_lane_out`, inline
                            out = _view(out, EagerArray)
                            _setflags(out, False)
                            return out
                        return wrap(out)
            if method and not accepted_operand(x1 if swap else x2):
                return NotImplemented
            if _options.numpy_rank_promotion != "allow":
                check_rank_promotion(name, x1, x2)
            x1, x2 = promote(x1, x2)
            if ufunc is not None and _kind(aval_of(x1).dtype) in "biu":
                d = ufunc_dtype(ufunc, aval_of(x1).dtype, aval_of(x1).dtype)
                x1, x2 = cast(x1, d), cast(x2, d)
            return prim_fn(x1, x2)
        f.__name__ = name
        return f

    f = build(False, False)
    f.__doc__ = f"Elementwise {name} with broadcasting, as numpy.{name}."
    if names != ("x1", "x2"):
        sig = inspect.signature(f)
        ps = list(sig.parameters.values())
        f.__signature__ = sig.replace(parameters=[ps[0].replace(name=names[0]), ps[1].replace(name=names[1]), *ps[2:]])
    if lane is not None:
        OPERATORS[f] = (build(False, True), build(True, True))
    return f


def _or_for_bools(prim_fn, logical):
    """NumPy's and JAX's add/multiply of bools: a logical or/and (XLA has no bool add)."""
    def f(x, y):
        return logical(x, y) if aval_of(x).dtype == np.bool_ else prim_fn(x, y)
    return f


add = _binary(_or_for_bools(E.add, E.bitwise_or), "add", lane=np.add)
subtract = _binary(E.sub, "subtract", lane=np.subtract)
multiply = _binary(_or_for_bools(E.mul, E.bitwise_and), "multiply", lane=np.multiply)
# Off the lane with eager_backend="xla": XLA divides by a broadcast divisor as a product
# with its reciprocal (transforms/eager_xla.py).
true_divide = _binary(E.div, "true_divide", np.true_divide, lane=np.true_divide, lane_dtypes=_TLANE)
divide = true_divide
arctan2 = _binary(E.atan2, "arctan2", np.arctan2)
atan2 = arctan2
maximum = _binary(E.max, "maximum", lane=np.maximum)
minimum = _binary(E.min, "minimum", lane=np.minimum)
equal = _binary(E.eq, "equal", lane=np.equal, names=("x", "y"))
not_equal = _binary(E.ne, "not_equal", lane=np.not_equal, names=("x", "y"))


def _ordered(prim_fn, strict):
    """An order comparison that takes complex values in lexicographic order (real part,
    then imaginary), as NumPy and JAX do; XLA compares only real numbers."""
    def f(x, y):
        if _kind(aval_of(x).dtype) != "c":
            return prim_fn(x, y)
        rx, ry = E.real(x), E.real(y)
        return E.bitwise_or(strict(rx, ry), E.bitwise_and(E.eq(rx, ry), prim_fn(E.imag(x), E.imag(y))))
    return f


less = _binary(_ordered(E.lt, E.lt), "less", lane=np.less, names=("x", "y"))
less_equal = _binary(_ordered(E.le, E.lt), "less_equal", lane=np.less_equal, names=("x", "y"))
greater = _binary(_ordered(E.gt, E.gt), "greater", lane=np.greater, names=("x", "y"))
greater_equal = _binary(_ordered(E.ge, E.gt), "greater_equal", lane=np.greater_equal, names=("x", "y"))
bitwise_and = _binary(E.bitwise_and, "bitwise_and")
bitwise_or = _binary(E.bitwise_or, "bitwise_or")
bitwise_xor = _binary(E.bitwise_xor, "bitwise_xor")


def logical_and(x, y, /, out=None, where=None):
    if out is not None or where is not None:
        refuse_ufunc_out('logical_and', out, where)
    return E.bitwise_and(*promote(_as_bool(x), _as_bool(y)))


def logical_or(x, y, /, out=None, where=None):
    if out is not None or where is not None:
        refuse_ufunc_out('logical_or', out, where)
    return E.bitwise_or(*promote(_as_bool(x), _as_bool(y)))


def logical_xor(x, y, /, out=None, where=None):
    if out is not None or where is not None:
        refuse_ufunc_out('logical_xor', out, where)
    return E.bitwise_xor(*promote(_as_bool(x), _as_bool(y)))


def power(x1, x2):
    """x ** y; an integer Python exponent becomes integer_pow (exact, as in JAX)."""
    if type(x2) is int and not isinstance(x1, bool):
        x1 = _bool_as_int(asarray_or_tracer(x1))  # bool ** 2 is an int, as JAX's
        if _kind(aval_of(x1).dtype) in "fc" or x2 >= 0:
            return E.integer_pow(x1, x2)
    x1, x2 = map(_bool_as_int, promote(x1, x2))  # bool ** bool is an int, as NumPy's and JAX's
    if _kind(aval_of(x1).dtype) in "iub":
        d = aval_of(x1).dtype
        if _kind(aval_of(x2).dtype) in "iu" and isinstance(x2, np.ndarray) and isinstance(x1, np.ndarray) \
                and not (plain(x2) < 0).any():
            return wrap(np.power(plain(x1), plain(x2)))  # both concrete: NumPy's exact integer power
        # Traced integers: computed in float64, exact up to 2**53. A negative exponent gives
        # 0 (1 or -1 for x1 of 1 or -1), as in JAX, where NumPy raises.
        xf, yf = cast(x1, np.float64), cast(x2, np.float64)
        zero = np.zeros((), aval_of(xf).dtype)
        r = E.pow(xf, yf)
        return cast(E.select_n(E.bitwise_and(E.lt(yf, zero), E.eq(xf, zero)), r, zero), d)
    return E.pow(x1, x2)


def float_power(x, y):
    """x ** y in float64, or complex128 when either is complex (NumPy's; 32 bits with x64 off)."""
    x, y = promote(x, y)
    d = np.dtype(np.complex128 if _kind(aval_of(x).dtype) == "c" else np.float64)
    return power(cast(x, d), cast(y, d))


def _bool_as_int(x):
    """A bool array as NumPy's arithmetic takes it: int8 (JAX's int32 with x64 off)."""
    if aval_of(x).dtype != np.bool_:
        return x
    return cast(x, np.dtype(np.int8) if _x64.enabled else np.dtype(np.int32))


def _int_divisor(x, y):
    """Bools as ints; an integer divisor 0 becomes 1, so x % 0 is 0 (JAX's; NumPy's too)."""
    x, y = map(_bool_as_int, promote(x, y))
    if _kind(aval_of(y).dtype) in "iu":
        one, zero = np.ones((), aval_of(y).dtype), np.zeros((), aval_of(y).dtype)
        y = E.select_n(E.eq(y, zero), y, one)
    return x, y


def fmod(x1, x2):
    return E.rem(*_int_divisor(x1, x2))


def remainder(x1, x2):
    """Python-style modulo: the result has the sign of y."""
    x1, x2 = _int_divisor(x1, x2)
    r = E.rem(x1, x2)
    zero = np.zeros((), aval_of(r).dtype)
    fix_sign = E.bitwise_and(E.ne(r, zero), E.ne(E.lt(r, zero), E.lt(x2, zero)))
    return E.select_n(fix_sign, r, E.add(r, x2))


mod = remainder


def floor_divide(x1, x2):
    x1, x2 = promote(x1, x2)
    if _kind(aval_of(x1).dtype) == "u":
        return E.div(x1, x2)  # nothing to round down
    if _kind(aval_of(x1).dtype) == "i":
        q = E.div(x1, x2)
        zero = np.zeros((), aval_of(x1).dtype)
        # signs compared with sign(), so x1 // 0 is div's -1 less one where x1 != 0, as JAX's
        adjust = E.bitwise_and(E.ne(E.rem(x1, x2), zero), E.ne(E.sign(x1), E.sign(x2)))
        return E.select_n(adjust, q, E.sub(q, np.ones((), aval_of(x1).dtype)))
    if aval_of(x1).dtype == np.bool_:
        return floor_divide(_bool_as_int(x1), _bool_as_int(x2))
    # Python's float floor division: (x1 - fmod(x1, x2)) / x2 is exact, less one where the
    # remainder's sign differs from y's (floor(x1 / x2) would give -0.0 for -2 // inf);
    # x1 / 0 is x1 / x2 itself (inf, -inf or nan), as in JAX.
    zero = const(x1, 0)  # as weak as the operands: weak // weak stays weak, as JAX's
    r = E.rem(x1, x2)
    q = E.div(E.select_n(E.eq(x2, zero), E.sub(x1, r), x1), x2)
    adjust = E.bitwise_and(E.ne(r, zero), E.ne(E.lt(x2, zero), E.lt(r, zero)))
    return E.round(E.select_n(adjust, q, E.sub(q, const(x1, 1))))


def divmod(x1, x2):
    return floor_divide(x1, x2), remainder(x1, x2)


@jitted_like_jax()
def hypot(x1, x2):
    """sqrt(x**2 + y**2) without overflow. The value is computed as JAX does; the
    derivative is a rule, (x dx + y dy) / hypot(x, y), so that it is also right
    to every order at |x| == |y|, where differentiating the max/min formula gives
    a wrong second derivative. At the origin each argument's derivative is 1/2."""
    x1, x2 = promote(to_inexact(x1), to_inexact(x2))
    return bind_custom_jvp(_hypot_value, _hypot_jvp, [x1, x2])[0]


def _hypot_value(x, y):
    x, y = absolute(x), absolute(y)
    big, small = maximum(x, y), minimum(x, y)
    zero = equal(big, 0.0)
    r = where(zero, big, multiply(big, sqrt(add(1.0, square(divide(small, where(zero, 1.0, big)))))))
    return [where(logical_or(isinf(x), isinf(y)), np.inf, r)]


def _hypot_jvp(primals, tangents):
    out = hypot(*primals)
    # x / r, as JAX's first derivative; at the origin each argument counts 1/2 (the
    # balanced subgradient of the max/min formula), where JAX 0.12 gives NaN.
    zero = equal(out, 0.0)
    safe = where(zero, 1.0, out)
    terms = [multiply(t, where(zero, 0.5, divide(p, safe))) for p, t in zip(primals, tangents)
             if t is not None]
    return [out], [terms[0] if len(terms) == 1 else add(*terms)]


def logaddexp(x1, x2, /, out=None, where=None):
    """log(exp(x) + exp(y)) without overflow. As in JAX, its derivative is a rule
    (not the derivative of the formula), finite wherever the value is: at x == y,
    with one argument -inf, and at +inf."""
    if out is not None or where is not None:
        refuse_ufunc_out('logaddexp', out, where)
    x1, x2 = promote(to_inexact(x1), to_inexact(x2))
    return bind_custom_jvp(_logaddexp_value, _logaddexp_jvp, [x1, x2])[0]


def _logaddexp_value(x, y):
    if _kind(aval_of(x).dtype) == "c":
        # a + log1p(exp(b - a)) with a the argument of larger real part, its imaginary
        # part taken back into [-pi, pi] (the principal branch, as JAX's)
        rx, ry = E.real(x), E.real(y)  # the larger one in lexicographic order, as max's
        first = E.bitwise_or(E.gt(rx, ry), E.bitwise_and(E.eq(rx, ry), E.ge(E.imag(x), E.imag(y))))
        a, b = where(first, x, y), where(first, y, x)
        out = add(a, log1p(exp(subtract(b, a))))
        pi = np.array(np.pi, aval_of(E.real(out)).dtype)
        return [E.complex(E.real(out), subtract(remainder(add(E.imag(out), pi), 2 * pi), pi))]
    delta = subtract(x, y)  # NaN when both are the same infinity: then x + y is the answer
    return [where(isnan(delta), add(x, y), add(maximum(x, y), log1p(exp(negative(absolute(delta))))))]


def _logaddexp_jvp(primals, tangents):
    x, y = primals
    out = logaddexp(x, y)

    def finite(v):  # +inf - +inf would make NaN weights
        return where(equal(v, np.inf), 0.0, v)
    terms = [multiply(t, exp(subtract(finite(p), finite(out)))) for p, t in zip(primals, tangents)
             if t is not None]
    t_out = terms[0] if len(terms) == 1 else add(*terms)
    return [out], [t_out]


def logaddexp2(x1, x2, /, out=None, where=None):
    """log2(2**x + 2**y) without overflow; gradients as logaddexp's."""
    if out is not None or where is not None:
        refuse_ufunc_out('logaddexp2', out, where)
    x1, x2 = promote(to_inexact(x1), to_inexact(x2))
    return bind_custom_jvp(_logaddexp2_value, _logaddexp2_jvp, [x1, x2])[0]


def _logaddexp2_value(x, y):
    delta = subtract(x, y)
    return [where(isnan(delta), add(x, y),
                  add(maximum(x, y), divide(log1p(exp2(negative(absolute(delta)))), float(np.log(2.0)))))]


def _logaddexp2_jvp(primals, tangents):
    out = logaddexp2(*primals)

    def finite(v):
        return where(equal(v, np.inf), 0.0, v)
    terms = [multiply(t, exp2(subtract(finite(p), finite(out)))) for p, t in zip(primals, tangents)
             if t is not None]
    return [out], [terms[0] if len(terms) == 1 else add(*terms)]


def where(condition, x, y, /):
    """Elementwise choice: x where condition, else y (both branches are computed); the
    public where, with its one-argument form, is in setops.py."""
    x, y = promote(x, y)
    return E.select_n(_as_bool(condition), y, x)


def clip(arr=None, /, min=None, max=None, *, a=None, a_min=None, a_max=None):
    """arr limited to [min, max]; NumPy's a_min=/a_max= and JAX's min=/max= both work."""
    if arr is None:
        arr = a
    elif a is not None:
        raise FuncadValueError("clip: give the array once (positionally or as a=)")
    if arr is None:
        raise FuncadValueError("clip: missing the array to clip")
    for new, old, name in ((min, a_min, "min"), (max, a_max, "max")):
        if new is not None and old is not None:
            raise FuncadValueError(f"clip: give {name}= or a_{name}=, not both")
    lo = min if min is not None else a_min
    hi = max if max is not None else a_max
    arr = asarray_or_tracer(arr)
    if lo is not None:
        arr = maximum(arr, lo)
    if hi is not None:
        arr = minimum(arr, hi)
    return arr


def copysign(x1, x2):
    x1, x2 = promote(to_inexact(x1), to_inexact(x2))
    if is_weak(x1) and not is_weak(x2):
        x1 = strong(x1)  # the result takes the magnitude's values but both operands' type
    return where(E.lt(x2, np.zeros((), aval_of(x2).dtype)) | E.bitwise_and(E.eq(x2, np.zeros((), aval_of(x2).dtype)), E.lt(E.div(np.ones((), aval_of(x2).dtype), x2), np.zeros((), aval_of(x2).dtype))), negative(absolute(x1)), absolute(x1))


def heaviside(x1, x2):
    x1, x2 = promote(x1, x2)
    x1, x2 = to_inexact(x1), to_inexact(x2)  # a float result, as NumPy's and JAX's
    zero, one = np.zeros((), aval_of(x1).dtype), np.ones((), aval_of(x1).dtype)
    return where(E.lt(x1, zero), zero, where(E.gt(x1, zero), one, x2))


@jitted_like_jax()
def sinc(x):
    x = to_inexact(x)
    d = aval_of(x).dtype
    px = E.mul(x, np.array(np.pi, d))
    is0 = E.eq(x, np.zeros((), d))
    safe = E.select_n(is0, px, np.ones((), d))
    return E.select_n(is0, E.div(E.sin(safe), safe), np.ones((), d))


def deg2rad(x):
    x = to_inexact(x)
    return E.mul(x, np.array(np.pi / 180, aval_of(x).dtype))


def rad2deg(x):
    x = to_inexact(x)
    return E.mul(x, np.array(180 / np.pi, aval_of(x).dtype))


radians, degrees = deg2rad, rad2deg


def abs2(x):
    """|x|² elementwise: real for complex x, where x·x would be complex and wrong."""
    if np.dtype(x.dtype).kind == "c":
        return square(abs(x))
    return x * x
