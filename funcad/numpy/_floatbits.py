"""Functions of a float's bit pattern: frexp, nextafter, spacing (JAX's values, incl. its edge cases)."""
from __future__ import annotations

import numpy as np

from ..primitives.bits import bitcast_convert_type, shift_right_logical
from ._creation import asarray
from ._dtypes import promote, to_inexact
from ._ufuncs import (bitwise_and, bitwise_or, copysign, equal, greater, isnan, less,
                      logical_or, subtract, where)

__all__ = ["frexp", "nextafter", "spacing"]

# sign bit, exponent field width and bias, mantissa width of each float
_LAYOUT = {np.dtype(np.float16): (np.int16, 5, 15, 10), np.dtype(np.float32): (np.int32, 8, 127, 23),
           np.dtype(np.float64): (np.int64, 11, 1023, 52)}


def _inexact(x, name):
    x = asarray(to_inexact(x))  # integers convert as for any float ufunc (funcad follows NumPy)
    if x.dtype not in _LAYOUT:
        raise TypeError(f"{name} needs a float16/32/64 array, got {x.dtype}")
    return x


def frexp(x):
    """Mantissa in [0.5, 1) and int32 exponent with x = m * 2**e (subnormals give 0, 0 as in JAX).

    >>> m, e = frexp(8.0)
    >>> float(m), int(e)
    (0.5, 4)
    """
    x = _inexact(x, "frexp")
    itype, ebits, bias, mbits = _LAYOUT[x.dtype]
    bits = bitcast_convert_type(x, itype)
    mask = np.array((1 << ebits) - 1, itype)
    field = bitwise_and(shift_right_logical(bits, np.array(mbits, itype)), mask)
    # Put the exponent field at bias - 1, which scales |m| into [0.5, 1).
    clear = np.array(~(int(mask) << mbits), itype)
    half = np.array((bias - 1) << mbits, itype)
    mant = bitcast_convert_type(bitwise_or(bitwise_and(bits, clear), half), x.dtype)
    special = logical_or(equal(field, 0), equal(field, mask))  # zero, subnormal, inf, nan
    zero = equal(field, 0)
    mant = where(zero, copysign(np.array(0, x.dtype), x), where(special, x, mant))
    exp = where(special, np.int32(0), (field - np.array(bias - 1, itype)).astype(np.int32))
    return mant, exp


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
    inf = np.array(np.inf, x.dtype)
    if x.dtype == np.float16:  # NumPy's float16 spacing steps towards +inf even for negatives
        return subtract(nextafter(x, inf), x)
    out = subtract(nextafter(x, copysign(inf, x)), x)
    # A flushed subnormal difference (XLA on CPU) still reports the smallest step, as JAX.
    tiniest = np.array(np.finfo(x.dtype).smallest_subnormal, x.dtype)
    return where(equal(out, np.array(0, x.dtype)), copysign(tiniest, x), out)
