"""The Laplace (double exponential) distribution."""
from ... import numpy as _fnp
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    """log density -|x - loc| / scale - log(2 scale).

    >>> from funcad.scipy.stats import laplace
    >>> round(float(laplace.logpdf(0.0)), 6)
    -0.693147
    """
    x, loc, scale = _promote_inexact("laplace.logpdf", x, loc, scale)
    return -(_fnp.abs(x - loc) / scale + _fnp.log(2 * scale))


def pdf(x, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import laplace
    >>> float(laplace.pdf(0.0))
    0.5
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """P(X <= x).

    >>> from funcad.scipy.stats import laplace
    >>> float(laplace.cdf(0.0))
    0.5
    """
    x, loc, scale = _promote_inexact("laplace.cdf", x, loc, scale)
    z = (x - loc) / scale
    half_exp = 0.5 * _fnp.exp(-_fnp.abs(z))
    return _fnp.where(_fnp.less(z, 0), half_exp, 1.0 - half_exp)
