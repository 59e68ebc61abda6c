"""Partial evaluation of a jaxpr: split it into a known part and an unknown part.

Call-like primitives (jit, and control flow) use this in their partial-eval
rules, so that linearize can run the known (primal) half of a call at once
and stage only the unknown (tangent) half.
"""
from __future__ import annotations

from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.staging import StagingTrace
from ..core.trace import eval_jaxpr, set_trace


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns):
    """Split `closed` given which of its inputs are unknown.

    Returns (known, unknown, out_unknowns, num_residuals):
      known:   known inputs -> (known outputs..., residuals...)
      unknown: (residuals..., unknown inputs...) -> unknown outputs
      out_unknowns[i]: whether output i comes from `unknown`.

    It traces the jaxpr under two staging traces: K takes the known inputs,
    U (a partial evaluator over K) the unknown ones. Equations with only known
    inputs fall through to K; the rest are recorded by U, and the K values U
    reads are the residuals.

    >>> import funcad, funcad.numpy as fnp
    >>> closed = funcad.make_jaxpr(lambda x, t: fnp.cos(x) * t)(1.0, 2.0)
    >>> known, unknown, out_unknowns, n = partial_eval_jaxpr(closed, [False, True])
    >>> print(known)
    { lambda ; a:f64[]. let b:f64[] = cos a in (b,) }
    >>> print(unknown)
    { lambda ; a:f64[] b:f64[]. let c:f64[] = mul a b in (c,) }
    """
    k_trace = StagingTrace(None, name="partial_eval")
    u_trace = StagingTrace(k_trace, known_passthrough=True, name="partial_eval")
    args = [u_trace.new_arg(a) if u else k_trace.new_arg(a) for a, u in zip(closed.in_avals, unknowns)]
    try:
        with set_trace(u_trace):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        out_unknowns = [u_trace.is_own(o) for o in outs]
        u_outvars = [o.var for o, u in zip(outs, out_unknowns) if u]
        is_res = [k_trace.is_own(c) for c in u_trace.constvals]
        residuals = [c for c, r in zip(u_trace.constvals, is_res) if r]
        known = k_trace.to_jaxpr([o for o, u in zip(outs, out_unknowns) if not u] + residuals)
        res_vars = [v for v, r in zip(u_trace.constvars, is_res) if r]
        constvars = [v for v, r in zip(u_trace.constvars, is_res) if not r]
        constvals = [c for c, r in zip(u_trace.constvals, is_res) if not r]
        unknown = ClosedJaxpr(Jaxpr(constvars, res_vars + u_trace.invars, u_trace.eqns, u_outvars),
                              constvals)
    finally:
        u_trace.finish()
        k_trace.finish()
    return known, unknown, out_unknowns, len(residuals)
