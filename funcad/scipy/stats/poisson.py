"""The Poisson distribution (cdf needs the incomplete gamma function, which funcad lacks)."""
from ... import numpy as _fnp
from ..special import gammaln as _gammaln, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """k log(mu) - log(k!) - mu; -inf for negative or non-integer k - loc.

    >>> from funcad.scipy.stats import poisson
    >>> float(poisson.logpmf(0, 1.0))
    -1.0
    """
    k, mu, loc = _promote_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = _xlogy(x, mu) - _gammaln(x + 1) - mu
    return _fnp.where(_fnp.logical_or(_fnp.less(x, 0), _fnp.not_equal(_fnp.round(x), x)), -_fnp.inf, log_probs)


def pmf(k, mu, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import poisson
    >>> round(float(poisson.pmf(0, 1.0)), 6)
    0.367879
    """
    return _fnp.exp(logpmf(k, mu, loc))
