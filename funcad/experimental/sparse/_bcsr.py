"""BCSR, JAX's batched CSR format: `data` (`batch + (nse,) + dense`), column `indices`
(`batch + (nse,)`) and row pointers `indptr` (`batch + (rows + 1,)`) over exactly two
sparse dimensions. Its operations convert to and from BCOO (rows from `indptr` by a
cumulative count; `indptr` from a row count of sorted indices), so they are funcad
compositions too.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

import funcad.numpy as fnp
from ...core.pytree import register_pytree_node
from ...core.trace import Tracer
from ._base import JAXSparse
from ._bcoo import (BCOO, _extract, bcoo_eliminate_zeros, bcoo_fromdense, bcoo_sum_duplicates,
                    nfold_vmap)
from ._bcoo_dot import bcoo_dot_general
from ._bcoo_shape import bcoo_broadcast_in_dim, bcoo_concatenate

__all__ = ["BCSR", "bcsr_fromdense", "bcsr_todense", "bcsr_extract", "bcsr_dot_general",
           "bcsr_broadcast_in_dim", "bcsr_concatenate", "bcsr_sum_duplicates",
           "bcsr_eliminate_zeros"]


def _csr_to_coo_one(indices, indptr):
    """Row of each entry: the number of row starts at or before it, minus one (padding
    after the last row start gets row = n_rows, out of bounds)."""
    starts = fnp.zeros(indices.shape, indices.dtype).at[indptr].add(
        fnp.ones((), indices.dtype), mode="drop")
    return fnp.stack([fnp.cumsum(starts).astype(indices.dtype) - 1, indices], axis=-1)


def _bcsr_to_bcoo_indices(indices, indptr, shape):
    n_batch = indices.ndim - 1
    batch = tuple(shape[:n_batch])
    indices = fnp.broadcast_to(indices, batch + tuple(indices.shape[n_batch:]))
    indptr = fnp.broadcast_to(indptr, batch + tuple(indptr.shape[n_batch:]))
    return nfold_vmap(_csr_to_coo_one, n_batch)(indices, indptr)


def _bcoo_to_bcsr_indices(indices, shape, index_dtype):
    """(column indices, indptr) of BCOO indices sorted by row within each batch entry."""
    n_batch = indices.ndim - 2
    if indices.shape[-1] != 2:
        raise ValueError("Must have 2 sparse dimensions to be converted to BCSR.")
    n_rows = shape[n_batch]

    def ptr(rows):
        counts = fnp.zeros(n_rows, index_dtype).at[rows].add(fnp.ones((), index_dtype), mode="drop")
        return fnp.concatenate([fnp.zeros(1, index_dtype), fnp.cumsum(counts).astype(index_dtype)])

    return indices[..., 1], nfold_vmap(ptr, n_batch)(indices[..., 0])


class BCSR(JAXSparse):
    """Batched CSR sparse array (JAX's `jax.experimental.sparse.BCSR`): two sparse
    dimensions after `n_batch` batch dimensions, then `n_dense` dense ones.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCSR.fromdense(np.array([[0., 2.], [3., 4.]]))
    >>> M.indices.tolist(), M.indptr.tolist(), (M @ np.ones(2)).tolist()
    ([1, 0, 1], [0, 1, 3], [2.0, 7.0])
    """

    def __init__(self, args, *, shape: Sequence[int], indices_sorted: bool = False,
                 unique_indices: bool = False):
        data, indices, indptr = args
        self.data, self.indices, self.indptr = fnp.asarray(data), fnp.asarray(indices), fnp.asarray(indptr)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        super().__init__(args, shape=shape)
        self._validate()

    def _validate(self):
        shape, ind, ptr, data = self.shape, self.indices, self.indptr, self.data
        if not (np.issubdtype(ind.dtype, np.integer) and np.issubdtype(ptr.dtype, np.integer)):
            raise TypeError("BCSR indices and indptr must be integers; got "
                            f"{ind.dtype} and {ptr.dtype}.")
        n_batch = ind.ndim - 1
        n_dense = len(shape) - n_batch - 2
        if n_dense < 0:
            raise ValueError(f"BCSR array must have 2 sparse dimensions; shape={shape} with "
                             f"n_batch={n_batch} leaves {len(shape) - n_batch}.")
        for name, buf in (("indices", ind), ("indptr", ptr), ("data", data)):
            if any(a not in (1, b) for a, b in zip(buf.shape[:n_batch], shape[:n_batch])):
                raise ValueError(f"{name} batch dimensions not compatible for "
                                 f"{name}.shape={buf.shape}, shape={shape}")
        if tuple(ptr.shape[n_batch:]) != (shape[n_batch] + 1,):
            raise ValueError("indptr shape must match the matrix shape plus 1: expected "
                             f"batch + {(shape[n_batch] + 1,)}, got {ptr.shape}.")
        if tuple(data.shape[n_batch:]) != (ind.shape[-1],) + tuple(shape[n_batch + 2:]):
            raise ValueError(f"Invalid data.shape={data.shape} for nse={ind.shape[-1]}, "
                             f"n_batch={n_batch}, n_dense={n_dense}")

    @property
    def nse(self) -> int:
        return self.indices.shape[-1]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 1

    @property
    def n_sparse(self) -> int:
        return 2

    @property
    def n_dense(self) -> int:
        return self.data.ndim - self.indices.ndim

    def __repr__(self) -> str:
        try:
            extra = f", nse={self.nse}"
            extra += f", n_batch={self.n_batch}" if self.n_batch else ""
            extra += f", n_dense={self.n_dense}" if self.n_dense else ""
            text = f"BCSR({self.dtype}{list(self.shape)}{extra})"
        except Exception:
            text = "BCSR(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    def tree_flatten(self):
        return ((self.data, self.indices, self.indptr),
                (self.shape, self.indices_sorted, self.unique_indices))

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        shape, obj.indices_sorted, obj.unique_indices = aux_data
        data, indices, indptr = children
        if all(hasattr(c, "shape") for c in children) and len(indices.shape) >= 1:
            n_batch = len(indices.shape) - 1
            n_rest = 2 + len(data.shape) - len(indices.shape)
            batch = np.broadcast_shapes(tuple(data.shape[:n_batch]), tuple(indices.shape[:n_batch]),
                                        tuple(indptr.shape[:n_batch]))
            shape = tuple(batch) + tuple(shape[len(shape) - n_rest:])
        obj.shape = tuple(shape)
        return obj

    def transpose(self, *args, **kwargs):
        raise NotImplementedError("Transpose is not implemented for BCSR; convert with "
                                  "to_bcoo() and use BCOO.transpose.")

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense: int = 0,
               n_batch: int = 0, nse: int = 0) -> "BCSR":
        shape = tuple(int(s) for s in shape)
        if n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, n_batch={n_batch}, nse={nse}")
        if len(shape) - n_dense - n_batch != 2:
            raise ValueError("BCSR sparse.empty: must have 2 sparse dimensions.")
        batch, sparse, dense = shape[:n_batch], shape[n_batch:n_batch + 2], shape[n_batch + 2:]
        data = fnp.zeros((*batch, nse, *dense), dtype)
        indices = fnp.full((*batch, nse), sparse[1], dtype=index_dtype)
        indptr = fnp.zeros((*batch, sparse[0] + 1), index_dtype)
        return cls((data, indices, indptr), shape=shape)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype=None, index_dtype="int32", n_batch: int = 0,
             n_dense: int = 0) -> "BCSR":
        if n_batch + n_dense != 0:
            raise ValueError("BCSR sparse.eye: a 2-d BCSR matrix has n_batch = n_dense = 0; got "
                             f"n_batch={n_batch}, n_dense={n_dense}.")
        return cls.from_bcoo(BCOO._eye(N, M, k, dtype=dtype, index_dtype=index_dtype))

    @classmethod
    def fromdense(cls, mat, *, nse: int | None = None, index_dtype=np.int32, n_dense: int = 0,
                  n_batch: int = 0) -> "BCSR":
        """BCSR of a dense array (see `bcsr_fromdense`)."""
        return bcsr_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_bcoo(cls, arr: BCOO) -> "BCSR":
        """The BCSR array of a BCOO array with two sparse dimensions."""
        if arr.n_sparse != 2:
            raise NotImplementedError(f"BCSR.from_bcoo requires n_sparse=2; got n_sparse={arr.n_sparse}")
        if not arr.indices_sorted:
            arr = arr.sort_indices()
        indices, indptr = _bcoo_to_bcsr_indices(arr.indices, arr.shape, arr.indices.dtype)
        return cls((arr.data, indices, indptr), shape=arr.shape)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0, n_batch: int = 0) -> "BCSR":
        """BCSR of a 2-d scipy.sparse matrix or array."""
        if n_dense != 0 or n_batch != 0:
            raise ValueError("BCSR.from_scipy_sparse makes a 2-d matrix: n_dense and n_batch "
                             "must be 0 (change the layout with to_bcoo().update_layout).")
        csr = mat.tocsr()
        dt = index_dtype or np.int32
        return cls((np.asarray(csr.data), csr.indices.astype(dt), csr.indptr.astype(dt)),
                   shape=csr.shape)

    def to_bcoo(self) -> BCOO:
        """The same array as BCOO."""
        idx = _bcsr_to_bcoo_indices(self.indices, self.indptr, self.shape)
        return BCOO((self.data, idx), shape=self.shape)

    def todense(self):
        """The dense array."""
        return bcsr_todense(self)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> "BCSR":
        """Duplicates summed, indices sorted (explicit zeros removed if remove_zeros)."""
        if remove_zeros:
            return bcsr_eliminate_zeros(self, nse=nse)
        return bcsr_sum_duplicates(self, nse=nse)


register_pytree_node(BCSR, BCSR.tree_flatten, BCSR.tree_unflatten)


def bcsr_fromdense(mat, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype=np.int32) -> BCSR:
    """BCSR array of the nonzero entries of dense `mat` (two sparse dimensions).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.bcsr_fromdense(np.eye(2)).indptr.tolist()
    [0, 1, 2]
    """
    mat = fnp.asarray(mat)
    if mat.ndim - n_batch - n_dense != 2:
        raise ValueError("bcsr_fromdense: must have 2 sparse dimensions; got shape "
                         f"{tuple(mat.shape)} with n_batch={n_batch}, n_dense={n_dense}.")
    return BCSR.from_bcoo(bcoo_fromdense(mat, nse=nse, n_batch=n_batch, n_dense=n_dense,
                                         index_dtype=index_dtype))


def bcsr_todense(mat: BCSR):
    """The dense array of a BCSR array.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.bcsr_todense(sparse.BCSR.fromdense(np.eye(2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return mat.to_bcoo().todense()


def bcsr_extract(indices, indptr, mat):
    """The entries of dense `mat` at BCSR (indices, indptr): the data of a BCSR array.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCSR.fromdense(np.eye(2))
    >>> sparse.bcsr_extract(M.indices, M.indptr, np.array([[5., 6.], [7., 8.]])).tolist()
    [5.0, 8.0]
    """
    mat = fnp.asarray(mat)
    indices, indptr = fnp.asarray(indices), fnp.asarray(indptr)
    idx = _bcsr_to_bcoo_indices(indices, indptr, mat.shape)
    return _extract(idx, mat, indices.ndim - 1)


def bcsr_dot_general(lhs, rhs, *, dimension_numbers, precision=None, preferred_element_type=None,
                     out_sharding=None):
    """`lax.dot_general` with a BCSR operand (the other dense): a dense array.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCSR.fromdense(np.array([[1., 0.], [0., 2.]]))
    >>> sparse.bcsr_dot_general(M, np.ones(2), dimension_numbers=(([1], [0]), ([], []))).tolist()
    [1.0, 2.0]
    """
    lhs = lhs.to_bcoo() if isinstance(lhs, BCSR) else lhs
    rhs = rhs.to_bcoo() if isinstance(rhs, BCSR) else rhs
    if isinstance(lhs, BCOO) and isinstance(rhs, BCOO):
        raise NotImplementedError("bcsr_dot_general of two sparse operands; convert one with "
                                  "todense() or use bcoo_dot_general on to_bcoo() arrays.")
    return bcoo_dot_general(lhs, rhs, dimension_numbers=dimension_numbers,
                            preferred_element_type=preferred_element_type)


def bcsr_broadcast_in_dim(mat: BCSR, *, shape, broadcast_dimensions, sharding=None) -> BCSR:
    """`lax.broadcast_in_dim` of a BCSR array (new leading dimensions are batch ones).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.bcsr_broadcast_in_dim(sparse.BCSR.fromdense(np.eye(2)), shape=(3, 2, 2),
    ...                              broadcast_dimensions=(1, 2)).n_batch
    1
    """
    return BCSR.from_bcoo(bcoo_broadcast_in_dim(mat.to_bcoo(), shape=shape,
                                                broadcast_dimensions=broadcast_dimensions))


def bcsr_concatenate(operands: Sequence[BCSR], *, dimension: int) -> BCSR:
    """`lax.concatenate` of BCSR arrays along a batch or sparse dimension.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCSR.fromdense(np.eye(2))
    >>> sparse.bcsr_concatenate([M, M], dimension=0).shape
    (4, 2)
    """
    return BCSR.from_bcoo(bcoo_concatenate([m.to_bcoo() for m in operands],
                                           dimension=operator.index(dimension)))


def bcsr_sum_duplicates(mat: BCSR, nse: int | None = None) -> BCSR:
    """Duplicate indices summed, indices sorted (see `bcoo_sum_duplicates`).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCSR((np.array([1., 2.]), np.array([0, 0]), np.array([0, 2, 2])), shape=(2, 2))
    >>> sparse.bcsr_sum_duplicates(M).data.tolist()
    [3.0]
    """
    return BCSR.from_bcoo(bcoo_sum_duplicates(mat.to_bcoo(), nse=nse))


def bcsr_eliminate_zeros(mat: BCSR, nse: int | None = None) -> BCSR:
    """Explicit zeros removed and duplicates summed."""
    return BCSR.from_bcoo(bcoo_eliminate_zeros(mat.to_bcoo(), nse=nse))
