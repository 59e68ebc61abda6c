"""The chi-squared distribution with df degrees of freedom."""
import numpy as _np

from ... import numpy as _fnp
from ...primitives import elementwise as _E
from ..special import gammainc as _gammainc, gammaincc as _gammaincc, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    """log density; -inf below loc.

    >>> from funcad.scipy.stats import chi2
    >>> round(float(chi2.logpdf(1.0, 2.0)), 6)
    -1.193147
    """
    x, df, loc, scale = _promote_inexact("chi2.logpdf", x, df, loc, scale)
    y = (x - loc) / scale
    half_df = df / 2
    kernel = _xlogy(half_df - 1, y) - y / 2
    norm_const = -(_E.lgamma(half_df) + float(_np.log(2.0)) * df / 2)
    return _fnp.where(_fnp.less(x, loc), -_fnp.inf, norm_const - _fnp.log(scale) + kernel)


def pdf(x, df, loc=0, scale=1):
    """Density; 0 below loc.

    >>> from funcad.scipy.stats import chi2
    >>> round(float(chi2.pdf(1.0, 2.0)), 6)
    0.303265
    """
    return _fnp.exp(logpdf(x, df, loc, scale))


def cdf(x, df, loc=0, scale=1):
    """P(X <= x) = gammainc(df / 2, (x - loc) / (2 scale)); 0 below loc.

    >>> from funcad.scipy.stats import chi2
    >>> round(float(chi2.cdf(2.0, 3.0)), 6)
    0.427593
    """
    x, df, loc, scale = _promote_inexact("chi2.cdf", x, df, loc, scale)
    return _gammainc(df / 2, _fnp.clip((x - loc) / (scale * 2), 0, _fnp.inf))


def logcdf(x, df, loc=0, scale=1):
    """log cdf.

    >>> from funcad.scipy.stats import chi2
    >>> round(float(chi2.logcdf(2.0, 3.0)), 6)
    -0.849583
    """
    return _fnp.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """P(X > x) = gammaincc(df / 2, (x - loc) / (2 scale)); 1 below loc.

    >>> from funcad.scipy.stats import chi2
    >>> round(float(chi2.sf(2.0, 3.0)), 6)
    0.572407
    """
    x, df, loc, scale = _promote_inexact("chi2.sf", x, df, loc, scale)
    return _gammaincc(df / 2, _fnp.clip((x - loc) / (scale * 2), 0, _fnp.inf))


def logsf(x, df, loc=0, scale=1):
    """log sf.

    >>> from funcad.scipy.stats import chi2
    >>> round(float(chi2.logsf(2.0, 3.0)), 6)
    -0.557906
    """
    return _fnp.log(sf(x, df, loc, scale))
