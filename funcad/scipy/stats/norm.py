"""The normal distribution (loc = mean, scale = standard deviation)."""
import math as _math

from ... import numpy as _fnp
from ..special import log_ndtr as _log_ndtr, ndtr as _ndtr, ndtri as _ndtri
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]
# math, not funcad ops: this module may first be imported inside a trace (random.poisson)
_LOG_2PI = _math.log(2 * _math.pi)


def logpdf(x, loc=0, scale=1):
    """log density of N(loc, scale**2).

    >>> from funcad.scipy.stats import norm
    >>> round(float(norm.logpdf(0.0)), 6)
    -0.918939
    """
    x, loc, scale = _promote_inexact("norm.logpdf", x, loc, scale)
    return -0.5 * (_fnp.log(2 * _fnp.pi * _fnp.square(scale)) + _fnp.square(x - loc) / _fnp.square(scale))


def pdf(x, loc=0, scale=1):
    """Density of N(loc, scale**2).

    >>> from funcad.scipy.stats import norm
    >>> round(float(norm.pdf(0.0)), 6)
    0.398942
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x).

    >>> from funcad.scipy.stats import norm
    >>> float(norm.cdf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("norm.cdf", x, loc, scale)
    return _ndtr((x - loc) / scale)


def logcdf(x, loc=0, scale=1):
    """log P(X <= x), accurate in the far tails.

    >>> from funcad.scipy.stats import norm
    >>> round(float(norm.logcdf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = _promote_inexact("norm.logcdf", x, loc, scale)
    return _log_ndtr((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """P(X > x).

    >>> from funcad.scipy.stats import norm
    >>> float(norm.sf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """log P(X > x).

    >>> from funcad.scipy.stats import norm
    >>> round(float(norm.logsf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = _promote_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile function: x with cdf(x) = q.

    >>> from funcad.scipy.stats import norm
    >>> float(norm.ppf(0.5, loc=1.0))
    1.0
    """
    q, loc, scale = _promote_inexact("norm.ppf", q, loc, scale)
    return _ndtri(q) * scale + loc


def isf(q, loc=0, scale=1):
    """The inverse survival function: x with sf(x) = q.

    >>> from funcad.scipy.stats import norm
    >>> float(norm.isf(0.5, loc=1.0))
    1.0
    """
    q, loc, scale = _promote_inexact("norm.isf", q, loc, scale)
    return -ppf(q, -loc, scale)
