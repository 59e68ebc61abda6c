"""funcad.lax's elementwise compositions: mulhi, nextafter, one_minus_square,
polynomial, round with a rounding method, reciprocal, log2."""
from __future__ import annotations

import numpy as np
import operator
from typing import Sequence

from ..core.avals import aval_of
from ..primitives import elementwise as E
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives import bits as B
from ._types import RoundingMethod
from ..arrays.shape import broadcast_to
from ..arrays import ufuncs as U
from ..arrays.dtypes import asarray_or_tracer as _arr
from ..arrays.dtypes import promote

__all__ = ['reciprocal', 'log2', 'mulhi', 'nextafter', 'one_minus_square', 'polynomial', 'round']


def reciprocal(x):
    x = _arr(x)
    return E.div(np.ones((), aval_of(x).dtype), x)


def log2(x, *, accuracy=None):
    x = _arr(x)
    # log(x) · (1 / ln 2), as JAX writes it: the derivative then rounds as JAX's does
    return E.mul(E.log(x, accuracy), np.array(1 / np.log(2), aval_of(x).dtype))


_UNSIGNED = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


_SIGNED = {1: np.int8, 2: np.int16, 4: np.int32, 8: np.int64}


def _same(name, x, y):
    """x and y as arrays of one dtype and one shape (scalars broadcast, as in JAX's lax)."""
    x, y = _arr(x), _arr(y)
    ax, ay = aval_of(x), aval_of(y)
    if ax.dtype != ay.dtype:
        if ax.weak_type or ay.weak_type:
            x, y = promote(x, y)
        else:
            raise FuncadTypeError(f"{name} requires arguments of one dtype, got {ax.str_short()} and "
                                  f"{ay.str_short()}; convert one with lax.convert_element_type")
    shape = np.broadcast_shapes(aval_of(x).shape, aval_of(y).shape)
    if aval_of(x).shape and aval_of(y).shape and aval_of(x).ndim != aval_of(y).ndim:
        raise FuncadTypeError(f"{name}: arrays must have the same rank (or one is a scalar), got "
                              f"{aval_of(x).str_short()} and {aval_of(y).str_short()}")
    return broadcast_to(x, shape), broadcast_to(y, shape)


def _c(x, value):
    return np.array(value, aval_of(x).dtype)


def mulhi(x, y, /):
    """The high N bits of the 2N-bit product of N-bit integers (signed or unsigned).

    >>> import numpy as np
    >>> int(mulhi(np.uint32(2 ** 31), np.uint32(6)))
    3
    """
    x, y = _same("mulhi", x, y)
    dt = aval_of(x).dtype
    if dt.kind not in "iu":
        raise FuncadTypeError(f"mulhi needs integer operands, got {aval_of(x).str_short()}")
    u = np.dtype(_UNSIGNED[dt.itemsize])
    h = 4 * dt.itemsize
    ux, uy = B.bitcast_convert_type(x, u), B.bitcast_convert_type(y, u)
    mask, sh = _c(ux, (1 << h) - 1), _c(ux, h)
    x0, x1 = E.bitwise_and(ux, mask), B.shift_right_logical(ux, sh)
    y0, y1 = E.bitwise_and(uy, mask), B.shift_right_logical(uy, sh)
    p00, p01, p10, p11 = E.mul(x0, y0), E.mul(x0, y1), E.mul(x1, y0), E.mul(x1, y1)
    mid = E.add(E.add(B.shift_right_logical(p00, sh), E.bitwise_and(p01, mask)), E.bitwise_and(p10, mask))
    hi = E.add(E.add(p11, B.shift_right_logical(p01, sh)),
               E.add(B.shift_right_logical(p10, sh), B.shift_right_logical(mid, sh)))
    if dt.kind == "i":
        # The signed high half: subtract y where x < 0 and x where y < 0 (mod 2^N).
        zero = _c(ux, 0)
        hi = E.sub(hi, E.select_n(E.lt(x, _c(x, 0)), zero, uy))
        hi = E.sub(hi, E.select_n(E.lt(y, _c(y, 0)), zero, ux))
    return B.bitcast_convert_type(hi, dt)


def nextafter(x1, x2):
    """The next representable float after x1 in the direction of x2 (NumPy's nextafter).

    >>> float(nextafter(1.0, 2.0)) - 1.0 == 2.0 ** -52
    True
    """
    x, y = _same("nextafter", x1, x2)
    dt = aval_of(x).dtype
    if dt.kind != "f":
        raise FuncadTypeError(f"nextafter needs floating operands, got {aval_of(x).str_short()}")
    i = np.dtype(_SIGNED[dt.itemsize])
    bx, by = B.bitcast_convert_type(x, i), B.bitcast_convert_type(y, i)
    one, zero = _c(bx, 1), _c(x, 0)
    # Away from zero in magnitude when moving away from zero, else towards it.
    away = E.eq(E.lt(x, y), E.gt(x, zero))
    step = E.select_n(away, E.sub(bx, one), E.add(bx, one))
    # From +-0 the next value is the smallest subnormal with y's sign.
    sign = E.bitwise_and(by, _c(by, np.iinfo(i).min))
    step = E.select_n(E.eq(x, zero), step, E.bitwise_or(sign, one))
    out = B.bitcast_convert_type(step, dt)
    out = E.select_n(E.eq(x, y), out, y)
    nan = E.bitwise_or(E.ne(x, x), E.ne(y, y))
    return E.select_n(nan, out, E.add(x, y))


def one_minus_square(x):
    """1 - x**2, evaluated as (1 + x)(1 - x) for accuracy near |x| = 1; its derivative
    is the rule -2x (JAX's), accurate near 0.

    >>> float(one_minus_square(0.5))
    0.75
    """
    x = _arr(x)
    if aval_of(x).dtype.kind not in "fc":
        raise FuncadTypeError(f"one_minus_square needs a float or complex operand, got {aval_of(x).str_short()}")
    return E.one_minus_square(x)


def polynomial(x, coeffs: Sequence, *, unroll: int | None = None):
    """a_0 + a_1 x + ... + a_N x^N by Horner's rule; `coeffs` from the constant term up
    (the opposite of numpy.polyval). `unroll` is accepted for JAX compatibility: the
    recurrence is always unrolled here.

    >>> float(polynomial(2.0, [1.0, 2.0, 3.0]))
    17.0
    """
    if len(coeffs) == 0:
        raise FuncadValueError("polynomial needs at least one coefficient")
    if unroll is not None and operator.index(unroll) < 1:
        raise FuncadValueError(f"polynomial: unroll must be a positive int or None, got {unroll}")
    acc = _arr(coeffs[-1])
    for a in reversed(coeffs[:-1]):
        acc = U.add(U.multiply(acc, x), a)
    if len(coeffs) == 1:
        acc = U.add(acc, U.multiply(x, 0))
    return acc


def round(x, rounding_method: RoundingMethod = RoundingMethod.AWAY_FROM_ZERO):
    """Round to the nearest integer; ties away from zero (JAX's default) or, with
    RoundingMethod.TO_NEAREST_EVEN, to even.

    >>> round(np.array([0.5, 1.5, -2.5])).tolist(), round(np.array([0.5, 1.5]), 1).tolist()
    ([1.0, 2.0, -3.0], [0.0, 2.0])
    """
    x = _arr(x)
    method = RoundingMethod(int(getattr(rounding_method, "value", rounding_method)))
    if aval_of(x).dtype.kind != "f":
        raise FuncadTypeError(f"round needs a floating operand, got {aval_of(x).str_short()}")
    if method == RoundingMethod.TO_NEAREST_EVEN:
        return E.round(x)
    t = E.mul(E.sign(x), E.floor(E.abs(x)))  # trunc, exact
    tie_or_more = E.ge(E.abs(E.sub(x, t)), _c(x, 0.5))
    return E.select_n(tie_or_more, t, E.add(t, E.sign(x)))
