"""Student's t distribution with df degrees of freedom."""
from ... import numpy as _fnp
from ...primitives import elementwise as _E
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """log density of the t distribution.

    >>> from funcad.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 6)
    -1.14473
    """
    x, df, loc, scale = _promote_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    norm_term = _E.lgamma(half_df) + _fnp.log(_fnp.square(scale) * _fnp.pi * df) / 2 - _E.lgamma(half_df + 0.5)
    return -(norm_term + (half_df + 0.5) * _fnp.log1p(_fnp.square(z) / df))


def pdf(x, df, loc=0, scale=1):
    """Density of the t distribution.

    >>> from funcad.scipy.stats import t
    >>> round(float(t.pdf(0.0, 1.0)), 6)
    0.31831
    """
    return _fnp.exp(logpdf(x, df, loc, scale))
