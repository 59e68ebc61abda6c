"""NumPy's bit shifts and bit count, on funcad's bit primitives (NumPy's type promotion)."""
from __future__ import annotations

import numpy as np

from ..primitives.bits import population_count, shift_left, shift_right_arithmetic, shift_right_logical
from ._creation import asarray

__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "bitwise_count"]


def _int_pair(name, x1, x2):
    py1, py2 = isinstance(x1, int), isinstance(x2, int)  # Python ints are weak (NEP 50)
    x1, x2 = asarray(x1), asarray(x2)
    dtype = (x1.dtype if py2 and not py1 else x2.dtype if py1 and not py2
             else np.result_type(x1.dtype, x2.dtype))
    if np.dtype(dtype).kind not in "iu":
        raise TypeError(f"{name} needs integer operands, got {x1.dtype} and {x2.dtype}")
    return x1.astype(dtype), x2.astype(dtype)


def left_shift(x1, x2):
    """x1 << x2 elementwise (0 once the shift reaches the bit width, as in JAX).

    >>> int(left_shift(1, 3))
    8
    """
    return shift_left(*_int_pair("left_shift", x1, x2))


def right_shift(x1, x2):
    """x1 >> x2 elementwise: arithmetic for signed, logical for unsigned integers.

    >>> int(right_shift(-16, 2))
    -4
    """
    a, b = _int_pair("right_shift", x1, x2)
    return (shift_right_arithmetic if np.dtype(a.dtype).kind == "i" else shift_right_logical)(a, b)


bitwise_left_shift, bitwise_right_shift = left_shift, right_shift


def bitwise_count(x):
    """The number of 1 bits of |x| elementwise (uint8, as NumPy and JAX).

    >>> int(bitwise_count(7))
    3
    """
    x = asarray(x)
    if np.dtype(x.dtype).kind not in "iu":
        raise TypeError(f"bitwise_count needs an integer array, got {x.dtype}")
    if np.dtype(x.dtype).kind == "i":
        x = abs(x)
    return population_count(x).astype(np.uint8)
