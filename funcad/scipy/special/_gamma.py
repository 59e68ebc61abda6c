"""The gamma family: gammaln, gamma, digamma, polygamma, beta, betaln, combinatorics."""
from __future__ import annotations

import operator

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import ConcretizationError, FuncadValueError
from ...core.trace import Tracer
from ...primitives import elementwise as E
from ...transforms.custom import custom_jvp
from ._basic import _real

__all__ = ["beta", "betaln", "comb", "digamma", "factorial", "gamma", "gammaln", "gammasgn",
           "loggamma", "multigammaln", "poch", "polygamma"]


def gammaln(x):
    """log|Gamma(x)| (the lgamma primitive).

    >>> from funcad.scipy.special import gammaln
    >>> float(gammaln(1.0))
    0.0
    """
    return E.lgamma(*_real("gammaln", x))


def gammasgn(x):
    """The sign of Gamma(x): NaN at the poles (non-positive integers) and at NaN and -inf.

    >>> from funcad.scipy.special import gammasgn
    >>> float(gammasgn(-0.5))
    -1.0
    """
    x, = _real("gammasgn", x)
    floor_x = fnp.floor(x)
    neg = fnp.less(x, 0)
    pole = fnp.logical_or(fnp.logical_and(neg, fnp.equal(x, floor_x)), fnp.isnan(x))
    neg_zero = fnp.logical_and(fnp.equal(x, 0), fnp.less(fnp.divide(1.0, fnp.where(fnp.equal(x, 0), x, 1.0)), 0))
    odd = fnp.logical_and(neg, fnp.not_equal(fnp.remainder(floor_x, 2.0), 0))
    one = fnp.ones_like(x)
    return fnp.where(pole, np.nan, fnp.where(fnp.logical_or(odd, neg_zero), -one, one))


def gamma(x):
    """The gamma function, gammasgn(x) * exp(gammaln(x)).

    >>> from funcad.scipy.special import gamma
    >>> float(gamma(5.0))
    24.000000000000004
    """
    x, = _real("gamma", x)
    return gammasgn(x) * fnp.exp(E.lgamma(x))


def loggamma(x):
    """log(Gamma(x)) for real x > 0, NaN elsewhere (the principal branch's real part).

    >>> from funcad.scipy.special import loggamma
    >>> float(loggamma(1.0))
    0.0
    """
    x, = _real("loggamma", x)
    return fnp.where(fnp.greater(x, 0), E.lgamma(x), np.nan)


def digamma(x):
    """The digamma function, the derivative of gammaln.

    >>> from funcad.scipy.special import digamma
    >>> round(float(digamma(1.0)), 6)
    -0.577216
    """
    return E.digamma(*_real("digamma", x))


def polygamma(n, x):
    """The n-th derivative of digamma, psi^(n)(x); n is an integer array (or int),
    traced or not, and is not differentiable.

    >>> from funcad.scipy.special import polygamma
    >>> round(float(polygamma(1, 1.0)), 6)
    1.644934
    """
    dtype = aval_of(n).dtype if isinstance(n, Tracer) else np.asarray(n).dtype
    if dtype.kind not in "iu":
        raise FuncadValueError(f"Argument `n` to polygamma must be of integer type. Got dtype {dtype}.")
    n, x = _real("polygamma", n, x)
    return E.polygamma(n, x)


def _algdiv(a, b):
    """log(Gamma(b) / Gamma(a + b)) for b >= 8 and a <= b: the asymptotic series of
    the cdflib routine ALGDIV (which SciPy's betaln uses), accurate where the
    difference of two large gammaln values cancels."""
    h = a / b
    c = h / (1.0 + h)
    x2 = c * c
    s3 = 1.0 + (c + x2)
    s5 = 1.0 + (c + x2 * s3)
    s7 = 1.0 + (c + x2 * s5)
    s9 = 1.0 + (c + x2 * s7)
    s11 = 1.0 + (c + x2 * s9)
    t = fnp.square(1.0 / b)
    w = (((((-0.165322962780713e-02 * s11 * t + 0.837308034031215e-03 * s9) * t
            - 0.595202931351870e-03 * s7) * t + 0.793650666825390e-03 * s5) * t
          - 0.277777777760991e-02 * s3) * t + 0.833333333333333e-01)
    w = w * (c / b)
    u = (b + (a - 0.5)) * fnp.log1p(a / b)
    v = a * (fnp.log(b) - 1.0)
    return fnp.where(fnp.less_equal(u, v), (w - v) - u, (w - u) - v)


def betaln(a, b):
    """log|B(a, b)|, with SciPy's asymptotic form when max(a, b) >= 8.

    >>> from funcad.scipy.special import betaln
    >>> float(betaln(1.0, 1.0))
    0.0
    """
    a, b = _real("betaln", a, b)
    lo, hi = fnp.where(fnp.less_equal(a, b), a, b), fnp.where(fnp.less_equal(a, b), b, a)
    small = E.lgamma(lo) + (E.lgamma(hi) - E.lgamma(lo + hi))
    large = E.lgamma(lo) + _algdiv(lo, fnp.where(fnp.less(hi, 8), 8.0, hi))
    return fnp.where(fnp.less(hi, 8), small, large)


def beta(a, b):
    """The beta function Gamma(a) Gamma(b) / Gamma(a + b).

    >>> from funcad.scipy.special import beta
    >>> float(beta(1.0, 1.0))
    1.0
    """
    a, b = _real("beta", a, b)
    return gammasgn(a) * gammasgn(b) * gammasgn(a + b) * fnp.exp(betaln(a, b))


def multigammaln(a, d: int):
    """log of the multivariate gamma function of dimension d (a concrete int).

    >>> from funcad.scipy.special import multigammaln
    >>> round(float(multigammaln(2.0, 2)), 6)
    0.451583
    """
    if isinstance(d, Tracer):
        raise ConcretizationError("multigammaln: the dimension d must be a concrete integer")
    d = operator.index(d)
    a, = _real("multigammaln", a)
    dt = aval_of(a).dtype
    halves = np.arange(d, dtype=dt) / 2
    terms = E.lgamma(fnp.expand_dims(a, -1) - halves)
    return fnp.sum(terms, axis=-1) + np.asarray(0.25 * d * (d - 1) * np.log(np.pi), dt)


def factorial(n, exact: bool = False):
    """n! = Gamma(n + 1) for real n (0 for n < 0); `exact=True` is not offered (as in JAX).

    >>> from funcad.scipy.special import factorial
    >>> round(float(factorial(4)), 6)
    24.0
    """
    if exact:
        raise FuncadValueError("factorial(exact=True) needs arbitrary-precision integers, which funcad "
                               "(like JAX) does not have; use exact=False")
    n, = _real("factorial", n)
    return fnp.where(fnp.less(n, 0), 0.0, fnp.exp(E.lgamma(n + 1.0)))


def comb(N, k, *, repetition: bool = False):
    """N choose k through gammaln (0 where N < 0, k < 0 or k > N).

    >>> from funcad.scipy.special import comb
    >>> round(float(comb(5, 2)), 6)
    10.0
    """
    N, k = _real("comb", N, k)
    if repetition:
        return fnp.where(fnp.logical_and(fnp.equal(k, 0), fnp.greater_equal(N, 0)), 1.0,
                         comb(N + k - 1.0, k))
    ok = fnp.logical_and(fnp.logical_and(fnp.less_equal(k, N), fnp.greater_equal(N, 0)),
                         fnp.greater_equal(k, 0))
    sN, sk = fnp.where(ok, N, 0.0), fnp.where(ok, k, 0.0)
    out = fnp.exp(E.lgamma(sN + 1.0) - E.lgamma(sk + 1.0) - E.lgamma(sN + 1.0 - sk))
    return fnp.where(ok, out, 0.0)


@custom_jvp
def _poch(z, m):
    return fnp.where(fnp.equal(m, 0), 1.0, gamma(z + m) / gamma(z))


@_poch.defjvp
def _poch_jvp(primals, tangents):
    (z, m), (tz, tm) = primals, tangents
    out = _poch(z, m)
    dz = (E.digamma(z + m) - E.digamma(z)) * out
    dm = E.digamma(z + m) * out
    return out, tz * dz + tm * dm


def poch(z, m):
    """The Pochhammer symbol Gamma(z + m) / Gamma(z) (1 where m == 0).

    >>> from funcad.scipy.special import poch
    >>> round(float(poch(2.0, 3.0)), 6)
    24.0
    """
    return _poch(*_real("poch", z, m))
