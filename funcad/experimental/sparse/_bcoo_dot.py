"""Products of BCOO arrays: dot_general (sparse x dense, dense x sparse, sparse x sparse),
the sampled product, and elementwise products.

Sparse x dense gathers, for each stored entry, the slice of the dense operand its
index selects (contracted and batch dimensions), multiplies it with the entry's block
(an einsum over the dense dimensions) and scatter-adds the product at the entry's free
and batch index: work proportional to nse, never to the dense size of the sparse operand.
"""
from __future__ import annotations

import math
import operator

import numpy as np

import funcad.lax as lax
import funcad.numpy as fnp
from ._bcoo import BCOO, _full_batch, _extract, bcoo_sum_duplicates, bcoo_update_layout, nfold_vmap

__all__ = ["bcoo_dot_general", "bcoo_dot_general_sampled", "bcoo_multiply_dense",
           "bcoo_multiply_sparse"]

_LETTERS = "bcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def _dims(dimension_numbers):
    (lc, rc), (lb, rb) = dimension_numbers
    return tuple(map(operator.index, lc)), tuple(map(operator.index, rc)), \
        tuple(map(operator.index, lb)), tuple(map(operator.index, rb))


def _out_shape(lhs_shape, rhs_shape, lc, rc, lb, rb):
    for a, b, kind in ((lc, rc, "contracting"), (lb, rb, "batch")):
        if len(a) != len(b):
            raise TypeError(f"dot_general requires equal numbers of lhs and rhs {kind} "
                            f"dimensions, got {a} and {b}.")
        for i, j in zip(a, b):
            if not (0 <= i < len(lhs_shape) and 0 <= j < len(rhs_shape)):
                raise ValueError(f"dot_general {kind} dimensions {a}, {b} out of range for "
                                 f"shapes {lhs_shape} and {rhs_shape}.")
            if lhs_shape[i] != rhs_shape[j]:
                raise TypeError(f"dot_general requires {kind} dimensions to have the same "
                                f"shape, got {lhs_shape} and {rhs_shape} at {a}, {b}.")
    lfree = [d for d in range(len(lhs_shape)) if d not in lc and d not in lb]
    rfree = [d for d in range(len(rhs_shape)) if d not in rc and d not in rb]
    return ([lhs_shape[d] for d in lb] + [lhs_shape[d] for d in lfree]
            + [rhs_shape[d] for d in rfree]), lfree, rfree


def _sparse_dense(lhs: BCOO, rhs, lc, rc, lb, rb):
    """dot_general(lhs sparse, rhs dense) as a dense array."""
    out_shape, lfree, rfree = _out_shape(lhs.shape, rhs.shape, lc, rc, lb, rb)
    lhs = bcoo_update_layout(lhs, n_batch=0)
    data, ind = lhs.data, lhs.indices
    ns = lhs.n_sparse
    pair = dict(zip(lc, rc))
    pair.update(zip(lb, rb))
    gathered = [d for d in range(ns) if d in pair]       # lhs sparse dims that index rhs
    g_rhs = [pair[d] for d in gathered]
    rest = [d for d in range(rhs.ndim) if d not in g_rhs]
    rhs_m = fnp.transpose(rhs, g_rhs + rest)
    if gathered:
        rhs_g = rhs_m.at[tuple(ind[:, d] for d in gathered)].get(mode="fill", fill_value=0)
    else:
        rhs_g = rhs_m
    letters = iter(_LETTERS)
    lhs_l = {d: next(letters) for d in range(ns, lhs.ndim)}
    rhs_l = {d: lhs_l[l] for l, d in pair.items() if l >= ns}
    rhs_l.update({d: next(letters) for d in rest if d not in rhs_l})
    spec_d = "a" + "".join(lhs_l[d] for d in range(ns, lhs.ndim))
    spec_r = ("a" if gathered else "") + "".join(rhs_l[d] for d in rest)
    # output positions: batch dims, lhs free, rhs free; sparse-indexed ones go by scatter
    origin = [("l", d) for d in lb] + [("l", d) for d in lfree] + [("r", d) for d in rfree]
    scat = [p for p, (side, d) in enumerate(origin) if side == "l" and d < ns]
    kept = [p for p in range(len(origin)) if p not in scat]
    spec_o = "a" + "".join(lhs_l[d] if side == "l" else rhs_l[d]
                           for side, d in (origin[p] for p in kept))
    prod = fnp.einsum(f"{spec_d},{spec_r}->{spec_o}", data, rhs_g)
    if scat:
        target = fnp.zeros([out_shape[p] for p in scat + kept], prod.dtype)
        idx = tuple(ind[:, origin[p][1]] for p in scat)
        out = target.at[idx].add(prod, mode="drop")
        out = fnp.transpose(out, np.argsort(scat + kept))
    else:
        # every sparse dim contracted: padding entries gathered zeros, so a plain sum
        out = prod.sum(0)
    return out


def _spdot_one(ld, li, rd, ri, lshape, rshape, lc, rc, out_nse):
    lrest = [d for d in range(li.shape[-1]) if d not in lc]
    rrest = [d for d in range(ri.shape[-1]) if d not in rc]
    lfill = np.array([lshape[d] for d in lc], dtype=li.dtype)
    rfill = np.array([rshape[d] for d in rc], dtype=ri.dtype)
    lci, rci = li[:, np.asarray(lc, dtype=np.intp)], ri[:, np.asarray(rc, dtype=np.intp)]
    match = (lci[:, None] == rci[None, :]).all(-1)
    valid = (lci < lfill).all(-1)[:, None] & (rci < rfill).all(-1)[None, :]
    data = fnp.where(match & valid, ld[:, None] * rd[None, :], 0).ravel()
    nl, nr = li.shape[0], ri.shape[0]
    idt = fnp.result_type(li.dtype, ri.dtype)
    left = fnp.broadcast_to(li[:, None, np.asarray(lrest, dtype=np.intp)].astype(idt), (nl, nr, len(lrest)))
    right = fnp.broadcast_to(ri[None, :, np.asarray(rrest, dtype=np.intp)].astype(idt), (nl, nr, len(rrest)))
    indices = fnp.concatenate([left, right], -1).reshape(nl * nr, len(lrest) + len(rrest))
    out_shape = tuple(lshape[d] for d in lrest) + tuple(rshape[d] for d in rrest)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=out_shape), nse=out_nse)


def _sparse_sparse(lhs: BCOO, rhs: BCOO, lc, rc, lb, rb, preferred_element_type):
    out_shape, _, _ = _out_shape(lhs.shape, rhs.shape, lc, rc, lb, rb)
    if lhs.n_dense or rhs.n_dense:
        raise NotImplementedError("bcoo_spdot_general with dense dimensions.")
    if (lb and max(lb) >= lhs.n_batch) or (rb and max(rb) >= rhs.n_batch):
        raise NotImplementedError("bcoo_spdot_general: batch_dims must correspond to batch "
                                  "dimensions of the sparse representation.")
    for mat, c in ((lhs, lc), (rhs, rc)):
        if c and (min(c) < mat.n_batch or max(c) >= mat.n_batch + mat.n_sparse):
            raise NotImplementedError("bcoo_spdot_general only supports contraction of sparse indices.")
    if rhs.n_batch > len(rb) and lhs.n_sparse > len(lc):
        raise ValueError("bcoo_spdot_general: cannot have unused batch dims on rhs with unused "
                         "sparse dims on lhs.")
    out_nse = ((lhs.nse if lhs.n_sparse > len(lc) else 1)
               * (rhs.nse if rhs.n_sparse > len(rc) else 1))
    out_n_batch = lhs.n_batch + rhs.n_batch - len(lb)
    out_nse = min(out_nse, math.prod(out_shape[out_n_batch:]))
    ldata, lind = _full_batch(lhs.data, lhs.indices, lhs.shape, lhs.n_batch)
    rdata, rind = _full_batch(rhs.data, rhs.indices, rhs.shape, rhs.n_batch)
    lperm = list(lb) + [d for d in range(lhs.n_batch) if d not in lb]
    rperm = list(rb) + [d for d in range(rhs.n_batch) if d not in rb]
    ldata = fnp.transpose(ldata, lperm + [lhs.n_batch])
    lind = fnp.transpose(lind, lperm + [lhs.n_batch, lhs.n_batch + 1])
    rdata = fnp.transpose(rdata, rperm + [rhs.n_batch])
    rind = fnp.transpose(rind, rperm + [rhs.n_batch, rhs.n_batch + 1])
    lshape, rshape = lhs.shape[lhs.n_batch:], rhs.shape[rhs.n_batch:]
    lcs = [d - lhs.n_batch for d in lc]
    rcs = [d - rhs.n_batch for d in rc]

    def one(ld, li, rd, ri):
        m = _spdot_one(ld, li, rd, ri, lshape, rshape, lcs, rcs, out_nse)
        return m.data, m.indices

    f = nfold_vmap(one, rhs.n_batch - len(rb), in_axes=(None, None, 0, 0))
    f = nfold_vmap(f, lhs.n_batch - len(lb), in_axes=(0, 0, None, None))
    f = nfold_vmap(f, len(lb))
    data, indices = f(ldata, lind, rdata, rind)
    if preferred_element_type is not None:
        data = data.astype(preferred_element_type)
    return BCOO((data, indices), shape=tuple(out_shape))


def bcoo_dot_general(lhs, rhs, *, dimension_numbers, precision=None,
                     preferred_element_type=None, out_sharding=None):
    """`lax.dot_general` where one or both operands are BCOO.

    Sparse x dense and dense x sparse give a dense array; sparse x sparse a BCOO
    array (with JAX's restrictions: no dense dimensions, batch dimensions among the
    batch dimensions, contraction over sparse dimensions). `precision` and
    `out_sharding` are accepted for JAX compatibility (NumPy/XLA CPU products are exact).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[1., 0.], [0., 2.]]))
    >>> sparse.bcoo_dot_general(M, np.ones((2, 3)), dimension_numbers=(([1], [0]), ([], []))).tolist()
    [[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]]
    """
    lc, rc, lb, rb = _dims(dimension_numbers)
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        return _sparse_sparse(lhs, rhs, lc, rc, lb, rb, preferred_element_type)
    if isinstance(lhs, BCOO):
        out = _sparse_dense(lhs, fnp.asarray(rhs), lc, rc, lb, rb)
    elif isinstance(rhs, BCOO):
        lhs = fnp.asarray(lhs)
        out = _sparse_dense(rhs, lhs, rc, lc, rb, lb)
        nb = len(lb)
        n_rfree = rhs.ndim - len(rc) - nb
        n_lfree = lhs.ndim - len(lc) - nb
        perm = (list(range(nb)) + list(range(nb + n_rfree, nb + n_rfree + n_lfree))
                + list(range(nb, nb + n_rfree)))
        out = fnp.transpose(out, perm)
    else:
        raise TypeError("bcoo_dot_general: one of lhs, rhs must be a BCOO array; for two "
                        "dense arrays use funcad.lax.dot_general.")
    if preferred_element_type is not None:
        out = out.astype(preferred_element_type)
    return out


def bcoo_dot_general_sampled(A, B, indices, *, dimension_numbers):
    """The entries at `indices` of `dot_general(A, B)`: the data of a BCOO result.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> A, B = np.arange(4.).reshape(2, 2), np.eye(2)
    >>> sparse.bcoo_dot_general_sampled(A, B, np.array([[1, 0]]),
    ...                                 dimension_numbers=(([1], [0]), ([], []))).tolist()
    [2.0]
    """
    indices = fnp.asarray(indices)
    dense = lax.dot_general(fnp.asarray(A), fnp.asarray(B), dimension_numbers)
    return _extract(indices, dense, indices.ndim - 2)


def bcoo_multiply_dense(sp_mat: BCOO, v):
    """The data of `sp_mat * v` for a dense `v` broadcastable to `sp_mat.shape`
    (the result has `sp_mat`'s indices): `BCOO((bcoo_multiply_dense(M, v), M.indices), ...)`.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[1., 0.], [0., 2.]]))
    >>> sparse.bcoo_multiply_dense(M, np.array([10., 100.])).tolist()
    [10.0, 200.0]
    """
    v = fnp.asarray(v)
    if v.ndim == 0:
        return sp_mat.data * v
    if v.ndim > sp_mat.ndim or np.broadcast_shapes(sp_mat.shape, v.shape) != tuple(sp_mat.shape):
        raise ValueError(f"bcoo_multiply_dense: v of shape {v.shape} does not broadcast to the "
                         f"sparse shape {sp_mat.shape}.")
    v = fnp.broadcast_to(v, sp_mat.shape)
    return sp_mat.data * _extract(sp_mat.indices, v, sp_mat.n_batch)


def _mul_one(ld, li, rd, ri, lshape, rshape):
    dims = [i for i, (a, b) in enumerate(zip(lshape[:li.shape[-1]], rshape[:ri.shape[-1]]))
            if a != 1 and b != 1]
    nl, nr = li.shape[0], ri.shape[0]
    nse = nl * nr
    mask = (li[:, None, dims] == ri[None, :, dims]).all(-1)
    il, ir = fnp.nonzero(mask, size=nse, fill_value=(nl, nr))
    data = (ld.at[il].get(mode="fill", fill_value=0) * rd.at[ir].get(mode="fill", fill_value=0))
    indices = fnp.maximum(li.at[il].get(mode="fill", fill_value=max(lshape, default=0)),
                          ri.at[ir].get(mode="fill", fill_value=max(rshape, default=0)))
    return data, indices


def bcoo_multiply_sparse(lhs: BCOO, rhs: BCOO) -> BCOO:
    """Elementwise product of two BCOO arrays (broadcasting size-1 dimensions).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> A = sparse.BCOO.fromdense(np.array([1., 0., 3.]))
    >>> sparse.bcoo_multiply_sparse(A, A).todense().tolist()
    [1.0, 0.0, 9.0]
    """
    if lhs.ndim != rhs.ndim:
        raise TypeError("bcoo_multiply_sparse: arrays must have same number of dimensions, "
                        f"got {lhs.shape}, {rhs.shape}")
    if lhs.n_dense != rhs.n_dense:
        raise NotImplementedError("bcoo_multiply_sparse: arrays with differing numbers of dense "
                                  f"dimensions: {lhs}, {rhs}")
    shape = np.broadcast_shapes(lhs.shape, rhs.shape)
    n_batch = min(lhs.n_batch, rhs.n_batch)
    lhs = bcoo_update_layout(lhs, n_batch=n_batch)
    rhs = bcoo_update_layout(rhs, n_batch=n_batch)
    ld, li = _full_batch(lhs.data, lhs.indices, lhs.shape, n_batch)
    rd, ri = _full_batch(rhs.data, rhs.indices, rhs.shape, n_batch)
    bshape = shape[:n_batch]
    ld, li = fnp.broadcast_to(ld, bshape + ld.shape[n_batch:]), fnp.broadcast_to(li, bshape + li.shape[n_batch:])
    rd, ri = fnp.broadcast_to(rd, bshape + rd.shape[n_batch:]), fnp.broadcast_to(ri, bshape + ri.shape[n_batch:])
    f = lambda a, b, c, d: _mul_one(a, b, c, d, lhs.shape[n_batch:], rhs.shape[n_batch:])
    data, indices = nfold_vmap(f, n_batch)(ld, li, rd, ri)
    return BCOO((data, indices), shape=shape)
