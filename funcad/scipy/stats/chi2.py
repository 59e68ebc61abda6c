"""The chi-squared distribution (cdf/sf need the incomplete gamma function, which funcad lacks)."""
import numpy as _np

from ... import numpy as _fnp
from ...primitives import elementwise as _E
from ..special import xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpdf", "pdf"]


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
