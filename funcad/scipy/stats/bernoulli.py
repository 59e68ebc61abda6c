"""The Bernoulli distribution with success probability p."""
from ... import numpy as fnp
from ..special import xlog1py, xlogy
from ._common import promote_inexact

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """log p for k = 1, log(1 - p) for k = 0 (after shifting by loc); -inf elsewhere.

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.logpmf(1, 1.0))
    0.0
    """
    k, p, loc = promote_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlogy(x, p) + xlog1py(1.0 - x, -p)
    return fnp.where(fnp.logical_or(fnp.less(x, 0), fnp.greater(x, 1)), -fnp.inf, log_probs)


def pmf(k, p, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.pmf(0, 0.25))
    0.75
    """
    return fnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """P(X <= k); NaN for NaN inputs or p outside [0, 1].

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.cdf(0.5, 0.25))
    0.75
    """
    k, p = promote_inexact("bernoulli.cdf", k, p)
    bad = fnp.logical_or(fnp.logical_or(fnp.isnan(k), fnp.isnan(p)),
                         fnp.logical_or(fnp.less(p, 0), fnp.greater(p, 1)))
    one = fnp.ones_like(k + p)
    val = fnp.where(fnp.less(k, 0), 0.0, fnp.where(fnp.less(k, 1), 1.0 - p, one))
    return fnp.where(bad, fnp.nan, val)


def ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q; NaN for bad inputs.

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.ppf(0.9, 0.25))
    1.0
    """
    q, p = promote_inexact("bernoulli.ppf", q, p)
    bad = fnp.logical_or(fnp.logical_or(fnp.isnan(q), fnp.isnan(p)),
                         fnp.logical_or(fnp.logical_or(fnp.less(p, 0), fnp.greater(p, 1)),
                                        fnp.logical_or(fnp.less(q, 0), fnp.greater(q, 1))))
    one = fnp.ones_like(q + p)
    return fnp.where(bad, fnp.nan, fnp.where(fnp.less_equal(q, 1.0 - p), 0.0, one))
