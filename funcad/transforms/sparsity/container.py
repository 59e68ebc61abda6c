"""SparseMatrix: the values of a sparse Jacobian or Hessian at static positions.

Eager calls of funcad.sparse_jacfwd & co. return `scipy.sparse.csr_array`s. Under
a transformation (`jit`, `vmap`, `grad`) the values are traced, so the result is a
`SparseMatrix` instead: a pytree whose one leaf is `data` (the nonzero values,
with any batch axes in front) and whose positions (`rows`, `cols`) and `shape` are
static, like the data and indices of JAX's BCOO with the indices fixed at trace
time. `jit` returns it with `data` on the device.
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...core.avals import aval_of
from ...core.pytree import register_pytree_node
from ...primitives._base import full
from ...primitives.indexing import scatter_add
from ...primitives.structural import reshape, transpose


class _Positions:
    """The static part of a SparseMatrix: compared by value, so that equal patterns
    share jit's cache entries."""

    __slots__ = ("rows", "cols", "shape", "_key")

    def __init__(self, rows, cols, shape):
        self.rows = np.asarray(rows, np.int64)
        self.cols = np.asarray(cols, np.int64)
        self.shape = tuple(int(s) for s in shape)
        self._key = (self.shape, self.rows.tobytes(), self.cols.tobytes())

    def __eq__(self, other):
        return isinstance(other, _Positions) and self._key == other._key

    def __hash__(self):
        return hash(self._key)


class SparseMatrix:
    """A sparse 2-D matrix with values `data` at the static positions (`rows`, `cols`).

    `data` has shape `batch + (nnz,)` (a leading batch axis appears under vmap);
    `todense()` gives the `batch + shape` array and works traced; `to_scipy()` gives
    a `scipy.sparse.csr_array` (unbatched, concrete data only).

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> J = funcad.jit(funcad.sparse_jacfwd(lambda x: x ** 2))(np.array([1.0, 2.0]))
    >>> J.nnz, np.asarray(J.todense()).tolist()
    (2, [[2.0, 0.0], [0.0, 4.0]])
    """

    def __init__(self, data, rows, cols, shape):
        self.data = data
        self._pos = rows if isinstance(rows, _Positions) else _Positions(rows, cols, shape)

    rows = property(lambda self: self._pos.rows)
    cols = property(lambda self: self._pos.cols)
    shape = property(lambda self: self._pos.shape)
    nnz = property(lambda self: int(self._pos.rows.size))
    dtype = property(lambda self: aval_of(self.data).dtype)

    def todense(self):
        """The dense `batch + shape` array (built with funcad ops, so it can be traced)."""
        m, n = self.shape
        data = self.data
        batch = aval_of(data).shape[:-1]
        nb = len(batch)
        # scatter along the leading axis: positions first, batch axes after
        vals = transpose(data, (nb,) + tuple(range(nb))) if nb else data
        flat = full((m * n,) + batch, 0, aval_of(data).dtype)
        index = (self.rows * n + self.cols)[:, None]
        dense = scatter_add(flat, index, vals)
        if nb:
            dense = transpose(dense, tuple(range(1, nb + 1)) + (0,))
        return reshape(dense, batch + (m, n))

    def to_scipy(self) -> sp.csr_array:
        """The matrix as a scipy.sparse.csr_array (needs concrete, unbatched data)."""
        data = np.asarray(self.data)
        if data.ndim != 1:
            raise ValueError(f"to_scipy() needs unbatched data, got data of shape {data.shape}; "
                             "index the batch first (J.data[k]) or use todense()")
        return sp.csr_array((data, (self.rows, self.cols)), shape=self.shape)

    def __repr__(self):
        return (f"SparseMatrix(shape={self.shape}, nnz={self.nnz}, "
                f"data={aval_of(self.data).str_short()})")


register_pytree_node(SparseMatrix, lambda s: ((s.data,), s._pos),
                     lambda pos, children: SparseMatrix(children[0], pos, None, None))
