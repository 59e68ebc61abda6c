"""The geometric distribution: trials up to and including the first success."""
from ... import numpy as _fnp
from ..special import xlog1py as _xlog1py
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """(k - 1) log(1 - p) + log p; -inf for k - loc <= 0.

    >>> from funcad.scipy.stats import geom
    >>> float(geom.pmf(1, 0.5))
    0.5
    """
    k, p, loc = _promote_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = _xlog1py(x - 1, -p) + _fnp.log(p)
    return _fnp.where(_fnp.less_equal(x, 0), -_fnp.inf, log_probs)


def pmf(k, p, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import geom
    >>> float(geom.pmf(2, 0.5))
    0.25
    """
    return _fnp.exp(logpmf(k, p, loc))
