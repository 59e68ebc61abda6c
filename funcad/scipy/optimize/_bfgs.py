"""BFGS: Nocedal and Wright, *Numerical Optimization* (1999), algorithm 6.1,
with the inverse-Hessian update skipped where y.s is 0, as JAX's."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import numpy as fnp
from ...core.errors import FuncadValueError
from ...lax import while_loop
from ...transforms.api import value_and_grad
from ._line_search import line_search


class BFGSResults(NamedTuple):
    converged: object
    failed: object
    k: object
    nfev: object
    ngev: object
    nhev: object
    x_k: object
    f_k: object
    g_k: object
    H_k: object
    old_old_fval: object
    status: object
    line_search_status: object


def _norm(g, ord):
    return fnp.linalg.norm(g, ord=ord)


def minimize_bfgs(fun, x0, maxiter=None, norm=np.inf, gtol=1e-5, line_search_maxiter=10) -> BFGSResults:
    """Minimise fun (of a 1-D array) from x0 until norm(grad, ord=norm) < gtol, at
    most `maxiter` iterations (200 * x0.size by default)."""
    x0 = fnp.asarray(x0)
    if x0.ndim != 1:
        raise FuncadValueError(f"minimize: x0 must be a 1-D array, got shape {tuple(x0.shape)}; "
                               "flatten it (and unflatten inside fun)")
    if x0.dtype.kind not in "f":
        x0 = x0.astype(np.float64)
    if maxiter is None:
        maxiter = int(np.size(x0)) * 200
    d, dtype = x0.shape[0], x0.dtype
    f_0, g_0 = value_and_grad(fun)(x0)
    state = dict(converged=_norm(g_0, norm) < gtol, failed=np.bool_(False), k=np.int64(0),
                 nfev=np.int64(1), ngev=np.int64(1), x_k=x0, f_k=f_0, g_k=g_0,
                 H_k=fnp.eye(d, dtype=dtype), old_old_fval=f_0 + fnp.linalg.norm(g_0) / 2,
                 line_search_status=np.int64(0))

    def body(s):
        p_k = -fnp.dot(s["H_k"], s["g_k"])
        ls = line_search(fun, s["x_k"], p_k, old_fval=s["f_k"], old_old_fval=s["old_old_fval"],
                         gfk=s["g_k"], maxiter=line_search_maxiter)
        s_k = ls.a_k * p_k
        y_k = ls.g_k - s["g_k"]
        rho = 1.0 / fnp.dot(y_k, s_k)
        w = fnp.eye(d, dtype=dtype) - rho * fnp.outer(s_k, y_k)
        H = w @ s["H_k"] @ w.T + rho * fnp.outer(s_k, s_k)
        return dict(converged=_norm(ls.g_k, norm) < gtol, failed=ls.failed, k=s["k"] + 1,
                    nfev=s["nfev"] + ls.nfev, ngev=s["ngev"] + ls.ngev, x_k=s["x_k"] + s_k,
                    f_k=ls.f_k, g_k=ls.g_k, H_k=fnp.where(fnp.isfinite(rho), H, s["H_k"]),
                    old_old_fval=s["f_k"], line_search_status=fnp.asarray(ls.status, np.int64))

    s = while_loop(lambda s: ~s["converged"] & ~s["failed"] & (s["k"] < maxiter), body, state)
    status = fnp.where(s["converged"], 0, fnp.where(s["k"] == maxiter, 1,
                                                    fnp.where(s["failed"], 2 + s["line_search_status"], -1)))
    return BFGSResults(nhev=0, status=status, **s)
