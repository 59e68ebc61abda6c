"""Op-table rows of funcad.experimental.sparse: BCOO products and sparsify as functions of
the stored `data` (fixed indices with a duplicate and a padding entry), so the table checks
their derivatives at orders 1 and 2, jit, vmap over `data` and JAX's sparse module."""
import numpy as np

import funcad.numpy as fnp
from funcad.experimental import sparse
from tests.op_table import U, op

# (row, col) per entry: (1, 2) twice (summed), (3, 0) is padding (row 3 of a 3-row matrix)
IDX = np.array([[0, 1], [1, 2], [1, 2], [2, 3], [3, 0]], dtype=np.int32)
SHAPE = (3, 4)
DN = (((1,), (0,)), ((), ()))


def _dense(d):
    out = np.zeros(SHAPE, d.dtype)
    keep = IDX[:, 0] < SHAPE[0]
    np.add.at(out, (IDX[keep, 0], IDX[keep, 1]), d[keep])
    return out


def _jsparse():
    from jax.experimental import sparse as js
    return js


op("bcoo_dot_general",
   lambda d, y: sparse.bcoo_dot_general(sparse.BCOO((d, IDX), shape=SHAPE), y, dimension_numbers=DN),
   lambda d, y: _dense(d) @ y,
   U((5,), (4, 2)),
   jax_fun=lambda d, y: _jsparse().bcoo_dot_general(_jsparse().BCOO((d, IDX), shape=SHAPE), y,
                                                    dimension_numbers=DN))

op("bcoo_sparsify",
   lambda d, v: sparse.sparsify(lambda m, v: (fnp.sin(m) * v).sum(0))(
       sparse.BCOO((d, IDX), shape=SHAPE), v).todense(),
   lambda d, v: (np.sin(_dense(d)) * v).sum(0),
   U((5,), (4,)),
   jax_fun=lambda d, v: _jsparse().sparsify(lambda m, v: (__import__("jax").numpy.sin(m) * v).sum(0))(
       _jsparse().BCOO((d, IDX), shape=SHAPE), v).todense())
