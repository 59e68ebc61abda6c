"""Shape manipulation: reshape, transpose, concatenate, stack, split, tile, flip..."""
from __future__ import annotations

import numpy as np

from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.trace import Tracer
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..core.eager import EagerArray, wrap
from ..primitives import structural as S
from ..primitives._base import canonical_axis as _ax
from .dtypes import asarray_or_tracer, cast, promote
from .reductions import _norm_axes, sum as _sum
from ..primitives.structural import iota
from .placement import place
from .broadcast import broadcast_arrays, broadcast_to  # noqa: F401  (shape's names too)


def shape(a):
    if type(a) is np.ndarray or type(a) is EagerArray:  # eager fast path
        return a.shape
    return aval_of(asarray_or_tracer(a)).shape


_shape_of = shape  # for functions whose `shape` parameter hides it


def ndim(a):
    return len(_shape_of(a))


def size(a, axis=None):
    """How many elements `a` has, or along `axis` (an int or a tuple of ints)."""
    sh = shape(a)
    if axis is not None:
        sh = [sh[i] for i in _norm_axes(len(sh), axis)]
    return int(np.prod(sh, dtype=np.int64))


def reshape(a, shape=None, order="C", *, copy=None, out_sharding=None):
    """`a` with a new shape, as jnp.reshape. `copy` is accepted as JAX accepts it:
    results are new immutable arrays whether or not a buffer is copied."""
    if shape is None:
        raise TypeError("reshape() missing required argument: 'shape'")
    return _reshape(a, shape, order, out_sharding)


def _reshape(a, newshape, order="C", out_sharding=None):
    if out_sharding is not None and order != "C":
        return place(_reshape(a, newshape, order), out_sharding=out_sharding, name="reshape")
    if order == "F":  # column-major: reverse the axes, reshape row-major, reverse back
        a = transpose(asarray_or_tracer(a))
        rev = (newshape,) if np.ndim(newshape) == 0 else tuple(newshape)[::-1]
        return transpose(_reshape(a, rev))
    if order == "A":  # as JAX
        raise NotImplementedError("np.reshape order=A is not implemented.")
    if order != "C":
        raise FuncadValueError(f"Unexpected value for 'order' argument: {order}.")
    a = asarray_or_tracer(a)
    n = size(a)
    newshape = (int(newshape),) if np.ndim(newshape) == 0 else tuple(int(s) for s in newshape)
    if newshape.count(-1) > 1:
        raise FuncadValueError("can only specify one unknown dimension")
    if -1 in newshape:
        known = int(np.prod([s for s in newshape if s != -1], dtype=np.int64))
        if known == 0 or n % known:
            raise FuncadValueError(f"reshape: cannot reshape {aval_of(a).str_short()} ({n} elements) "
                                  f"into shape {newshape}; the sizes must multiply to {n}")
        newshape = tuple(n // known if s == -1 else s for s in newshape)
    elif int(np.prod(newshape, dtype=np.int64)) != n:  # JAX's words (libraries match on them)
        raise FuncadTypeError(f"cannot reshape array of shape {_shape_of(a)} (size {n}) into shape "
                              f"{newshape} (size {int(np.prod(newshape, dtype=np.int64))})")
    if newshape == _shape_of(a) and out_sharding is None:
        return a
    return S.reshape(a, newshape, out_sharding)


def ravel(a, order="C", *, out_sharding=None):
    if out_sharding is not None:
        return _reshape(a, (-1,), order, out_sharding)
    return _x64.canonicalize_held(_reshape(a, (-1,), order))  # a new array, as JAX's


def transpose(a, axes=None):
    a = asarray_or_tracer(a)
    nd = ndim(a)
    perm = tuple(reversed(range(nd))) if axes is None else tuple(_ax(x, nd, 'transpose', a) for x in axes)
    return a if perm == tuple(range(nd)) else S.transpose(a, perm)


def matrix_transpose(x):
    nd = ndim(x)
    return transpose(x, tuple(range(nd - 2)) + (nd - 1, nd - 2))


def moveaxis(a, source, destination):
    a = asarray_or_tracer(a)
    nd = ndim(a)
    src = [_ax(s, nd, 'moveaxis', a) for s in np.atleast_1d(source)]
    dst = [_ax(d, nd, 'moveaxis', a) for d in np.atleast_1d(destination)]
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return transpose(a, order)


def swapaxes(a, axis1, axis2):
    nd = ndim(a)
    perm = list(range(nd))
    axis1, axis2 = _ax(axis1, nd, 'swapaxes', a), _ax(axis2, nd, 'swapaxes', a)
    perm[axis1], perm[axis2] = perm[axis2], perm[axis1]
    return transpose(a, perm)


def squeeze(a, axis=None):
    a = asarray_or_tracer(a)
    sh = shape(a)
    axes = tuple(i for i, s in enumerate(sh) if s == 1) if axis is None else _norm_axes(len(sh), axis)
    for i in axes:
        if sh[i] != 1:
            raise FuncadValueError(f"squeeze: axis {i} of {aval_of(a).str_short()} has size {sh[i]}, not 1; "
                                  "squeeze only removes axes of size 1")
    return S.squeeze(a, axes) if axes else _x64.canonicalize_held(a)  # a new array, as JAX's


def expand_dims(a, axis):
    a = asarray_or_tracer(a)
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out_nd = ndim(a) + len(axes)
    axes = sorted(_ax(x, out_nd, 'expand_dims') for x in axes)
    return S.expand_dims(a, axes)


def atleast_1d(a):
    a = asarray_or_tracer(a)
    return reshape(a, (1,)) if ndim(a) == 0 else wrap(_x64.canonicalize_held(a))  # an Array, as JAX's


def atleast_2d(a):
    a = asarray_or_tracer(a)
    return reshape(a, (1,) * (2 - ndim(a)) + shape(a)) if ndim(a) < 2 else a


def concatenate(arrays, axis=0, dtype=None):
    if dtype is not None:
        arrays = [cast(asarray_or_tracer(a), _x64.explicit_dtype(dtype, "concatenate")) for a in arrays]
    arrays = promote(*arrays)
    if axis is None:
        return S.concatenate([ravel(a) for a in arrays], 0)
    nd = ndim(arrays[0])
    if len(arrays) == 1:
        return arrays[0]
    return S.concatenate(arrays, _norm_axes(nd, axis)[0])


def stack(arrays, axis=0, out=None, dtype=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.stack is not supported.")
    arrays = [asarray_or_tracer(a) for a in arrays]
    if dtype is not None:
        arrays = [cast(a, _x64.explicit_dtype(dtype, "stack")) for a in arrays]
    if not arrays:
        raise FuncadValueError("need at least one array to stack")
    nd = ndim(arrays[0]) + 1
    ax = _ax(axis, nd, 'stack')
    return concatenate([expand_dims(a, ax) for a in arrays], ax)


def hstack(tup, dtype=None):
    arrays = [atleast_1d(a) for a in tup]
    return concatenate(arrays, 0 if ndim(arrays[0]) == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype)


def column_stack(tup):
    arrays = [_reshape(a, (-1, 1)) if ndim(a) < 2 else a for a in tup]
    return concatenate(arrays, 1)


def split(ary, indices_or_sections, axis=0):
    a = asarray_or_tracer(ary)
    nd = ndim(a)
    ax = _ax(axis, nd, 'split', a)
    n = shape(a)[ax]
    if np.ndim(indices_or_sections) == 0:
        k = int(indices_or_sections)
        if n % k:
            raise FuncadValueError(f"split: axis {ax} of {aval_of(a).str_short()} (size {n}) does not divide "
                                  f"into {int(indices_or_sections)} equal parts; use array_split for uneven parts")
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


def array_split(ary, indices_or_sections, axis=0):
    if np.ndim(indices_or_sections) > 0:  # ary list of split points, as in split
        return split(ary, indices_or_sections, axis)
    n = shape(ary)[_ax(axis, ndim(ary), 'array_split', ary)]
    q, r = divmod(n, int(indices_or_sections))
    sizes = [q + 1] * r + [q] * (int(indices_or_sections) - r)
    return split(ary, np.cumsum(sizes)[:-1].tolist(), axis)


def hsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 1 if ndim(ary) > 1 else 0)


def vsplit(ary, indices_or_sections):
    return split(ary, indices_or_sections, 0)


def flip(m, axis=None):
    m = asarray_or_tracer(m)
    axes = _norm_axes(ndim(m), axis)
    return S.rev(m, axes) if axes else m


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def roll(a, shift, axis=None):
    a = asarray_or_tracer(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), shape(a))
    shifts, axes = np.broadcast_arrays(np.atleast_1d(shift), np.atleast_1d(axis))
    for s, ax in zip(shifts, axes):
        ax = _ax(ax, ndim(a), 'roll', a)
        n = shape(a)[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            lo, hi = split(a, [n - s], ax)
            a = concatenate([hi, lo], ax)
    return a


def tile(A, reps):
    A = asarray_or_tracer(A)
    reps = (int(reps),) if np.ndim(reps) == 0 else tuple(int(r) for r in reps)
    nd = max(len(reps), ndim(A))
    A = reshape(A, (1,) * (nd - ndim(A)) + shape(A))
    reps = (1,) * (nd - len(reps)) + reps
    # Broadcast each axis against A new leading reps axis, then merge.
    sh = shape(A)
    inter = []
    dims = []
    for i, (r, s) in enumerate(zip(reps, sh)):
        inter += [r, s]
        dims.append(2 * i + 1)
    b = S.broadcast_in_dim(A, inter, dims)
    return S.reshape(b, tuple(r * s for r, s in zip(reps, sh)))


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
        raise FuncadValueError("diag needs a 1-d or 2-d input")
    n = shape(v)[0] + abs(k)
    rows = np.arange(shape(v)[0]) + max(0, -k)
    cols = np.arange(shape(v)[0]) + max(0, k)
    zeros = np.zeros((n, n), aval_of(v).dtype)
    return I.scatter_add(zeros, np.stack([rows, cols], -1), v)


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.trace is not supported.")
    return _sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    return wrap(np.tri(N, M, k, _x64.default_float() if dtype is None else _x64.explicit_dtype(dtype, "tri")))


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


def _sort_options(name, kind, order):
    if kind is not None:
        raise TypeError(f"'kind' argument to {name} is not supported. Use stable=True or stable=False "
                        "to specify sort stability.")
    if order is not None:
        raise TypeError(f"'order' argument to {name} is not supported.")


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    """`a` sorted along `axis` (flattened for None), ascending or `descending`.
    funcad's sort is always stable, so `stable=False` gives the stable order."""
    _sort_options("sort", kind, order)
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    ax = _ax(axis, ndim(a), 'sort', a)
    out = I.sort([a], ax)[0]
    return S.rev(out, (ax,)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False, dtype=None):
    """Indices that sort `a` along `axis`; `descending` keeps equal elements in their
    original order when `stable` (as JAX's), reverses the ascending order otherwise;
    `dtype` is the index dtype (the default integer by default)."""
    _sort_options("argsort", kind, order)
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = _reshape(a, (-1,)), 0
    ax = _ax(axis, ndim(a), 'argsort', a)
    idx_dtype = _x64.default_int() if dtype is None else _x64.explicit_dtype(dtype, "argsort")
    n = shape(a)[ax]
    if descending and stable:  # the stable ascending order of the reversed array, mapped back
        idx = I.sort([S.rev(a, (ax,)), iota(np.int64, shape(a), ax)], ax)[1]
        idx = E.sub(np.array(n - 1, np.int64), S.rev(idx, (ax,)))
    else:
        idx = I.sort([a, iota(np.int64, shape(a), ax)], ax)[1]
        if descending:
            idx = S.rev(idx, (ax,))
    return cast(idx, idx_dtype)


