"""funcad.experimental.sparse: JAX's `jax.experimental.sparse` (sparse arrays whose
operations are compositions of funcad ops, so they work under jit, vmap and grad).
"""
from ._base import JAXSparse, SparseEfficiencyError, SparseEfficiencyWarning
from ._bcoo import (BCOO, bcoo_eliminate_zeros, bcoo_extract, bcoo_fromdense, bcoo_sort_indices,
                    bcoo_sum_duplicates, bcoo_todense, bcoo_update_layout)
from ._bcoo_dot import (bcoo_dot_general, bcoo_dot_general_sampled, bcoo_multiply_dense,
                        bcoo_multiply_sparse)
from ._bcoo_shape import (bcoo_broadcast_in_dim, bcoo_concatenate, bcoo_dynamic_slice, bcoo_gather,
                          bcoo_reduce_sum, bcoo_reshape, bcoo_rev, bcoo_slice, bcoo_squeeze,
                          bcoo_transpose)
