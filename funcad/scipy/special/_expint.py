"""The exponential integrals expi, exp1 and expn, after Cephes' ei.c and expn.c."""
from __future__ import annotations

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core.avals import aval_of
from ...transforms.custom import custom_jvp
from . import _coefs as C
from ._basic import _real
from ._faddeeva import horner
from ._gamma import gammaln

__all__ = ["exp1", "expi", "expn"]

_EULER = float(np.euler_gamma)


def masked_loop(active, body, state, max_steps=None):
    """Run `body` on the dict `state` while any element is `active(state)`; an element
    stops changing once inactive (as JAX's while_loop does for one lane under vmap)."""
    def step(s):
        on = active(s)
        new = body(dict(s))
        return {k: fnp.where(on, new[k], s[k]) for k in s}
    return lax.while_loop(lambda s: fnp.any(active(s)), step, state, max_steps=max_steps)


# ------------------------------------------------------------------ expi ----

def _rational_tail(a, b, x):
    # exp(x)/x (1 + R(1/x)/x), the form of Cephes' pieces beyond x = 2
    w = 1.0 / x
    return fnp.exp(x) * w * (w * horner(a, w) / horner(b, w) + 1.0)


def _expi_pos(x):
    small = x * horner(C.EI1_A, x) / horner(C.EI1_B, x) + _EULER + fnp.log(x)
    out = small
    # (2,4], (4,8], ... (32,64], (64,inf): later pieces win, as in JAX's piecewise
    tables = [(C.EI2_A, C.EI2_B), (C.EI3_A, C.EI3_B), (C.EI4_A, C.EI4_B), (C.EI5_A, C.EI5_B),
              (C.EI6_A, C.EI6_B), (C.EI7_A, C.EI7_B)]
    for i, (a, b) in enumerate(tables, 1):
        lo = 2.0 ** i
        inside = (x > lo) if i == 6 else (x > lo) & (x <= 2.0 * lo)
        out = fnp.where(inside, _rational_tail(a, b, x), out)
    return out


@custom_jvp
def _expi(x):
    neg = x < 0
    return fnp.where(neg, -_expn(fnp.ones_like(x), -x), _expi_pos(fnp.where(neg, 1.0, x)))


_expi.defjvps(lambda g, ans, x: g * (fnp.exp(x) / x))


def expi(x):
    """The exponential integral Ei(x) = int_-inf^x exp(t)/t dt; Ei'(x) = exp(x)/x.

    >>> from funcad.scipy.special import expi
    >>> round(float(expi(1.0)), 6), round(float(expi(-1.0)), 6)
    (1.895118, -0.219384)
    """
    return _expi(*_real("expi", x))


# ------------------------------------------------------------------ expn ----

def _expn_series(n, x):
    """0 < x <= 1, 1 <= n < 5000: the power series (DLMF 8.19.8)."""
    eps = float(np.finfo(aval_of(x).dtype).eps)
    ok = (x > 0) & (x <= 1) & (n >= 1) & (n < 5000)
    xs, ns = fnp.where(ok, x, 1.0), fnp.where(ok, n, 1.0)
    # psi(n) = -gamma + sum_{i<n} 1/i, summed in JAX's order
    h = masked_loop(lambda s: s["i"] < ns, lambda s: {"i": s["i"] + 1.0, "psi": s["psi"] + 1.0 / s["i"]},
                    {"i": fnp.ones_like(xs), "psi": -_EULER - fnp.log(xs)})
    psi = h["psi"]
    n1 = fnp.where(ns == 1, 2.0, ns)
    zero = fnp.zeros_like(xs)

    def body(s):
        xk = s["xk"] + 1.0
        yk = s["yk"] * (-xs) / xk
        pk = s["pk"] + 1.0
        ans = s["ans"] + fnp.where(pk != 0, yk / fnp.where(pk != 0, pk, 1.0), 0.0)
        t = fnp.where(ans != 0, fnp.abs(yk / fnp.where(ans != 0, ans, 1.0)), 1.0)
        return {"xk": xk, "yk": yk, "pk": pk, "ans": ans, "t": t}

    s = masked_loop(lambda s: ok & (s["t"] > eps), body,
                    {"xk": zero, "yk": zero + 1.0, "pk": 1.0 - ns,
                     "ans": fnp.where(ns == 1, 0.0, 1.0 / (1.0 - n1)), "t": zero + np.inf})
    r = ns - 1.0
    sign = fnp.where(r % 2.0 == 0, 1.0, -fnp.ones_like(r))
    return sign * fnp.exp(r * fnp.log(xs) - gammaln(ns)) * psi - s["ans"]


def _expn_fraction(n, x):
    """1 < x <= log(max), 1 <= n < 5000: the continued fraction (DLMF 8.19.17)."""
    dtype = aval_of(x).dtype
    eps, maxlog = float(np.finfo(dtype).eps), float(np.log(np.finfo(dtype).max))
    big = 1.44115188075855872e17
    ok = (x > 1) & (x <= maxlog) & (n >= 1) & (n < 5000)
    xs, ns = fnp.where(ok, x, 2.0), fnp.where(ok, n, 1.0)
    zero = fnp.zeros_like(xs)

    def body(s):
        k = s["k"] + 1.0
        odd = k % 2.0 == 1
        yk = fnp.where(odd, 1.0, xs)
        xk = fnp.where(odd, ns + (k - 1.0) / 2.0, k / 2.0)
        pk = s["pkm1"] * yk + s["pkm2"] * xk
        qk = s["qkm1"] * yk + s["qkm2"] * xk
        nz = qk != 0
        r = fnp.where(nz, pk / fnp.where(nz, qk, 1.0), s["r"])
        t = fnp.where(nz, fnp.abs((s["ans"] - r) / r), 1.0)
        ans = fnp.where(nz, r, s["ans"])
        rescale = fnp.where(fnp.abs(pk) > big, 1.0 / big, fnp.ones_like(pk))
        return {"k": k, "pkm2": s["pkm1"] * rescale, "qkm2": s["qkm1"] * rescale,
                "pkm1": pk * rescale, "qkm1": qk * rescale, "ans": ans, "t": t, "r": r}

    s = masked_loop(lambda s: ok & (s["t"] > eps), body,
                    {"k": zero + 1.0, "pkm2": zero + 1.0, "qkm2": xs, "pkm1": zero + 1.0,
                     "qkm1": xs + ns, "ans": 1.0 / (xs + ns), "t": zero + np.inf, "r": zero})
    return s["ans"] * fnp.exp(-xs)


def _expn_large_n(n, x):
    """n >= 5000, 0 < x <= log(max): the uniform asymptotic expansion (DLMF 8.20.iii)."""
    maxlog = float(np.log(np.finfo(aval_of(x).dtype).max))
    ok = (x > 0) & (x <= maxlog) & (n >= 5000)
    xs, ns = fnp.where(ok, x, 1.0), fnp.where(ok, n, 5000.0)
    xk = xs + ns
    lam = xs / ns
    m = (ns / xk) / xk
    ans = 6.0 * lam * lam - 8.0 * lam + 1.0
    ans = m * ans + (1.0 - 2.0 * lam)
    ans = m * (m * ans + 1.0) + 1.0
    return ans * fnp.exp(-xs) / xk


@custom_jvp
def _expn(n, x):
    maxlog = float(np.log(np.finfo(aval_of(x).dtype).max))
    n = fnp.floor(n)
    invalid = (n < 0) | (x < 0) | fnp.isnan(n) | fnp.isnan(x) | fnp.isinf(n)
    valid = ~invalid
    n_minus_1 = fnp.where(valid & (n >= 2), n - 1.0, 1.0)
    xs = fnp.where(valid & (x > 0), x, 1.0)
    # Later cases win (the order of JAX's piecewise); the default is the power series.
    out = _expn_series(n, x)
    cases = [
        (valid & (n > 0) & (n < 5000) & (x > 1) & (x <= maxlog), lambda: _expn_fraction(n, x)),
        (valid & (n >= 5000) & (x > 0) & (x <= maxlog), lambda: _expn_large_n(n, x)),
        (valid & (n > 0) & (x > maxlog), lambda: fnp.zeros_like(x)),
        (valid & (n == 0) & (x > 0), lambda: fnp.exp(-xs) / xs),
        (valid & (x == 0) & (n >= 2), lambda: 1.0 / n_minus_1),
        (valid & (x == 0) & (n < 2), lambda: fnp.full_like(x, np.inf)),
        (invalid, lambda: fnp.full_like(x, np.nan)),
    ]
    for cond, value in cases:
        out = fnp.where(cond, value(), out)
    return out


@_expn.defjvp
def _expn_jvp(primals, tangents):
    n, x = primals
    tx = tangents[1]
    maxlog = float(np.log(np.finfo(aval_of(x).dtype).max))
    nt = fnp.floor(n)
    out = _expn(nt, x)
    invalid = (nt < 0) | (x < 0) | fnp.isnan(nt) | fnp.isnan(x) | fnp.isinf(nt)
    xs = fnp.where((x > 0) & (x <= maxlog), x, 1.0)
    # E_0(x) = exp(-x)/x; otherwise E_n' = -E_{n-1}
    d0 = fnp.where(x == 0, -np.inf, fnp.where(x > maxlog, 0.0, -(xs + 1.0) * fnp.exp(-xs) / (xs * xs)))
    dpos = -_expn(fnp.where(nt >= 1, nt - 1.0, 0.0), x)
    d = fnp.where(invalid, np.nan, fnp.where(nt == 0, d0, dpos))
    return out, tx * d


def expn(n, x):
    """The generalized exponential integral E_n(x) = int_1^inf exp(-x t) / t^n dt
    (n is truncated to an integer; differentiable in x: E_n' = -E_{n-1}).

    >>> from funcad.scipy.special import expn
    >>> round(float(expn(2, 1.0)), 6)
    0.148496
    """
    n, x = _real("expn", n, x)
    n, x = fnp.broadcast_arrays(n, x)
    return _expn(n, x)


def exp1(x):
    """The exponential integral E_1(x) = int_x^inf exp(-t)/t dt = expn(1, x).

    >>> from funcad.scipy.special import exp1
    >>> round(float(exp1(1.0)), 6)
    0.219384
    """
    x, = _real("exp1", x)
    return _expn(fnp.ones_like(x), x)
