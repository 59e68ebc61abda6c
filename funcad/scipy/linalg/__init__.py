"""funcad.scipy.linalg: SciPy's linear algebra as JAX offers it, with derivatives.

>>> import numpy as np, funcad.scipy.linalg as sla
>>> sla.solve_triangular(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([2.0, 3.0]), lower=True).tolist()
[1.0, 2.0]
"""
from ._factor import (block_diag, cho_factor, cho_solve, cholesky, det, expm, expm_frechet, inv, lu,
                      lu_factor, lu_solve, solve, solve_triangular)

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "det", "expm", "expm_frechet", "inv", "lu",
           "lu_factor", "lu_solve", "solve", "solve_triangular"]

# eigh (standard and generalized), svd and qr (funcad/primitives/decompositions.py).
from ._spectral import eigh, eigh_tridiagonal, qr, qr_multiply, svd  # noqa: E402

__all__ += ["eigh", "eigh_tridiagonal", "qr", "qr_multiply", "svd"]

# The Schur decomposition and the functions built on it (funcad/primitives/schur.py).
from ._schur import funm, hessenberg, polar, rsf2csf, schur, solve_sylvester, sqrtm  # noqa: E402

__all__ += ["funm", "hessenberg", "polar", "rsf2csf", "schur", "solve_sylvester", "sqrtm"]

# Special matrices (toeplitz, hankel, ... hilbert, dft).
from ._special_matrices import (circulant, companion, convolution_matrix, dft, fiedler,  # noqa: E402
                                fiedler_companion, hadamard, hankel, helmert, hilbert, invhilbert,
                                invpascal, leslie, pascal, toeplitz)

__all__ += ["circulant", "companion", "convolution_matrix", "dft", "fiedler", "fiedler_companion",
            "hadamard", "hankel", "helmert", "hilbert", "invhilbert", "invpascal", "leslie", "pascal",
            "toeplitz"]
