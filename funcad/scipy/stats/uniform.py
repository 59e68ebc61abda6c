"""The uniform distribution on [loc, loc + scale]."""
from ... import numpy as _fnp
from ._common import promote_inexact as _promote_inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """-log(scale) on the support, -inf outside it (NaN where z is NaN).

    >>> from funcad.scipy.stats import uniform
    >>> float(uniform.logpdf(0.5))
    -0.0
    """
    x, loc, scale = _promote_inexact("uniform.logpdf", x, loc, scale)
    z = (x - loc) / scale
    outside = _fnp.logical_or(_fnp.less(z, 0), _fnp.greater(z, 1))
    inside = _fnp.logical_and(_fnp.greater_equal(z, 0), _fnp.less_equal(z, 1))
    return _fnp.where(outside, -_fnp.inf, _fnp.where(inside, -_fnp.log(scale) * _fnp.ones_like(z), _fnp.nan))


def pdf(x, loc=0, scale=1):
    """1 / scale on the support, 0 outside it.

    >>> from funcad.scipy.stats import uniform
    >>> float(uniform.pdf(2.0))
    0.0
    """
    return _fnp.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """clip((x - loc) / scale, 0, 1).

    >>> from funcad.scipy.stats import uniform
    >>> float(uniform.cdf(0.25))
    0.25
    """
    x, loc, scale = _promote_inexact("uniform.cdf", x, loc, scale)
    return _fnp.clip((x - loc) / scale, 0, 1)


def ppf(q, loc=0, scale=1):
    """loc + scale q; NaN outside [0, 1].

    >>> from funcad.scipy.stats import uniform
    >>> float(uniform.ppf(0.25))
    0.25
    """
    q, loc, scale = _promote_inexact("uniform.ppf", q, loc, scale)
    bad = _fnp.logical_or(_fnp.isnan(q), _fnp.logical_or(_fnp.less(q, 0), _fnp.greater(q, 1)))
    return _fnp.where(bad, _fnp.nan, loc + scale * q)
