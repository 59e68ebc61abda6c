"""checkpoint (remat): recompute a function's intermediates in the backward pass.

`checkpoint(f)` is the call primitive `checkpoint_p` holding f's jaxpr. Its
partial-eval rule, which reverse mode uses to decide what to store, runs the
known (primal) part now but stages the whole jaxpr for the backward pass with
only the *inputs* as residuals: the backward pass (transpose) evaluates the
non-linear equations again before the linear ones. Memory drops from all of
f's intermediates to its inputs, at the price of running f's forward twice.
Inside a scan body it turns O(steps · intermediates) residuals into
O(steps · carry).
"""
from __future__ import annotations

import functools
from typing import Callable

from ..core.arguments import merge_static, split_static
from ..core.pytree import flatten_fun, tree_flatten, tree_unflatten
from ..core.avals import aval_of
from ..core.staging import lift_traced_consts, partial_eval_rules, trace_to_jaxpr
from ..core.trace import (Primitive, abstract_eval_rules, batch_rules, ctx, eval_jaxpr, impl_rules,
                          jvp_rules, python_rules, register_call, set_trace, transpose_rules)
from ..lowering.stablehlo import call_rule, lowering_rules
from ..primitives._base import is_undefined
from ..primitives.structural import moveaxis0
from .passes.dce import dce
from .jaxpr_transforms import backward, batch_jaxpr, jvp_jaxpr, nonzero_tangent, partial_eval_jaxpr

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def _impl(*args, jaxpr, prevent_cse):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _jvp(primals, tangents, *, jaxpr, prevent_cse):
    in_nz = [nonzero_tangent(p, t) for p, t in zip(primals, tangents)]
    n = len(jaxpr.out_avals)
    jvp_closed, out_nz = jvp_jaxpr(jaxpr, in_nz, [False] * n)
    outs = checkpoint_p.bind(*primals, *[t for t, nz in zip(tangents, in_nz) if nz], jaxpr=jvp_closed,
                             prevent_cse=prevent_cse)
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else None for nz in out_nz]


def _partial_eval(trace, args, params):
    closed = params["jaxpr"]
    unknowns = [trace.is_own(x) for x in args]
    n = len(closed.out_avals)
    known, _, out_uk, _ = partial_eval_jaxpr(closed, unknowns, [False] * n)
    n_known = out_uk.count(False)
    k_outs = []
    if n_known:  # the known outputs, computed now; no residuals kept
        k_only = dce(known.with_outputs(known.jaxpr.outvars[:n_known]))
        with set_trace(trace.parent):
            k_outs = checkpoint_p.bind(*[x for x, u in zip(args, unknowns) if not u],
                                       **dict(params, jaxpr=k_only))
    u_outs = []
    if n_known < n:  # the rest reads the inputs and recomputes everything it needs
        u_jaxpr = dce(closed.with_outputs([v for v, u in zip(closed.jaxpr.outvars, out_uk) if u]))
        u_outs = trace.stage(checkpoint_p, list(args), dict(params, jaxpr=u_jaxpr))
    k_it, u_it = iter(k_outs), iter(u_outs)
    return [next(u_it) if u else next(k_it) for u in out_uk]


def _transpose(cts, *args, jaxpr, prevent_cse):
    undefined = [is_undefined(a) for a in args]
    known = [a for a in args if not is_undefined(a)]
    if prevent_cse and known:
        known = optimization_barrier_p.bind(*known)
    cts_in = iter(backward(jaxpr, undefined, known, cts))
    return [next(cts_in) if u else None for u in undefined]


def _batch(vals, dims, *, axis_size, jaxpr, prevent_cse):
    vals = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    batched = [d is not None for d in dims]
    b_closed, out_b = batch_jaxpr(jaxpr, batched, axis_size, [False] * len(jaxpr.out_avals))
    outs = checkpoint_p.bind(*vals, jaxpr=b_closed, prevent_cse=prevent_cse)
    return outs, [0 if b else None for b in out_b]


impl_rules[checkpoint_p] = _impl
abstract_eval_rules[checkpoint_p] = lambda *avals, jaxpr, prevent_cse: list(jaxpr.out_avals)
jvp_rules[checkpoint_p] = _jvp
partial_eval_rules[checkpoint_p] = _partial_eval
transpose_rules[checkpoint_p] = _transpose
batch_rules[checkpoint_p] = _batch

lowering_rules[checkpoint_p] = call_rule("jaxpr")
register_call(checkpoint_p, optimizable=False)  # the passes must not inline away the remat

# optimization_barrier: the identity, opaque to XLA. The backward pass reads
# its recomputation's inputs through it, so that XLA cannot merge the
# recomputed values with the forward pass's ones (which would keep them alive
# and undo the memory saving).
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)
impl_rules[optimization_barrier_p] = lambda *xs: list(xs)
abstract_eval_rules[optimization_barrier_p] = lambda *avals: list(avals)
jvp_rules[optimization_barrier_p] = lambda primals, tangents: (
    optimization_barrier_p.bind(*primals), list(tangents))
transpose_rules[optimization_barrier_p] = lambda cts, *xs: list(cts)
batch_rules[optimization_barrier_p] = lambda vals, dims, *, axis_size: (
    optimization_barrier_p.bind(*vals), list(dims))
lowering_rules[optimization_barrier_p] = lambda c, *xs: c.op(
    "stablehlo.optimization_barrier", xs, [x.aval for x in xs])
python_rules[optimization_barrier_p] = (lambda eqn, a: "(" + ", ".join(a) + ",)", None)  # XLA-only


def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True, static_argnums=()) -> Callable:
    """Mark `fun` for rematerialisation (jax.checkpoint / jax.remat).

    Reverse mode then stores only fun's inputs and recomputes its
    intermediates in the backward pass. Use it on a scan body to make long
    scans cheap in memory. Values are unchanged; in eager code without
    differentiation it simply calls `fun`. With `prevent_cse` (the default),
    the backward pass reads its inputs through an optimisation barrier, so
    that XLA cannot merge the recomputation back into the forward pass.

    >>> import funcad, funcad.numpy as fnp
    >>> f = funcad.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> round(float(funcad.grad(f)(1.0)), 6)
    0.360039
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, static_argnums=static_argnums)
    static = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if ctx.trace is None:
            return fun(*args, **kwargs)
        static_pos, dyn = split_static(args, static)
        flat, in_tree = tree_flatten((dyn, kwargs))
        flat_fun, store = flatten_fun(
            lambda d, kw: fun(*merge_static(args, static_pos, d), **kw), in_tree)
        closed = trace_to_jaxpr(flat_fun, [aval_of(x) for x in flat], name="checkpoint", parent=ctx.trace)
        closed, consts = lift_traced_consts(closed)
        outs = checkpoint_p.bind(*consts, *flat, jaxpr=closed, prevent_cse=bool(prevent_cse))
        return tree_unflatten(store[0], outs)

    return wrapped


remat = checkpoint
