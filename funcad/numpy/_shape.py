"""Shape manipulation: reshape, transpose, concatenate, stack, split, tile, flip..."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from ..primitives._base import broadcast_to as _broadcast_to
from ._dtypes import asarray_or_tracer, promote
from ._reductions import _norm_axes


def shape(a):
    return aval_of(asarray_or_tracer(a)).shape


def ndim(a):
    return len(shape(a))


def size(a):
    return int(np.prod(shape(a), dtype=np.int64))


def reshape(a, newshape, order="C"):
    if order != "C":
        raise NotImplementedError("funcad.numpy.reshape supports order='C' only")
    a = asarray_or_tracer(a)
    n = size(a)
    newshape = (int(newshape),) if np.ndim(newshape) == 0 else tuple(int(s) for s in newshape)
    if newshape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in newshape:
        known = int(np.prod([s for s in newshape if s != -1], dtype=np.int64))
        if known == 0 or n % known:
            raise ValueError(f"cannot reshape array of size {n} into shape {newshape}")
        newshape = tuple(n // known if s == -1 else s for s in newshape)
    if newshape == shape(a):
        return a
    return S.reshape(a, newshape)


def ravel(a):
    return reshape(a, (-1,))


def transpose(a, axes=None):
    a = asarray_or_tracer(a)
    nd = ndim(a)
    perm = tuple(reversed(range(nd))) if axes is None else tuple(int(x) % nd for x in axes)
    return a if perm == tuple(range(nd)) else S.transpose(a, perm)


def matrix_transpose(a):
    nd = ndim(a)
    return transpose(a, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def moveaxis(a, source, destination):
    a = asarray_or_tracer(a)
    nd = ndim(a)
    src = [s % nd for s in np.atleast_1d(source)]
    dst = [d % nd for d in np.atleast_1d(destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a, axis1, axis2):
    nd = ndim(a)
    perm = list(range(nd))
    perm[axis1 % nd], perm[axis2 % nd] = perm[axis2 % nd], perm[axis1 % nd]
    return transpose(a, perm)


def squeeze(a, axis=None):
    a = asarray_or_tracer(a)
    sh = shape(a)
    axes = tuple(i for i, s in enumerate(sh) if s == 1) if axis is None else _norm_axes(len(sh), axis)
    for i in axes:
        if sh[i] != 1:
            raise ValueError(f"cannot select an axis to squeeze out which has size not equal to one ({sh})")
    return S.squeeze(a, axes) if axes else a


def expand_dims(a, axis):
    a = asarray_or_tracer(a)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out_nd = ndim(a) + len(axes)
    axes = sorted(int(x) % out_nd for x in axes)
    return S.expand_dims(a, axes)


def broadcast_to(a, shape):
    a = asarray_or_tracer(a)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(shape)
    np.broadcast_shapes(aval_of(a).shape, shape)  # raises NumPy's error if incompatible
    return _broadcast_to(a, shape)


def broadcast_arrays(*args):
    args = [asarray_or_tracer(a) for a in args]
    s = np.broadcast_shapes(*[shape(a) for a in args])
    return [broadcast_to(a, s) for a in args]


def atleast_1d(a):
    a = asarray_or_tracer(a)
    return reshape(a, (1,)) if ndim(a) == 0 else a


def atleast_2d(a):
    a = asarray_or_tracer(a)
    return reshape(a, (1,) * (2 - ndim(a)) + shape(a)) if ndim(a) < 2 else a


def concatenate(arrays, axis=0):
    arrays = promote(*arrays)
    if axis is None:
        return S.concatenate([ravel(a) for a in arrays], 0)
    nd = ndim(arrays[0])
    if len(arrays) == 1:
        return arrays[0]
    return S.concatenate(arrays, _norm_axes(nd, axis)[0])


def stack(arrays, axis=0):
    arrays = [asarray_or_tracer(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    nd = ndim(arrays[0]) + 1
    ax = int(axis) % nd
    return concatenate([expand_dims(a, ax) for a in arrays], ax)


def hstack(arrays):
    arrays = [atleast_1d(a) for a in arrays]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1)


def vstack(arrays):
    return concatenate([atleast_2d(a) for a in arrays], 0)


def column_stack(arrays):
    arrays = [reshape(a, (-1, 1)) if ndim(a) < 2 else a for a in arrays]
    return concatenate(arrays, 1)


def split(a, indices_or_sections, axis=0):
    a = asarray_or_tracer(a)
    nd = ndim(a)
    ax = int(axis) % nd
    n = shape(a)[ax]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        if n % k:
            raise ValueError("array split does not result in an equal division")
        bounds = [i * (n // k) for i in range(k + 1)]
    else:
        bounds = [0] + [int(i) for i in indices_or_sections] + [n]
    out = []
    for lo, hi in zip(bounds[:-1], bounds[1:]):
        lo, hi = min(max(lo, 0), n), min(max(hi, lo), n)
        start = [0] * nd
        stop = list(shape(a))
        start[ax], stop[ax] = lo, hi
        out.append(S.slice(a, start, stop))
    return out


def array_split(a, sections, axis=0):
    n = shape(a)[int(axis) % ndim(a)]
    q, r = divmod(n, int(sections))
    sizes = [q + 1] * r + [q] * (int(sections) - r)
    return split(a, np.cumsum(sizes)[:-1].tolist(), axis)


def hsplit(a, s):
    return split(a, s, 1 if ndim(a) > 1 else 0)


def vsplit(a, s):
    return split(a, s, 0)


def flip(a, axis=None):
    a = asarray_or_tracer(a)
    axes = _norm_axes(ndim(a), axis)
    return S.rev(a, axes) if axes else a


def fliplr(a):
    return flip(a, 1)


def flipud(a):
    return flip(a, 0)


def roll(a, shift, axis=None):
    a = asarray_or_tracer(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape(a))
    shifts, axes = np.broadcast_arrays(np.atleast_1d(shift), np.atleast_1d(axis))
    for s, ax in zip(shifts, axes):
        ax = int(ax) % ndim(a)
        n = shape(a)[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            lo, hi = split(a, [n - s], ax)
            a = concatenate([hi, lo], ax)
    return a


def tile(a, reps):
    a = asarray_or_tracer(a)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    nd = max(len(reps), ndim(a))
    a = reshape(a, (1,) * (nd - ndim(a)) + shape(a))
    reps = (1,) * (nd - len(reps)) + reps
    # Broadcast each axis against a new leading reps axis, then merge.
    sh = shape(a)
    inter = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, sh)):
        inter += [r, s]
        dims.append(2 * i + 1)
    b = S.broadcast_in_dim(a, inter, dims)
    return S.reshape(b, tuple(r * s for r, s in zip(reps, sh)))


def repeat(a, repeats, axis=None):
    a = asarray_or_tracer(a)
    if axis is None:
        a = ravel(a)
        axis = 0
    ax = int(axis) % ndim(a)
    sh = shape(a)
    if np.ndim(repeats) == 0:
        r = int(repeats)
        b = S.broadcast_in_dim(a, sh[:ax + 1] + (r,) + sh[ax + 1:], tuple(range(ax + 1)) + tuple(range(ax + 2, len(sh) + 1)))
        return S.reshape(b, sh[:ax] + (sh[ax] * r,) + sh[ax + 1:])
    idx = np.repeat(np.arange(sh[ax]), np.asarray(repeats))
    from ._indexing import take
    return take(a, idx, axis=ax)


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray_or_tracer(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = shape(a)[-2:]
    rows = np.arange(max(0, -offset), min(n, m - offset)) if min(n, m - offset) > max(0, -offset) else np.arange(0)
    cols = rows + offset
    idx = np.stack([rows, cols], -1)
    b = moveaxis(a, (-2, -1), (0, 1))
    out = I.gather(b, idx)            # (k, batch...)
    return moveaxis(out, 0, -1)


def diag(v, k=0):
    v = asarray_or_tracer(v)
    if ndim(v) == 2:
        return diagonal(v, k)
    if ndim(v) != 1:
        raise ValueError("diag needs a 1-d or 2-d input")
    n = shape(v)[0] + abs(k)
    rows = np.arange(shape(v)[0]) + max(0, -k)
    cols = np.arange(shape(v)[0]) + max(0, k)
    zeros = np.zeros((n, n), aval_of(v).dtype)
    return I.scatter_add(zeros, np.stack([rows, cols], -1), v)


def trace(a, offset=0, axis1=0, axis2=1):
    from ._reductions import sum as _sum
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1)


def tri(N, M=None, k=0, dtype=float):
    return np.tri(N, M, k, dtype)


def tril(m, k=0):
    m = asarray_or_tracer(m)
    n, mm = shape(m)[-2:]
    mask = np.tri(n, mm, k, dtype=bool)
    return E.select_n(mask, np.zeros((), aval_of(m).dtype), m)


def triu(m, k=0):
    m = asarray_or_tracer(m)
    n, mm = shape(m)[-2:]
    mask = np.tri(n, mm, k - 1, dtype=bool)
    return E.select_n(mask, m, np.zeros((), aval_of(m).dtype))


def sort(a, axis=-1):
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = ravel(a), 0
    return I.sort([a], int(axis) % ndim(a))[0]


def argsort(a, axis=-1):
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = int(axis) % ndim(a)
    from ..primitives.structural import iota
    return I.sort([a, iota(np.int64, shape(a), ax)], ax)[1]
