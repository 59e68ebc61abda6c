"""The normal distribution truncated to [a, b] (in units of scale around loc)."""
import numpy as _np

from ... import numpy as _fnp
from ..special import log_ndtr as _log_ndtr, logsumexp as _logsumexp, ndtr as _ndtr
from . import norm as _norm
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(x, y):
    """log(exp(x) - exp(y)) for x >= y, stably."""
    return _logsumexp(_fnp.stack([x, y]), b=_fnp.stack([_fnp.ones_like(x), -_fnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a, b):
    """log(Phi(b) - Phi(a)): from the tail that keeps the digits (both bounds on one side
    of 0: log_ndtr's difference, mirrored for the right tail), else log1p of the two tails."""
    a, b = _fnp.broadcast_arrays(a, b)
    left, right = _fnp.less_equal(b, 0), _fnp.greater(a, 0)
    a_tail, b_tail = _fnp.where(right, -b, a), _fnp.where(right, -a, b)
    tail = _log_diff(_log_ndtr(b_tail), _log_ndtr(a_tail))
    central = _fnp.log1p(-_ndtr(a) - _ndtr(-b))
    return _fnp.where(left | right, tail, central)


def logpdf(x, a, b, loc=0, scale=1):
    """norm.logpdf(x, loc, scale) - log(Phi(b) - Phi(a)); -inf outside, NaN unless a < b.

    >>> from funcad.scipy.stats import truncnorm
    >>> round(float(truncnorm.logpdf(0.5, -1.0, 2.0)), 6)
    -0.843772
    """
    x, a, b, loc, scale = _promote_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = _norm.logpdf(x, loc, scale) - _log_gauss_mass(a, b)
    y = (x - loc) / scale
    val = _fnp.where(_fnp.less(y, a) | _fnp.greater(y, b), -_fnp.inf, val)
    return _fnp.where(_fnp.less(a, b), val, _np.nan)


def pdf(x, a, b, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import truncnorm
    >>> round(float(truncnorm.pdf(0.5, -1.0, 2.0)), 6)
    0.430085
    """
    return _fnp.exp(logpdf(x, a, b, loc, scale))


def logcdf(x, a, b, loc=0, scale=1):
    """log P(X <= x): from the mass below x, or, where that is near 1, from the mass above.

    >>> from funcad.scipy.stats import truncnorm
    >>> round(float(truncnorm.logcdf(0.5, -1.0, 2.0)), 6)
    -0.429429
    """
    x, a, b, loc, scale = _promote_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = _fnp.broadcast_arrays(x, a, b)
    y = (x - loc) / scale
    total = _log_gauss_mass(a, b)
    below = _log_gauss_mass(a, y) - total
    above = _log_gauss_mass(y, b) - total
    out = _fnp.where(_fnp.greater_equal(y, b), 0.0, _fnp.where(
        _fnp.less_equal(y, a), -_fnp.inf, _fnp.where(
            _fnp.greater(below, -0.1), _fnp.log1p(-_fnp.exp(above)), _fnp.where(
                _fnp.greater(y, a), below, _np.nan))))
    return _fnp.where(_fnp.less(a, b), out, _np.nan)


def cdf(x, a, b, loc=0, scale=1):
    """P(X <= x).

    >>> from funcad.scipy.stats import truncnorm
    >>> round(float(truncnorm.cdf(0.5, -1.0, 2.0)), 6)
    0.65088
    """
    return _fnp.exp(logcdf(x, a, b, loc, scale))


def logsf(x, a, b, loc=0, scale=1):
    """log P(X > x), the logcdf of the mirrored distribution.

    >>> from funcad.scipy.stats import truncnorm
    >>> round(float(truncnorm.logsf(0.5, -1.0, 2.0)), 6)
    -1.052341
    """
    x, a, b, loc, scale = _promote_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


def sf(x, a, b, loc=0, scale=1):
    """P(X > x).

    >>> from funcad.scipy.stats import truncnorm
    >>> round(float(truncnorm.sf(0.5, -1.0, 2.0)), 6)
    0.34912
    """
    return _fnp.exp(logsf(x, a, b, loc, scale))
