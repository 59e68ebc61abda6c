"""The exponential distribution (support x >= loc)."""
from ... import numpy as _fnp
from ...nn import log1mexp as _log1mexp
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """log density; -inf below loc.

    >>> from funcad.scipy.stats import expon
    >>> float(expon.logpdf(1.0))
    -1.0
    """
    x, loc, scale = _promote_inexact("expon.logpdf", x, loc, scale)
    return _fnp.where(_fnp.less(x, loc), -_fnp.inf, -((x - loc) / scale + _fnp.log(scale)))


def pdf(x, loc=0, scale=1):
    """Density; 0 below loc.

    >>> from funcad.scipy.stats import expon
    >>> float(expon.pdf(0.0))
    1.0
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x) = -expm1(-z); 0 below loc.

    >>> from funcad.scipy.stats import expon
    >>> round(float(expon.cdf(1.0)), 6)
    0.632121
    """
    x, loc, scale = _promote_inexact("expon.cdf", x, loc, scale)
    neg_z = (loc - x) / scale
    return _fnp.where(_fnp.less(x, loc), _fnp.zeros_like(neg_z), -_fnp.expm1(neg_z))


def logcdf(x, loc=0, scale=1):
    """log P(X <= x) = log1mexp(z); -inf below loc.

    >>> from funcad.scipy.stats import expon
    >>> round(float(expon.logcdf(1.0)), 6)
    -0.458675
    """
    x, loc, scale = _promote_inexact("expon.logcdf", x, loc, scale)
    below = _fnp.less(x, loc)
    return _fnp.where(below, -_fnp.inf, _log1mexp(_fnp.where(below, 1.0, (x - loc) / scale)))


def logsf(x, loc=0, scale=1):
    """log P(X > x) = -z; 0 below loc.

    >>> from funcad.scipy.stats import expon
    >>> float(expon.logsf(2.0))
    -2.0
    """
    x, loc, scale = _promote_inexact("expon.logsf", x, loc, scale)
    neg_z = (loc - x) / scale
    return _fnp.where(_fnp.less(x, loc), _fnp.zeros_like(neg_z), neg_z)


def sf(x, loc=0, scale=1):
    """P(X > x).

    >>> from funcad.scipy.stats import expon
    >>> float(expon.sf(0.0))
    1.0
    """
    return _fnp.exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """The quantile function loc - scale log1p(-q); NaN outside [0, 1].

    >>> from funcad.scipy.stats import expon
    >>> float(expon.ppf(0.0))
    0.0
    """
    q, loc, scale = _promote_inexact("expon.ppf", q, loc, scale)
    bad = _fnp.logical_or(_fnp.isnan(q), _fnp.logical_or(_fnp.less(q, 0), _fnp.greater(q, 1)))
    return _fnp.where(bad, _fnp.nan, loc - scale * _fnp.log1p(-q))
