"""The standard normal distribution function and its inverse: ndtr, log_ndtr, ndtri, erfcinv."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import FuncadTypeError, FuncadValueError
from ...arrays.dtypes import asarray_or_tracer
from ...primitives import elementwise as E
from ...transforms.custom import custom_jvp
from ._basic import _real

__all__ = ["erfcinv", "log_ndtr", "ndtr", "ndtri"]

_LOG_SQRT_2PI = float(0.5 * np.log(2 * np.pi))  # a Python float: weak, keeps float32
# Where log_ndtr switches to the asymptotic series (below) and to -ndtr(-x) (above),
# per dtype: the points where ndtr underflows and where log(ndtr) rounds to 0 (as JAX).
_SEGMENTS = {np.dtype(np.float64): (-20.0, 8.0), np.dtype(np.float32): (-10.0, 5.0)}


def _float(name, x):
    x = asarray_or_tracer(x)
    dt = aval_of(x).dtype
    if dt not in _SEGMENTS:
        raise FuncadTypeError(f"{name}: x.dtype={dt} is not supported; pass float32 or float64 "
                              "(cast with .astype)")
    return x


def ndtr(x):
    """The standard normal CDF, through erf near 0 and erfc in the tails.

    >>> from funcad.scipy.special import ndtr
    >>> float(ndtr(0.0))
    0.5
    """
    x = _float("ndtr", x)
    w = x * np.sqrt(0.5).astype(aval_of(x).dtype)
    z = fnp.abs(w)
    y = fnp.where(fnp.less(z, np.sqrt(0.5)), 1.0 + E.erf(w),
                  fnp.where(fnp.greater(w, 0), 2.0 - E.erfc(z), E.erfc(z)))
    return 0.5 * y


def _norm_logpdf(x):
    return -0.5 * fnp.square(x) - _LOG_SQRT_2PI


def _double_factorial(n):
    return float(np.prod(np.arange(n, 1, -2, dtype=np.float64)))


def _log_ndtr_series(x, order):
    """log ndtr(x) for x << -1: log of exp(-x²/2) / (-x sqrt(2 pi)) times the
    asymptotic series 1 + sum_n (-1)^n (2n-1)!! / x^(2n)."""
    x2 = fnp.square(x)
    total, x2n = 1.0, x2
    for n in range(1, order + 1):
        term = _double_factorial(2 * n - 1) / x2n
        total = total - term if n % 2 else total + term
        x2n = x2n * x2
    return -0.5 * x2 - fnp.log(-x) - _LOG_SQRT_2PI + fnp.log(total)


def _log_ndtr(x, series_order):
    lower, upper = _SEGMENTS[aval_of(x).dtype]
    above = fnp.greater(x, upper)
    p = ndtr(fnp.where(above, -x, fnp.maximum(x, lower)))
    return fnp.where(above, -p, fnp.where(fnp.greater(x, lower), fnp.log(p),
                                          _log_ndtr_series(fnp.minimum(x, lower), series_order)))


def _log_ndtr_jvp(series_order, primals, tangents):
    (x,), (t,) = primals, tangents
    out = _log_ndtr_c(x, series_order)
    return out, t * fnp.exp(_norm_logpdf(x) - out)


_log_ndtr_c = custom_jvp(_log_ndtr, nondiff_argnums=(1,))
_log_ndtr_c.defjvp(_log_ndtr_jvp)


def log_ndtr(x, series_order: int = 3):
    """log(ndtr(x)), accurate far into both tails: an asymptotic series below
    -20 (float32: -10) and -ndtr(-x) above 8 (float32: 5), as JAX.

    >>> from funcad.scipy.special import log_ndtr
    >>> round(float(log_ndtr(-40.0)), 4)
    -804.6084
    """
    if not isinstance(series_order, int):
        raise FuncadTypeError("series_order must be a Python integer.")
    if not 0 <= series_order <= 30:
        raise FuncadValueError(f"series_order must be in [0, 30], got {series_order}.")
    return _log_ndtr_c(_float("log_ndtr", x), series_order)


def _ndtri_value(p):
    # Solve log_ndtr(x) = log(q) for x <= 0, q = min(p, 1 - p) (exact for p > 1/2),
    # from Abramowitz & Stegun 26.2.23 (|error| < 4.5e-4) by Newton steps on the log
    # scale: each squares the error, so three reach full double precision, and the
    # log scale keeps them accurate deep in the tail.
    bad = fnp.logical_or(fnp.logical_or(fnp.less(p, 0), fnp.greater(p, 1)), fnp.isnan(p))
    edge = fnp.logical_or(fnp.equal(p, 0), fnp.equal(p, 1))
    ps = fnp.where(fnp.logical_or(bad, edge), 0.5, p)
    upper = fnp.greater(ps, 0.5)
    q = fnp.where(upper, 1.0 - ps, ps)
    log_q = fnp.log(q)
    t = fnp.sqrt(-2.0 * log_q)
    x = -(t - (2.515517 + t * (0.802853 + t * 0.010328))
          / (1.0 + t * (1.432788 + t * (0.189269 + t * 0.001308))))
    for _ in range(3):
        lc = _log_ndtr(x, 10)  # more terms than log_ndtr's default: the root must be exact
        x = x - (lc - log_q) * fnp.exp(lc - _norm_logpdf(x))
    x = fnp.where(fnp.equal(q, 0.5), 0.0, fnp.where(upper, -x, x))  # the median exactly
    return fnp.where(bad, np.nan, fnp.where(fnp.equal(p, 0), -np.inf, fnp.where(fnp.equal(p, 1), np.inf, x)))


@custom_jvp
def _ndtri(p):
    return _ndtri_value(p)


@_ndtri.defjvp
def _ndtri_jvp(primals, tangents):
    (p,), (t,) = primals, tangents
    x = _ndtri(p)
    # dx/dp = 1 / pdf(x); its own derivative follows from x's rule.
    return x, t * fnp.exp(-_norm_logpdf(x))


def ndtri(p):
    """The inverse of ndtr: x with ndtr(x) = p; -inf at 0, inf at 1, NaN outside [0, 1].

    >>> from funcad.scipy.special import ndtri
    >>> round(float(ndtri(0.975)), 6)
    1.959964
    """
    return _ndtri(_float("ndtri", p))


def erfcinv(y):
    """The inverse of erfc on [0, 2]: -ndtri(y / 2) / sqrt(2).

    >>> from funcad.scipy.special import erfcinv
    >>> round(float(erfcinv(0.5)), 6)
    0.476936
    """
    y, = _real("erfcinv", y)
    return -_ndtri(y * 0.5) * np.sqrt(0.5).astype(aval_of(y).dtype)
