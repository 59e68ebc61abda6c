"""The Faddeeva function wofz and Dawson's integral dawsn."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import FuncadTypeError
from ...arrays.dtypes import asarray_or_tracer, to_inexact
from ...transforms.custom import custom_jvp
from . import _coefs as C
from ._basic import _real

__all__ = ["dawsn", "wofz"]


def horner(coefs, x):
    """sum_i coefs[i] x^(n-1-i), from zero as JAX's polyval (so a NaN or inf x gives NaN)."""
    y = fnp.zeros_like(x)
    for c in coefs:
        y = y * x + c
    return y


# ------------------------------------------------------------------ wofz ----
# Weideman's rational expansion w(z) = 2 p(Z) / (L - iz)^2 + 1 / (sqrt(pi) (L - iz)),
# Z = (L + iz) / (L - iz), accurate in the upper half plane; below it,
# w(z) = 2 exp(-z^2) - w(-z).

def _wofz_upper(z):
    iz = lax.complex(-fnp.imag(z), fnp.real(z))
    denom = C.WOFZ_L - iz
    p = horner(C.WOFZ_C, (C.WOFZ_L + iz) / denom)
    return 2.0 * p / (denom * denom) + float(1.0 / np.sqrt(np.pi)) / denom


@custom_jvp
def _wofz(z):
    upper = fnp.imag(z) >= 0.0
    w = _wofz_upper(fnp.where(upper, z, -z))
    return fnp.where(upper, w, 2.0 * fnp.exp(-(z * z)) - w)


# w'(z) = -2 z w(z) + 2i / sqrt(pi)
_wofz.defjvps(lambda g, ans, z: g * (-2.0 * z * ans + complex(0.0, 2.0 / np.sqrt(np.pi))))


def wofz(z):
    """The Faddeeva function w(z) = exp(-z^2) erfc(-iz); real input gives a complex result.

    >>> from funcad.scipy.special import wofz
    >>> w = complex(wofz(1.0 + 1.0j))
    >>> round(w.real, 6), round(w.imag, 6)
    (0.304744, 0.208219)
    """
    z = to_inexact(asarray_or_tracer(z))
    dtype = aval_of(z).dtype
    if dtype.kind == "f":
        z = lax.convert_element_type(z, np.complex64 if dtype == np.float32 else np.complex128)
    elif dtype.kind != "c":
        raise FuncadTypeError(f"wofz needs real or complex input, got {aval_of(z).str_short()}")
    return _wofz(z)


# ----------------------------------------------------------------- dawsn ----
# Cody, Paciorek and Thacher's rational approximations on |x| in [0, 3.25),
# [3.25, 6.25) and beyond, each fed a harmless 1.0 outside its region so that
# an overflowing polynomial never produces a NaN in the branch not taken.

def _dawsn_abs(ax):
    r1 = ax < 3.25
    r2 = (ax >= 3.25) & (ax < 6.25)
    r3 = ax >= 6.25
    a1 = fnp.where(r1, ax, 1.0)
    s1 = fnp.square(a1)
    v1 = a1 * horner(C.DAWSN_AN, s1) / horner(C.DAWSN_AD, s1)

    def tail(region, num, den):
        a = fnp.where(region, ax, 1.0)
        t = 1.0 / fnp.square(a)
        return (0.5 / a) * (1.0 + t * horner(num, t) / horner(den, t))

    v2 = tail(r2, C.DAWSN_BN, C.DAWSN_BD)
    v3 = tail(r3, C.DAWSN_CN, C.DAWSN_CD)
    return fnp.where(r1, v1, fnp.where(r2, v2, v3))


@custom_jvp
def _dawsn(x):
    return fnp.sign(x) * _dawsn_abs(fnp.abs(x))


# D'(x) = 1 - 2 x D(x)
_dawsn.defjvps(lambda g, ans, x: g * (1.0 - 2.0 * x * ans))


def dawsn(x):
    """Dawson's integral exp(-x^2) int_0^x exp(t^2) dt (odd; D' = 1 - 2 x D).

    >>> from funcad.scipy.special import dawsn
    >>> round(float(dawsn(1.0)), 6)
    0.53808
    """
    return _dawsn(*_real("dawsn", x))
