"""Student's t distribution with df degrees of freedom."""
from ... import numpy as fnp
from ...primitives import elementwise as E
from ._common import promote_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, df, loc=0, scale=1):
    """log density of the t distribution.

    >>> from funcad.scipy.stats import t
    >>> round(float(t.logpdf(0.0, 1.0)), 6)
    -1.14473
    """
    x, df, loc, scale = promote_inexact("t.logpdf", x, df, loc, scale)
    z = (x - loc) / scale
    half_df = df / 2
    norm_term = E.lgamma(half_df) + fnp.log(fnp.square(scale) * fnp.pi * df) / 2 - E.lgamma(half_df + 0.5)
    return -(norm_term + (half_df + 0.5) * fnp.log1p(fnp.square(z) / df))


def pdf(x, df, loc=0, scale=1):
    """Density of the t distribution.

    >>> from funcad.scipy.stats import t
    >>> round(float(t.pdf(0.0, 1.0)), 6)
    0.31831
    """
    return fnp.exp(logpdf(x, df, loc, scale))
