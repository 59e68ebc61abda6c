"""The Cauchy distribution."""
from ... import numpy as _fnp
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """log density.

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.logpdf(0.0)), 6)
    -1.14473
    """
    x, loc, scale = _promote_inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(_fnp.log(_fnp.pi * scale) + _fnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.pdf(0.0)), 6)
    0.31831
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x) = 1/2 + arctan(z) / pi.

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.cdf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + _fnp.arctan((x - loc) / scale) / _fnp.pi


def logcdf(x, loc=0, scale=1):
    """log P(X <= x).

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.logcdf(0.0)), 6)
    -0.693147
    """
    return _fnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """P(X > x).

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.sf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """log P(X > x).

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.logsf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = _promote_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile function, tan(pi (q - 1/2)) computed from the nearer tail.

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.ppf(0.5))
    0.0
    """
    q, loc, scale = _promote_inexact("cauchy.ppf", q, loc, scale)
    upper = _fnp.greater(q, 0.5)
    arg = _fnp.pi * _fnp.where(upper, 1.0 - q, _fnp.abs(q))
    unscaled = _fnp.where(_fnp.equal(q, 0.5), 0.0, _fnp.where(upper, _fnp.ones_like(q), -_fnp.ones_like(q)) / _fnp.tan(arg))
    return _fnp.where(_fnp.logical_or(_fnp.less(q, 0), _fnp.greater(q, 1)), _fnp.nan, unscaled * scale + loc)


def isf(q, loc=0, scale=1):
    """The inverse survival function.

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.isf(0.5))
    -0.0
    """
    q, loc, scale = _promote_inexact("cauchy.isf", q, loc, scale)
    return -ppf(q, -loc, scale)
