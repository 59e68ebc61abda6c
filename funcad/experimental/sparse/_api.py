"""Format-generic helpers (`todense`, `empty`, `eye`), `random_bcoo`, and BCOO's
operators and methods, which are funcad.numpy functions run through `sparsify` (as JAX
defines them)."""
from __future__ import annotations

import math
import operator

import numpy as np

import funcad.numpy as fnp
from ._base import JAXSparse
from ._bcoo import BCOO
from ._bcsr import BCSR
from ._coo_csr import COO, CSC, CSR
from ._transform import sparsify
from ...transforms.vmap import vmap

__all__ = ["todense", "empty", "eye", "random_bcoo"]

_FORMATS = {"bcoo": BCOO, "bcsr": BCSR, "coo": COO, "csr": CSR, "csc": CSC}


def todense(arr):
    """The dense array of a sparse array; a dense array is returned as it is.

    >>> import numpy as np
    >>> from funcad.experimental import sparse
    >>> sparse.todense(sparse.BCOO.fromdense(np.eye(2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    return arr.todense() if isinstance(arr, JAXSparse) else fnp.asarray(arr)


def _format(sparse_format):
    try:
        return _FORMATS[sparse_format]
    except KeyError:
        raise ValueError(f"sparse_format={sparse_format!r} not recognized; "  # JAX's words
                         f"must be one of {['bcsr', 'bcoo', 'coo', 'csr', 'csc']}") from None


def empty(shape, dtype=None, index_dtype="int32", sparse_format: str = "bcoo", **kwds):
    """An all-zero sparse array of `shape` (nse=0 unless given).

    >>> from funcad.experimental import sparse
    >>> sparse.empty((2, 3))
    BCOO(float64[2, 3], nse=0)
    """
    return _format(sparse_format)._empty(shape, dtype=dtype, index_dtype=index_dtype, **kwds)


def eye(N: int, M: int | None = None, k: int = 0, dtype=None, index_dtype="int32",
        sparse_format: str = "bcoo", **kwds):
    """A sparse identity-like matrix with ones on the k-th diagonal.

    >>> from funcad.experimental import sparse
    >>> sparse.eye(3, k=1).todense().tolist()
    [[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 0.0, 0.0]]
    """
    N = operator.index(N)
    M = N if M is None else operator.index(M)
    return _format(sparse_format)._eye(N, M, operator.index(k), dtype=dtype,
                                       index_dtype=index_dtype, **kwds)


def random_bcoo(key, shape, *, dtype=None, indices_dtype=None, nse=0.2, n_batch: int = 0,
                n_dense: int = 0, unique_indices: bool = True, sorted_indices: bool = False,
                generator=None, **kwds) -> BCOO:
    """A random BCOO array: `nse` positions per batch entry (a count, or a fraction of the
    sparse size when 0 < nse < 1) drawn with funcad.random, values from `generator`
    (default `funcad.random.uniform`), keyword arguments passed to it.

    >>> import funcad
    >>> from funcad.experimental import sparse
    >>> M = sparse.random_bcoo(funcad.random.key(0), (4, 5), nse=3)
    >>> M.nse, M.shape
    (3, (4, 5))
    """
    import funcad.random as random  # a lazy namespace: loaded on first use
    shape = tuple(operator.index(s) for s in shape)
    if n_batch < 0 or n_dense < 0 or n_batch + n_dense > len(shape):
        raise ValueError(f"Invalid n_batch={n_batch}, n_dense={n_dense} for shape={shape}.")
    n_sparse = len(shape) - n_batch - n_dense
    batch_shape, sparse_shape = shape[:n_batch], shape[n_batch:n_batch + n_sparse]
    dense_shape = shape[n_batch + n_sparse:]
    batch_size, sparse_size = math.prod(batch_shape), math.prod(sparse_shape)
    if not 0 <= nse < sparse_size:
        raise ValueError(f"got nse={nse}, expected to be between 0 and {sparse_size}")
    if 0 < nse < 1:
        nse = int(math.ceil(nse * sparse_size))
    nse = operator.index(nse)
    if indices_dtype is None:
        indices_dtype = fnp.zeros((), int).dtype
    if sparse_size > np.iinfo(indices_dtype).max:
        raise ValueError(f"indices_dtype={indices_dtype} does not have enough range to generate "
                         f"sparse indices of size {sparse_size}.")
    generator = random.uniform if generator is None else generator
    if dtype is None:
        dtype = fnp.zeros(()).dtype

    def one(k):
        if not sparse_shape:
            return fnp.zeros((nse, n_sparse), indices_dtype)
        flat = random.choice(k, sparse_size, shape=(nse,), replace=not unique_indices)
        return fnp.stack(fnp.unravel_index(flat.astype(indices_dtype), sparse_shape), axis=-1)

    keys = random.split(key, batch_size + 1)
    data = generator(keys[0], shape=batch_shape + (nse,) + dense_shape, dtype=dtype, **kwds)
    indices = vmap(one)(keys[1:]).reshape(batch_shape + (nse, n_sparse))
    mat = BCOO((data, indices), shape=shape)
    return mat.sort_indices() if sorted_indices else mat


# ----------------------------------------------------------------- BCOO methods ----

def _swap(f):
    return lambda a, b: f(b, a)


def _sum(self, *args, **kwargs):
    """Sum along axes (a BCOO array, or a scalar for a full sum)."""
    return sparsify(lambda x: x.sum(*args, **kwargs))(self)


def _reshape(self, *args, **kwargs):
    """The same entries with a new shape."""
    return sparsify(lambda x: x.reshape(*args, **kwargs))(self)


def _getitem(self, idx):
    return sparsify(lambda x: x[idx])(self)


def _iter(self):
    return iter(self[i] for i in range(self.shape[0]))


_METHODS = {
    "sum": _sum,
    "reshape": _reshape,
    "__abs__": sparsify(fnp.abs),
    "__neg__": sparsify(fnp.negative),
    "__pos__": sparsify(fnp.positive),
    "__matmul__": sparsify(fnp.matmul),
    "__rmatmul__": sparsify(_swap(fnp.matmul)),
    "__mul__": sparsify(fnp.multiply),
    "__rmul__": sparsify(_swap(fnp.multiply)),
    "__truediv__": sparsify(fnp.divide),
    "__rtruediv__": sparsify(_swap(fnp.divide)),
    "__add__": sparsify(fnp.add),
    "__radd__": sparsify(_swap(fnp.add)),
    "__sub__": sparsify(fnp.subtract),
    "__rsub__": sparsify(_swap(fnp.subtract)),
    "__pow__": lambda x, y: sparsify(lambda x: fnp.power(x, y))(x),
    "__rpow__": sparsify(_swap(fnp.power)),
    "__getitem__": _getitem,
    "__iter__": _iter,
    "__gt__": sparsify(fnp.greater),
    "__ge__": sparsify(fnp.greater_equal),
    "__lt__": sparsify(fnp.less),
    "__le__": sparsify(fnp.less_equal),
    "__eq__": sparsify(fnp.equal),
    "__ne__": sparsify(fnp.not_equal),
}
for _name, _impl in _METHODS.items():
    setattr(BCOO, _name, _impl)

BCSR.__matmul__ = sparsify(fnp.matmul)
BCSR.__rmatmul__ = sparsify(_swap(fnp.matmul))
