"""The confluent and Gauss hypergeometric functions 1F1 and 2F1, by the series,
asymptotic expansion and transformations of Pearson, Olver and Porter (2014),
with JAX's conventions (hyp1f1(0, 0, x) = 1; real arguments only)."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...transforms.custom import custom_jvp
from ._basic import _real
from ._expint import masked_loop
from ._gamma import digamma, gamma

__all__ = ["hyp1f1", "hyp2f1"]

_MAX_TERMS = 250


def _eps(x):
    return float(np.finfo(aval_of(x).dtype).eps)


def _sum_series(first, ratio, weight, x, serie0):
    """serie0 + sum_{k>=1} weight(k) term_k with term_1 = first, term_{k+1} = term_k ratio(k),
    to relative precision eps or 250 terms (k counts from 1, as a float)."""
    eps = _eps(x)
    one = fnp.ones_like(x)

    def body(s):
        k = s["k"]
        return {"serie": s["serie"] + s["term"] * weight(k), "k": k + 1.0, "term": s["term"] * ratio(k)}

    s = masked_loop(lambda s: (s["k"] < _MAX_TERMS) & (fnp.abs(s["term"]) / fnp.abs(s["serie"]) > eps),
                    body, {"serie": serie0 * one, "k": one, "term": first * one}, max_steps=_MAX_TERMS)
    return s["serie"]


# ---------------------------------------------------------------- hyp1f1 ----

def _hyp1f1_series(a, b, x):
    return _sum_series(a / b * x, lambda k: (a + k) / (b + k) * x / (k + 1.0), lambda k: 1.0, x, 1.0)


def _hyp1f1_asymptotic(a, b, x):
    s = _sum_series((b - a) * (1.0 - a) / x, lambda k: (b - a + k) * (1.0 - a + k) / (k + 1.0) / x,
                    lambda k: 1.0, x, 1.0)
    return gamma(b) / gamma(a) * fnp.exp(x) * x ** (a - b) * s


@custom_jvp
def _hyp1f1(a, b, x):
    near = fnp.abs(x) < 100
    # each method sees only the x it handles, so the other never runs 250 idle terms
    out = fnp.where(near, _hyp1f1_series(a, b, fnp.where(near, x, 0.0)),
                    _hyp1f1_asymptotic(a, b, fnp.where(near, 100.0, x)))
    out = fnp.where(b == 0, np.inf, out)
    out = fnp.where(a == b, fnp.exp(x), out)
    return fnp.where(a == 0, 1.0, out)


def _hyp1f1_da(a, b, x):
    ratio = lambda k: (a + k) / (b + k) * x / (k + 1.0)  # noqa: E731
    return _sum_series(a / b * x, ratio, lambda k: digamma(a + k) - digamma(a), x, 0.0)


def _hyp1f1_db(a, b, x):
    ratio = lambda k: (a + k) / (b + k) * x / (k + 1.0)  # noqa: E731
    return _sum_series(a / b * x, ratio, lambda k: digamma(b) - digamma(b + k), x, 0.0)


_hyp1f1.defjvps(lambda t, ans, a, b, x: _hyp1f1_da(a, b, x) * t,
                lambda t, ans, a, b, x: _hyp1f1_db(a, b, x) * t,
                lambda t, ans, a, b, x: a / b * _hyp1f1(a + 1.0, b + 1.0, x) * t)


def hyp1f1(a, b, x):
    """Kummer's confluent hypergeometric function 1F1(a; b; x) = sum_k (a)_k / (b)_k x^k / k!:
    the series for |x| < 100, the asymptotic expansion beyond; derivatives in a, b and x.

    >>> from funcad.scipy.special import hyp1f1
    >>> round(float(hyp1f1(1.0, 2.0, 1.0)), 6)
    1.718282
    """
    a, b, x = fnp.broadcast_arrays(*_real("hyp1f1", a, b, x))
    return _hyp1f1(a, b, x)


# ---------------------------------------------------------------- hyp2f1 ----

def _hyp2f1_terminal(a, b, c, x):
    """The polynomial left when a (or b) is a non-positive integer: |a| + 1 terms,
    the stopping parameter being the larger such one that stays below |c|."""
    eps = _eps(x) * 50
    swap = (b < a) & (fnp.abs(b - fnp.round(b)) < eps) & ~((c % 1 == 0) & (c <= 0) & (c > b))
    a, b = fnp.where(swap, b, a), fnp.where(swap, a, b)
    a = fnp.abs(a)
    one = fnp.ones_like(x)

    def body(s):
        i = s["i"]
        term = s["term"] * (-(a - i + 1.0) / (c + i - 1.0) * (b + i - 1.0) / i * x)
        return {"i": i + 1.0, "serie": s["serie"] + term, "term": term}

    return masked_loop(lambda s: s["i"] < a + 1.0, body, {"i": one, "serie": one, "term": one})["serie"]


def _hyp2f1_taylor(a, b, c, x):
    eps = _eps(x)
    one = fnp.ones_like(x)

    def body(s):
        k = s["k"]
        return {"serie": s["serie"] + s["term"], "k": k + 1.0,
                "term": s["term"] * ((a + k - 1.0) * (b + k - 1.0) / (c + k - 1.0) / k * x)}

    s = masked_loop(lambda s: (s["k"] < _MAX_TERMS) & (fnp.abs(s["term"]) > eps * fnp.abs(s["serie"])),
                    body, {"serie": 0.0 * one, "k": one, "term": one}, max_steps=_MAX_TERMS)
    return s["serie"]


def _hyp2f1_digamma_transform(a, b, c, x):
    """Near x = 1 with c - a - b an integer: the limit forms AMS 55 15.3.10-12."""
    eps = _eps(x)
    d = c - a - b
    s = 1.0 - x
    rd = fnp.round(d)
    up = rd >= 0
    e = fnp.where(up, d, -d)
    d1 = fnp.where(up, d, 0.0)
    d2 = fnp.where(up, 0.0, d)
    ard = fnp.abs(rd)
    ax = fnp.log(s)
    y = (digamma(fnp.ones_like(x)) + digamma(1.0 + e) - digamma(a + d1) - digamma(b + d1) - ax) / gamma(e + 1.0)
    p = (a + d1) * (b + d1) * s / gamma(e + 2.0)

    def body(st):
        t = st["t"]
        r = digamma(1.0 + t) + digamma(1.0 + t + e) - digamma(a + t + d1) - digamma(b + t + d1) - ax
        q = st["p"] * r
        p = st["p"] * (s * (a + t + d1) / (t + 1.0)) * ((b + t + d1) / (t + 1.0 + e))
        return {"t": t + 1.0, "p": p, "q": q, "y": st["y"] + q}

    st = masked_loop(lambda st: (st["t"] < _MAX_TERMS) & (fnp.abs(st["q"]) >= eps * fnp.abs(st["y"])), body,
                     {"t": fnp.ones_like(x), "p": p, "q": y, "y": y}, max_steps=_MAX_TERMS)
    y = st["y"]

    def finite_body(fs):
        t = fs["t"]
        p = fs["p"] * (s * (a + t + d2) * (b + t + d2) / (1.0 - e + t)) / (t + 1.0)
        return {"i": fs["i"] + 1.0, "t": t + 1.0, "p": p, "y1": fs["y1"] + p}

    one = fnp.ones_like(x)
    fs = masked_loop(lambda fs: fs["i"] < ard, finite_body, {"i": one, "t": 0.0 * one, "p": one, "y1": one})
    gc = gamma(c)
    y1 = fs["y1"] * gamma(e) * gc / (gamma(a + d1) * gamma(b + d1))
    y2 = y * gc / (gamma(a + d2) * gamma(b + d2))
    y2 = fnp.where(ard % 2.0 == 1.0, -y2, y2)
    q = s ** rd
    summed = fnp.where(rd > 0, y2 * q + y1, y2 + y1 * q)
    return fnp.where(rd == 0, y * gc / (gamma(a) * gamma(b)), summed)


def _hyp2f1_terminal_or_series(a, b, c, x):
    eps = _eps(x) * 50
    d = c - a - b
    neg_int = ((a <= 0) & (fnp.abs(a - fnp.round(a)) < eps)) | ((b <= 0) & (fnp.abs(b - fnp.round(b)) < eps))
    transform = (x > 0.9) & ~neg_int & (fnp.abs(d - fnp.round(d)) < eps)
    series = ~transform & ~neg_int
    # Each method gets harmless arguments where it is not used, so that its loop
    # (up to |a| terms for the terminating sum) stays short.
    zero = fnp.zeros_like(x)
    out_series = _hyp2f1_taylor(a, b, c, fnp.where(series, x, zero))
    half = zero + 0.5
    out_transform = _hyp2f1_digamma_transform(fnp.where(transform, a, 1.0), fnp.where(transform, b, 1.0),
                                              fnp.where(transform, c, 2.0), fnp.where(transform, x, half))
    out_terminal = _hyp2f1_terminal(fnp.where(neg_int, a, 0.0), fnp.where(neg_int, b, 0.0), c, x)
    return fnp.where(neg_int, out_terminal, fnp.where(transform, out_transform, out_series))


@custom_jvp
def _hyp2f1(a, b, c, x):
    eps = _eps(x) * 50
    d, s, ca, cb = c - a - b, 1.0 - x, c - a, c - b
    c_pole = (c == 0) | ((c < 0) & (c % 1 == 0))
    # Conditions in JAX's order: the first that holds decides.
    reflect = (d <= -1) & ~((fnp.abs(d - fnp.round(d)) >= eps) & (s < 0))
    cases = [
        ((x == 0) | (((a == 0) | (b == 0)) & (c != 0)), lambda: fnp.ones_like(x)),
        (c_pole, lambda: fnp.full_like(x, np.inf)),
        (reflect, None),                                      # Euler's transformation
        ((d <= 0) & (x == 1), lambda: fnp.full_like(x, np.inf)),
        ((x < 1) & (b == c), lambda: s ** (-a)),
        ((x < 1) & (a == c), lambda: s ** (-b)),
        (x > 1, lambda: fnp.full_like(x, np.inf)),
        (x == 1, lambda: gamma(c) * gamma(d) / (gamma(ca) * gamma(cb))),  # Gauss's sum
    ]
    taken = fnp.zeros_like(x, dtype=bool)
    which = []
    for cond, _ in cases:
        which.append(cond & ~taken)
        taken = taken | cond
    plain, r = ~taken, which[2]
    # One series evaluation serves both the plain case and Euler's transformation
    # (2F1(a, b; c; x) = (1 - x)^d 2F1(c - a, c - b; c; x)); elsewhere it gets harmless arguments.
    use = plain | r
    ser = _hyp2f1_terminal_or_series(fnp.where(use, fnp.where(r, ca, a), 1.0),
                                     fnp.where(use, fnp.where(r, cb, b), 1.0),
                                     fnp.where(use, c, 2.0), fnp.where(use, x, 0.0))
    euler = s ** d * ser
    out = ser
    for w, (_, value) in zip(which, cases):
        out = fnp.where(w, euler if value is None else value(), out)
    return out


def _hyp2f1_param_derivative(a, b, c, x, weight):
    ratio = lambda k: (a + k) * (b + k) / (c + k) / (k + 1.0) * x  # noqa: E731
    return _sum_series(a * b / c * x, ratio, weight, x, 0.0)


_hyp2f1.defjvps(
    lambda t, ans, a, b, c, x: _hyp2f1_param_derivative(a, b, c, x, lambda k: digamma(a + k) - digamma(a)) * t,
    lambda t, ans, a, b, c, x: _hyp2f1_param_derivative(a, b, c, x, lambda k: digamma(b + k) - digamma(b)) * t,
    lambda t, ans, a, b, c, x: _hyp2f1_param_derivative(a, b, c, x, lambda k: digamma(c) - digamma(c + k)) * t,
    lambda t, ans, a, b, c, x: a * b / c * _hyp2f1(a + 1.0, b + 1.0, c + 1.0, x) * t)


def hyp2f1(a, b, c, x):
    """Gauss's hypergeometric function 2F1(a, b; c; x) = sum_k (a)_k (b)_k / (c)_k x^k / k!
    for real arguments (x <= 1; inf beyond, as in JAX); derivatives in all four.

    >>> from funcad.scipy.special import hyp2f1
    >>> round(float(hyp2f1(1.0, 1.0, 2.0, 0.5)), 6)   # -log(1 - x) / x
    1.386294
    """
    a, b, c, x = fnp.broadcast_arrays(*_real("hyp2f1", a, b, c, x))
    return _hyp2f1(a, b, c, x)
