"""More elementwise functions, written with existing ops: fabs, fmax/fmin, signbit,
isposinf/isneginf, nan_to_num, modf, ldexp, gcd/lcm, and the
type predicates (isreal, iscomplexobj, isscalar, ...)."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..arrays.dtypes import asarray_or_tracer, cast, no_out, promote, to_inexact
from ..arrays.ufuncs import (absolute, floor_divide, isinf, isnan, logical_and, logical_or, maximum, minimum, multiply, power, subtract, trunc, where)
from ..arrays.ufuncs import copysign, invert
from ..transforms.control_flow_api import while_loop
from ..arrays.shape import broadcast_arrays
from ..arrays.reductions import any as _any

__all__ = ["fabs", "fmax", "fmin", "signbit", "isposinf", "isneginf",
           "isrealobj", "iscomplexobj", "isscalar", "iterable", "nan_to_num", "modf", "ldexp",
           "gcd", "lcm", "pow", "bitwise_invert"]


def fabs(x, /):
    """Absolute value as a float (integer input is converted)."""
    return absolute(to_inexact(x, np.fabs))


def fmax(x1, x2):
    """Elementwise maximum, ignoring a NaN when the other value is not NaN."""
    x1, x2 = promote(x1, x2)
    if aval_of(x1).dtype.kind not in "fc":
        return maximum(x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, maximum(x1, x2)))


def fmin(x1, x2):
    """Elementwise minimum, ignoring a NaN when the other value is not NaN."""
    x1, x2 = promote(x1, x2)
    if aval_of(x1).dtype.kind not in "fc":
        return minimum(x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, minimum(x1, x2)))


def signbit(x, /):
    """Whether the sign bit is set (true for -0.0 and negative NaN-free values)."""
    x = asarray_or_tracer(x)
    d = aval_of(x).dtype
    if d.kind == "b":
        return E.ne(x, x)
    if d.kind == "u":
        return E.ne(x, x)
    if d.kind == "i":
        return E.lt(x, np.zeros((), d))
    zero = np.zeros((), d)
    # -0.0 compares equal to 0.0: its reciprocal (-inf) tells the sign.
    return logical_or(E.lt(x, zero), logical_and(E.eq(x, zero), E.lt(E.div(np.ones((), d), x), zero)))


def isposinf(x, /, out=None):
    x = asarray_or_tracer(x)
    if aval_of(x).dtype.kind not in "fc":
        return E.ne(x, x)
    return E.eq(x, np.array(np.inf, aval_of(x).dtype))


def isneginf(x, /, out=None):
    x = asarray_or_tracer(x)
    if aval_of(x).dtype.kind not in "fc":
        return E.ne(x, x)
    return E.eq(x, np.array(-np.inf, aval_of(x).dtype))


def isrealobj(x):
    return not iscomplexobj(x)


def iscomplexobj(x):
    """Whether x has a complex dtype."""
    if x is None:
        return False
    try:
        d = aval_of(asarray_or_tracer(x)).dtype
    except Exception:
        d = np.asarray(x).dtype
    return d.kind == "c"


def isscalar(element):
    """Whether element is a scalar: a Python/NumPy scalar or a 0-d array (as jnp.isscalar)."""
    if isinstance(element, (np.generic, int, float, complex, bool)):
        return True
    if isinstance(element, (Tracer, np.ndarray)) or hasattr(element, "__funcad_array__"):
        return len(aval_of(asarray_or_tracer(element)).shape) == 0
    return False


def iterable(y):
    """Whether y can be iterated over."""
    try:
        iter(y)
    except TypeError:
        return False
    return True


def nan_to_num(x, copy: bool = True, nan=0.0, posinf=None, neginf=None):
    """NaN replaced by `nan`, infinities by `posinf`/`neginf` (default: the largest
    finite values of the dtype)."""
    x = asarray_or_tracer(x)
    d = aval_of(x).dtype
    if d.kind not in "fc":
        return x
    info = np.finfo(d)
    posinf = info.max if posinf is None else posinf
    neginf = info.min if neginf is None else neginf
    out = where(isnan(x), np.array(nan, d), x)
    out = where(E.eq(out, np.array(np.inf, d)), np.array(posinf, d), out)
    return where(E.eq(out, np.array(-np.inf, d)), np.array(neginf, d), out)


def modf(x, /, out=None):
    """(fractional part, integral part), both with x's sign."""
    no_out(out, "modf")
    x = to_inexact(x, np.modf)
    whole = trunc(x)
    frac = subtract(x, whole)
    return where(isinf(x), _signed_zero(x), frac), whole


def _signed_zero(x):
    return copysign(np.zeros((), aval_of(x).dtype), x)


def ldexp(x1, x2, /):
    """x1 * 2**x2 for integer x2."""
    x2 = asarray_or_tracer(x2)
    if aval_of(x2).dtype.kind not in "iub":
        raise FuncadTypeError(f"ldexp: the exponent must be an integer array, got {aval_of(x2).dtype}")
    x1 = to_inexact(x1, np.ldexp)
    d = aval_of(x1).dtype
    # Two factors of 2**(x2/2) so that neither overflows where the product does not.
    half = floor_divide(cast(x2, np.int64), np.int64(2))
    rest = E.sub(cast(x2, np.int64), half)
    two = np.array(2.0, d)
    return multiply(multiply(x1, power(two, cast(half, d))), power(two, cast(rest, d)))


def gcd(x1, x2):
    """Greatest common divisor of integers (Euclid's algorithm in a while_loop)."""
    x1, x2 = promote(x1, x2)
    d = aval_of(x1).dtype
    if d.kind not in "iub":
        raise FuncadTypeError(f"gcd: arguments must be integers, got {d}")
    a, b = broadcast_arrays(absolute(x1), absolute(x2))
    zero = np.zeros((), d)

    def cond(c):
        return _any(E.ne(c[1], zero))

    def body(c):
        a, b = c
        nz = E.ne(b, zero)
        safe_b = where(nz, b, np.ones((), d))
        return where(nz, b, a), where(nz, E.rem(a, safe_b), zero)
    if not isinstance(a, Tracer) and not isinstance(b, Tracer):
        return np.gcd(a, b)
    return while_loop(cond, body, (a, b))[0]


def lcm(x1, x2):
    """Least common multiple of integers (0 if either is 0)."""
    x1, x2 = promote(x1, x2)
    d = aval_of(x1).dtype
    if d.kind not in "iub":
        raise FuncadTypeError(f"lcm: arguments must be integers, got {d}")
    g = gcd(x1, x2)
    zero = np.zeros((), d)
    is0 = E.eq(g, zero)
    q = floor_divide(absolute(x1), where(is0, np.ones((), d), g))
    return where(is0, zero, multiply(q, absolute(x2)))


def pow(x1, x2, /):
    """power (the array API's name)."""
    return power(x1, x2)


def bitwise_invert(x, /):
    """Bitwise NOT (the array API's name)."""
    return invert(x)
