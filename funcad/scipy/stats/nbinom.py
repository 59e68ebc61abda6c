"""The negative binomial distribution: failures k before the n-th success, success probability p."""
from ... import numpy as _fnp
from ..special import gammaln as _gammaln, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """log C(k + n - 1, k) + n log p + k log(1 - p), k shifted by loc; -inf below loc.

    >>> from funcad.scipy.stats import nbinom
    >>> round(float(nbinom.logpmf(2, 3.0, 0.5)), 6)
    -1.673976
    """
    k, n, p, loc = _promote_inexact("nbinom.logpmf", k, n, p, loc)
    y = k - loc
    comb = _gammaln(y + n) - _gammaln(n) - _gammaln(y + 1)
    return _fnp.where(_fnp.less(k, loc), -_fnp.inf, comb + _xlogy(n, p) + _xlogy(y, 1 - p))


def pmf(k, n, p, loc=0):
    """P(K = k).

    >>> from funcad.scipy.stats import nbinom
    >>> round(float(nbinom.pmf(2, 3.0, 0.5)), 6)
    0.1875
    """
    return _fnp.exp(logpmf(k, n, p, loc))
