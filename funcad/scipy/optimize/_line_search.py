"""A line search satisfying the strong Wolfe conditions: Nocedal and Wright,
*Numerical Optimization* (1999), algorithm 3.5 (bracketing) and 3.6 (zoom, by
cubic, then quadratic interpolation, then bisection), with the constants and
the step and evaluation bookkeeping of JAX's implementation, so that BFGS
takes the same steps. Every loop is a funcad.lax.while_loop over a dict of
scalars (and the gradient), so the search runs eagerly and under jit alike."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import numpy as fnp
from ...lax import while_loop
from ...transforms.api import value_and_grad


class LineSearchResults(NamedTuple):
    failed: object   # the strong Wolfe conditions were not met
    nit: object
    nfev: object
    ngev: object
    k: object
    a_k: object      # the step
    f_k: object      # f and its gradient at the step
    g_k: object
    status: object   # 0 passed, 1 zoom failed, 3 maxiter reached


def _pick(cond, new: dict, old: dict) -> dict:
    """`old` with the entries of `new` taken where `cond` holds."""
    out = dict(old)
    for k, v in new.items():
        out[k] = fnp.where(cond, v, old[k])
    return out


def _cubic_min(a, fa, fpa, b, fb, c, fc):
    """The minimiser of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    rb, rc = fb - fa - fpa * db, fc - fa - fpa * dc
    A = (dc ** 2 * rb - db ** 2 * rc) / denom
    B = (-dc ** 3 * rb + db ** 3 * rc) / denom
    return a + (-B + fnp.sqrt(B * B - 3.0 * A * fpa)) / (3.0 * A)


def _quad_min(a, fa, fpa, b, fb):
    """The minimiser of the parabola through (a, fa) with slope fpa and (b, fb)."""
    db = b - a
    B = (fb - fa - fpa * db) / db ** 2
    return a - fpa / (2.0 * B)


def _zoom(phi, wolfe_one, wolfe_two, lo, hi, g_0, skip, dtype):
    """Algorithm 3.6 between the steps lo = (a, phi, dphi) and hi; does nothing when `skip`."""
    one = np.asarray(1.0, dtype)
    state = dict(done=np.bool_(False), failed=np.bool_(False), j=np.int64(0),
                 a_lo=lo[0], phi_lo=lo[1], dphi_lo=lo[2], a_hi=hi[0], phi_hi=hi[1], dphi_hi=hi[2],
                 a_rec=((lo[0] + hi[0]) / 2.0).astype(dtype), phi_rec=(lo[1] + hi[1]) / 2.0,
                 a_star=one, phi_star=lo[1], dphi_star=lo[2], g_star=g_0,
                 nfev=np.int64(0), ngev=np.int64(0))
    threshold = 1e-5 if np.finfo(dtype).bits < 64 else 1e-10

    def body(s):
        dalpha = s["a_hi"] - s["a_lo"]
        a, b = fnp.minimum(s["a_hi"], s["a_lo"]), fnp.maximum(s["a_hi"], s["a_lo"])
        cchk, qchk = 0.2 * dalpha, 0.1 * dalpha
        s = dict(s, failed=s["failed"] | (dalpha <= threshold))
        a_cubic = _cubic_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"],
                             s["a_rec"], s["phi_rec"])
        use_cubic = (s["j"] > 0) & (a_cubic > a + cchk) & (a_cubic < b - cchk)
        a_quad = _quad_min(s["a_lo"], s["phi_lo"], s["dphi_lo"], s["a_hi"], s["phi_hi"])
        use_quad = ~use_cubic & (a_quad > a + qchk) & (a_quad < b - qchk)
        a_j = fnp.where(use_cubic, a_cubic, fnp.where(use_quad, a_quad, (s["a_lo"] + s["a_hi"]) / 2.0))
        a_j = a_j.astype(dtype)  # (phi may be wider than x, as the interpolants then are)
        phi_j, dphi_j, g_j = phi(a_j)
        phi_j, dphi_j = phi_j.astype(s["phi_lo"].dtype), dphi_j.astype(s["dphi_lo"].dtype)
        s = dict(s, nfev=s["nfev"] + 1, ngev=s["ngev"] + 1)
        hi_to_j = wolfe_one(a_j, phi_j) | (phi_j >= s["phi_lo"])
        star_to_j = wolfe_two(dphi_j) & ~hi_to_j
        hi_to_lo = (dphi_j * (s["a_hi"] - s["a_lo"]) >= 0.0) & ~hi_to_j & ~star_to_j
        lo_to_j = ~hi_to_j & ~star_to_j
        s = _pick(hi_to_j, dict(a_hi=a_j, phi_hi=phi_j, dphi_hi=dphi_j, a_rec=s["a_hi"],
                                phi_rec=s["phi_hi"]), s)
        s = _pick(star_to_j, dict(a_star=a_j, phi_star=phi_j, dphi_star=dphi_j, g_star=g_j), s)
        s["done"] = s["done"] | star_to_j
        s = _pick(hi_to_lo, dict(a_hi=s["a_lo"], phi_hi=s["phi_lo"], dphi_hi=s["dphi_lo"],
                                 a_rec=s["a_hi"], phi_rec=s["phi_hi"]), s)
        s = _pick(lo_to_j & ~hi_to_lo, dict(a_rec=s["a_lo"], phi_rec=s["phi_lo"]), s)
        s = _pick(lo_to_j, dict(a_lo=a_j, phi_lo=phi_j, dphi_lo=dphi_j), s)
        j = s["j"] + 1
        return dict(s, j=j, failed=s["failed"] | (j >= 30))

    return while_loop(lambda s: ~s["done"] & ~skip & ~s["failed"], body, state)


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20) -> LineSearchResults:
    """A step along the descent direction `pk` from `xk` meeting the strong Wolfe
    conditions with constants c1, c2, in at most `maxiter` bracketing steps."""
    dtype = np.result_type(fnp.asarray(xk).dtype, fnp.asarray(pk).dtype, np.float32)
    xk, pk = fnp.asarray(xk, dtype), fnp.asarray(pk, dtype)
    vg = value_and_grad(f)

    def phi(t):
        value, g = vg(xk + fnp.asarray(t, dtype) * pk)
        return fnp.asarray(value), fnp.dot(g, pk), g

    fresh = old_fval is None or gfk is None
    if fresh:
        phi_0, dphi_0, gfk = phi(0.0)
    else:
        phi_0, dphi_0 = old_fval, fnp.dot(gfk, pk)
    if old_old_fval is not None:
        candidate = 1.01 * 2 * (phi_0 - old_old_fval) / dphi_0
        start = fnp.where(candidate > 1, np.asarray(1.0, dtype), candidate).astype(dtype)
    else:
        start = np.asarray(1.0, dtype)

    def wolfe_one(a, phi_a):   # sufficient decrease fails
        return phi_a > phi_0 + c1 * a * dphi_0

    def wolfe_two(dphi_a):     # curvature holds
        return fnp.abs(dphi_a) <= -c2 * dphi_0

    state = dict(done=np.bool_(False), failed=np.bool_(False), i=np.int64(1),
                 a_i1=np.asarray(0.0, dtype), phi_i1=phi_0, dphi_i1=dphi_0,
                 nfev=np.int64(int(fresh)), ngev=np.int64(int(fresh)),
                 a_star=np.asarray(0.0, dtype), phi_star=phi_0, dphi_star=dphi_0, g_star=gfk)
    keys = ("a_star", "phi_star", "dphi_star", "g_star")

    def body(s):
        a_i = fnp.where(s["i"] == 1, start, s["a_i1"] * 2.0)
        phi_i, dphi_i, g_i = phi(a_i)
        to_zoom1 = wolfe_one(a_i, phi_i) | ((phi_i >= s["phi_i1"]) & (s["i"] > 1))
        to_i = wolfe_two(dphi_i) & ~to_zoom1
        to_zoom2 = (dphi_i >= 0.0) & ~to_zoom1 & ~to_i
        prev, here = (s["a_i1"], s["phi_i1"], s["dphi_i1"]), (a_i, phi_i, dphi_i)
        z1 = _zoom(phi, wolfe_one, wolfe_two, prev, here, gfk, ~to_zoom1, dtype)
        z2 = _zoom(phi, wolfe_one, wolfe_two, here, prev, gfk, ~to_zoom2, dtype)
        s = dict(s, nfev=s["nfev"] + 1 + z1["nfev"] + z2["nfev"],
                 ngev=s["ngev"] + 1 + z1["ngev"] + z2["ngev"])
        s = _pick(to_zoom1, {k: z1[k] for k in keys}, s)
        s = _pick(to_i, dict(a_star=a_i, phi_star=phi_i, dphi_star=dphi_i, g_star=g_i), s)
        s = _pick(to_zoom2, {k: z2[k] for k in keys}, s)
        s["done"] = s["done"] | to_zoom1 | to_i | to_zoom2
        s["failed"] = s["failed"] | (to_zoom1 & z1["failed"]) | (to_zoom2 & z2["failed"])
        return dict(s, i=s["i"] + 1, a_i1=a_i, phi_i1=phi_i, dphi_i1=dphi_i)

    s = while_loop(lambda s: ~s["done"] & (s["i"] <= maxiter) & ~s["failed"], body, state)
    status = fnp.where(s["failed"], 1, fnp.where(s["i"] > maxiter, 3, 0))
    a_k = s["a_star"]
    if np.finfo(dtype).bits != 64:  # keep a tiny step from vanishing in single precision
        a_k = fnp.where(fnp.abs(a_k) < 1e-8, fnp.sign(a_k) * 1e-8, a_k)
    return LineSearchResults(failed=s["failed"] | ~s["done"], nit=s["i"] - 1, nfev=s["nfev"],
                             ngev=s["ngev"], k=s["i"], a_k=a_k, f_k=s["phi_star"], g_k=s["g_star"],
                             status=status)
