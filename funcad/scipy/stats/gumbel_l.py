"""The left-skewed Gumbel distribution (of minima)."""
import numpy as _np

from ... import numpy as _fnp
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def _z(name, x, loc, scale):
    x, loc, scale = _promote_inexact(name, x, loc, scale)
    return (x - loc) / scale, scale, _fnp.greater(scale, 0)


def logpdf(x, loc=0, scale=1):
    """z - exp(z) - log(scale), z = (x - loc) / scale; NaN for scale <= 0.

    >>> from funcad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.logpdf(0.0)), 6)
    -1.0
    """
    z, scale, ok = _z("gumbel_l.logpdf", x, loc, scale)
    return _fnp.where(ok, z - _fnp.exp(z) - _fnp.log(scale), _np.nan)


def pdf(x, loc=0, scale=1):
    """Density.

    >>> from funcad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.pdf(0.0)), 6)
    0.367879
    """
    return _fnp.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """log(1 - exp(-exp(z))), by expm1.

    >>> from funcad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.logcdf(0.0)), 6)
    -0.458675
    """
    z, _, ok = _z("gumbel_l.logcdf", x, loc, scale)
    return _fnp.where(ok, _fnp.log(-_fnp.expm1(-_fnp.exp(z))), _np.nan)


def cdf(x, loc=0, scale=1):
    """1 - exp(-exp(z)).

    >>> from funcad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.cdf(0.0)), 6)
    0.632121
    """
    return _fnp.exp(logcdf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """-exp(z).

    >>> from funcad.scipy.stats import gumbel_l
    >>> float(gumbel_l.logsf(0.0))
    -1.0
    """
    z, _, ok = _z("gumbel_l.logsf", x, loc, scale)
    return _fnp.where(ok, -_fnp.exp(z), _np.nan)


def sf(x, loc=0, scale=1):
    """exp(-exp(z)).

    >>> from funcad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.sf(0.0)), 6)
    0.367879
    """
    return _fnp.exp(logsf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """loc + scale log(-log(1 - p)); NaN outside (0, 1).

    >>> from funcad.scipy.stats import gumbel_l
    >>> round(float(gumbel_l.ppf(0.5)), 6)
    -0.366513
    """
    p, loc, scale = _promote_inexact("gumbel_l.ppf", p, loc, scale)
    ok = _fnp.greater(p, 0) & _fnp.less(p, 1)
    return _fnp.where(ok, loc + scale * _fnp.log(-_fnp.log1p(-p)), _np.nan)
