"""The wrapped Cauchy distribution on [0, 2 pi] with shape 0 < c < 1."""
import numpy as _np

from ... import numpy as _fnp
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """log((1 - c^2) / (2 pi (1 + c^2 - 2 c cos x))); -inf outside [0, 2 pi], NaN unless 0 < c < 1.

    >>> from funcad.scipy.stats import wrapcauchy
    >>> round(float(wrapcauchy.logpdf(1.0, 0.5)), 6)
    -1.782643
    """
    x, c = _promote_inexact("wrapcauchy.logpdf", x, c)
    inside = _fnp.greater_equal(x, 0) & _fnp.less_equal(x, 2 * _np.pi)
    out = _fnp.log(1 - c * c) - float(_np.log(2 * _np.pi)) - _fnp.log(1 + c * c - 2 * c * _fnp.cos(x))
    return _fnp.where(_fnp.greater(c, 0) & _fnp.less(c, 1), _fnp.where(inside, out, -_fnp.inf), _np.nan)


def pdf(x, c):
    """Density.

    >>> from funcad.scipy.stats import wrapcauchy
    >>> round(float(wrapcauchy.pdf(1.0, 0.5)), 6)
    0.168193
    """
    return _fnp.exp(logpdf(x, c))
