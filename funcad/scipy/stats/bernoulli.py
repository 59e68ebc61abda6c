"""The Bernoulli distribution with success probability p."""
from ... import numpy as _fnp
from ..special import xlog1py as _xlog1py, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """log p for k = 1, log(1 - p) for k = 0 (after shifting by loc); -inf elsewhere.

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.logpmf(1, 1.0))
    0.0
    """
    k, p, loc = _promote_inexact("bernoulli.logpmf", k, p, loc)
    x = k - loc
    log_probs = _xlogy(x, p) + _xlog1py(1.0 - x, -p)
    return _fnp.where(_fnp.logical_or(_fnp.less(x, 0), _fnp.greater(x, 1)), -_fnp.inf, log_probs)


def pmf(k, p, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.pmf(0, 0.25))
    0.75
    """
    return _fnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """P(X <= k); NaN for NaN inputs or p outside [0, 1].

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.cdf(0.5, 0.25))
    0.75
    """
    k, p = _promote_inexact("bernoulli.cdf", k, p)
    bad = _fnp.logical_or(_fnp.logical_or(_fnp.isnan(k), _fnp.isnan(p)),
                         _fnp.logical_or(_fnp.less(p, 0), _fnp.greater(p, 1)))
    one = _fnp.ones_like(k + p)
    val = _fnp.where(_fnp.less(k, 0), 0.0, _fnp.where(_fnp.less(k, 1), 1.0 - p, one))
    return _fnp.where(bad, _fnp.nan, val)


def ppf(q, p):
    """The smallest k in {0, 1} with cdf(k) >= q; NaN for bad inputs.

    >>> from funcad.scipy.stats import bernoulli
    >>> float(bernoulli.ppf(0.9, 0.25))
    1.0
    """
    q, p = _promote_inexact("bernoulli.ppf", q, p)
    bad = _fnp.logical_or(_fnp.logical_or(_fnp.isnan(q), _fnp.isnan(p)),
                         _fnp.logical_or(_fnp.logical_or(_fnp.less(p, 0), _fnp.greater(p, 1)),
                                        _fnp.logical_or(_fnp.less(q, 0), _fnp.greater(q, 1))))
    one = _fnp.ones_like(q + p)
    return _fnp.where(bad, _fnp.nan, _fnp.where(_fnp.less_equal(q, 1.0 - p), 0.0, one))
