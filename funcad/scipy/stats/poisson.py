"""The Poisson distribution."""
from ... import numpy as _fnp
import numpy as _np

from ..special import gammaincc as _gammaincc, gammaln as _gammaln, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


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


def cdf(k, mu, loc=0):
    """P(X <= k) = gammaincc(floor(k - loc) + 1, mu); 0 below loc.

    >>> from funcad.scipy.stats import poisson
    >>> round(float(poisson.cdf(1, 1.0)), 6)
    0.735759
    """
    k, mu, loc = _promote_inexact("poisson.cdf", k, mu, loc)
    x = k - loc
    return _fnp.where(_fnp.less(x, 0), 0.0, _gammaincc(_fnp.floor(1 + x), mu))


def _neg_p_log_p(mu, max_k, upper):
    # -p log p summed over k < upper (at most max_k terms); from logpmf, not entr(pmf),
    # so that a pmf that underflows to 0 gives a 0 derivative, not NaN.
    k = _fnp.arange(max_k, dtype=mu.dtype)[:, None]
    log_p = logpmf(k, mu[None, :], 0)
    terms = _fnp.where(_fnp.less(k, _fnp.ceil(upper)[None, :]), -_fnp.exp(log_p) * log_p, 0.0)
    return _fnp.sum(terms, axis=0)


def entropy(mu, loc=0):
    """The entropy -sum p log p: summed directly for mu < 100 (over k < mu + 20 below
    mu = 10, k < mu + 10 sqrt(mu) + 20 above), else 0.5 log(2 pi e mu) - 1/(12 mu),
    the regimes JAX uses; `loc` does not change it.

    >>> from funcad.scipy.stats import poisson
    >>> round(float(poisson.entropy(1.0)), 6)
    1.304842
    """
    mu, loc = _promote_inexact("poisson.entropy", mu, loc)
    shape = _np.broadcast_shapes(_fnp.shape(mu), _fnp.shape(loc))
    m = _fnp.ravel(mu)
    small = _fnp.where(_fnp.logical_or(_fnp.equal(m, 0), _fnp.greater_equal(m, 10)), 1.0, m)
    medium = _fnp.where(_fnp.logical_or(_fnp.less(m, 10), _fnp.greater_equal(m, 100)), 10.0, m)
    large = _fnp.where(_fnp.less(m, 100), 100.0, m)
    out = _fnp.where(_fnp.equal(m, 0), 0.0, _fnp.where(
        _fnp.less(m, 10), _neg_p_log_p(small, 35, small + 20),
        _fnp.where(_fnp.less(m, 100), _neg_p_log_p(medium, 250, medium + 10 * _fnp.sqrt(medium) + 20),
                   0.5 * _fnp.log(2 * _np.pi * _np.e * large) - 1.0 / (12 * large))))
    return _fnp.broadcast_to(_fnp.reshape(out, _fnp.shape(mu)), shape)
