"""The binomial distribution with n trials of success probability p."""
from ... import numpy as _fnp
from ..special import gammaln as _gammaln, xlog1py as _xlog1py, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """log P(X = k); -inf outside 0 <= k - loc <= n.

    >>> from funcad.scipy.stats import binom
    >>> round(float(binom.pmf(1, 2, 0.5)), 6)
    0.5
    """
    k, n, p, loc = _promote_inexact("binom.logpmf", k, n, p, loc)
    y = k - loc
    comb_term = _gammaln(n + 1) - (_gammaln(y + 1) + _gammaln(n - y + 1))
    log_linear = _xlogy(y, p) + _xlog1py(n - y, -p)
    log_probs = comb_term + log_linear
    certain = _fnp.logical_or(_fnp.logical_and(_fnp.equal(y, 0), _fnp.equal(n, 0)), _fnp.equal(log_linear, 0))
    log_probs = _fnp.where(certain, 0.0, log_probs)
    return _fnp.where(_fnp.logical_and(_fnp.greater_equal(k, loc), _fnp.less(k, loc + n + 1)), log_probs, -_fnp.inf)


def pmf(k, n, p, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import binom
    >>> float(binom.pmf(0, 2, 0.5))
    0.25
    """
    return _fnp.exp(logpmf(k, n, p, loc))
