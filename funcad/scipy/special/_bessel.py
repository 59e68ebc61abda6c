"""Bessel functions of the first kind of integer order (bessel_jn) and the
spherical harmonics (sph_harm_y), with the recurrences JAX uses."""
from __future__ import annotations

import operator

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import ConcretizationError, FuncadTypeError, FuncadValueError
from ...core.trace import Tracer
from ...arrays.dtypes import asarray_or_tracer, to_inexact

__all__ = ["bessel_jn", "sph_harm_y"]


def _static_int(value, what):
    if isinstance(value, Tracer):
        raise ConcretizationError(f"{what} must be a concrete integer (it sets the output's shape), "
                                  "but it is traced; pass a Python int")
    return operator.index(value) if not isinstance(value, (float, np.floating)) else int(value)


def bessel_jn(z, *, v: int, n_iter: int = 50):
    """J_0(z) ... J_v(z), stacked on a new leading axis (shape (v + 1, *z.shape)), by
    Miller's backward recurrence from order n_iter, normalized with
    J_0 + 2 (J_2 + J_4 + ...) = 1 (Zhang and Jin, BJNDD). Larger |z| needs a
    larger n_iter.

    >>> from funcad.scipy.special import bessel_jn
    >>> [round(float(j), 6) for j in bessel_jn(1.0, v=2)]
    [0.765198, 0.440051, 0.114903]
    """
    z = to_inexact(asarray_or_tracer(z))
    if aval_of(z).dtype.kind != "f":
        raise FuncadTypeError(f"bessel_jn needs a real z, got {aval_of(z).str_short()}")
    v = _static_int(v, "bessel_jn: v")
    n_iter = _static_int(n_iter, "bessel_jn: n_iter")
    if v < 0 or n_iter < 0:
        raise FuncadValueError(f"bessel_jn: v and n_iter must be non-negative, got v={v}, n_iter={n_iter}")
    zero = fnp.zeros_like(z)

    def step(carry, k):
        f0, f1, bs = carry
        f = 2.0 * (k + 1.0) * f1 / z - f0      # J_k from J_{k+1} and J_{k+2}
        bs = fnp.where(k % 2.0 == 0, bs + 2.0 * f, bs)
        return (f1, f, bs), f

    ks = np.arange(n_iter + 1, dtype=aval_of(z).dtype)
    (_, _, bs), f = lax.scan(step, (zero, zero + 1e-16, zero), ks, reverse=True)
    return f[:v + 1] / (bs - f[0])


def _legendre_normalized(n_max, x):
    """The orthonormal associated Legendre functions P(m, l)(x), 0 <= m <= l <= n_max,
    as a list of lists p[m][l] (None where l < m): the diagonal in closed form, the
    first off-diagonal, then the three-term recurrence in l."""
    dt = aval_of(x).dtype
    p = [[None] * (n_max + 1) for _ in range(n_max + 1)]
    p00 = 0.5 / np.sqrt(np.pi)
    p[0][0] = fnp.full_like(x, p00)
    y = fnp.sqrt(1.0 - x * x)
    fa = np.cumprod(-np.sqrt(1.0 + 0.5 / np.arange(1, n_max + 1, dtype=dt))).astype(dt)
    yl = None
    for l in range(1, n_max + 1):
        yl = y if yl is None else yl * y
        p[l][l] = p00 * (fa[l - 1] * yl)
    for l in range(n_max):
        p[l][l + 1] = (float(np.sqrt(np.asarray(2.0 * l + 3.0, dt))) * x) * p[l][l]
    for m in range(n_max + 1):
        for l in range(m + 2, n_max + 1):
            c0, c1, c2, c3 = (np.asarray(v, dt) for v in (l * l, m * m, 2 * l, (l - 1) * (l - 1)))
            d0 = np.sqrt((4.0 * c0 - 1.0) / (c0 - c1)).astype(dt)
            d1 = np.sqrt(((c2 + 1.0) * (c3 - c1)) / ((c2 - 3.0) * (c0 - c1))).astype(dt)
            p[m][l] = d0 * (p[m][l - 1] * x) - d1 * p[m][l - 2]
    return p


def sph_harm_y(n, m, theta, phi, diff_n=None, n_max: int | None = None):
    """The spherical harmonics Y_n^m(theta, phi) (theta the colatitude, phi the longitude),
    complex, for integer arrays n >= 0, |m| <= n; n_max (default max(n), which must then
    be concrete) bounds the degree, and larger n are clipped to it, as in JAX.

    >>> import numpy as np
    >>> from funcad.scipy.special import sph_harm_y
    >>> y = sph_harm_y(np.array([1]), np.array([0]), np.array([0.5]), np.array([0.0]))
    >>> round(float(y.real[0]), 6)
    0.428789
    """
    if diff_n is not None:
        raise FuncadValueError("sph_harm_y: diff_n (derivatives of the harmonics) is not offered, as "
                               "in JAX; differentiate with funcad.grad or funcad.jacfwd instead")
    theta = to_inexact(asarray_or_tracer(theta))
    if theta.ndim == 0:
        theta = fnp.reshape(theta, (1,))
    n, m = fnp.asarray(n), fnp.asarray(m)
    if n_max is None:
        if isinstance(n, Tracer):
            raise ConcretizationError("sph_harm_y: n is traced, so its maximum is unknown; pass "
                                      "n_max= (a Python int) to use sph_harm_y under jit, vmap or grad")
        n_max = int(np.max(np.asarray(n)))
    n_max = _static_int(n_max, "sph_harm_y: n_max")
    phi = asarray_or_tracer(phi)
    x = fnp.cos(theta)
    p = _legendre_normalized(n_max, x)
    zero = fnp.zeros_like(x)
    table = fnp.stack([fnp.stack([zero if v is None else v for v in row]) for row in p])
    points = x.shape[0]
    am = fnp.abs(m)
    val = table[fnp.clip(am, 0, n_max), fnp.clip(n, 0, n_max), fnp.clip(fnp.arange(points), 0, points - 1)]
    angle = am * phi
    h = lax.complex(val * fnp.cos(angle), val * fnp.sin(angle))
    sign = fnp.where(am % 2 == 0, 1.0, -1.0).astype(aval_of(val).dtype)
    return fnp.where(m < 0, sign * fnp.conj(h), h)
