"""Structural operations on BCOO arrays: transpose, reduce_sum, reshape, squeeze, rev,
slicing, broadcasting, concatenation and gather.

Batch and dense dimensions move as the `data`/`indices` buffers move; a sparse dimension
moves by rewriting its index column, keeping `nse`. An entry that falls outside the result
becomes padding (its index the out-of-bounds fill, its data zero).
"""
from __future__ import annotations

import math
import operator
from typing import Sequence

import numpy as np

import funcad.lax as lax
import funcad.numpy as fnp
from ...transforms.vmap import vmap
from ._bcoo import BCOO, _full_batch, bcoo_update_layout, hooks

__all__ = ["bcoo_transpose", "bcoo_reduce_sum", "bcoo_reshape", "bcoo_squeeze", "bcoo_rev",
           "bcoo_slice", "bcoo_dynamic_slice", "bcoo_broadcast_in_dim", "bcoo_concatenate",
           "bcoo_gather"]


def _axes(axes, ndim, what):
    out = []
    for a in axes:
        a = operator.index(a)
        if not -ndim <= a < ndim:
            raise ValueError(f"{what}: axis {a} is out of bounds for an array of ndim {ndim}.")
        out.append(a % ndim)
    return out


def _fill_invalid(indices, valid, fill, data, n_batch):
    """Entries where `valid` is False become padding."""
    fill = fnp.asarray(np.array(fill, dtype=indices.dtype))
    indices = fnp.where(valid[..., None], indices, fill)
    data = fnp.where(valid.reshape(valid.shape + (1,) * (data.ndim - n_batch - 1)), data,
                     fnp.zeros((), data.dtype))
    return indices, data


def bcoo_transpose(mat: BCOO, *, permutation: Sequence[int]) -> BCOO:
    """`lax.transpose` of a BCOO array; batch, sparse and dense dimensions each permute
    among themselves.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[0., 1.], [0., 0.]]))
    >>> sparse.bcoo_transpose(M, permutation=(1, 0)).indices.tolist()
    [[1, 0]]
    """
    perm = [operator.index(p) for p in permutation]
    if sorted(perm) != list(range(mat.ndim)):
        raise ValueError(f"bcoo_transpose: permutation {tuple(perm)} is not a permutation of "
                         f"range({mat.ndim}).")
    nb, ns = mat.n_batch, mat.n_sparse
    bp, sp, dp = perm[:nb], perm[nb:nb + ns], perm[nb + ns:]
    if (sorted(bp) != list(range(nb)) or sorted(sp) != list(range(nb, nb + ns))):
        raise ValueError("bcoo_transpose: permutation must not mix batch, sparse and dense "
                         f"dimensions; got permutation={tuple(perm)} with n_batch={nb}, "
                         f"n_sparse={ns}, n_dense={mat.n_dense}.")
    data = fnp.transpose(mat.data, bp + [nb] + [d - ns + 1 for d in dp])
    indices = fnp.transpose(mat.indices, bp + [nb, nb + 1])
    indices = indices[..., np.asarray([d - nb for d in sp], dtype=np.intp)]
    return BCOO((data, indices), shape=tuple(mat.shape[p] for p in perm),
                indices_sorted=mat.indices_sorted and sp == sorted(sp),
                unique_indices=mat.unique_indices)


def bcoo_reduce_sum(mat: BCOO, *, axes: Sequence[int]) -> BCOO:
    """Sum over `axes`, as a BCOO array (sparse axes drop their index column; summed batch
    axes join the stored entries).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[1., 0.], [2., 3.]]))
    >>> sparse.bcoo_reduce_sum(M, axes=(0,)).todense().tolist()
    [3.0, 3.0]
    """
    axes = sorted(set(_axes(axes, mat.ndim, "bcoo_reduce_sum")))
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, nb)
    dense_axes = [a for a in axes if a >= nb + ns]
    if dense_axes:
        data = data.sum(axis=tuple(a - ns + 1 for a in dense_axes))
    sparse_axes = [a - nb for a in axes if nb <= a < nb + ns]
    if sparse_axes:
        indices = indices[..., np.asarray([d for d in range(ns) if d not in sparse_axes], dtype=np.intp)]
    batch_axes = [a for a in axes if a < nb]
    if batch_axes:
        keep = [a for a in range(nb) if a not in batch_axes]
        nse = data.shape[nb]
        data = fnp.transpose(data, keep + batch_axes + list(range(nb, data.ndim)))
        indices = fnp.transpose(indices, keep + batch_axes + [nb, nb + 1])
        total = nse * math.prod(mat.shape[a] for a in batch_axes)
        data = data.reshape(data.shape[:len(keep)] + (total,) + data.shape[nb + 1:])
        indices = indices.reshape(indices.shape[:len(keep)] + (total, indices.shape[-1]))
    shape = tuple(s for i, s in enumerate(mat.shape) if i not in axes)
    return BCOO((data, indices), shape=shape)


def _split_point(sizes, total, from_end):
    """Smallest k >= 1 with prod of the first (last) k sizes == total, or None."""
    seq = sizes[::-1] if from_end else sizes
    for k in range(0 if total == 1 else 1, len(seq) + 1):
        if math.prod(seq[:k]) == total:
            return k
    return None


def bcoo_reshape(mat: BCOO, *, new_sizes: Sequence[int], dimensions: Sequence[int] | None = None,
                 sharding=None) -> BCOO:
    """`lax.reshape` of a BCOO array. Batch, sparse and dense dimensions reshape separately,
    so the new shape must split into parts of the same sizes.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[0., 1.], [2., 0.]]))
    >>> sparse.bcoo_reshape(M, new_sizes=(4,)).todense().tolist()
    [0.0, 1.0, 2.0, 0.0]
    """
    if dimensions is not None:
        mat = bcoo_transpose(mat, permutation=dimensions)
    new_sizes = tuple(operator.index(s) for s in new_sizes)
    if math.prod(new_sizes) != mat.size:
        raise TypeError(f"bcoo_reshape: cannot reshape an array of shape {mat.shape} (size "
                        f"{mat.size}) into shape {new_sizes}.")
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    batch_shape = mat.shape[:nb]
    sparse_shape = mat.shape[nb:nb + ns]
    dense_shape = mat.shape[nb + ns:]
    new_nb = 0 if nb == 0 else _split_point(new_sizes, math.prod(batch_shape), False)
    new_nd = 0 if nd == 0 else _split_point(new_sizes[new_nb or 0:], math.prod(dense_shape), True)
    if new_nb is None:
        raise ValueError("bcoo_reshape: new shape cannot mix batch and sparse dimensions; got "
                         f"shape {mat.shape} with n_batch={nb} and new_sizes={new_sizes}.")
    if new_nd is None:
        raise ValueError("bcoo_reshape: new shape cannot mix dense and sparse dimensions; got "
                         f"shape {mat.shape} with n_dense={nd} and new_sizes={new_sizes}.")
    new_sparse = new_sizes[new_nb:len(new_sizes) - new_nd]
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, nb)
    nse = indices.shape[-2]
    new_batch = new_sizes[:new_nb]
    data = data.reshape(new_batch + (nse,) + new_sizes[len(new_sizes) - new_nd:])
    indices = indices.reshape(new_batch + (nse, ns))
    if tuple(new_sparse) != tuple(sparse_shape):
        idt = indices.dtype
        oob = ((indices >= np.array(sparse_shape, dtype=idt)) | (indices < 0)).any(-1)
        flat = fnp.zeros(indices.shape[:-1], np.int64)
        for j, s in enumerate(sparse_shape):
            flat = flat * s + indices[..., j].astype(np.int64)
        cols = []
        for s in reversed(new_sparse):
            cols.append((flat % s).astype(idt))
            flat = flat // s
        indices = (fnp.stack(cols[::-1], -1) if cols
                   else fnp.zeros(indices.shape[:-1] + (0,), idt))
        indices = fnp.where(oob[..., None], np.array(new_sparse, dtype=idt), indices)
    return BCOO((data, indices), shape=new_sizes)


def bcoo_squeeze(arr: BCOO, *, dimensions: Sequence[int]) -> BCOO:
    """`lax.squeeze` of a BCOO array (the dimensions must have size 1).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[0., 1.]]))
    >>> sparse.bcoo_squeeze(M, dimensions=(0,)).shape
    (2,)
    """
    dims = sorted(set(_axes(dimensions, arr.ndim, "bcoo_squeeze")))
    if any(arr.shape[d] != 1 for d in dims):
        raise ValueError(f"bcoo_squeeze: cannot squeeze dimensions {tuple(dims)} of shape "
                         f"{arr.shape}: each must have size 1.")
    nb, ns = arr.n_batch, arr.n_sparse
    data, indices = _full_batch(arr.data, arr.indices, arr.shape, nb)
    bd = [d for d in dims if d < nb]
    sd = [d - nb for d in dims if nb <= d < nb + ns]
    dd = [d - ns + 1 for d in dims if d >= nb + ns]
    data = fnp.squeeze(data, axis=tuple(bd + dd)) if bd or dd else data
    indices = fnp.squeeze(indices, axis=tuple(bd)) if bd else indices
    if sd:
        indices = indices[..., np.asarray([j for j in range(ns) if j not in sd], dtype=np.intp)]
    shape = tuple(s for i, s in enumerate(arr.shape) if i not in dims)
    return BCOO((data, indices), shape=shape)


def bcoo_rev(operand: BCOO, dimensions: Sequence[int]) -> BCOO:
    """`lax.rev` of a BCOO array (reverse the order along `dimensions`).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.bcoo_rev(sparse.BCOO.fromdense(np.array([1., 0., 0.])), (0,)).todense().tolist()
    [0.0, 0.0, 1.0]
    """
    dims = sorted(set(_axes(dimensions, operand.ndim, "bcoo_rev")))
    nb, ns = operand.n_batch, operand.n_sparse
    data, indices = _full_batch(operand.data, operand.indices, operand.shape, nb)
    flip = [d for d in dims if d < nb] + [d - ns + 1 for d in dims if d >= nb + ns]
    if flip:
        data = fnp.flip(data, axis=tuple(flip))
    bflip = [d for d in dims if d < nb]
    if bflip:
        indices = fnp.flip(indices, axis=tuple(bflip))
    sd = [d - nb for d in dims if nb <= d < nb + ns]
    if sd:
        size = np.array([operand.shape[nb + j] for j in range(ns)], dtype=indices.dtype)
        which = np.isin(np.arange(ns), sd)
        inb = (indices >= 0) & (indices < size)
        indices = fnp.where(which & inb, size - 1 - indices, indices)
    return BCOO((data, indices), shape=operand.shape)


def _sparse_window(indices, data, starts, sizes, strides, sparse_shape, nb):
    """Sparse index columns shifted into a window; entries outside become padding."""
    idt = indices.dtype
    starts = [fnp.asarray(s).astype(idt) for s in starts]
    new = []
    valid = None
    for j, (s, n, st, full) in enumerate(zip(starts, sizes, strides, sparse_shape)):
        col = indices[..., j]
        off = col - s
        ok = (off >= 0) & (off < n * st) & (col < full) & (off % st == 0)
        new.append(off // st)
        valid = ok if valid is None else valid & ok
    if not new:
        return indices, data
    indices = fnp.stack(new, -1)
    return _fill_invalid(indices, valid, sizes, data, nb)


def bcoo_slice(mat: BCOO, *, start_indices: Sequence[int], limit_indices: Sequence[int],
               strides: Sequence[int] | None = None) -> BCOO:
    """`lax.slice` of a BCOO array (static bounds; nse is kept).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([1., 0., 2., 3.]))
    >>> sparse.bcoo_slice(M, start_indices=(1,), limit_indices=(4,)).todense().tolist()
    [0.0, 2.0, 3.0]
    """
    start = [operator.index(i) for i in start_indices]
    limit = [operator.index(i) for i in limit_indices]
    strides = [1] * mat.ndim if strides is None else [operator.index(s) for s in strides]
    if not (len(start) == len(limit) == len(strides) == mat.ndim):
        raise ValueError(f"bcoo_slice: start_indices, limit_indices and strides must have "
                         f"length {mat.ndim} (the array's ndim); got {start}, {limit}, {strides}.")
    if any(not 0 <= a <= b <= s for a, b, s in zip(start, limit, mat.shape)) or min(strides, default=1) < 1:
        raise ValueError(f"bcoo_slice: invalid start_indices={start}, limit_indices={limit}, "
                         f"strides={strides} for shape {mat.shape}: need 0 <= start <= limit <= "
                         "size and strides >= 1.")
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, nb)
    sizes = [max(0, -(-(b - a) // st)) for a, b, st in zip(start, limit, strides)]
    bsl = tuple(slice(a, b, st) for a, b, st in zip(start[:nb], limit[:nb], strides[:nb]))
    dsl = tuple(slice(a, b, st) for a, b, st in zip(start[nb + ns:], limit[nb + ns:], strides[nb + ns:]))
    data = data[bsl + (slice(None),) + dsl]
    indices = indices[bsl]
    indices, data = _sparse_window(indices, data, start[nb:nb + ns], sizes[nb:nb + ns],
                                   strides[nb:nb + ns], mat.shape[nb:nb + ns], nb)
    return BCOO((data, indices), shape=tuple(sizes))


def bcoo_dynamic_slice(mat: BCOO, start_indices: Sequence, slice_sizes: Sequence[int]) -> BCOO:
    """`lax.dynamic_slice` of a BCOO array: traced starts, wrapped and clamped as lax's.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([1., 0., 2., 3.]))
    >>> sparse.bcoo_dynamic_slice(M, [np.int32(5)], [2]).todense().tolist()
    [2.0, 3.0]
    """
    sizes = [operator.index(s) for s in slice_sizes]
    if len(start_indices) != mat.ndim or len(sizes) != mat.ndim:
        raise ValueError(f"bcoo_dynamic_slice: start_indices and slice_sizes must have length "
                         f"{mat.ndim}; got {len(start_indices)} and {len(sizes)}.")
    if any(not 0 <= n <= s for n, s in zip(sizes, mat.shape)):
        raise TypeError(f"bcoo_dynamic_slice: slice_sizes {tuple(sizes)} must be within the "
                        f"shape {mat.shape}.")
    nb, ns = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, nb)
    # negative starts count from the end, then clamp into range (lax.dynamic_slice's rule)
    starts = [fnp.asarray(s) for s in start_indices]
    starts = [fnp.clip(fnp.where(s < 0, s + full, s), 0, full - n)
              for s, n, full in zip(starts, sizes, mat.shape)]
    zero = fnp.zeros((), starts[0].dtype) if starts else 0
    if nb or mat.n_dense:
        dstarts = starts[:nb] + [zero] + starts[nb + ns:]
        dsizes = sizes[:nb] + [data.shape[nb]] + sizes[nb + ns:]
        data = lax.dynamic_slice(data, dstarts, dsizes)
        indices = lax.dynamic_slice(indices, starts[:nb] + [zero, zero],
                                    sizes[:nb] + list(indices.shape[nb:]))
    indices, data = _sparse_window(indices, data, starts[nb:nb + ns], sizes[nb:nb + ns],
                                   [1] * ns, mat.shape[nb:nb + ns], nb)
    return BCOO((data, indices), shape=tuple(sizes))


def bcoo_broadcast_in_dim(mat: BCOO, *, shape: Sequence[int], broadcast_dimensions: Sequence[int],
                          sharding=None) -> BCOO:
    """`lax.broadcast_in_dim` of a BCOO array: new leading dimensions become batch
    dimensions, new trailing ones (after a dense dimension) dense; sparse dimensions keep
    their sizes.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([1., 0.]))
    >>> sparse.bcoo_broadcast_in_dim(M, shape=(3, 2), broadcast_dimensions=(1,)).n_batch
    1
    """
    shape = tuple(operator.index(s) for s in shape)
    bdims = [operator.index(d) for d in broadcast_dimensions]
    if len(bdims) != mat.ndim:
        raise ValueError(f"mat.shape={mat.shape} and broadcast_dimensions={tuple(bdims)} must "
                         "have the same length")
    if any(mat.shape[i] not in (1, shape[d]) for i, d in enumerate(bdims)) or bdims != sorted(set(bdims)):
        raise TypeError(f"bcoo_broadcast_in_dim: cannot broadcast shape {mat.shape} to {shape} "
                        f"with broadcast_dimensions={tuple(bdims)} (strictly increasing, each "
                        "operand size 1 or equal to the output size).")
    nb, ns, nd = mat.n_batch, mat.n_sparse, mat.n_dense
    b_d, s_d, d_d = bdims[:nb], bdims[nb:nb + ns], bdims[nb + ns:]
    new_nb = min(bdims[nb:], default=len(shape))
    new_nd = nd and len(shape) - min(d_d)
    new_ns = len(shape) - new_nb - new_nd
    if math.prod(mat.shape[nb:nb + ns]) != math.prod(shape[new_nb:new_nb + new_ns]):
        raise NotImplementedError("Adding sparse dimensions with lengths != 1")
    data, indices = mat.data, mat.indices
    if (new_nb, new_nd) != (nb, nd):
        data = lax.broadcast_in_dim(data, (*shape[:new_nb], mat.nse, *shape[new_nb + new_ns:]),
                                    (*b_d, new_nb, *(d + 1 - new_ns for d in d_d)))
        indices = lax.broadcast_in_dim(indices, (*shape[:new_nb], mat.nse, ns),
                                       (*b_d, new_nb, new_nb + 1))
    if new_ns != ns:
        cols = [d - new_nb for d in s_d]
        full = fnp.zeros((*shape[:new_nb], mat.nse, new_ns), indices.dtype)
        indices = full.at[..., np.asarray(cols, dtype=np.intp)].set(indices)
    return BCOO((data, indices), shape=shape)


def _set_nse(mat: BCOO, nse: int) -> BCOO:
    if nse == mat.nse:
        return mat
    nb = mat.n_batch
    pad_d = [(0, 0)] * nb + [(0, nse - mat.nse)] + [(0, 0)] * mat.n_dense
    data = fnp.pad(mat.data, pad_d)
    fill = np.array(mat.shape[nb:nb + mat.n_sparse], dtype=mat.indices.dtype)
    extra = fnp.broadcast_to(fill, mat.indices.shape[:nb] + (nse - mat.nse, mat.n_sparse))
    indices = fnp.concatenate([mat.indices, extra], axis=nb)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=mat.indices_sorted,
                unique_indices=mat.unique_indices)


def bcoo_concatenate(operands: Sequence[BCOO], *, dimension: int) -> BCOO:
    """`lax.concatenate` of BCOO arrays along a batch or sparse dimension (all with the
    same layout).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> A = sparse.BCOO.fromdense(np.array([1., 0.]))
    >>> sparse.bcoo_concatenate([A, A], dimension=0).todense().tolist()
    [1.0, 0.0, 1.0, 0.0]
    """
    dimension = operator.index(dimension)
    operands = list(operands)
    if not operands or not all(isinstance(op, BCOO) for op in operands):
        raise ValueError("bcoo_concatenate: expected operands to be a sequence of BCOO arrays. "
                         f"Got {operands}")
    nd = operands[0].ndim
    if not 0 <= dimension < nd:
        raise ValueError(f"bcoo_concatenate: dimension {dimension} out of range for ndim {nd}.")
    for op in operands:
        if op.ndim != nd or any(a != b for i, (a, b) in enumerate(zip(op.shape, operands[0].shape))
                                if i != dimension):
            raise TypeError("bcoo_concatenate: operands must have equal shapes except along "
                            f"dimension {dimension}; got {[o.shape for o in operands]}.")
    if len({op.n_dense for op in operands}) > 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching nse dimensions.")
    n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1 and max(n_batches) == 1:
        if all(op.shape[0] == 1 for op in operands if op.n_batch == 0):
            operands = [bcoo_update_layout(op, n_batch=1) if op.n_batch == 0 else op for op in operands]
        elif all(op.shape[0] == 1 for op in operands if op.n_batch == 1):
            operands = [bcoo_update_layout(op, n_batch=0) if op.n_batch == 1 else op for op in operands]
        n_batches = {op.n_batch for op in operands}
    if len(n_batches) != 1:
        raise ValueError("bcoo_concatenate requires inputs to have matching batch dimensions.")
    nb, ns = operands[0].n_batch, operands[0].n_sparse
    shape = list(operands[0].shape)
    shape[dimension] = sum(op.shape[dimension] for op in operands)
    full = []
    for op in operands:
        d, i = _full_batch(op.data, op.indices, op.shape, nb)
        full.append(BCOO((d, i), shape=op.shape))
    if dimension < nb:
        nse = max(op.nse for op in full)
        full = [_set_nse(op, nse) for op in full]
        data = fnp.concatenate([op.data for op in full], axis=dimension)
        indices = fnp.concatenate([op.indices for op in full], axis=dimension)
    elif dimension < nb + ns:
        offsets = np.cumsum([0] + [op.shape[dimension] for op in full[:-1]])
        col = dimension - nb
        shifted = []
        for op, off in zip(full, offsets):
            # padding must stay out of bounds of the result: move it to the new fill
            oob = (op.indices[..., col] >= op.shape[dimension])[..., None]
            moved = op.indices.at[..., col].add(np.asarray(off, dtype=op.indices.dtype))
            fill = np.array(shape[nb:nb + ns], dtype=op.indices.dtype)
            shifted.append(fnp.where(oob, fill, moved))
        data = fnp.concatenate([op.data for op in full], axis=nb)
        indices = fnp.concatenate(shifted, axis=nb)
    else:
        raise NotImplementedError("Concatenation along dense dimensions.")
    return BCOO((data, indices), shape=tuple(shape))


def bcoo_gather(operand: BCOO, start_indices, dimension_numbers, slice_sizes: Sequence[int], *,
                unique_indices: bool = False, indices_are_sorted: bool = False, mode=None,
                fill_value=None) -> BCOO:
    """`lax.gather` of a BCOO array (mode 'promise_in_bounds', JAX's only one): each
    slice is a `bcoo_dynamic_slice`, mapped over the start indices with vmap.

    >>> import numpy as np
    >>> import funcad.lax as lax
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([1., 0., 2.]))
    >>> dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    >>> sparse.bcoo_gather(M, np.array([[2], [0]]), dn, (1,)).todense().tolist()
    [2.0, 1.0]
    """
    if mode is not None and str(getattr(mode, "name", mode)).lower() not in (
            "promise_in_bounds", "gatherscattermode.promise_in_bounds"):
        raise NotImplementedError(f"bcoo_gather: mode={mode!r} not yet supported.")
    start_indices = fnp.asarray(start_indices)
    offset_dims = tuple(dimension_numbers.offset_dims)
    collapsed = tuple(dimension_numbers.collapsed_slice_dims)
    start_map = tuple(dimension_numbers.start_index_map)
    full_starts = [fnp.zeros((), start_indices.dtype)] * operand.ndim
    in_axes = [None] * operand.ndim
    full_sizes = list(operand.shape)
    for i, j in enumerate(start_map):
        full_starts[j] = start_indices[..., i].ravel()
        full_sizes[j] = slice_sizes[j]
        in_axes[j] = 0

    def slice_one(starts):
        slc = bcoo_dynamic_slice(operand, starts, slice_sizes=full_sizes)
        return bcoo_squeeze(slc, dimensions=collapsed)

    result = vmap(slice_one, in_axes=(in_axes,))(full_starts)
    batch_shape = tuple(start_indices.shape[:-1])
    result = bcoo_reshape(result, new_sizes=batch_shape + tuple(result.shape[1:]))
    if result.ndim:
        out_ndim = result.ndim
        batch_dims = tuple(d for d in range(out_ndim) if d not in offset_dims)
        permutation = np.zeros(out_ndim, dtype=int)
        permutation[np.array(batch_dims + offset_dims, dtype=int)] = np.arange(out_ndim)
        if set(permutation[:len(batch_dims)].tolist()) != set(range(len(batch_dims))):
            result = bcoo_update_layout(result, n_batch=0)
        result = bcoo_transpose(result, permutation=tuple(int(p) for p in permutation))
    return result


hooks.bcoo_transpose = staticmethod(bcoo_transpose)
