"""The von Mises distribution on the circle, with concentration kappa >= 0."""
import numpy as _np

from ... import numpy as _fnp
from ..special import i0e as _i0e
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """kappa (cos x - 1) - log(2 pi i0e(kappa)); NaN for kappa < 0.

    >>> from funcad.scipy.stats import vonmises
    >>> round(float(vonmises.logpdf(0.0, 1.0)), 6)
    -1.073791
    """
    x, kappa = _promote_inexact("vonmises.logpdf", x, kappa)
    # i0e, not i0: exp(kappa) is taken out of the Bessel function and cancels against
    # kappa cos x, so large kappa does not overflow.
    out = kappa * (_fnp.cos(x) - _fnp.sign(kappa)) - float(_np.log(2 * _np.pi)) - _fnp.log(_i0e(kappa))
    return _fnp.where(_fnp.greater_equal(kappa, 0), out, _np.nan)


def pdf(x, kappa):
    """exp(kappa cos x) / (2 pi I0(kappa)).

    >>> from funcad.scipy.stats import vonmises
    >>> round(float(vonmises.pdf(0.0, 1.0)), 6)
    0.34171
    """
    return _fnp.exp(logpdf(x, kappa))
