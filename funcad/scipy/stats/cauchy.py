"""The Cauchy distribution."""
from ... import numpy as fnp
from ._common import promote_inexact

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """log density.

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.logpdf(0.0)), 6)
    -1.14473
    """
    x, loc, scale = promote_inexact("cauchy.logpdf", x, loc, scale)
    z = (x - loc) / scale
    return -(fnp.log(fnp.pi * scale) + fnp.log1p(z * z))


def pdf(x, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.pdf(0.0)), 6)
    0.31831
    """
    return fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x) = 1/2 + arctan(z) / pi.

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.cdf(0.0))
    0.5
    """
    x, loc, scale = promote_inexact("cauchy.cdf", x, loc, scale)
    return 0.5 + fnp.arctan((x - loc) / scale) / fnp.pi


def logcdf(x, loc=0, scale=1):
    """log P(X <= x).

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.logcdf(0.0)), 6)
    -0.693147
    """
    return fnp.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """P(X > x).

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.sf(0.0))
    0.5
    """
    x, loc, scale = promote_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """log P(X > x).

    >>> from funcad.scipy.stats import cauchy
    >>> round(float(cauchy.logsf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = promote_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def ppf(q, loc=0, scale=1):
    """The quantile function, tan(pi (q - 1/2)) computed from the nearer tail.

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.ppf(0.5))
    0.0
    """
    q, loc, scale = promote_inexact("cauchy.ppf", q, loc, scale)
    upper = fnp.greater(q, 0.5)
    arg = fnp.pi * fnp.where(upper, 1.0 - q, fnp.abs(q))
    unscaled = fnp.where(fnp.equal(q, 0.5), 0.0, fnp.where(upper, fnp.ones_like(q), -fnp.ones_like(q)) / fnp.tan(arg))
    return fnp.where(fnp.logical_or(fnp.less(q, 0), fnp.greater(q, 1)), fnp.nan, unscaled * scale + loc)


def isf(q, loc=0, scale=1):
    """The inverse survival function.

    >>> from funcad.scipy.stats import cauchy
    >>> float(cauchy.isf(0.5))
    -0.0
    """
    q, loc, scale = promote_inexact("cauchy.isf", q, loc, scale)
    return -ppf(q, -loc, scale)
