"""erfcx, the scaled complementary error function, and the Bernoulli numbers."""
from __future__ import annotations

import operator

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import ConcretizationError, FuncadValueError
from ...core.trace import Tracer
from ._basic import _real, erfc

__all__ = ["bernoulli", "erfcx"]


def erfcx(x):
    """exp(x^2) erfc(x), without overflow for large x: directly below a threshold
    (12 in float64, 6 in float32), beyond it by the asymptotic series
    1/(x sqrt(pi)) sum_k (-1)^k (2k-1)!! / (2x^2)^k, which is then exact to
    rounding. Its derivatives are those of the formula in use.

    >>> from funcad.scipy.special import erfcx
    >>> round(float(erfcx(1.0)), 6), round(float(erfcx(30.0)), 8)
    (0.427584, 0.01879589)
    """
    x, = _real("erfcx", x)
    dtype = aval_of(x).dtype
    wide = dtype == np.float64
    threshold, terms = (12.0, 14) if wide else (6.0, 10)
    large = fnp.greater_equal(x, threshold)
    xs = fnp.where(large, 0.0, x)          # each branch sees only inputs it handles,
    xl = fnp.where(large, x, threshold)    # so the other's inf never reaches a gradient
    direct = fnp.exp(fnp.square(xs)) * erfc(xs)
    z = 1.0 / (2.0 * fnp.square(xl))
    series, term = 1.0, 1.0
    for k in range(1, terms):
        term = term * -(2 * k - 1) * z
        series = series + term
    asym = series / (xl * float(np.sqrt(np.pi)))
    return fnp.where(large, asym, direct)


def bernoulli(n: int):
    """The Bernoulli numbers B_0 ... B_n (B_1 = -1/2), n a concrete integer: B_2k
    from zeta(2k), summed to j = 49 and the tail beyond by Euler-Maclaurin.
    (JAX's sum stops at j = 49, so its B_4 is off by 2.5e-6 relative; these are
    SciPy's to rounding.)

    >>> from funcad.scipy.special import bernoulli
    >>> [round(float(b), 6) for b in bernoulli(4)]
    [1.0, -0.5, 0.166667, 0.0, -0.033333]
    """
    if isinstance(n, Tracer):
        raise ConcretizationError("bernoulli: n must be a concrete integer (it sets the output's "
                                  "length), but it is traced; pass a Python int")
    n = operator.index(n)
    if n < 0:
        raise FuncadValueError(f"bernoulli: n must be a non-negative integer, got {n}")
    first = np.array([1.0, -0.5, 1.0 / 6.0])
    if n < 3:
        return fnp.asarray(first[:n + 1])
    out = np.zeros(n + 1)
    out[:3] = first
    m = np.arange(4, n + 1, 2, dtype=np.float64)
    # B_m = (-1)^(m/2+1) 2 m! zeta(m) / (2 pi)^m, the factorial ratio built as a running product.
    scale = np.cumprod(-(m - 1) * m / 4 / np.pi ** 2) / np.pi ** 2
    zeta_minus_1 = np.sum(np.arange(2, 50, dtype=np.float64)[:, None] ** -m[None, :], axis=0)
    N = 50.0
    zeta_minus_1 += N ** (1 - m) / (m - 1) + N ** -m / 2 + m * N ** (-m - 1) / 12 \
        - m * (m + 1) * (m + 2) * N ** (-m - 3) / 720
    out[4::2] = scale * (1 + zeta_minus_1)
    return fnp.asarray(out)
