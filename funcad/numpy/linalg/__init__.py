"""funcad.numpy.linalg: NumPy's linear algebra on stacks of matrices, with derivatives.

Solves, inverses, determinants and factorizations are compositions of the
cholesky, triangular_solve and lu primitives (`_solve.py`); eigen, singular
value and QR decompositions, what is built on them, and the norms are
compositions of the eigh, svd and qr primitives (`_spectral.py`).
"""
import numpy as _np

from ._solve import (SlogdetResult, cholesky, cross, det, diagonal, inv, matrix_power,  # noqa: F401
                     matrix_transpose, multi_dot, outer, slogdet, solve, tensorinv, tensorsolve,
                     trace, vecdot)
from ._products import matmul, tensordot  # noqa: F401
from ._spectral import *  # noqa: F401,F403
from ._spectral import __all__ as _spectral_all
from ...core.errors import unsupported_name as _unsupported_name

__all__ = ["SlogdetResult", "cholesky", "cross", "det", "diagonal", "inv", "matrix_power",
           "matrix_transpose", "multi_dot", "outer", "slogdet", "solve", "tensorinv", "tensorsolve",
           "trace", "vecdot", "matmul", "tensordot", *_spectral_all]


def __getattr__(name):
    raise _unsupported_name(__name__, name, globals(), _np.linalg)
