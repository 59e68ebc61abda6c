"""The sine and cosine integrals (sici), the Fresnel integrals, Spence's function
and Owen's T function, after Cephes (sici.c, fresnl.c, spence.c) and Patefield
and Tandy (2000)."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...transforms.custom import custom_jvp
from . import _coefs as C
from ._basic import _real, erf, erfc
from ._faddeeva import horner

__all__ = ["fresnel", "owens_t", "sici", "spence"]

_PI = float(np.pi)


# ------------------------------------------------------------------ sici ----

def _sici_small(x):
    """|x| <= 4: rational approximations in x^2."""
    t = x * x
    si = x * horner(C.SI_SN, t) / horner(C.SI_SD, t)
    ci = float(np.euler_gamma) + fnp.log(x) + t * horner(C.CI_CN, t) / horner(C.CI_CD, t)
    return fnp.where(x == 0, 0.0, si), fnp.where(x == 0, -np.inf, ci)


def _sici_large(x):
    """4 < |x| <= 1e9: the auxiliary functions f and g, in 1/x^2."""
    s, c, z = fnp.sin(x), fnp.cos(x), 1.0 / (x * x)
    below8 = x < 8.0
    f = fnp.where(below8, horner(C.SICI_FN4, z) / (x * horner(C.SICI_FD4, z)),
                  horner(C.SICI_FN8, z) / (x * horner(C.SICI_FD8, z)))
    g = fnp.where(below8, z * horner(C.SICI_GN4, z) / horner(C.SICI_GD4, z),
                  z * horner(C.SICI_GN8, z) / horner(C.SICI_GD8, z))
    return _PI / 2 - f * c - g * s, f * s - g * c


def _sici_huge(x):
    """|x| > 1e9: the leading asymptotic terms."""
    inf = fnp.isposinf(x)
    return (fnp.where(inf, _PI / 2, _PI / 2 - fnp.cos(x) / x),
            fnp.where(inf, 0.0, fnp.sin(x) / x))


@custom_jvp
def _sici(x):
    ax = fnp.abs(x)
    small, mid = ax <= 4, (ax > 4) & (ax <= 1e9)
    (s1, c1), (s2, c2), (s3, c3) = _sici_small(ax), _sici_large(ax), _sici_huge(ax)
    si = fnp.where(small, s1, fnp.where(mid, s2, s3))
    ci = fnp.where(small, c1, fnp.where(mid, c2, c3))
    return fnp.sign(x) * si, fnp.where(fnp.isneginf(x), np.nan, ci)


@_sici.defjvp
def _sici_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # Si' = sin(x)/x, Ci' = cos(x)/x
    return _sici(x), (fnp.sinc(x / _PI) * t, fnp.cos(x) / x * t)


def sici(x):
    """The sine and cosine integrals (Si(x), Ci(x)): Si = int_0^x sin(t)/t dt,
    Ci = gamma + log|x| + int_0^x (cos(t) - 1)/t dt (NaN for x = -inf).

    >>> from funcad.scipy.special import sici
    >>> si, ci = sici(1.0)
    >>> round(float(si), 6), round(float(ci), 6)
    (0.946083, 0.337404)
    """
    return _sici(*_real("sici", x))


# --------------------------------------------------------------- fresnel ----

def _sincos_half_pi_square(x):
    """sin(pi x^2 / 2) and cos(pi x^2 / 2) with the argument reduced exactly mod 2:
    with s = x mod 2, x^2 / 2 = s (x - s/2) mod 2."""
    x = fnp.abs(x)
    s = fnp.fmod(x, 2.0)
    r = fnp.fmod(s * (x - s / 2), 2.0)
    sin = fnp.where(r < 0.5, fnp.sin(_PI * r),
                    fnp.where(r > 1.5, fnp.sin(_PI * (r - 2.0)), -fnp.sin(_PI * (r - 1.0))))
    cos = fnp.where(r == 0.5, 0.0,
                    fnp.where(r < 1.0, -fnp.sin(_PI * (r - 0.5)), fnp.sin(_PI * (r - 1.5))))
    return sin, cos


@custom_jvp
def _fresnel(xx):
    single = aval_of(xx).dtype == np.float32
    x = fnp.abs(xx)
    x2 = x * x
    t = x2 * x2
    if single:   # Cephes' single-precision polynomials
        s_small = x * x2 * horner(C.FRESNEL32_SN, t)
        c_small = x * horner(C.FRESNEL32_CN, t)
    else:
        s_small = x * x2 * horner(C.FRESNEL_SN, t) / horner(C.FRESNEL_SD, t)
        c_small = x * horner(C.FRESNEL_CN, t) / horner(C.FRESNEL_CD, t)
    sinpi, cospi = _sincos_half_pi_square(x)
    if single:
        s_large = c_large = 0.5
    else:
        s_large = 0.5 - cospi / (_PI * x)
        c_large = 0.5 + sinpi / (_PI * x)
    # the auxiliary functions f and g in between
    pt = _PI * x2
    u, ti = 1.0 / (pt * pt), 1.0 / pt
    if single:
        f = 1.0 - u * horner(C.FRESNEL32_FN, u)
        g = ti * horner(C.FRESNEL32_GN, u)
    else:
        f = 1.0 - u * horner(C.FRESNEL_FN, u) / horner(C.FRESNEL_FD, u)
        g = ti * horner(C.FRESNEL_GN, u) / horner(C.FRESNEL_GD, u)
    px = _PI * x
    c_mid = 0.5 + (f * sinpi - g * cospi) / px
    s_mid = 0.5 - (f * cospi + g * sinpi) / px
    inf, small, large = fnp.isinf(xx), x2 < 2.5625, x > 36974.0
    s = fnp.where(inf, 0.5, fnp.where(small, s_small, fnp.where(large, s_large, s_mid)))
    c = fnp.where(inf, 0.5, fnp.where(small, c_small, fnp.where(large, c_large, c_mid)))
    neg = xx < 0
    return fnp.where(neg, -s, s), fnp.where(neg, -c, c)


@_fresnel.defjvp
def _fresnel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # S' = sin(pi x^2/2), C' = cos(pi x^2/2) (even in x, so |x| reduces alike)
    sinpi, cospi = _sincos_half_pi_square(x)
    return _fresnel(x), (sinpi * t, cospi * t)


def fresnel(x):
    """The Fresnel integrals (S(x), C(x)) = int_0^x (sin, cos)(pi t^2 / 2) dt.

    >>> from funcad.scipy.special import fresnel
    >>> s, c = fresnel(1.0)
    >>> round(float(s), 6), round(float(c), 6)
    (0.438259, 0.779893)
    """
    return _fresnel(*_real("fresnel", x))


# ---------------------------------------------------------------- spence ----

def _spence_positive(x):
    # Map x into [0.5, 1.5] by x -> 1/x (x > 2) and the reflection
    # x -> 1 - x (x < 0.5); w = x - 1 there, and a rational approximation in w.
    flip = x > 2.0
    x = fnp.where(flip, 1.0 / x, x)
    above, below = x > 1.5, x < 0.5
    flip = flip | above
    w = fnp.where(above, 1.0 / x - 1.0, fnp.where(below, -x, x - 1.0))
    y = -w * horner(C.SPENCE_A, w) / horner(C.SPENCE_B, w)
    # log(1 - x) only where x < 0.5: elsewhere its NaN would reach the derivatives
    # through 0 * NaN (JAX's second derivative is NaN on (1, 2] for that reason)
    xb = fnp.where(below, x, 0.25)
    y = fnp.where(below, _PI ** 2 / 6.0 - fnp.log(xb) * fnp.log(1.0 - xb) - y, y)
    return fnp.where(flip, -0.5 * fnp.square(fnp.log(x)) - y, y)


def spence(x):
    """Spence's function int_1^x log(t)/(1 - t) dt for x >= 0 (NaN below 0, as in JAX).

    >>> from funcad.scipy.special import spence
    >>> round(float(spence(0.5)), 6)
    0.582241
    """
    x, = _real("spence", x)
    special = (x <= 0) | (x == 1.0)   # NaN is not special: it goes through and stays NaN
    # Derivatives come from the formula in use (no custom rule, as in JAX); the
    # harmless 1.0 keeps a NaN of the unused branch out of them.
    out = _spence_positive(fnp.where(special, 1.5, x))
    out = fnp.where(x == 1.0, 0.0, out)
    out = fnp.where(x == 0.0, _PI ** 2 / 6, out)
    return fnp.where(x < 0, np.nan, out)


# -------------------------------------------------------------- owens_t ----

def _owens_t_quadrature(h, a):
    # T(h, a) ~ a sum_i w_i exp(-h^2 (1 + a^2 t_i) / 2) / (1 + a^2 t_i)
    out = 0.0
    for t, w in zip(C.OWENS_T_PTS, C.OWENS_T_WTS):
        r = a * a * t
        out = out + w * (fnp.exp(-0.5 * (h * h) * (1.0 + r)) / (1.0 + r))
    return a * out


@custom_jvp
def _owens_t(h, a):
    h = fnp.abs(h)
    abs_a = fnp.abs(a)
    inner = abs_a <= 1.0
    ma = fnp.where(inner, abs_a, 1.0 / abs_a)
    mh = fnp.where(inner, h, abs_a * h)
    out = _owens_t_quadrature(mh, ma)
    out = fnp.where(mh == 0.0, fnp.arctan(ma) / (2 * _PI), out)
    r2 = float(np.sqrt(2.0))
    out = fnp.where(ma == 1.0, 0.125 * erfc(-mh / r2) * erfc(mh / r2), out)
    # |a| > 1: T(h, a) = (Phi(h) + Phi(ah))/2 - Phi(h) Phi(ah) - [h >= 0]/2 - T(ah, 1/a)
    hn = h / r2
    qh, qah = erfc(hn), erfc(abs_a * hn)
    outer = fnp.where(abs_a * h <= 0.67, 0.25 - 0.25 * erf(hn) * erf(abs_a * hn) - out,
                      0.25 * (qh + qah - qh * qah) - out)
    out = fnp.sign(a) * fnp.where(abs_a > 1.0, outer, out)
    return fnp.where(fnp.isnan(a) | fnp.isnan(h), np.nan, out)


@_owens_t.defjvp
def _owens_t_jvp(primals, tangents):
    (h, a), (th, ta) = primals, tangents
    dh = -fnp.exp(-0.5 * h * h) * erf(a * h / float(np.sqrt(2.0))) / (2.0 * float(np.sqrt(2.0 * np.pi)))
    a2 = a * a + 1.0
    da = fnp.exp(-0.5 * a2 * h * h) / (2.0 * _PI * a2)
    return _owens_t(h, a), dh * th + da * ta


def owens_t(h, a):
    """Owen's T function (1/2pi) int_0^a exp(-h^2 (1 + x^2) / 2) / (1 + x^2) dx, by
    13-point quadrature (Patefield and Tandy's method T5) as in JAX.

    >>> from funcad.scipy.special import owens_t
    >>> round(float(owens_t(0.5, 0.7)), 6)
    0.084239
    """
    h, a = _real("owens_t", h, a)
    h, a = fnp.broadcast_arrays(h, a)
    return _owens_t(h, a)
