"""funcad.lax's array construction and reshaping compositions: full/full_like/empty,
the broadcast helpers, collapse, tile, split, stack/unstack, shape_as_value."""
from __future__ import annotations

import numpy as np
import operator
from typing import Sequence

from ..core.errors import FuncadValueError
from ..primitives import structural as S
from ..primitives._base import broadcast_shapes as _broadcast_shapes, canonical_axis
from ..arrays.shape import stack as _stack, tile as _tile
from ..arrays.creation import full as _full, full_like as _full_like
from ..arrays.manip import unstack as _unstack
from ..core.avals import aval_of
from ..core.eager import wrap as _wrap
from ..arrays.shape import broadcast_to
from ..arrays.dtypes import asarray_or_tracer as _arr
from ._slicing import _shape, slice_in_dim

__all__ = ['full', 'full_like', 'empty', 'broadcast', 'broadcast_to_rank', 'broadcasted_iota', 'broadcast_shapes', 'collapse', 'tile', 'split', 'stack', 'unstack', 'broadcast_like', 'shape_as_value']


def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of shape filled with fill_value (placed as `sharding` says)."""
    return _wrap(_full(shape, fill_value, dtype, device=sharding))


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    # `sharding` places the result, as numpy.full_like's device= does
    return _wrap(_full_like(x, fill_value, dtype, shape, device=sharding))


def empty(shape, dtype):
    """An array of shape and dtype (zero-filled)."""
    return np.zeros(tuple(shape) if np.ndim(shape) else (int(shape),), dtype)


def broadcast(operand, sizes):
    """operand with new leading dimensions of the given sizes."""
    x = _arr(operand)
    nd = len(_shape(x))
    sizes = tuple(int(s) for s in sizes)
    return S.broadcast_in_dim(x, sizes + _shape(x), tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank: int):
    """x with leading dimensions of size 1 added up to rank."""
    x = _arr(x)
    nd = len(_shape(x))
    if nd >= rank:
        return x
    return broadcast(x, (1,) * (rank - nd))


def broadcasted_iota(dtype, shape, dimension: int):
    """Integers counting along dimension, broadcast to shape."""
    return S.iota(np.dtype(dtype), tuple(shape), dimension)


def broadcast_shapes(*shapes):
    """The broadcast of shapes (as tuples)."""
    return tuple(_broadcast_shapes(*[tuple(s) for s in shapes]))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """operand with dimensions [start, stop) merged into one."""
    x = _arr(operand)
    sh = _shape(x)
    nd = len(sh)
    lo = canonical_axis(start_dimension, nd, "collapse", x)
    hi = nd if stop_dimension is None else (stop_dimension + nd if stop_dimension < 0 else stop_dimension)
    if not lo <= hi <= nd:
        raise FuncadValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for rank {nd}")
    return S.reshape(x, sh[:lo] + (int(np.prod(sh[lo:hi], dtype=np.int64)),) + sh[hi:])


def tile(operand, reps):
    return _tile(_arr(operand), tuple(reps))


def split(operand, sizes, axis: int = 0):
    """operand cut into consecutive pieces of the given sizes along axis."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "split", x)
    sizes = [int(s) for s in sizes]
    if sum(sizes) != _shape(x)[ax]:
        raise FuncadValueError(f"split: sizes {sizes} must add up to the axis size {_shape(x)[ax]}")
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, 1, ax))
        start += s
    return out


def stack(operands, axis: int = 0):
    return _stack([_arr(o) for o in operands], axis)


def unstack(x, axis: int = 0):
    return _unstack(x, axis=axis)


def broadcast_like(arr, like_arr):
    """`arr` broadcast (NumPy rules) to the shape of `like_arr`.

    >>> broadcast_like(np.array([1, 2, 3]), np.zeros((2, 3))).shape
    (2, 3)
    """
    return broadcast_to(_arr(arr), aval_of(_arr(like_arr)).shape)


def shape_as_value(shape: Sequence[int]):
    """A shape as an int array (int64; JAX's default int dtype with x64)."""
    return np.asarray(tuple(operator.index(d) for d in shape), dtype=np.int64).reshape(len(shape))
