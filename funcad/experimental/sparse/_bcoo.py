"""BCOO, JAX's batched COO format, and its conversions and layout changes.

A BCOO array of shape `batch + sparse + dense` stores `data` of shape
`batch + (nse,) + dense` and `indices` of shape `batch + (nse, n_sparse)`: each
batch entry holds `nse` entries, each a dense block at a sparse position. Out-of-bounds
indices (JAX pads with the sparse shape) are padding and contribute nothing; duplicate
indices are summed. Every function here is a composition of funcad ops (gather and
scatter-add through `.at[]`, `nonzero`, `lexsort`), written for one batch entry and
mapped over the batch with `vmap`, so derivatives in `data`, jit and vmap come free.
"""
from __future__ import annotations

import math
import operator
import warnings
from typing import Sequence

import numpy as np

import funcad.numpy as fnp
from ...core.errors import ConcretizationError
from ...core.pytree import register_pytree_node
from ...core.trace import Tracer
from ...transforms.vmap import vmap
from ._base import JAXSparse, SparseEfficiencyError, SparseEfficiencyWarning

__all__ = ["BCOO", "bcoo_todense", "bcoo_fromdense", "bcoo_extract", "bcoo_sum_duplicates",
           "bcoo_sort_indices", "bcoo_update_layout", "bcoo_eliminate_zeros"]


def nfold_vmap(f, n: int, in_axes=0):
    """`f` mapped over `n` leading axes (in_axes as vmap's, applied at every level)."""
    for _ in range(n):
        f = vmap(f, in_axes=in_axes)
    return f


def _concrete_int(x, what: str) -> int:
    if isinstance(x, Tracer):
        raise ConcretizationError(
            f"{what} depends on the values of a traced array. Pass nse= (the number of "
            "stored elements) explicitly to use this inside jit, vmap or grad.")
    return int(np.max(np.asarray(x), initial=0))


def _full_batch(data, indices, shape, n_batch):
    """data and indices with their batch dims broadcast to shape[:n_batch]."""
    batch = tuple(shape[:n_batch])
    data = fnp.broadcast_to(data, batch + tuple(data.shape[n_batch:]))
    indices = fnp.broadcast_to(indices, batch + tuple(indices.shape[n_batch:]))
    return data, indices


def _validate(data, indices, shape):
    if not np.issubdtype(indices.dtype, np.integer):
        raise TypeError(f"BCOO indices must be integers; got dtype {indices.dtype}.")
    if indices.ndim < 2:
        raise ValueError(f"BCOO indices must have shape batch + (nse, n_sparse); got {indices.shape}.")
    nse, n_sparse = indices.shape[-2:]
    n_batch = indices.ndim - 2
    n_dense = len(shape) - n_batch - n_sparse
    if n_dense < 0:
        raise ValueError(f"BCOO indices of shape {indices.shape} have too many dimensions for "
                         f"shape={tuple(shape)}.")
    for name, buf in (("indices", indices), ("data", data)):
        if any(a not in (1, b) for a, b in zip(buf.shape[:n_batch], shape[:n_batch])):
            raise ValueError(f"{name} batch dimensions {buf.shape[:n_batch]} are not compatible "
                             f"with shape={tuple(shape)}.")
    if tuple(data.shape[n_batch:]) != (nse,) + tuple(shape[n_batch + n_sparse:]):
        raise ValueError(f"Invalid data.shape={data.shape} for nse={nse}, n_batch={n_batch}, "
                         f"n_dense={n_dense} and shape={tuple(shape)}: expected "
                         f"batch + {(nse,) + tuple(shape[n_batch + n_sparse:])}.")
    return n_batch, n_sparse, n_dense, nse


class hooks:
    """Set by _bcoo_shape.py, whose shape operations build BCOOs: `bcoo_transpose`."""
    bcoo_transpose = None


class BCOO(JAXSparse):
    """Batched COO sparse array (JAX's `jax.experimental.sparse.BCOO`).

    `BCOO((data, indices), shape=...)`; `data` has shape `batch + (nse,) + dense`,
    `indices` shape `batch + (nse, n_sparse)`. A pytree whose leaves are `data` and
    `indices`, so it passes through jit, vmap (over batch dimensions) and grad.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.array([[0., 2., 0.], [1., 0., 4.]]))
    >>> M
    BCOO(float64[2, 3], nse=3)
    >>> M.indices.tolist(), (M @ np.ones(3)).tolist()
    ([[0, 1], [1, 0], [1, 2]], [2.0, 5.0])
    """

    def __init__(self, args, *, shape: Sequence[int], indices_sorted: bool = False,
                 unique_indices: bool = False):
        data, indices = args
        self.data, self.indices = fnp.asarray(data), fnp.asarray(indices)
        self.indices_sorted = bool(indices_sorted)
        self.unique_indices = bool(unique_indices)
        super().__init__(args, shape=shape)
        _validate(self.data, self.indices, self.shape)

    # --- layout -----------------------------------------------------------------------
    @property
    def nse(self) -> int:
        return self.indices.shape[-2]

    @property
    def dtype(self):
        return self.data.dtype

    @property
    def n_batch(self) -> int:
        return self.indices.ndim - 2

    @property
    def n_sparse(self) -> int:
        return self.indices.shape[-1]

    @property
    def n_dense(self) -> int:
        return self.data.ndim - 1 - self.n_batch

    def __repr__(self) -> str:
        try:
            extra = f", nse={self.nse}"
            extra += f", n_batch={self.n_batch}" if self.n_batch else ""
            extra += f", n_dense={self.n_dense}" if self.n_dense else ""
            text = f"BCOO({self.dtype}{list(self.shape)}{extra})"
        except Exception:
            text = "BCOO(<invalid>)"
        if isinstance(self.data, Tracer):
            text = f"{type(self.data).__name__}[{text}]"
        return text

    # --- pytree -----------------------------------------------------------------------
    def tree_flatten(self):
        return (self.data, self.indices), (self.shape, self.indices_sorted, self.unique_indices)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        obj = object.__new__(cls)
        obj.data, obj.indices = children
        shape, obj.indices_sorted, obj.unique_indices = aux_data
        data, indices = children
        if (hasattr(data, "shape") and hasattr(indices, "shape") and len(indices.shape) >= 2
                and len(data.shape) >= len(indices.shape) - 1):
            # vmap adds or removes leading batch axes of the leaves: the batch part of
            # the shape follows them (JAX's vmappable BCOO), the rest is static.
            n_batch = len(indices.shape) - 2
            n_rest = indices.shape[-1] + len(data.shape) - 1 - n_batch
            batch = np.broadcast_shapes(tuple(data.shape[:n_batch]), tuple(indices.shape[:n_batch]))
            shape = tuple(batch) + tuple(shape[len(shape) - n_rest:])
        obj.shape = tuple(shape)
        return obj

    # --- constructors -------------------------------------------------------------------
    @classmethod
    def fromdense(cls, mat, *, nse: int | None = None, index_dtype=np.int32, n_dense: int = 0,
                  n_batch: int = 0) -> "BCOO":
        """BCOO of a dense array (see `bcoo_fromdense`)."""
        return bcoo_fromdense(mat, nse=nse, index_dtype=index_dtype, n_dense=n_dense,
                              n_batch=n_batch)

    @classmethod
    def from_scipy_sparse(cls, mat, *, index_dtype=None, n_dense: int = 0,
                          n_batch: int = 0) -> "BCOO":
        """BCOO of a scipy.sparse matrix or array (any format)."""
        coo = mat.tocoo()
        indices = np.column_stack((coo.row, coo.col)).astype(index_dtype or np.int32)
        out = cls((np.asarray(coo.data), indices), shape=coo.shape)
        return bcoo_update_layout(out, n_batch=n_batch, n_dense=n_dense)

    @classmethod
    def _empty(cls, shape, *, dtype=None, index_dtype="int32", n_dense: int = 0,
               n_batch: int = 0, nse: int = 0) -> "BCOO":
        shape = tuple(int(s) for s in shape)
        n_sparse = len(shape) - n_dense - n_batch
        if n_sparse < 0 or n_dense < 0 or n_batch < 0 or nse < 0:
            raise ValueError(f"Invalid inputs: shape={shape}, n_dense={n_dense}, "
                             f"n_batch={n_batch}, nse={nse}")
        batch, sparse, dense = shape[:n_batch], shape[n_batch:n_batch + n_sparse], shape[n_batch + n_sparse:]
        data = fnp.zeros((*batch, nse, *dense), dtype)
        indices = fnp.full((*batch, nse, n_sparse), np.array(sparse, dtype=index_dtype),
                           dtype=index_dtype)
        return cls((data, indices), shape=shape, indices_sorted=True, unique_indices=True)

    @classmethod
    def _eye(cls, N: int, M: int, k: int, *, dtype=None, index_dtype="int32", n_batch: int = 0,
             n_dense: int = 0) -> "BCOO":
        n_sparse = 2 - n_batch - n_dense
        if n_sparse < 0 or n_dense < 0 or n_batch < 0:
            raise ValueError(f"Invalid inputs: shape={(N, M)}, n_dense={n_dense}, n_batch={n_batch}")
        size = min(N, M - k) if k > 0 else min(N + k, M)
        if size <= 0:
            return cls._empty((N, M), dtype=dtype, index_dtype=index_dtype, n_batch=n_batch,
                              n_dense=n_dense)
        if n_dense > 0 or n_batch > 1:
            return cls.fromdense(fnp.eye(N, M, k, dtype=dtype), n_batch=n_batch, n_dense=n_dense,
                                 index_dtype=index_dtype)
        dtype = dtype if dtype is not None else fnp.zeros(()).dtype
        if n_batch == 0:
            i = np.arange(size)
            indices = np.stack([i - min(k, 0), i + max(k, 0)], axis=1).astype(index_dtype)
            return cls((fnp.ones(size, dtype), indices), shape=(N, M), indices_sorted=True,
                       unique_indices=True)
        # one entry per row; rows without a diagonal entry hold padding
        rows = np.arange(N)
        cols = rows + k
        valid = (cols >= 0) & (cols < M)
        data = np.where(valid, 1, 0).astype(dtype)[:, None]
        indices = np.where(valid, cols, M).astype(index_dtype)[:, None, None]
        return cls((fnp.asarray(data), indices), shape=(N, M), indices_sorted=True,
                   unique_indices=True)

    # --- methods --------------------------------------------------------------------------
    def todense(self):
        """The dense array."""
        return bcoo_todense(self)

    def transpose(self, axes: Sequence[int] | None = None) -> "BCOO":
        """The transpose (axes reversed by default); see `bcoo_transpose`."""
        perm = tuple(range(self.ndim))[::-1] if axes is None else tuple(axes)
        return hooks.bcoo_transpose(self, permutation=perm)

    def update_layout(self, *, n_batch: int | None = None, n_dense: int | None = None,
                      on_inefficient: str | None = "error") -> "BCOO":
        """The same array with n_batch and n_dense changed (see `bcoo_update_layout`)."""
        return bcoo_update_layout(self, n_batch=n_batch, n_dense=n_dense,
                                  on_inefficient=on_inefficient)

    def sum_duplicates(self, nse: int | None = None, remove_zeros: bool = True) -> "BCOO":
        """Duplicates summed, indices sorted (and explicit zeros removed if remove_zeros)."""
        if remove_zeros:
            return bcoo_eliminate_zeros(self, nse=nse)
        return bcoo_sum_duplicates(self, nse=nse)

    def sort_indices(self) -> "BCOO":
        """The same array with indices sorted lexicographically per batch entry."""
        return bcoo_sort_indices(self)

    def astype(self, dtype) -> "BCOO":
        """The array with its data cast to `dtype`."""
        return BCOO((self.data.astype(dtype), self.indices), shape=self.shape,
                     indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __neg__(self):
        return BCOO((-self.data, self.indices), shape=self.shape,
                    indices_sorted=self.indices_sorted, unique_indices=self.unique_indices)

    def __pos__(self):
        return self


register_pytree_node(BCOO, BCOO.tree_flatten, BCOO.tree_unflatten)


# ---------------------------------------------------------------- todense / extract ----

def _todense_one(data, indices, shape):
    """One batch entry: scatter-add each block at its index; padding is dropped."""
    n_sparse = indices.shape[-1]
    if n_sparse == 0:
        return data.sum(0, dtype=data.dtype)
    idx = tuple(indices[:, i] for i in range(n_sparse))
    return fnp.zeros(shape, data.dtype).at[idx].add(data, mode="drop")


def bcoo_todense(mat: BCOO):
    """The dense array of a BCOO array (duplicates summed, padding dropped).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO((np.array([1., 2., 3.]), np.array([[0, 0], [0, 0], [2, 1]])), shape=(2, 2))
    >>> sparse.bcoo_todense(M).tolist()
    [[3.0, 0.0], [0.0, 0.0]]
    """
    n_batch = mat.n_batch
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, n_batch)
    rest = tuple(mat.shape[n_batch:])
    return nfold_vmap(lambda d, i: _todense_one(d, i, rest), n_batch)(data, indices)


def _first_occurrence(indices, sparse_shape):
    """Mask of the entries that are the first with their index (padding counts as one)."""
    _, _, first, _ = _unique_rows(indices, sparse_shape)
    return first


def _extract_one(indices, arr, assume_unique):
    nse, n_sparse = indices.shape
    if n_sparse == 0:
        out = fnp.broadcast_to(arr[None], (nse, *arr.shape))
        if not assume_unique:
            keep = (fnp.arange(nse) == 0).reshape((nse,) + (1,) * arr.ndim)
            out = fnp.where(keep, out, fnp.zeros((), arr.dtype))
        return out
    idx = tuple(indices[:, i] for i in range(n_sparse))
    out = arr.at[idx].get(mode="fill", fill_value=0)
    if not assume_unique:
        first = _first_occurrence(indices, arr.shape[:n_sparse])
        out = fnp.where(first.reshape((nse,) + (1,) * (out.ndim - 1)), out,
                        fnp.zeros((), out.dtype))
    return out


def _extract(indices, arr, n_batch, assume_unique=True):
    """data of `arr` at `indices` (batch dims of indices may be 1); padding reads zero."""
    indices = fnp.broadcast_to(indices, tuple(arr.shape[:n_batch]) + tuple(indices.shape[n_batch:]))
    f = lambda i, a: _extract_one(i, a, assume_unique)
    return nfold_vmap(f, n_batch)(indices, arr)


def bcoo_extract(sparr: BCOO, arr, *, assume_unique: bool | None = None) -> BCOO:
    """The entries of dense `arr` at the indices of `sparr`, as a BCOO array.

    With `assume_unique=False` (the default when `sparr.unique_indices` is False) a
    duplicated index receives the value once (its first occurrence), so
    `bcoo_extract(M, x).todense()` equals `x` where `M` stores entries.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.eye(2))
    >>> sparse.bcoo_extract(M, np.array([[5., 6.], [7., 8.]])).data.tolist()
    [5.0, 8.0]
    """
    arr = fnp.asarray(arr)
    if tuple(arr.shape) != tuple(sparr.shape):
        raise ValueError(f"bcoo_extract: shape mismatch: sparr.shape={sparr.shape}, "
                         f"arr.shape={tuple(arr.shape)}; they must be equal.")
    if assume_unique is None:
        assume_unique = sparr.unique_indices
    data = _extract(sparr.indices, arr, sparr.n_batch, assume_unique)
    return BCOO((data, sparr.indices), shape=sparr.shape, indices_sorted=sparr.indices_sorted,
                unique_indices=sparr.unique_indices)


# ---------------------------------------------------------------------- fromdense ----

def bcoo_fromdense(mat, *, nse: int | None = None, n_batch: int = 0, n_dense: int = 0,
                   index_dtype=np.int32) -> BCOO:
    """BCOO array of the nonzero entries (blocks, with n_dense) of dense `mat`.

    `nse` (entries per batch entry) defaults to the largest count of nonzeros; inside
    jit/vmap/grad pass it explicitly. Entries beyond the nonzeros are padding.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.bcoo_fromdense(np.array([[1., 0.], [0., 2.]]), nse=3)
    >>> M.data.tolist(), M.indices.tolist()
    ([1.0, 2.0, 0.0], [[0, 0], [1, 1], [2, 2]])
    """
    mat = fnp.asarray(mat)
    n_batch, n_dense = operator.index(n_batch), operator.index(n_dense)
    n_sparse = mat.ndim - n_batch - n_dense
    if n_batch < 0 or n_dense < 0 or n_sparse < 0:
        raise ValueError(f"bcoo_fromdense: invalid n_batch={n_batch}, n_dense={n_dense} for an "
                         f"array of ndim {mat.ndim}; they must be >= 0 with sum <= ndim.")
    mask = mat != 0
    if n_dense:
        mask = mask.any(axis=tuple(range(mat.ndim - n_dense, mat.ndim)))
    counts = mask.sum(axis=tuple(range(n_batch, mask.ndim)))
    if nse is None:
        if isinstance(mat, Tracer):
            raise ConcretizationError(
                "bcoo_fromdense: nse (the number of stored elements) depends on the values "
                "of a traced array. Pass a concrete nse= to use BCOO.fromdense inside jit, "
                "vmap or grad.")
        nse = _concrete_int(counts, "nse")
    nse = operator.index(nse)
    sparse_shape = tuple(mat.shape[n_batch:n_batch + n_sparse])

    def one(m, a):
        if n_sparse == 0:
            return fnp.zeros((nse, 0), index_dtype)
        nz = fnp.nonzero(m, size=nse, fill_value=sparse_shape)
        return fnp.stack(nz, axis=-1).astype(index_dtype)

    indices = nfold_vmap(one, n_batch)(mask, mat)
    data = _extract(indices, mat, n_batch)
    valid = fnp.arange(nse) < counts[..., None]
    data = fnp.where(valid.reshape(valid.shape + (1,) * n_dense), data, fnp.zeros((), mat.dtype))
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


# --------------------------------------------------------- sorting and duplicates ----

def _unique_rows(indices, sparse_shape):
    """One batch entry: (sorted unique rows padded with the fill, inverse map, mask of
    first occurrences, count of unique in-bounds rows). Out-of-bounds rows become the fill."""
    nse, n_sparse = indices.shape
    fill = fnp.asarray(np.array(sparse_shape, dtype=indices.dtype))
    oob = ((indices >= fill) | (indices < 0)).any(-1, keepdims=True)
    indices = fnp.where(oob, fill, indices)
    order = fnp.lexsort(tuple(indices[:, j] for j in reversed(range(n_sparse))))
    srt = indices[order]
    new = fnp.concatenate([fnp.ones(1, bool), (srt[1:] != srt[:-1]).any(-1)])
    gid = fnp.cumsum(new) - 1
    inverse = fnp.zeros(nse, gid.dtype).at[order].set(gid)
    uniq = fnp.broadcast_to(fill, (nse, n_sparse)).at[gid].set(srt)
    first = fnp.zeros(nse, bool).at[order].set(new)
    count = new.sum() - (srt == fill).all(-1).any().astype(new.sum().dtype)
    return uniq, inverse, first, count


def _pad_indices(indices, nse, sparse_shape):
    """indices (one batch entry) cut or padded with the fill to `nse` rows."""
    have = indices.shape[0]
    if nse <= have:
        return indices[:nse]
    fill = fnp.broadcast_to(fnp.asarray(np.array(sparse_shape, dtype=indices.dtype)),
                            (nse - have, indices.shape[1]))
    return fnp.concatenate([indices, fill], axis=0)


def bcoo_sum_duplicates(mat: BCOO, nse: int | None = None) -> BCOO:
    """Duplicate indices summed into one entry, indices sorted, padding at the end.

    `nse` defaults to the largest number of distinct indices (concrete inputs only);
    a larger `nse` pads, a smaller one drops entries.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO((np.array([1., 2., 3.]), np.array([[1], [0], [1]])), shape=(3,))
    >>> S = sparse.bcoo_sum_duplicates(M)
    >>> S.data.tolist(), S.indices.tolist()
    ([2.0, 4.0], [[0], [1]])
    """
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, n_batch)
    sparse_shape = tuple(mat.shape[n_batch:n_batch + n_sparse])
    if n_sparse == 0:
        return BCOO((data.sum(n_batch, keepdims=True, dtype=data.dtype), indices[..., :1, :]),
                    shape=mat.shape, indices_sorted=True, unique_indices=True)
    rows = nfold_vmap(lambda i: _unique_rows(i, sparse_shape), n_batch)(indices)
    uniq, inverse, _, count = rows
    if nse is None:
        nse = _concrete_int(count, "bcoo_sum_duplicates: the output nse")
    nse = operator.index(nse)

    def one(d, u, inv):
        out = fnp.zeros((nse, *d.shape[1:]), d.dtype).at[inv].add(d, mode="drop")
        return out, _pad_indices(u, nse, sparse_shape)

    data, indices = nfold_vmap(one, n_batch)(data, uniq, inverse)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True, unique_indices=True)


def bcoo_eliminate_zeros(mat: BCOO, nse: int | None = None) -> BCOO:
    """Entries whose data block is all zero become padding, then duplicates are summed."""
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, n_batch)
    zero = (data == 0).all(axis=tuple(range(n_batch + 1, data.ndim)))
    fill = fnp.asarray(np.array(mat.shape[n_batch:n_batch + n_sparse], dtype=indices.dtype))
    indices = fnp.where(zero[..., None], fill, indices)
    return bcoo_sum_duplicates(BCOO((data, indices), shape=mat.shape), nse=nse)


def bcoo_sort_indices(mat: BCOO) -> BCOO:
    """The same array with its entries sorted by index (lexicographically, per batch).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO((np.array([1., 2.]), np.array([[1], [0]])), shape=(2,))
    >>> sparse.bcoo_sort_indices(M).data.tolist()
    [2.0, 1.0]
    """
    n_batch, n_sparse = mat.n_batch, mat.n_sparse
    if n_sparse == 0:
        return BCOO((mat.data, mat.indices), shape=mat.shape, indices_sorted=True,
                    unique_indices=mat.unique_indices)
    data, indices = _full_batch(mat.data, mat.indices, mat.shape, n_batch)

    def one(d, i):
        order = fnp.lexsort(tuple(i[:, j] for j in reversed(range(n_sparse))))
        return d[order], i[order]

    data, indices = nfold_vmap(one, n_batch)(data, indices)
    return BCOO((data, indices), shape=mat.shape, indices_sorted=True,
                unique_indices=mat.unique_indices)


# ------------------------------------------------------------------- layout ----

def _inefficient(msg: str, on_inefficient):
    if on_inefficient == "error":
        raise SparseEfficiencyError(msg + " To disable this error, set the on_inefficient "
                                    "argument of bcoo_update_layout to 'warn' or None.")
    if on_inefficient == "warn":
        warnings.warn(msg + " To disable this warning, set the on_inefficient argument of "
                      "bcoo_update_layout to None.", SparseEfficiencyWarning, stacklevel=3)


def bcoo_update_layout(mat: BCOO, *, n_batch: int | None = None, n_dense: int | None = None,
                       on_inefficient: str | None = "error") -> BCOO:
    """The same array stored with `n_batch` batch and `n_dense` dense dimensions.

    Turning sparse dimensions of size > 1 into batch or dense ones stores many zeros:
    that raises `SparseEfficiencyError` (on_inefficient='error'), warns ('warn') or
    proceeds (None).

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> M = sparse.BCOO.fromdense(np.eye(3), n_batch=1)
    >>> sparse.bcoo_update_layout(M, n_batch=0).indices.shape
    (3, 2)
    """
    n_batch = mat.n_batch if n_batch is None else operator.index(n_batch)
    n_dense = mat.n_dense if n_dense is None else operator.index(n_dense)
    if (n_batch, n_dense) == (mat.n_batch, mat.n_dense):
        return mat
    if on_inefficient not in ("error", "warn", None):
        raise ValueError(f"on_inefficient={on_inefficient!r}; expected one of ['error', 'warn', None].")
    if n_batch < 0:
        raise ValueError(f"n_batch must be non-negative; got {n_batch}")
    if n_dense < 0:
        raise ValueError(f"n_dense must be non-negative; got {n_dense}")
    if mat.ndim - n_batch - n_dense < 0:
        raise ValueError(f"sum of n_batch={n_batch} and n_dense={n_dense} cannot be larger "
                         f"than mat.ndim={mat.ndim}.")
    shape = mat.shape
    if n_dense > mat.n_dense and any(d > 1 for d in shape[mat.ndim - n_dense:mat.ndim - mat.n_dense]):
        _inefficient(f"For matrix of shape {shape}, increasing n_dense from {mat.n_dense} to "
                     f"{n_dense} results in inefficient storage.", on_inefficient)
    if n_batch > mat.n_batch and any(d > 1 for d in shape[mat.n_batch:n_batch]):
        _inefficient(f"For matrix of shape {shape}, increasing n_batch from {mat.n_batch} to "
                     f"{n_batch} results in inefficient storage.", on_inefficient)
    nb, nd = mat.n_batch, mat.n_dense
    data, indices = _full_batch(mat.data, mat.indices, shape, nb)
    idt = indices.dtype

    if n_dense < nd:  # leading dense dims become sparse: one entry per block element
        k = nd - n_dense
        lead = tuple(shape[mat.ndim - nd:mat.ndim - n_dense])
        grid = np.stack([g.ravel() for g in np.meshgrid(*(np.arange(s) for s in lead),
                                                       indexing="ij")], -1).astype(idt)
        nse, m = data.shape[nb], math.prod(lead)
        data = data.reshape(data.shape[:nb] + (nse * m,) + data.shape[nb + 1 + k:])
        old = fnp.broadcast_to(indices[..., :, None, :], indices.shape[:nb] + (nse, m, indices.shape[-1]))
        new = fnp.broadcast_to(fnp.asarray(grid), indices.shape[:nb] + (nse, m, k))
        indices = fnp.concatenate([old, new], -1).reshape(indices.shape[:nb] + (nse * m, -1))
        nd = n_dense
    if n_batch < nb:  # trailing batch dims become sparse
        k = nb - n_batch
        moved = tuple(shape[n_batch:nb])
        nse = indices.shape[-2]
        grid = np.stack([g.ravel() for g in np.meshgrid(*(np.arange(s) for s in moved + (nse,)),
                                                       indexing="ij")][:-1], -1).astype(idt)
        total = math.prod(moved) * nse
        data = data.reshape(data.shape[:n_batch] + (total,) + data.shape[nb + 1:])
        indices = indices.reshape(indices.shape[:n_batch] + (total, indices.shape[-1]))
        indices = fnp.concatenate([fnp.broadcast_to(fnp.asarray(grid), indices.shape[:-1] + (k,)),
                                   indices], -1)
        nb = n_batch
    if n_dense > nd:  # trailing sparse dims become dense: each entry a zero block with one value
        k = n_dense - nd
        block = tuple(shape[mat.ndim - n_dense:])

        def to_dense(d, i):
            return fnp.zeros(block, d.dtype).at[tuple(i[i.shape[0] - k + j] for j in range(k))].set(
                d, mode="drop"), i[:i.shape[0] - k]

        data, indices = nfold_vmap(to_dense, nb + 1)(data, indices)
        nd = n_dense
    if n_batch > nb:  # leading sparse dims become batch dims
        k = n_batch - nb
        bshape = tuple(shape[nb:n_batch])

        def to_batch(d, i):
            nse = i.shape[0]
            idx = tuple(i[:, j] for j in range(k)) + (fnp.arange(nse),)
            new_d = fnp.zeros(bshape + d.shape, d.dtype).at[idx].set(d, mode="drop")
            return new_d, fnp.broadcast_to(i[:, k:], bshape + (nse, i.shape[1] - k))

        data, indices = nfold_vmap(to_batch, nb)(data, indices)
    return BCOO((data, indices), shape=shape)
