"""NumPy's bit shifts and bit count, on funcad's bit primitives (NumPy's type promotion)."""
from __future__ import annotations

import numpy as np

from ..primitives.bits import population_count, shift_left, shift_right_arithmetic, shift_right_logical
from ..arrays.creation import asarray
from ..arrays.manip import pad
from ..arrays.reductions import sum as _sum
from ..arrays.shape import moveaxis, ravel
from ..arrays.ufuncs import bitwise_and, not_equal

__all__ = ["left_shift", "right_shift", "bitwise_left_shift", "bitwise_right_shift", "bitwise_count",
           "packbits", "unpackbits"]


def _int_pair(name, x1, x2):
    py1, py2 = isinstance(x1, int), isinstance(x2, int)  # Python ints are weak (NEP 50)
    x1, x2 = asarray(x1), asarray(x2)
    dtype = (x1.dtype if py2 and not py1 else x2.dtype if py1 and not py2
             else np.result_type(x1.dtype, x2.dtype))
    if np.dtype(dtype).kind not in "iu":
        raise TypeError(f"{name} needs integer operands, got {x1.dtype} and {x2.dtype}")
    return x1.astype(dtype), x2.astype(dtype)


def left_shift(x, y):
    """x1 << x2 elementwise (0 once the shift reaches the bit width, as in JAX).

    >>> int(left_shift(1, 3))
    8
    """
    return shift_left(*_int_pair("left_shift", x, y))


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


def _bit_axis(a, axis, name):
    if axis is None:
        return ravel(a), 0
    if not isinstance(axis, (int, np.integer)) or not -a.ndim <= axis < a.ndim:
        raise ValueError(f"{name}: axis {axis!r} is out of range for an array of {a.ndim} dimensions")
    return a, int(axis) % a.ndim


def _bit_weights(bitorder, name):
    if bitorder not in ("big", "little"):
        raise ValueError(f"{name}: bitorder must be 'big' or 'little', got {bitorder!r}")
    w = np.arange(8, dtype=np.uint8)
    return w[::-1].copy() if bitorder == "big" else w


def packbits(a, axis: int | None = None, bitorder: str = "big"):
    """Nonzero elements of an integer or boolean array packed into the bits of uint8.

    The axis (the flattened array when None) is padded with zeros to a multiple of 8.

    >>> import numpy as np
    >>> packbits(np.array([1, 0, 1, 1, 0, 0, 0, 1])).tolist()
    [177]
    """
    a = asarray(a)
    if np.dtype(a.dtype).kind not in "biu":
        raise TypeError(f"packbits needs an integer or boolean array, got {a.dtype}")
    shifts = _bit_weights(bitorder, "packbits")
    a, axis = _bit_axis(a, axis, "packbits")
    bits = moveaxis(not_equal(a, 0).astype(np.uint8), axis, -1)
    n = bits.shape[-1]
    bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, -n % 8)])
    bits = bits.reshape(bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = _sum(left_shift(bits, shifts), axis=-1, dtype=np.uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis: int | None = None, count: int | None = None, bitorder: str = "big"):
    """The bits of a uint8 array as a uint8 array of 0s and 1s, 8 per element along axis.

    `count` keeps that many bits (negative: drops them from the end; more than there are:
    pads with zeros), as NumPy.

    >>> import numpy as np
    >>> unpackbits(np.array([177], np.uint8)).tolist()
    [1, 0, 1, 1, 0, 0, 0, 1]
    """
    a = asarray(a)
    if a.dtype != np.uint8:
        raise TypeError(f"unpackbits needs a uint8 array, got {a.dtype}")
    shifts = _bit_weights(bitorder, "unpackbits")
    a, axis = _bit_axis(a, axis, "unpackbits")
    a = moveaxis(a, axis, -1)
    bits = bitwise_and(right_shift(a[..., None], shifts), np.uint8(1))
    bits = bits.reshape(bits.shape[:-2] + (bits.shape[-2] * 8,))
    if count is not None:
        n = bits.shape[-1]
        keep = count if count >= 0 else max(n + count, 0)
        bits = bits[..., :keep] if keep <= n else pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, keep - n)])
    return moveaxis(bits, -1, axis)
