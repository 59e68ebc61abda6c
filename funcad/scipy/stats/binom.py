"""The binomial distribution with n trials of success probability p."""
from ... import numpy as fnp
from ..special import gammaln, xlog1py, xlogy
from ._common import promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """log P(X = k); -inf outside 0 <= k - loc <= n.

    >>> from funcad.scipy.stats import binom
    >>> round(float(binom.pmf(1, 2, 0.5)), 6)
    0.5
    """
    k, n, p, loc = promote_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb_term = gammaln(n + 1) - (gammaln(y + 1) + gammaln(n - y + 1))
    log_linear = xlogy(y, p) + xlog1py(n - y, -p)
    log_probs = comb_term + log_linear
    certain = fnp.logical_or(fnp.logical_and(fnp.equal(y, 0), fnp.equal(n, 0)), fnp.equal(log_linear, 0))
    log_probs = fnp.where(certain, 0.0, log_probs)
    return fnp.where(fnp.logical_and(fnp.greater_equal(k, loc), fnp.less(k, loc + n + 1)), log_probs, -fnp.inf)


def pmf(k, n, p, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import binom
    >>> float(binom.pmf(0, 2, 0.5))
    0.25
    """
    return fnp.exp(logpmf(k, n, p, loc))
