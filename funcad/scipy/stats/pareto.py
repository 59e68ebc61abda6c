"""The Pareto distribution with shape b (support x >= loc + scale)."""
import numpy as _np

from ... import numpy as _fnp
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    """log(b / scale) - (b + 1) log((x - loc) / scale); -inf below loc + scale.

    >>> from funcad.scipy.stats import pareto
    >>> round(float(pareto.logpdf(2.0, 3.0)), 6)
    -1.673976
    """
    x, b, loc, scale = _promote_inexact("pareto.logpdf", x, b, loc, scale)
    y = (x - loc) / scale
    return _fnp.where(_fnp.less(y, 1), -_fnp.inf, -(_fnp.log(scale / b) + (b + 1) * _fnp.log(y)))


def pdf(x, b, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import pareto
    >>> round(float(pareto.pdf(2.0, 3.0)), 6)
    0.1875
    """
    return _fnp.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """1 - y^-b with y = (x - loc) / scale; 0 below y = 1.

    >>> from funcad.scipy.stats import pareto
    >>> float(pareto.cdf(2.0, 3.0))
    0.875
    """
    x, b, loc, scale = _promote_inexact("pareto.cdf", x, b, loc, scale)
    y = (x - loc) / scale
    return _fnp.where(_fnp.less(y, 1), 0.0, 1 - y ** -b)


def logcdf(x, b, loc=0, scale=1):
    """log1p(-y^-b); -inf below y = 1.

    >>> from funcad.scipy.stats import pareto
    >>> round(float(pareto.logcdf(2.0, 3.0)), 6)
    -0.133531
    """
    x, b, loc, scale = _promote_inexact("pareto.logcdf", x, b, loc, scale)
    y = (x - loc) / scale
    return _fnp.where(_fnp.less(y, 1), -_fnp.inf, _fnp.log1p(-(y ** -b)))


def logsf(x, b, loc=0, scale=1):
    """-b log(y); 0 below y = 1.

    >>> from funcad.scipy.stats import pareto
    >>> round(float(pareto.logsf(2.0, 3.0)), 6)
    -2.079442
    """
    x, b, loc, scale = _promote_inexact("pareto.logsf", x, b, loc, scale)
    y = (x - loc) / scale
    return _fnp.where(_fnp.less(y, 1), 0.0, -b * _fnp.log(y))


def sf(x, b, loc=0, scale=1):
    """y^-b; 1 below y = 1.

    >>> from funcad.scipy.stats import pareto
    >>> round(float(pareto.sf(2.0, 3.0)), 6)
    0.125
    """
    return _fnp.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """loc + scale (1 - q)^(-1/b); NaN outside [0, 1].

    >>> from funcad.scipy.stats import pareto
    >>> float(pareto.ppf(0.875, 3.0))
    2.0
    """
    q, b, loc, scale = _promote_inexact("pareto.ppf", q, b, loc, scale)
    out = loc + scale * (1 - q) ** -(1 / b)
    return _fnp.where(_fnp.isnan(q) | _fnp.less(q, 0) | _fnp.greater(q, 1), _np.nan, out)
