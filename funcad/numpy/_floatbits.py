"""Functions of a float's bit pattern: frexp, nextafter, spacing (JAX's values, incl. its edge cases)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core.avals import aval_of
from ..core.trace import bind_custom_jvp
from ..primitives.bits import bitcast_convert_type, shift_right_logical
from ..primitives.elementwise import stop_gradient
from ..arrays.creation import asarray
from ..arrays.dtypes import promote, to_inexact
from ..arrays.ufuncs import (bitwise_and, bitwise_or, copysign, divide, equal, greater, isnan, less,
                      logical_or, multiply, subtract, where)

__all__ = ["frexp", "nextafter", "spacing"]

# sign bit, exponent field width and bias, mantissa width of each float
_LAYOUT = {np.dtype(np.float16): (np.int16, 5, 15, 10), np.dtype(ml_dtypes.bfloat16): (np.int16, 8, 127, 7),
           np.dtype(np.float32): (np.int32, 8, 127, 23), np.dtype(np.float64): (np.int64, 11, 1023, 52)}


def _inexact(x, name):
    x = asarray(to_inexact(x))  # integers convert as for any float ufunc (funcad follows NumPy)
    if x.dtype not in _LAYOUT:
        raise TypeError(f"{name} needs a float16/bfloat16/32/64 array, got {x.dtype}")
    return x


def frexp(x):
    """Mantissa in [0.5, 1) and int32 exponent with x = m * 2**e (subnormals give 0, 0 as in JAX).

    >>> m, e = frexp(8.0)
    >>> float(m), int(e)
    (0.5, 4)
    """
    x = _inexact(x, "frexp")
    return tuple(bind_custom_jvp(_frexp, _frexp_jvp, [x]))


def _frexp_jvp(primals, tangents):
    # m = x * 2**-e with e piecewise constant; zero, subnormal, inf and nan pass x through
    mant, exp = _frexp(primals[0])
    d = aval_of(mant).dtype
    x = primals[0]
    special = equal(exp, np.int32(0))  # m / x is exactly 2**-e elsewhere (|m| >= 0.5)
    scale = where(special, np.array(1, d), divide(mant, where(special, np.array(1, d), x)))
    scale = stop_gradient(scale)  # 2**-e is piecewise constant
    return [mant, exp], [multiply(tangents[0], scale), None]


def _frexp(x):
    dtype = aval_of(x).dtype
    itype, ebits, bias, mbits = _LAYOUT[dtype]
    bits = bitcast_convert_type(x, itype)
    mask = np.array((1 << ebits) - 1, itype)
    field = bitwise_and(shift_right_logical(bits, np.array(mbits, itype)), mask)
    # Put the exponent field at bias - 1, which scales |m| into [0.5, 1).
    clear = np.array(~(int(mask) << mbits), itype)
    half = np.array((bias - 1) << mbits, itype)
    mant = bitcast_convert_type(bitwise_or(bitwise_and(bits, clear), half), dtype)
    special = logical_or(equal(field, 0), equal(field, mask))  # zero, subnormal, inf, nan
    zero = equal(field, 0)
    mant = where(zero, copysign(np.array(0, dtype), x), where(special, x, mant))
    exp = where(special, np.int32(0), (field - np.array(bias - 1, itype)).astype(np.int32))
    return [mant, exp]


def nextafter(x, y):
    """The next representable float after x1 in the direction of x2, elementwise.

    >>> float(nextafter(1.0, 2.0)) - 1.0
    2.220446049250313e-16
    """
    x, y = promote(_inexact(x, "nextafter"), _inexact(y, "nextafter"))
    itype = _LAYOUT[np.dtype(x.dtype)][0]
    bits = bitcast_convert_type(x, itype)
    one = np.array(1, itype)
    # Stepping away from zero adds one to the magnitude bits whatever the sign.
    away = equal(less(x, y), greater(x, np.array(0, x.dtype)))
    step = bitcast_convert_type(where(away, bits + one, bits - one), x.dtype)
    tiniest = bitcast_convert_type(one, x.dtype)
    from_zero = copysign(tiniest, y)
    out = where(equal(x, np.array(0, x.dtype)), from_zero, step)
    out = where(equal(x, y), y, out)
    return where(logical_or(isnan(x), isnan(y)), np.array(np.nan, x.dtype), out)


def spacing(x):
    """The distance from x to the next float away from zero (negative for negative x).

    >>> float(spacing(1.0))
    2.220446049250313e-16
    """
    x = _inexact(x, "spacing")
    dtype = x.dtype
    x = stop_gradient(x)  # piecewise constant: derivative 0, as JAX's
    inf = np.array(np.inf, dtype)
    if dtype == np.float16:  # NumPy's float16 spacing steps towards +inf even for negatives
        return subtract(nextafter(x, inf), x)
    out = subtract(nextafter(x, copysign(inf, x)), x)
    # A flushed subnormal difference (XLA on CPU) still reports the smallest step, as JAX.
    tiniest = np.array(ml_dtypes.finfo(dtype).smallest_subnormal, dtype)
    return where(equal(out, np.array(0, dtype)), copysign(tiniest, x), out)
