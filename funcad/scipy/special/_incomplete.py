"""The incomplete gamma and beta functions, the modified Bessel functions of
orders 0 and 1, and Hurwitz's zeta, on the special-function primitives."""
from __future__ import annotations

from fractions import Fraction

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import FuncadTypeError
from ...primitives import special as S
from ...transforms.custom import custom_jvp
from ...transforms.api import jvp as _jvp
from ._basic import _real
from ...numpy._bessel import _i0, _i1

__all__ = ["betainc", "gammainc", "gammaincc", "i0", "i0e", "i1", "i1e", "zeta"]


def gammainc(a, x):
    """The regularized lower incomplete gamma function P(a, x).

    >>> from funcad.scipy.special import gammainc
    >>> round(float(gammainc(2.0, 1.0)), 6)
    0.264241
    """
    return S.igamma(*_real("gammainc", a, x))


def gammaincc(a, x):
    """The regularized upper incomplete gamma function Q(a, x) = 1 - P(a, x).

    >>> from funcad.scipy.special import gammaincc
    >>> round(float(gammaincc(2.0, 1.0)), 6)
    0.735759
    """
    return S.igammac(*_real("gammaincc", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b); differentiable in x only (as in JAX).

    >>> from funcad.scipy.special import betainc
    >>> round(float(betainc(2.0, 3.0, 0.4)), 6)
    0.5248
    """
    return S.betainc(*_real("betainc", a, b, x))


def i0e(x):
    """exp(-|x|) I0(x).

    >>> from funcad.scipy.special import i0e
    >>> round(float(i0e(1.0)), 6)
    0.46576
    """
    return S.bessel_i0e(*_real("i0e", x))


def i1e(x):
    """exp(-|x|) I1(x).

    >>> from funcad.scipy.special import i1e
    >>> round(float(i1e(1.0)), 6)
    0.20791
    """
    return S.bessel_i1e(*_real("i1e", x))


def i0(x):
    """The modified Bessel function of order 0, I0(x) = exp(|x|) i0e(x); I0' = I1.

    >>> from funcad.scipy.special import i0
    >>> round(float(i0(1.0)), 6)
    1.266066
    """
    return _i0(*_real("i0", x))


def i1(x):
    """The modified Bessel function of order 1, I1(x) = exp(|x|) i1e(x).

    >>> from funcad.scipy.special import i1
    >>> round(float(i1(1.0)), 6)
    0.565159
    """
    return _i1(*_real("i1", x))


# ------------------------------------------------------------------ zeta ----
# lax.zeta (chlo.zeta) has no derivative in x; as JAX, scipy.special.zeta takes
# both derivatives from the Euler-Maclaurin form of the sum (Johansson 2015,
# eq. 5): N direct terms, the integral of the tail, and M Bernoulli corrections.

def _bernoulli_even(n):
    """B_2, B_4, ..., B_2n as Fractions (Akiyama-Tanigawa)."""
    out, a = [], []
    for m in range(2 * n + 1):
        a.append(Fraction(1, m + 1))
        for j in range(m, 0, -1):
            a[j - 1] = j * (a[j - 1] - a[j])
        if m >= 2 and m % 2 == 0:
            out.append(a[0])
    return out


def _factorial(n):
    out = 1
    for k in range(2, n + 1):
        out *= k
    return out


# B_2m / (2m)!, m = 1..16.
_EM_COEFS = [float(b / _factorial(2 * m)) for m, b in enumerate(_bernoulli_even(16), 1)]


def _zeta_series(s, a):
    n = 8 if aval_of(a).dtype == np.float32 else 16
    terms = sum((a + k) ** -s for k in range(n))
    an = a + n
    integral = an ** (1.0 - s) / (s - 1.0)
    corr, rising, power = 0.5, 1.0, 1.0
    for m, c in enumerate(_EM_COEFS[:n], 1):
        # rising = s (s+1) ... (s+2m-2), power = (a+N)^(2m-1)
        rising = rising * (s + (2 * m - 2)) if m == 1 else rising * (s + (2 * m - 3)) * (s + (2 * m - 2))
        power = an if m == 1 else power * an * an
        corr = corr + c * rising / power
    return terms + integral + an ** -s * corr


@custom_jvp
def _zeta(x, q):
    return S.zeta(x, q)


@_zeta.defjvp
def _zeta_jvp(primals, tangents):
    out = _zeta(*primals)
    tx, tq = (fnp.zeros_like(p) if t is None else t for p, t in zip(primals, tangents))
    _, t_out = _jvp(_zeta_series, primals, (tx, tq))
    # Where zeta is NaN (x < 1) so is its derivative; a product keeps the rule linear.
    return out, t_out * fnp.where(fnp.isnan(out), out, fnp.ones_like(out))


def zeta(x, q=None):
    """The Hurwitz zeta function sum_k (k + q)^-x (q is required, as in JAX).

    >>> from funcad.scipy.special import zeta
    >>> round(float(zeta(2.0, 1.0)), 6)
    1.644934
    """
    if q is None:
        raise FuncadTypeError("zeta: the Riemann zeta function (q=None) is not offered, as in JAX; "
                              "pass q=1.0 for it, or another q for the Hurwitz zeta function")
    return _zeta(*_real("zeta", x, q))
