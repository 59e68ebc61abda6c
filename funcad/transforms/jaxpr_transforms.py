"""Transforms of closed jaxprs into closed jaxprs, for primitives that hold jaxprs.

Higher-order primitives (cond, while, scan, checkpoint, jit) transform their
bodies with these, all in one convention:

- each takes a ClosedJaxpr and one flag per input saying which inputs the
  transform touches (`nonzeros`, `unknowns`, `linear`, `batched`), and one
  flag per output (`instantiate`) forcing that output to be touched even when
  it would not be (a zero tangent made real, a known output made unknown, an
  unbatched output broadcast);
- each returns the new ClosedJaxpr and one flag per output saying which
  outputs are touched;
- touched values follow untouched ones, in input order: jvp takes (primals...,
  nonzero tangents...); the unknown half of a partial evaluation takes
  (residuals..., unknown inputs...); a transposed jaxpr takes (non-linear
  inputs..., nonzero output cotangents...);
- the new jaxpr's input types are the old ones without weak types (a body's
  weak types are decided when it is traced, by the user's function), unless
  `keep_weak` is set: a call (jit) keeps them, since its outputs reach the
  user and JAX keeps theirs.

`backward` evaluates a transposition (cotangents from values) where a rule
needs it inside a function it traces itself.
"""
from __future__ import annotations

from ..core.narrow import kind as _kind
from ..core.avals import ShapedArray, aval_of, float0
from ..core.ir import ClosedJaxpr, Jaxpr
from ..core.staging import StagingTrace, trace_to_jaxpr
from ..core.trace import eval_jaxpr, set_trace
from ..primitives._base import zeros_tangent
from ..primitives.structural import moveaxis0
from .jvp import jvp_flat
from .transpose import backward_pass
from .vmap import batch_call

__all__ = ["nonzero_tangent", "jvp_jaxpr", "partial_eval_jaxpr", "forward_residuals",
           "transpose_jaxpr", "backward", "batch_jaxpr"]


def _inexact(aval) -> bool:
    return _kind(aval.dtype) in "fc"  # bfloat16 and the float8s too


def strip_weak(aval) -> ShapedArray:
    """The input type of a derived jaxpr: the same, without a weak type."""
    return ShapedArray(aval.shape, aval.dtype, False, aval._sharding)


def _input(aval, keep_weak: bool):
    return aval if keep_weak else strip_weak(aval)


def _flags(mask, n) -> list:
    return [False] * n if mask is None else [bool(m) for m in mask]


def nonzero_tangent(primal, tangent) -> bool:
    """Whether a tangent is a real (not symbolically zero) one worth carrying."""
    return tangent is not None and _inexact(aval_of(primal)) and aval_of(tangent).dtype != float0


def jvp_jaxpr(closed: ClosedJaxpr, nonzeros, instantiate=None, *, keep_weak: bool = False):
    """The jvp of `closed`: (primals..., tangents of the inputs flagged in
    `nonzeros`...) -> (primal outputs..., nonzero output tangents...).

    Returns (jaxpr, out_nonzeros). Outputs flagged in `instantiate` get a
    tangent even when it is zero (integer outputs never do).
    """
    n = len(closed.in_avals)
    instantiate = _flags(instantiate, len(closed.out_avals))
    out_nz: list = []

    def fun(*xs):
        it = iter(xs[n:])
        tangents = [next(it) if nz else None for nz in nonzeros]
        p_out, t_out = jvp_flat(lambda *p: eval_jaxpr(closed.jaxpr, closed.consts, *p),
                                list(xs[:n]), tangents, instantiate=False)
        ts = []
        for p, t, inst in zip(p_out, t_out, instantiate):
            if not _inexact(aval_of(p)) or t is not None and aval_of(t).dtype == float0:
                t = None
            ts.append(zeros_tangent(p) if t is None and inst and _inexact(aval_of(p)) else t)
        out_nz[:] = [t is not None for t in ts]
        return list(p_out) + [t for t in ts if t is not None]

    avals = [_input(a, keep_weak) for a in closed.in_avals]
    closed_jvp = trace_to_jaxpr(fun, avals + [a for a, nz in zip(avals, nonzeros) if nz], name="jvp")
    return closed_jvp, list(out_nz)


def partial_eval_jaxpr(closed: ClosedJaxpr, unknowns, instantiate=None):
    """Split `closed` given which of its inputs are unknown.

    Returns (known, unknown, out_unknowns, num_residuals):
      known:   known inputs -> (known outputs..., residuals...)
      unknown: (residuals..., unknown inputs...) -> unknown outputs
      out_unknowns[i]: whether output i comes from `unknown`; outputs flagged in
      `instantiate` do even when known (their value travels as a residual).

    It evaluates the jaxpr under two staging traces: K takes the known inputs,
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
    instantiate = _flags(instantiate, len(closed.out_avals))
    k_trace = StagingTrace(None, name="partial_eval")
    u_trace = StagingTrace(k_trace, known_passthrough=True, name="partial_eval")
    args = [u_trace.new_arg(strip_weak(a)) if u else k_trace.new_arg(strip_weak(a))
            for a, u in zip(closed.in_avals, unknowns)]
    try:
        with set_trace(u_trace):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *args)
        out_unknowns = [u_trace.is_own(o) or inst for o, inst in zip(outs, instantiate)]
        u_outvars = [u_trace.atom(o) for o, u in zip(outs, out_unknowns) if u]
        is_res = [k_trace.is_own(c) for c in u_trace.constvals]
        residuals = [c for c, r in zip(u_trace.constvals, is_res) if r]
        known = k_trace.to_jaxpr([o for o, u in zip(outs, out_unknowns) if not u] + residuals)
        res_vars = [v for v, r in zip(u_trace.constvars, is_res) if r]
        unknown = ClosedJaxpr(
            Jaxpr([v for v, r in zip(u_trace.constvars, is_res) if not r], res_vars + u_trace.invars,
                  u_trace.eqns, u_outvars),
            [c for c, r in zip(u_trace.constvals, is_res) if not r])
    finally:
        u_trace.finish()
        k_trace.finish()
    return known, unknown, out_unknowns, len(residuals)


def forward_residuals(known: ClosedJaxpr, num_residuals: int):
    """Drop from a known jaxpr (from `partial_eval_jaxpr`) the residuals that
    are its own inputs, so a caller passes those from its arguments instead of
    copying them out of a call (for jit, one device output fewer each).

    Returns (known, sources): sources[i] is ("in", k) when residual i is known
    input k, ("out", k) when it is output k of the new known jaxpr.
    """
    kj = known.jaxpr
    nk = len(kj.outvars) - num_residuals
    in_pos = {id(v): i for i, v in enumerate(kj.invars)}
    outvars, sources = list(kj.outvars[:nk]), []
    for v in kj.outvars[nk:]:
        if id(v) in in_pos:
            sources.append(("in", in_pos[id(v)]))
        else:
            sources.append(("out", len(outvars)))
            outvars.append(v)
    return known.with_outputs(outvars), tuple(sources)


def backward(closed: ClosedJaxpr, linear, defined_args, cts) -> list:
    """Cotangents of the `linear` inputs of a jaxpr linear in them, given the values
    of the other inputs (in order) and the output cotangents (None = 0)."""
    j = closed.jaxpr
    res_vars = [v for v, u in zip(j.invars, linear) if not u]
    lin_vars = [v for v, u in zip(j.invars, linear) if u]
    as_consts = Jaxpr(j.constvars + res_vars, lin_vars, j.eqns, j.outvars)
    return backward_pass(as_consts, list(closed.consts) + list(defined_args), list(cts))


def transpose_jaxpr(closed: ClosedJaxpr, linear, ct_mask=None, *, keep_weak: bool = False):
    """The transpose of `closed` in its `linear` inputs: (non-linear inputs...,
    cotangents of the outputs flagged in `ct_mask`...) -> nonzero cotangents of
    the linear inputs. Returns (jaxpr, out_nonzeros), one flag per linear input."""
    ct_mask = [True] * len(closed.out_avals) if ct_mask is None else [bool(m) for m in ct_mask]
    res_avals = [_input(a, keep_weak) for a, u in zip(closed.in_avals, linear) if not u]
    ct_avals = [strip_weak(a) for a, m in zip(closed.out_avals, ct_mask) if m]
    nres = len(res_avals)
    out_nz: list = []

    def fun(*xs):
        it = iter(xs[nres:])
        cts_in = backward(closed, linear, xs[:nres], [next(it) if m else None for m in ct_mask])
        out_nz[:] = [c is not None for c in cts_in]
        return [c for c in cts_in if c is not None]

    return trace_to_jaxpr(fun, res_avals + ct_avals, name="transpose"), list(out_nz)


def batch_jaxpr(closed: ClosedJaxpr, batched, axis_size: int, instantiate=None, *,
                dims=None, keep_weak: bool = False):
    """`closed` over a batch: inputs flagged in `batched` carry a batch axis
    (leading, or at `dims[i]` where `dims` is given), and the outputs returned
    flagged carry a leading one (those that depend on a batched input, and those
    flagged in `instantiate`). Returns (jaxpr, out_batched)."""
    instantiate = _flags(instantiate, len(closed.out_avals))
    dims = [0 if b else None for b in batched] if dims is None else [
        d if b else None for d, b in zip(dims, batched)]
    in_avals = [_input(a, keep_weak) if d is None else
                ShapedArray(a.shape[:d] + (axis_size,) + a.shape[d:], a.dtype,
                            keep_weak and a.weak_type)
                for a, d in zip(closed.in_avals, dims)]
    out_b: list = []

    def fun(*xs):
        pairs = batch_call(lambda *ys: eval_jaxpr(closed.jaxpr, closed.consts, *ys), list(xs), dims,
                           axis_size)
        out_b[:] = [d is not None or f for (_, d), f in zip(pairs, instantiate)]
        return [moveaxis0(v, d, axis_size) if b else v for (v, d), b in zip(pairs, out_b)]

    return trace_to_jaxpr(fun, in_avals, name="vmap"), list(out_b)
