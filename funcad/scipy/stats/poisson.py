"""The Poisson distribution (cdf needs the incomplete gamma function, which funcad lacks)."""
from ... import numpy as fnp
from ..special import gammaln, xlogy
from ._common import promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """k log(mu) - log(k!) - mu; -inf for negative or non-integer k - loc.

    >>> from funcad.scipy.stats import poisson
    >>> float(poisson.logpmf(0, 1.0))
    -1.0
    """
    k, mu, loc = promote_inexact("poisson.logpmf", k, mu, loc)
    x = k - loc
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return fnp.where(fnp.logical_or(fnp.less(x, 0), fnp.not_equal(fnp.round(x), x)), -fnp.inf, log_probs)


def pmf(k, mu, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import poisson
    >>> round(float(poisson.pmf(0, 1.0)), 6)
    0.367879
    """
    return fnp.exp(logpmf(k, mu, loc))
