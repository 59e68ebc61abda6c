"""funcad.numpy.linalg: NumPy's linear algebra on stacks of matrices, with derivatives.

Solves, inverses, determinants and factorizations are compositions of the
cholesky, triangular_solve and lu primitives (funcad.lax.linalg).
"""
import numpy as _np

from ...core.avals import aval_of as _aval_of
from .. import _reductions as _R
from .. import _ufuncs as _U
from .._dtypes import asarray_or_tracer as _asarray_or_tracer, to_inexact as _to_inexact


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector and matrix norms as numpy.linalg.norm (no 'nuc' or 2-norm of matrices).

    >>> import funcad.numpy as fnp
    >>> float(fnp.linalg.norm(fnp.array([3.0, 4.0])))
    5.0
    """
    x = _to_inexact(_asarray_or_tracer(x))
    nd = _aval_of(x).ndim
    if axis is None and (ord is None or nd == 1):
        if ord is None or ord == 2:
            return _U.sqrt(_R.sum(_U.multiply(x, x), axis=None, keepdims=keepdims))
        axis = tuple(range(nd))
    if axis is None:
        axis = tuple(range(nd))
    axes = _R._norm_axes(nd, axis)
    if len(axes) == 1:
        a = _U.absolute(x)
        if ord is None or ord == 2:
            return _U.sqrt(_R.sum(_U.multiply(x, x), axes, keepdims=keepdims))
        if ord == _np.inf:
            return _R.max(a, axes, keepdims=keepdims)
        if ord == -_np.inf:
            return _R.min(a, axes, keepdims=keepdims)
        if ord == 0:
            return _R.sum(_U.not_equal(x, 0).astype(_aval_of(x).dtype), axes, keepdims=keepdims)
        if ord == 1:
            return _R.sum(a, axes, keepdims=keepdims)
        p = float(ord)
        return _U.power(_R.sum(_U.power(a, p), axes, keepdims=keepdims), 1.0 / p)
    if len(axes) == 2:
        r, c = axes
        if ord is None or ord == "fro":
            return _U.sqrt(_R.sum(_U.multiply(x, x), axes, keepdims=keepdims))
        a = _U.absolute(x)
        if ord == 1:
            return _R.max(_R.sum(a, r, keepdims=True), axes, keepdims=keepdims)
        if ord == -1:
            return _R.min(_R.sum(a, r, keepdims=True), axes, keepdims=keepdims)
        if ord == _np.inf:
            return _R.max(_R.sum(a, c, keepdims=True), axes, keepdims=keepdims)
        if ord == -_np.inf:
            return _R.min(_R.sum(a, c, keepdims=True), axes, keepdims=keepdims)
        raise NotImplementedError(f"matrix norm ord={ord!r} needs an SVD, which funcad does not have")
    raise ValueError("Improper number of dimensions to norm.")


from ._solve import (SlogdetResult, cholesky, cross, det, diagonal, inv, matrix_power,  # noqa: E402
                     matrix_transpose, multi_dot, outer, slogdet, solve, tensorinv, tensorsolve,
                     trace, vecdot)

__all__ = ["norm", "SlogdetResult", "cholesky", "cross", "det", "diagonal", "inv", "matrix_power",
           "matrix_transpose", "multi_dot", "outer", "slogdet", "solve", "tensorinv", "tensorsolve",
           "trace", "vecdot"]


def __getattr__(name):
    from ...core.errors import unsupported_name
    raise unsupported_name(__name__, name, globals(), _np.linalg)
