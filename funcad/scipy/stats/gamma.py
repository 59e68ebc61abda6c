"""The gamma distribution with shape a (cdf/sf need the incomplete gamma function, which funcad lacks)."""
from ... import numpy as _fnp
from ..special import gammaln as _gammaln, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpdf", "pdf"]


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
