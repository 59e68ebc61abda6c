"""funcad.lax.linalg: the matrix decompositions as primitives, on stacks of matrices.

>>> import numpy as np, funcad.lax.linalg as lla
>>> lla.cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
[[2.0, 0.0], [1.0, 2.0]]
"""
from ._triangular import (cholesky, lu, lu_pivots_to_permutation, triangular_solve, tridiagonal,
                          tridiagonal_solve)
# The eigen, singular value and QR decompositions (funcad/primitives/decompositions.py).
from ._decompositions import (eig, eigh, geqrf, hessenberg, householder_product, qr, schur, svd,
                              EigImplementation, EighImplementation, SvdAlgorithm)
# The polar decomposition by QDWH.
from ._qdwh import qdwh
# Compositions of the primitives.
from ._linalg_compositions import cholesky_update, ormqr, symmetric_product

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "eig", "eigh", "geqrf",
           "hessenberg", "householder_product", "qr", "schur", "svd", "EigImplementation",
           "EighImplementation", "SvdAlgorithm", "qdwh", "tridiagonal_solve", "cholesky_update",
           "ormqr", "symmetric_product", "tridiagonal"]
