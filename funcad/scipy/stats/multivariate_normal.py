"""The multivariate normal distribution (mean on the last axis, cov n x n or a scalar)."""
import numpy as _np

from ... import numpy as _fnp
from ...core.avals import aval_of as _aval_of
from ...core.errors import FuncadTypeError as _FuncadTypeError, FuncadValueError as _FuncadValueError
from ...lax import linalg as _linalg
from ...arrays.dtypes import asarray_or_tracer as _asarray, promote as _promote, to_inexact as _to_inexact

__all__ = ["logpdf", "pdf"]


def _solve_lower(L, y):
    return _linalg.triangular_solve(L, y[:, None], left_side=True, lower=True)[:, 0]


_solve_lower_batched = _fnp.vectorize(_solve_lower, signature="(n,n),(n)->(n)")


def logpdf(x, mean, cov, allow_singular: None = None):
    """log N(x; mean, cov) over the last axis, by the Cholesky factor L of cov:
    -|L^-1 (x - mean)|^2 / 2 - n log(2 pi) / 2 - sum(log diag L). A 0-d mean is the
    univariate case; a 0-d cov is cov * I. Stacks of x, mean and cov broadcast.

    >>> import numpy as np
    >>> from funcad.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.logpdf(np.zeros(2), np.zeros(2), np.eye(2))), 6)
    -1.837877
    """
    if allow_singular is not None:
        raise _FuncadTypeError("multivariate_normal.logpdf: allow_singular is not offered (as in JAX); "
                               "pass a positive-definite cov")
    x, mean, cov = _promote(*[_to_inexact(_asarray(v)) for v in (x, mean, cov)])
    log2pi = float(_np.log(2 * _np.pi))
    if not _aval_of(mean).shape:
        return -0.5 * _fnp.square(x - mean) / cov - 0.5 * (log2pi + _fnp.log(cov))
    n = _aval_of(mean).shape[-1]
    y = x - mean
    cov_shape = _aval_of(cov).shape
    if not cov_shape:
        return -0.5 * _fnp.einsum("...i,...i->...", y, y) / cov - n / 2 * (log2pi + _fnp.log(cov))
    if len(cov_shape) < 2 or cov_shape[-2:] != (n, n):
        raise _FuncadValueError(f"multivariate_normal.logpdf got incompatible shapes: mean has {n} "
                                f"entries but cov has shape {cov_shape}; cov must be ({n}, {n}) "
                                "(or a stack of them) or a scalar")
    L = _linalg.cholesky(cov)
    z = _solve_lower_batched(L, y)
    return (-0.5 * _fnp.einsum("...i,...i->...", z, z) - n / 2 * log2pi
            - _fnp.sum(_fnp.log(_fnp.diagonal(L, axis1=-2, axis2=-1)), axis=-1))


def pdf(x, mean, cov):
    """Density.

    >>> import numpy as np
    >>> from funcad.scipy.stats import multivariate_normal
    >>> round(float(multivariate_normal.pdf(np.zeros(2), np.zeros(2), np.eye(2))), 6)
    0.159155
    """
    return _fnp.exp(logpdf(x, mean, cov))
