"""funcad.lax's slicing compositions: the `*_in_dim` family and index_take."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ..arrays.dtypes import cast
from ..arrays.indexing import getitem
from ..arrays.shape import moveaxis
from ..arrays.dtypes import asarray_or_tracer as _arr

__all__ = ['slice_in_dim', 'index_in_dim', 'dynamic_slice_in_dim', 'dynamic_index_in_dim', 'dynamic_update_slice_in_dim', 'dynamic_update_index_in_dim', 'index_take']


def _shape(x):
    return aval_of(x).shape


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """operand[start:limit:stride] along axis (static bounds; negatives count from the end)."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "slice_in_dim", x)
    n = _shape(x)[ax]
    start, stop, _ = slice(start_index, limit_index).indices(n)
    lo, hi, st = [0] * len(_shape(x)), list(_shape(x)), [1] * len(_shape(x))
    lo[ax], hi[ax], st[ax] = start, max(stop, start), int(stride)
    return S.slice(x, lo, hi, st)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """The index-th slice along axis (static index)."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "index_in_dim", x)
    n = _shape(x)[ax]
    index = int(index)
    if not -n <= index < n:
        raise FuncadValueError(f"index_in_dim: index {index} is out of bounds for axis {ax} with size {n}")
    index %= n
    out = slice_in_dim(x, index, index + 1, 1, ax)
    return out if keepdims else S.squeeze(out, (ax,))


def _start(i, n, allow_negative):
    i = cast(_arr(i), np.int64)
    if allow_negative:
        i = E.select_n(E.lt(i, np.int64(0)), i, E.add(i, np.int64(n)))
    return i


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """dynamic_slice along one axis (the start is clamped so the slice fits, as XLA)."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "dynamic_slice_in_dim", x)
    starts = [np.int64(0)] * len(_shape(x))
    starts[ax] = _start(start_index, _shape(x)[ax], allow_negative_indices)
    sizes = list(_shape(x))
    sizes[ax] = int(slice_size)
    return I.dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The slice at a traced index along axis."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    ax = canonical_axis(axis, len(_shape(out)))
    return out if keepdims else S.squeeze(out, (ax,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """dynamic_update_slice along one axis."""
    x, u = _arr(operand), _arr(update)
    ax = canonical_axis(axis, len(_shape(x)), "dynamic_update_slice_in_dim", x)
    starts = [np.int64(0)] * len(_shape(x))
    starts[ax] = _start(start_index, _shape(x)[ax], allow_negative_indices)
    return I.dynamic_update_slice(x, u, starts)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *, allow_negative_indices: bool = True):
    """Write update (with or without the axis of size 1) at a traced index along axis."""
    x, u = _arr(operand), _arr(update)
    ax = canonical_axis(axis, len(_shape(x)), "dynamic_update_index_in_dim", x)
    if len(_shape(u)) == len(_shape(x)) - 1:
        u = S.expand_dims(u, (ax,))
    return dynamic_update_slice_in_dim(x, u, index, ax, allow_negative_indices=allow_negative_indices)


def index_take(src, idxs, axes):
    """src indexed by one integer array per axis in axes (the others kept whole)."""
    x = _arr(src)
    nd = len(_shape(x))
    axes = [canonical_axis(a, nd, "index_take", x) for a in axes]
    x = moveaxis(x, axes, list(range(len(axes))))
    return getitem(x, tuple(_arr(i) for i in idxs))
