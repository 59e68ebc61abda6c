"""The beta distribution on [loc, loc + scale]."""
from ... import numpy as _fnp
from ..special import betainc as _betainc, betaln as _betaln, xlog1py as _xlog1py, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    """log density; -inf outside the support, NaN for non-positive a, b or scale.

    >>> from funcad.scipy.stats import beta
    >>> float(beta.logpdf(0.5, 1.0, 1.0))
    0.0
    """
    x, a, b, loc, scale = _promote_inexact("beta.logpdf", x, a, b, loc, scale)
    y = (x - loc) / scale
    log_probs = -_betaln(a, b) + _xlogy(a - 1, y) + _xlog1py(b - 1, -y) - _fnp.log(scale)
    out = _fnp.where(_fnp.logical_or(_fnp.greater(x, loc + scale), _fnp.less(x, loc)), -_fnp.inf, log_probs)
    bad = _fnp.logical_or(_fnp.logical_or(_fnp.less_equal(a, 0), _fnp.less_equal(b, 0)), _fnp.less_equal(scale, 0))
    return _fnp.where(bad, _fnp.nan, out)


def pdf(x, a, b, loc=0, scale=1):
    """Density; 0 outside the support.

    >>> from funcad.scipy.stats import beta
    >>> float(beta.pdf(0.5, 1.0, 1.0))
    1.0
    """
    return _fnp.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    """P(X <= x) = betainc(a, b, (x - loc) / scale), clipped to [0, 1].

    >>> from funcad.scipy.stats import beta
    >>> round(float(beta.cdf(0.4, 2.0, 3.0)), 6)
    0.5248
    """
    x, a, b, loc, scale = _promote_inexact("beta.cdf", x, a, b, loc, scale)
    return _betainc(a, b, _fnp.clip((x - loc) / scale, 0, 1))


def logcdf(x, a, b, loc=0, scale=1):
    """log cdf.

    >>> from funcad.scipy.stats import beta
    >>> round(float(beta.logcdf(0.4, 2.0, 3.0)), 6)
    -0.644738
    """
    return _fnp.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """P(X > x) = betainc(b, a, 1 - (x - loc) / scale), clipped to [0, 1].

    >>> from funcad.scipy.stats import beta
    >>> round(float(beta.sf(0.4, 2.0, 3.0)), 6)
    0.4752
    """
    x, a, b, loc, scale = _promote_inexact("beta.sf", x, a, b, loc, scale)
    return _betainc(b, a, 1 - _fnp.clip((x - loc) / scale, 0, 1))


def logsf(x, a, b, loc=0, scale=1):
    """log sf.

    >>> from funcad.scipy.stats import beta
    >>> round(float(beta.logsf(0.4, 2.0, 3.0)), 6)
    -0.74402
    """
    return _fnp.log(sf(x, a, b, loc, scale))
