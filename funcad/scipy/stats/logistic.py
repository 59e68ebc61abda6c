"""The logistic distribution."""
from ... import numpy as _fnp
from ..special import expit as _expit, logit as _logit
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """log density, -2 logaddexp(z/2, -z/2) - log(scale).

    >>> from funcad.scipy.stats import logistic
    >>> round(float(logistic.logpdf(0.0)), 6)
    -1.386294
    """
    x, loc, scale = _promote_inexact("logistic.logpdf", x, loc, scale)
    half = (x - loc) / scale / 2
    return -2 * _fnp.logaddexp(half, -half) - _fnp.log(scale)


def pdf(x, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import logistic
    >>> float(logistic.pdf(0.0))
    0.25
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x) = expit(z).

    >>> from funcad.scipy.stats import logistic
    >>> float(logistic.cdf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("logistic.cdf", x, loc, scale)
    return _expit((x - loc) / scale)


def sf(x, loc=0, scale=1):
    """P(X > x) = expit(-z).

    >>> from funcad.scipy.stats import logistic
    >>> float(logistic.sf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("logistic.sf", x, loc, scale)
    return _expit(-((x - loc) / scale))


def ppf(x, loc=0, scale=1):
    """The quantile function logit(q) * scale + loc.

    >>> from funcad.scipy.stats import logistic
    >>> float(logistic.ppf(0.5))
    0.0
    """
    x, loc, scale = _promote_inexact("logistic.ppf", x, loc, scale)
    return _logit(x) * scale + loc


def isf(x, loc=0, scale=1):
    """The inverse survival function -logit(q) * scale + loc.

    >>> from funcad.scipy.stats import logistic
    >>> float(logistic.isf(0.5))
    0.0
    """
    x, loc, scale = _promote_inexact("logistic.isf", x, loc, scale)
    return -_logit(x) * scale + loc
