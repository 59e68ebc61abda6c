"""The geometric distribution: trials up to and including the first success."""
from ... import numpy as fnp
from ..special import xlog1py
from ._common import promote_inexact

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """(k - 1) log(1 - p) + log p; -inf for k - loc <= 0.

    >>> from funcad.scipy.stats import geom
    >>> float(geom.pmf(1, 0.5))
    0.5
    """
    k, p, loc = promote_inexact("geom.logpmf", k, p, loc)
    x = k - loc
    log_probs = xlog1py(x - 1, -p) + fnp.log(p)
    return fnp.where(fnp.less_equal(x, 0), -fnp.inf, log_probs)


def pmf(k, p, loc=0):
    """P(X = k).

    >>> from funcad.scipy.stats import geom
    >>> float(geom.pmf(2, 0.5))
    0.25
    """
    return fnp.exp(logpmf(k, p, loc))
