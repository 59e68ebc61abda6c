"""funcad.experimental.sparse: JAX's `jax.experimental.sparse`.

`BCOO` (batched COO) and `BCSR` (batched CSR) arrays whose operations are compositions of funcad ops (gather,
scatter-add, dot_general, sort), so they run eagerly, under `jit`, `vmap` (over batch
dimensions) and `grad` (with respect to `data`); `sparsify` runs funcad.numpy code on
them; `grad`/`value_and_grad`/`jacfwd`/`jacrev` give derivatives with respect to a
sparse argument as sparse arrays with its indices.

>>> import numpy as np
>>> from funcad.experimental import sparse
>>> M = sparse.BCOO.fromdense(np.array([[0., 2.], [3., 0.]]))
>>> (M @ np.ones(2)).tolist(), (M.T * 2).todense().tolist()
([2.0, 3.0], [[0.0, 6.0], [4.0, 0.0]])
"""
from ._ad import grad, jacfwd, jacobian, jacrev, value_and_grad
from ._api import empty, eye, random_bcoo, todense
from ._base import JAXSparse, SparseEfficiencyError, SparseEfficiencyWarning
from ._bcoo import (BCOO, bcoo_extract, bcoo_fromdense, bcoo_sort_indices,
                    bcoo_sum_duplicates, bcoo_todense, bcoo_update_layout)
from ._bcoo_dot import (bcoo_dot_general, bcoo_dot_general_sampled, bcoo_multiply_dense,
                        bcoo_multiply_sparse)
from ._bcoo_shape import (bcoo_broadcast_in_dim, bcoo_concatenate, bcoo_dynamic_slice, bcoo_gather,
                          bcoo_reduce_sum, bcoo_reshape, bcoo_rev, bcoo_slice, bcoo_squeeze,
                          bcoo_transpose)
from ._bcsr import (BCSR, bcsr_broadcast_in_dim, bcsr_concatenate, bcsr_dot_general,
                    bcsr_extract, bcsr_fromdense, bcsr_sum_duplicates,
                    bcsr_todense)
from ._coo_csr import (COO, CSC, CSR, coo_fromdense, coo_matmat, coo_matvec, coo_todense,
                       csr_fromdense, csr_matmat, csr_matvec, csr_todense)
from ._transform import sparsify

__all__ = [
    "BCOO", "BCSR", "COO", "CSC", "CSR", "JAXSparse", "SparseEfficiencyError", "SparseEfficiencyWarning",
    "bcoo_broadcast_in_dim", "bcoo_concatenate", "bcoo_dot_general", "bcoo_dot_general_sampled",
    "bcoo_dynamic_slice", "bcoo_extract", "bcoo_fromdense", "bcoo_gather",
    "bcoo_multiply_dense", "bcoo_multiply_sparse", "bcoo_reduce_sum", "bcoo_reshape", "bcoo_rev",
    "bcoo_slice", "bcoo_sort_indices", "bcoo_squeeze", "bcoo_sum_duplicates", "bcoo_todense",
    "bcoo_transpose", "bcoo_update_layout", "bcsr_broadcast_in_dim", "bcsr_concatenate",
    "bcsr_dot_general", "bcsr_extract", "bcsr_fromdense",
    "bcsr_sum_duplicates", "bcsr_todense", "coo_fromdense", "coo_matmat", "coo_matvec",
    "coo_todense", "csr_fromdense", "csr_matmat", "csr_matvec", "csr_todense", "empty", "eye", "grad", "jacfwd", "jacobian",
    "jacrev", "random_bcoo", "sparsify", "todense", "value_and_grad",
]
