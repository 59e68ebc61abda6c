"""The beta-binomial distribution: n trials with a Beta(a, b) success probability."""
import numpy as _np

from ... import numpy as _fnp
from ..special import betaln as _betaln
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, a, b, loc=0):
    """log C(n, y) + betaln(y + a, n - y + b) - betaln(a, b), y = floor(k) - loc, with the
    binomial coefficient as -log(n + 1) - betaln(n - y + 1, y + 1); -inf off the support,
    NaN for n < 0 or a, b <= 0 (as JAX).

    >>> from funcad.scipy.stats import betabinom
    >>> round(float(betabinom.logpmf(2, 5.0, 2.0, 3.0)), 6)
    -1.435085
    """
    k, n, a, b, loc = _promote_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = _fnp.floor(k) - loc
    comb = -(_fnp.log1p(n) + _betaln(n - y + 1, y + 1))
    out = comb + _betaln(y + a, n - y + b) - _betaln(a, b)
    out = _fnp.where(_fnp.equal(y, 0) & _fnp.equal(n, 0), 0.0, out)
    off = _fnp.less(y, -loc) | _fnp.greater(y, n) | _fnp.less_equal(y + a, 0)
    out = _fnp.where(off, -_fnp.inf, out)
    return _fnp.where(_fnp.less(n, 0) | _fnp.less_equal(a, 0) | _fnp.less_equal(b, 0), _np.nan, out)


def pmf(k, n, a, b, loc=0):
    """P(K = k).

    >>> from funcad.scipy.stats import betabinom
    >>> round(float(betabinom.pmf(2, 5.0, 2.0, 3.0)), 6)
    0.238095
    """
    return _fnp.exp(logpmf(k, n, a, b, loc))
