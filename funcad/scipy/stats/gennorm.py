"""The generalized normal distribution with shape beta (density proportional to exp(-|x|^beta))."""
from ... import numpy as _fnp
from ...primitives import special as _S
from ..special import gammaln as _gammaln
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    """log(beta / 2) - gammaln(1 / beta) - |x|^beta.

    >>> from funcad.scipy.stats import gennorm
    >>> round(float(gennorm.logpdf(0.5, 2.0)), 6)
    -0.822365
    """
    x, beta = _promote_inexact("gennorm.logpdf", x, beta)
    return _fnp.log(0.5 * beta) - _gammaln(1 / beta) - _fnp.abs(x) ** beta


def pdf(x, beta):
    """Density.

    >>> from funcad.scipy.stats import gennorm
    >>> round(float(gennorm.pdf(0.5, 2.0)), 6)
    0.439391
    """
    return _fnp.exp(logpdf(x, beta))


def cdf(x, beta):
    """(1 + sign(x) gammainc(1 / beta, |x|^beta)) / 2.

    >>> from funcad.scipy.stats import gennorm
    >>> round(float(gennorm.cdf(0.5, 2.0)), 6)
    0.76025
    """
    x, beta = _promote_inexact("gennorm.cdf", x, beta)
    return 0.5 * (1 + _fnp.sign(x) * _S.igamma(1 / beta, _fnp.abs(x) ** beta))
