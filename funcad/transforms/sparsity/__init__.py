"""Sparse Jacobians and Hessians: sparsity detection on the jaxpr, colouring,
compressed evaluation and a sparse result container (see api.py)."""
from .api import (check_pattern, hessian_sparsity, jacobian_sparsity, sparse_hessian, sparse_jacfwd,
                  sparse_jacobian, sparse_jacrev)
from .container import SparseMatrix

__all__ = ["SparseMatrix", "check_pattern", "hessian_sparsity", "jacobian_sparsity", "sparse_hessian",
           "sparse_jacfwd", "sparse_jacobian", "sparse_jacrev"]
