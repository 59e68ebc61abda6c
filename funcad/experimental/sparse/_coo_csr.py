"""JAX's older 2-d formats: COO (data, row, col), CSR and CSC (data, indices, indptr),
with their fromdense/todense/matvec/matmat functions. Products gather the dense operand
at each entry's column and scatter-add at its row (or the reverse for `transpose=True`).
As in JAX, `fromdense` pads with index 0 and data 0.
"""
from __future__ import annotations

import operator

import numpy as np

import funcad.numpy as fnp
from ...core.pytree import register_pytree_node
from ._base import JAXSparse
from ._bcoo import _concrete_int
from ...core.trace import Tracer
from ...core.errors import ConcretizationError

__all__ = ["COO", "CSR", "CSC", "coo_fromdense", "coo_todense", "coo_matvec", "coo_matmat",
           "csr_fromdense", "csr_todense", "csr_matvec", "csr_matmat"]


def _check_2d(mat, name):
    if mat.ndim != 2:
        raise ValueError(f"{name} works on 2-d arrays; got shape {tuple(mat.shape)}.")


def _nse_of(mat, nse, name):
    if nse is not None:
        return operator.index(nse)
    if isinstance(mat, Tracer):
        raise ConcretizationError(f"{name}: nse (the number of stored elements) depends on the "
                                  "values of a traced array; pass a concrete nse= under jit, "
                                  "vmap or grad.")
    return _concrete_int((mat != 0).sum(), "nse")


def _fromdense(mat, nse, index_dtype):
    """(data, row, col) of the nonzeros in row-major order, padded with (0, 0, 0)."""
    row, col = fnp.nonzero(mat, size=nse)
    data = mat[row, col]
    data = fnp.where(fnp.arange(nse) < (mat != 0).sum(), data, fnp.zeros((), mat.dtype))
    return data, row.astype(index_dtype), col.astype(index_dtype)


def _todense(data, row, col, shape):
    return fnp.zeros(shape, data.dtype).at[row, col].add(data, mode="drop")


def _matmat(data, row, col, B, shape, transpose):
    """(A @ B) or (A.T @ B) for A given by COO entries; B of ndim 1 or 2."""
    B = fnp.asarray(B)
    dtype = fnp.result_type(data.dtype, B.dtype)
    data, B = data.astype(dtype), B.astype(dtype)
    src, dst, n_out = (row, col, shape[1]) if transpose else (col, row, shape[0])
    gathered = B.at[src].get(mode="fill", fill_value=0)
    prod = gathered * (data if B.ndim == 1 else data[:, None])
    return fnp.zeros((n_out,) + tuple(B.shape[1:]), dtype).at[dst].add(prod, mode="drop")


def _csr_rows(indptr, nse, dtype):
    starts = fnp.zeros(nse, dtype).at[indptr].add(fnp.ones((), dtype), mode="drop")
    return fnp.cumsum(starts).astype(dtype) - 1


def _csr_indptr(row, n_rows, dtype):
    counts = fnp.zeros(n_rows, dtype).at[row].add(fnp.ones((), dtype), mode="drop")
    return fnp.concatenate([fnp.zeros(1, dtype), fnp.cumsum(counts).astype(dtype)])


def _eye_entries(N, M, k, dtype, index_dtype):
    size = min(N, M - k) if k > 0 else min(N + k, M)
    size = max(size, 0)
    i = np.arange(size)
    return (fnp.ones(size, dtype), (i - min(k, 0)).astype(index_dtype),
            (i + max(k, 0)).astype(index_dtype))


def _matmul(self, other, entries, shape, transpose):
    if isinstance(other, JAXSparse):
        raise NotImplementedError("matmul between two sparse objects.")
    other = fnp.asarray(other)
    if other.ndim not in (1, 2):
        raise NotImplementedError(f"matmul with object of shape {tuple(other.shape)}")
    return _matmat(*entries, other, shape, transpose)


class COO(JAXSparse):
    """2-d COO sparse matrix (JAX's `jax.experimental.sparse.COO`): `data`, `row`, `col`.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.COO.fromdense(np.array([[0., 2.], [3., 0.]]))
    >>> M.row.tolist(), M.col.tolist(), (M @ np.ones(2)).tolist()
    ([0, 1], [1, 0], [2.0, 3.0])
    """

    def __init__(self, args, *, shape, rows_sorted: bool = False, cols_sorted: bool = False):
        self.data, self.row, self.col = (fnp.asarray(a) for a in args)
        self._rows_sorted, self._cols_sorted = bool(rows_sorted), bool(cols_sorted)
        super().__init__(args, shape=shape)

    @property
    def nse(self) -> int:
        return self.data.size

    @property
    def dtype(self):
        return self.data.dtype

    def tree_flatten(self):
        return (self.data, self.row, self.col), (self.shape, self._rows_sorted, self._cols_sorted)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.row, obj.col = children
        obj.shape, obj._rows_sorted, obj._cols_sorted = aux_data
        return obj

    @classmethod
    def fromdense(cls, mat, *, nse: int | None = None, index_dtype=np.int32) -> "COO":
        """COO of a dense 2-d array (see `coo_fromdense`)."""
        return coo_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> "COO":
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"COO must have ndim=2; got shape={shape}")
        return cls((fnp.zeros(0, dtype), fnp.zeros(0, index_dtype), fnp.zeros(0, index_dtype)),
                   shape=shape, rows_sorted=True, cols_sorted=True)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> "COO":
        return cls(_eye_entries(N, M, k, dtype, index_dtype), shape=(N, M), rows_sorted=True,
                   cols_sorted=True)

    def todense(self):
        """The dense matrix."""
        return coo_todense(self)

    def transpose(self, axes=None) -> "COO":
        """The transpose (row and col swapped)."""
        _check_transpose_axes("COO", axes)
        return COO((self.data, self.col, self.row), shape=self.shape[::-1],
                   rows_sorted=self._cols_sorted, cols_sorted=self._rows_sorted)

    def __matmul__(self, other):
        return _matmul(self, other, (self.data, self.row, self.col), self.shape, False)


class _Compressed(JAXSparse):
    """CSR and CSC: `data`, `indices` and `indptr` buffers over a 2-d shape (rows for
    CSR, columns for CSC)."""

    def __init__(self, args, *, shape):
        self.data, self.indices, self.indptr = (fnp.asarray(a) for a in args)
        super().__init__(args, shape=shape)

    @property
    def nse(self) -> int:
        return self.data.size

    @property
    def dtype(self):
        return self.data.dtype

    def tree_flatten(self):
        return (self.data, self.indices, self.indptr), self.shape

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices, obj.indptr = children
        obj.shape = aux_data
        return obj


class CSR(_Compressed):
    """2-d CSR sparse matrix (JAX's `jax.experimental.sparse.CSR`).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.CSR.fromdense(np.array([[0., 2.], [3., 4.]]))
    >>> M.indptr.tolist(), (M @ np.ones(2)).tolist()
    ([0, 1, 3], [2.0, 7.0])
    """

    @classmethod
    def fromdense(cls, mat, *, nse: int | None = None, index_dtype=np.int32) -> "CSR":
        """CSR of a dense 2-d array (see `csr_fromdense`)."""
        return csr_fromdense(mat, nse=nse, index_dtype=index_dtype)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> "CSR":
        shape = tuple(shape)
        if len(shape) != 2:
            raise ValueError(f"CSR must have ndim=2; got shape={shape}")
        return cls((fnp.zeros(0, dtype), fnp.zeros(0, index_dtype),
                    fnp.zeros(shape[0] + 1, index_dtype)), shape=shape)

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> "CSR":
        data, row, col = _eye_entries(N, M, k, dtype, index_dtype)
        return cls((data, col, _csr_indptr(row, N, np.dtype(index_dtype))), shape=(N, M))

    def _coo(self):
        return self.data, _csr_rows(self.indptr, self.nse, self.indices.dtype), self.indices

    def todense(self):
        """The dense matrix."""
        return csr_todense(self)

    def transpose(self, axes=None) -> "CSC":
        """The transpose, a CSC matrix over the same buffers."""
        _check_transpose_axes("CSR", axes)
        return CSC((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return _matmul(self, other, self._coo(), self.shape, False)


class CSC(_Compressed):
    """2-d CSC sparse matrix (JAX's `jax.experimental.sparse.CSC`): column pointers.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.CSC.fromdense(np.array([[0., 2.], [3., 4.]]))
    >>> M.indptr.tolist(), (M @ np.ones(2)).tolist()
    ([0, 1, 3], [2.0, 7.0])
    """

    @classmethod
    def fromdense(cls, mat, *, nse: int | None = None, index_dtype=np.int32) -> "CSC":
        """CSC of a dense 2-d array (the CSR of its transpose, transposed)."""
        mat = fnp.asarray(mat)
        return csr_fromdense(mat.T, nse=nse, index_dtype=index_dtype).T

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32") -> "CSC":
        return CSR._empty(tuple(shape)[::-1], dtype=dtype, index_dtype=index_dtype).T

    @classmethod
    def _eye(cls, N, M, k, *, dtype=None, index_dtype="int32") -> "CSC":
        return CSR._eye(M, N, -k, dtype=dtype, index_dtype=index_dtype).T

    def todense(self):
        """The dense matrix."""
        return csr_todense(self.T).T

    def transpose(self, axes=None) -> CSR:
        """The transpose, a CSR matrix over the same buffers."""
        _check_transpose_axes("CSC", axes)
        return CSR((self.data, self.indices, self.indptr), shape=self.shape[::-1])

    def __matmul__(self, other):
        return _matmul(self, other, self.T._coo(), self.shape[::-1], True)


def _check_transpose_axes(name: str, axes) -> None:
    if axes is not None and tuple(axes) != (1, 0):
        raise ValueError(f"{name}.transpose of a 2-d matrix takes axes=None or (1, 0); got {axes}.")


for _cls in (COO, CSR, CSC):
    register_pytree_node(_cls, _cls.tree_flatten, _cls.tree_unflatten)


def coo_fromdense(mat, *, nse: int | None = None, index_dtype=np.int32) -> COO:
    """COO matrix of the nonzeros of a dense 2-d array (row-major order).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.coo_fromdense(np.eye(2), nse=3).data.tolist()
    [1.0, 1.0, 0.0]
    """
    mat = fnp.asarray(mat)
    _check_2d(mat, "coo_fromdense")
    nse = _nse_of(mat, nse, "coo_fromdense")
    return COO(_fromdense(mat, nse, index_dtype), shape=mat.shape, rows_sorted=True)


def coo_todense(mat: COO):
    """The dense matrix of a COO matrix (duplicates summed).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.coo_todense(sparse.COO((np.ones(2), np.array([0, 0]), np.array([1, 1])), shape=(1, 2))).tolist()
    [[0.0, 2.0]]
    """
    return _todense(mat.data, mat.row, mat.col, mat.shape)


def coo_matvec(mat: COO, v, transpose: bool = False):
    """`mat @ v` (or `mat.T @ v`) for a COO matrix and a dense vector.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.coo_matvec(sparse.COO.fromdense(np.array([[1., 2.]])), np.ones(1), transpose=True).tolist()
    [1.0, 2.0]
    """
    v = fnp.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"coo_matvec takes a vector; got shape {tuple(v.shape)} (use coo_matmat).")
    return _matmat(mat.data, mat.row, mat.col, v, mat.shape, transpose)


def coo_matmat(mat: COO, B, *, transpose: bool = False):
    """`mat @ B` (or `mat.T @ B`) for a COO matrix and a dense matrix.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.coo_matmat(sparse.COO.fromdense(np.eye(2)), np.ones((2, 3))).shape
    (2, 3)
    """
    B = fnp.asarray(B)
    if B.ndim != 2:
        raise ValueError(f"coo_matmat takes a matrix; got shape {tuple(B.shape)} (use coo_matvec).")
    return _matmat(mat.data, mat.row, mat.col, B, mat.shape, transpose)


def csr_fromdense(mat, *, nse: int | None = None, index_dtype=np.int32) -> CSR:
    """CSR matrix of the nonzeros of a dense 2-d array.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.csr_fromdense(np.eye(2)).indptr.tolist()
    [0, 1, 2]
    """
    mat = fnp.asarray(mat)
    _check_2d(mat, "csr_fromdense")
    nse = _nse_of(mat, nse, "csr_fromdense")
    data, row, col = _fromdense(mat, nse, index_dtype)
    n_true = (mat != 0).sum()
    # padding entries (index 0) are not counted in any row
    row = fnp.where(fnp.arange(nse) < n_true, row, mat.shape[0]).astype(index_dtype)
    return CSR((data, col, _csr_indptr(row, mat.shape[0], np.dtype(index_dtype))), shape=mat.shape)


def csr_todense(mat: CSR):
    """The dense matrix of a CSR matrix.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.csr_todense(sparse.CSR.fromdense(np.eye(2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return _todense(*mat._coo(), mat.shape)


def csr_matvec(mat: CSR, v, transpose: bool = False):
    """`mat @ v` (or `mat.T @ v`) for a CSR matrix and a dense vector.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.csr_matvec(sparse.CSR.fromdense(np.array([[1., 2.]])), np.ones(2)).tolist()
    [3.0]
    """
    v = fnp.asarray(v)
    if v.ndim != 1:
        raise ValueError(f"csr_matvec takes a vector; got shape {tuple(v.shape)} (use csr_matmat).")
    return _matmat(*mat._coo(), v, mat.shape, transpose)


def csr_matmat(mat: CSR, B, *, transpose: bool = False):
    """`mat @ B` (or `mat.T @ B`) for a CSR matrix and a dense matrix.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.csr_matmat(sparse.CSR.fromdense(np.eye(2)), np.ones((2, 3)), transpose=True).shape
    (2, 3)
    """
    B = fnp.asarray(B)
    if B.ndim != 2:
        raise ValueError(f"csr_matmat takes a matrix; got shape {tuple(B.shape)} (use csr_matvec).")
    return _matmat(*mat._coo(), B, mat.shape, transpose)
