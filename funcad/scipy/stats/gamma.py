"""The gamma distribution with shape a."""
from ... import numpy as _fnp
from ..special import gammainc as _gammainc, gammaincc as _gammaincc, gammaln as _gammaln, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    """log density; -inf below loc.

    >>> from funcad.scipy.stats import gamma
    >>> float(gamma.logpdf(1.0, 1.0))
    -1.0
    """
    x, a, loc, scale = _promote_inexact("gamma.logpdf", x, a, loc, scale)
    ok = _fnp.greater_equal(x, loc)
    y = _fnp.where(ok, (x - loc) / scale, 1.0)
    log_probs = _xlogy(a - 1, y) - y - (_gammaln(a) + _fnp.log(scale))
    return _fnp.where(ok, log_probs, -_fnp.inf)


def pdf(x, a, loc=0, scale=1):
    """Density; 0 below loc.

    >>> from funcad.scipy.stats import gamma
    >>> round(float(gamma.pdf(1.0, 1.0)), 6)
    0.367879
    """
    return _fnp.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """P(X <= x) = gammainc(a, (x - loc) / scale); 0 below loc.

    >>> from funcad.scipy.stats import gamma
    >>> round(float(gamma.cdf(1.0, 2.0)), 6)
    0.264241
    """
    x, a, loc, scale = _promote_inexact("gamma.cdf", x, a, loc, scale)
    return _gammainc(a, _fnp.clip((x - loc) / scale, 0, _fnp.inf))


def logcdf(x, a, loc=0, scale=1):
    """log cdf.

    >>> from funcad.scipy.stats import gamma
    >>> round(float(gamma.logcdf(1.0, 2.0)), 6)
    -1.330893
    """
    return _fnp.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """P(X > x) = gammaincc(a, (x - loc) / scale); 1 below loc.

    >>> from funcad.scipy.stats import gamma
    >>> round(float(gamma.sf(1.0, 2.0)), 6)
    0.735759
    """
    x, a, loc, scale = _promote_inexact("gamma.sf", x, a, loc, scale)
    y = (x - loc) / scale
    return _fnp.where(_fnp.less(y, 0), 1, _gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """log sf.

    >>> from funcad.scipy.stats import gamma
    >>> round(float(gamma.logsf(1.0, 2.0)), 6)
    -0.306853
    """
    return _fnp.log(sf(x, a, loc, scale))
