"""The beta distribution on [loc, loc + scale] (cdf/sf need the incomplete beta function, which funcad lacks)."""
from ... import numpy as fnp
from ..special import betaln, xlog1py, xlogy
from ._common import promote_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, a, b, loc=0, scale=1):
    """log density; -inf outside the support, NaN for non-positive a, b or scale.

    >>> from funcad.scipy.stats import beta
    >>> float(beta.logpdf(0.5, 1.0, 1.0))
    0.0
    """
    x, a, b, loc, scale = promote_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -betaln(a, b) + xlogy(a - 1, y) + xlog1py(b - 1, -y) - fnp.log(scale)
    out = fnp.where(fnp.logical_or(fnp.greater(x, loc + scale), fnp.less(x, loc)), -fnp.inf, log_probs)
    bad = fnp.logical_or(fnp.logical_or(fnp.less_equal(a, 0), fnp.less_equal(b, 0)), fnp.less_equal(scale, 0))
    return fnp.where(bad, fnp.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    """Density; 0 outside the support.

    >>> from funcad.scipy.stats import beta
    >>> float(beta.pdf(0.5, 1.0, 1.0))
    1.0
    """
    return fnp.exp(logpdf(x, a, b, loc, scale))
