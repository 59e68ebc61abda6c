"""checkpoint (remat): recompute a function's intermediates in the backward pass.

`checkpoint(f)` is the call primitive `checkpoint_p` holding f's jaxpr. Its
partial-eval rule, which reverse mode uses to decide what to store, runs the
known (primal) part now but stages the whole jaxpr for the backward pass with
only the *inputs* as residuals: the backward pass (transpose) evaluates the
non-linear equations again before the linear ones. Memory drops from all of
f's intermediates to its inputs, at the price of running f's forward twice.
Inside a scan body it turns O(steps · intermediates) residuals into
O(steps · carry).

A `policy` (JAX's `checkpoint_policies`, funcad/transforms/checkpoint_policies.py) chooses
intermediates to keep after all: `_RecomputingTrace` runs the known equations
at once, as partial evaluation does, and also records each one the policy does
not save in the staged jaxpr, where it is recomputed from what is saved. A known
value the staged part reads is then a residual only if no recomputed copy of
it exists. `checkpoint_name` (the identity primitive `name`) marks a value for
the name-based policies.
"""
from __future__ import annotations


from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import functools
import inspect
from typing import Callable

import numpy as np

from ..core.arguments import merge_static, split_static
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.ir import ClosedJaxpr, Eqn, Jaxpr
from ..core.pytree import flatten_fun, tree_flatten, tree_map, tree_unflatten
from ..core.avals import aval_of
from ..core import refs as _refs
from ..core import x64 as _x64
from ..core.staging import StagingTrace, lift_traced_consts, partial_eval_rules, trace_to_jaxpr
from ..core.trace import (Primitive, abstract_eval_rules, batch_rules, ctx, eval_jaxpr, impl_rules,
                          jvp_rules, python_rules, set_trace, transpose_rules)
from ..lowering.stablehlo import lowering_rules
from ..primitives._base import is_undefined
from ..primitives.structural import moveaxis0
from .calls import define_call
from .passes.dce import dce
from .passes._util import effectful, is_effectful
from .jaxpr_transforms import (backward, batch_jaxpr, jvp_jaxpr, nonzero_tangent, partial_eval_jaxpr,
                               strip_weak)


class _PolicyAnswer:
    """What a checkpoint policy may return besides a bool (JAX's `Saveable`, `Recompute`)."""

    __slots__ = ("_name",)

    def __init__(self, name: str):
        self._name = name

    def __repr__(self):
        return self._name


Saveable = _PolicyAnswer("Saveable")
Recompute = _PolicyAnswer("Recompute")

checkpoint_p = Primitive("checkpoint", multiple_results=True)


def _impl(*args, jaxpr, prevent_cse, policy=None):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _jvp(primals, tangents, *, jaxpr, prevent_cse, policy=None):
    in_nz = [nonzero_tangent(p, t) for p, t in zip(primals, tangents)]
    n = len(jaxpr.out_avals)
    jvp_closed, out_nz = jvp_jaxpr(jaxpr, in_nz, [False] * n)
    outs = checkpoint_p.bind(*primals, *[t for t, nz in zip(tangents, in_nz) if nz], jaxpr=jvp_closed,
                             **_params(prevent_cse, policy))
    it = iter(outs[n:])
    return outs[:n], [next(it) if nz else None for nz in out_nz]


def _params(prevent_cse, policy) -> dict:
    # policy is bound only when given, so programs without one keep their old params
    return {"prevent_cse": prevent_cse} if policy is None else {"prevent_cse": prevent_cse, "policy": policy}


def _partial_eval(trace, args, params):
    if params.get("policy") is not None:
        return _partial_eval_policy(trace, args, params)
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


class _RecomputingTrace(StagingTrace):
    """A partial evaluator that also stages the known equations `policy` does not save,
    so that the staged jaxpr recomputes their values instead of reading them."""

    def __init__(self, parent, policy):
        super().__init__(parent, known_passthrough=True, name="checkpoint")
        self.policy = policy
        self.copies: dict = {}  # id(known value) -> (its recomputed Var, the value, kept alive)

    def process_primitive(self, prim, args, params):
        if any(self.is_own(x) for x in args):
            return super().process_primitive(prim, args, params)
        with set_trace(self.parent):
            out = prim.bind(*args, **params)
        if not _effectful(prim, params) and not saves(self.policy, prim, args, params):
            staged = self.stage(prim, args, params)
            pairs = zip(out, staged) if prim.multiple_results else [(out, staged)]
            for value, copy in pairs:
                self.copies[id(value)] = (copy._var, value)
        return out

    def atom(self, x):
        copy = self.copies.get(id(x))
        if copy is not None and copy[1] is x:
            return copy[0]
        return super().atom(x)


def _effectful(prim, params) -> bool:
    # an effect happens once, in the forward pass: it is never recomputed
    return bool(effectful) and is_effectful(Eqn(prim, [], [], params))


def saves(policy, prim, args, params) -> bool:
    """Whether `policy` saves the outputs of `prim` applied to `args` (JAX's convention:
    policy(prim, *avals, **params) returns a bool, `Saveable` or `Recompute`)."""
    answer = policy(prim, *[aval_of(a) for a in args], **params)
    if answer is Saveable or answer is Recompute:
        return answer is Saveable
    if isinstance(answer, (bool, np.bool_)):
        return bool(answer)
    raise FuncadTypeError(
        f"a checkpoint policy must return a bool, funcad.ad_checkpoint.Saveable or Recompute; "
        f"{getattr(policy, '__name__', policy)!r} returned {answer!r} for `{prim.name}`. (Offloading "
        "to host memory is not supported: funcad's devices have one memory space.)")


def _partial_eval_policy(trace, args, params):
    """Known part: staged by K, cut down to what is needed and run at once on the parent
    trace (hoisted out of the checkpoint, as JAX does); unknown part: one checkpoint
    equation reading the saved values and recomputing the rest."""
    closed = params["jaxpr"]
    unknowns = [trace.is_own(x) for x in args]
    k_trace = StagingTrace(None, name="checkpoint")
    rec = _RecomputingTrace(k_trace, params["policy"])
    ins = [rec.new_arg(strip_weak(x.aval)) if u else k_trace.new_arg(strip_weak(aval_of(x)))
           for x, u in zip(args, unknowns)]
    try:
        with set_trace(rec):
            outs = eval_jaxpr(closed.jaxpr, closed.consts, *ins)
        out_uk = [rec.is_own(o) for o in outs]
        staged = dce(rec.to_jaxpr([o for o, u in zip(outs, out_uk) if u]))
        j = staged.jaxpr
        is_res = [k_trace.is_own(c) for c in staged.consts]  # the rest are concrete constants
        known = k_trace.to_jaxpr([o for o, u in zip(outs, out_uk) if not u]
                                 + [c for c, r in zip(staged.consts, is_res) if r])
    finally:
        rec.finish()
        k_trace.finish()
    with set_trace(trace.parent):
        k_outs = eval_jaxpr(*_dce_parts(known), *[x for x, u in zip(args, unknowns) if not u])
    n_known = out_uk.count(False)
    residuals, k_outs = k_outs[n_known:], iter(k_outs[:n_known])
    u_outs = []
    if any(out_uk):
        body = ClosedJaxpr(
            Jaxpr([v for v, r in zip(j.constvars, is_res) if not r],
                  [v for v, r in zip(j.constvars, is_res) if r] + j.invars, j.eqns, j.outvars),
            [c for c, r in zip(staged.consts, is_res) if not r])
        u_outs = trace.stage(checkpoint_p, residuals + [x for x in args if trace.is_own(x)],
                             dict(params, jaxpr=body))
    u_outs = iter(u_outs)
    return [next(u_outs) if u else next(k_outs) for u in out_uk]


def _dce_parts(closed: ClosedJaxpr):
    closed = dce(closed)
    return closed.jaxpr, closed.consts


def _transpose(cts, *args, jaxpr, prevent_cse, policy=None):
    undefined = [is_undefined(a) for a in args]
    known = [a for a in args if not is_undefined(a)]
    if prevent_cse and known:
        known = optimization_barrier_p.bind(*known)
    if any(e.prim in partial_eval_rules for e in jaxpr.jaxpr.eqns):
        # A call in the body (an inner jit's jvp) may return recomputed primal values
        # beside tangents: split the recomputation off first, as JAX's remat transpose
        # does, so that only the linear part is transposed.
        k, u, out_uk, nres = partial_eval_jaxpr(jaxpr, undefined)
        k_out = eval_jaxpr(k.jaxpr, k.consts, *known)
        n_lin = len(u.jaxpr.invars) - nres
        cts_in = iter(backward(u, [False] * nres + [True] * n_lin, k_out[len(k_out) - nres:],
                               [ct for ct, uk in zip(cts, out_uk) if uk]))
    else:
        cts_in = iter(backward(jaxpr, undefined, known, cts))
    return [next(cts_in) if u else None for u in undefined]


def _batch(vals, dims, *, axis_size, jaxpr, prevent_cse, policy=None):
    vals = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    batched = [d is not None for d in dims]
    b_closed, out_b = batch_jaxpr(jaxpr, batched, axis_size, [False] * len(jaxpr.out_avals))
    outs = checkpoint_p.bind(*vals, jaxpr=b_closed, **_params(prevent_cse, policy))
    return outs, [0 if b else None for b in out_b]


# the passes must not inline away the remat
define_call(checkpoint_p, optimizable=False, impl=_impl, jvp=_jvp, partial_eval=_partial_eval,
            transpose=_transpose, batch=_batch)

# optimization_barrier: the identity, opaque to XLA. The backward pass reads
# its recomputation's inputs through it, so that XLA cannot merge the
# recomputed values with the forward pass's ones (which would keep them alive
# and undo the memory saving).
optimization_barrier_p = Primitive("optimization_barrier", multiple_results=True)
impl_rules[optimization_barrier_p] = lambda *xs: list(xs)
abstract_eval_rules[optimization_barrier_p] = lambda *avals: list(avals)
_sharding_rules[optimization_barrier_p] = _BY_SHAPE_RULE  # its types are its operands'
jvp_rules[optimization_barrier_p] = lambda primals, tangents: (
    optimization_barrier_p.bind(*primals), list(tangents))
transpose_rules[optimization_barrier_p] = lambda cts, *xs: list(cts)
batch_rules[optimization_barrier_p] = lambda vals, dims, *, axis_size: (
    optimization_barrier_p.bind(*vals), list(dims))
lowering_rules[optimization_barrier_p] = lambda c, *xs: c.op(
    "stablehlo.optimization_barrier", xs, [x.aval for x in xs])
python_rules[optimization_barrier_p] = (lambda eqn, a: "(" + ", ".join(a) + ",)", None)  # XLA-only


# name: the identity, marking a value for the name-based checkpoint policies. Its
# tangent is not named (as in JAX), so only primal values can be saved by name.
name_p = Primitive("name")
impl_rules[name_p] = lambda x, *, name: x
abstract_eval_rules[name_p] = lambda x, *, name: x
_sharding_rules[name_p] = _BY_SHAPE_RULE
jvp_rules[name_p] = lambda primals, tangents, *, name: (name_p.bind(primals[0], name=name), tangents[0])
batch_rules[name_p] = lambda vals, dims, *, axis_size, name: (name_p.bind(vals[0], name=name), dims[0])
lowering_rules[name_p] = lambda c, x, *, name: x
python_rules[name_p] = ("{0}", None)


def checkpoint_name(x, name: str):
    """Name `x` (an array or a pytree of arrays) for the checkpoint policies
    (jax.ad_checkpoint.checkpoint_name); returns `x` unchanged.

    >>> import funcad, funcad.numpy as fnp
    >>> from funcad.ad_checkpoint import checkpoint_name
    >>> policy = funcad.checkpoint_policies.save_only_these_names("y")
    >>> f = funcad.checkpoint(lambda x: fnp.sin(checkpoint_name(fnp.sin(x), "y")), policy=policy)
    >>> round(float(funcad.grad(f)(1.0)), 6)
    0.360039
    """
    if not isinstance(name, str):
        raise FuncadTypeError(f"checkpoint_name takes a str name, got {type(name).__name__} {name!r}")
    return tree_map(lambda v: name_p.bind(v, name=name), x)


def checkpoint(fun: Callable | None = None, *, prevent_cse: bool = True, policy: Callable | None = None,
               static_argnums: int | tuple = (), static_argnames: str | tuple = ()) -> Callable:
    """Mark `fun` for rematerialisation (jax.checkpoint / jax.remat).

    Reverse mode then stores only fun's inputs and recomputes its
    intermediates in the backward pass. Use it on a scan body to make long
    scans cheap in memory. Values are unchanged; in eager code without
    differentiation it simply calls `fun`. With `prevent_cse` (the default),
    the backward pass reads its inputs through an optimisation barrier, so
    that XLA cannot merge the recomputation back into the forward pass.
    `policy` (one of `funcad.checkpoint_policies`, or any
    `policy(prim, *avals, **params) -> bool`) names the intermediates that are
    saved after all; `None` saves none (`nothing_saveable`). static_argnums and
    static_argnames: arguments passed as Python values, not traced.

    >>> import funcad, funcad.numpy as fnp
    >>> f = funcad.checkpoint(lambda x: fnp.sin(fnp.sin(x)))
    >>> round(float(funcad.grad(f)(1.0)), 6)
    0.360039
    """
    if fun is None:
        return functools.partial(checkpoint, prevent_cse=prevent_cse, policy=policy,
                                 static_argnums=static_argnums, static_argnames=static_argnames)
    if not isinstance(prevent_cse, (bool, np.bool_)):
        raise FuncadTypeError(f"checkpoint: prevent_cse must be a bool, got {type(prevent_cse).__name__}")
    if policy is not None and not callable(policy):
        raise FuncadTypeError(
            f"checkpoint: policy must be callable (one of funcad.checkpoint_policies), got {policy!r}")
    if isinstance(static_argnums, int):
        static = (static_argnums,)
    elif isinstance(static_argnums, (tuple, list)) and all(isinstance(i, int) for i in static_argnums):
        static = tuple(static_argnums)
    else:
        raise FuncadTypeError("checkpoint: static_argnums must be an int or a tuple of ints, got "
                              f"{static_argnums!r}")
    names = (static_argnames,) if isinstance(static_argnames, str) else tuple(static_argnames)
    if not all(isinstance(n, str) for n in names):
        raise FuncadTypeError(f"checkpoint: static_argnames must be a str or a tuple of str, got "
                              f"{static_argnames!r}")
    if names:  # a named parameter passed by position is static too
        try:
            params = list(inspect.signature(fun).parameters.values())
        except (TypeError, ValueError):
            params = []
        named_pos = tuple(i for i, p in enumerate(params) if p.name in names and p.kind in
                          (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and i not in static)
    else:
        named_pos = ()

    def threaded(refs, args, kwargs):
        def with_values(values, *a, **kw):
            with _refs.threaded(refs, values) as final:
                return fun(*a, **kw), final()
        shifted = tuple(i + 1 if i >= 0 else i for i in static + named_pos)
        out, new = checkpoint(with_values, prevent_cse=prevent_cse, policy=policy,
                              static_argnums=shifted, static_argnames=names)(
            _refs.values(refs), *args, **kwargs)
        _refs.write_back(refs, new)
        return out

    @functools.wraps(fun)
    def wrapped(*args, **kwargs):
        if ctx.trace is None:
            if not _x64.enabled:  # NumPy inputs in 32 bits, as under a transformation
                args, kwargs = tree_map(_x64.canonicalize, (args, kwargs))
            return fun(*args, **kwargs)
        if not all(-len(args) <= i < len(args) for i in static):
            raise FuncadValueError(f"checkpoint: static_argnums={static_argnums} is out of range for "
                                   f"{len(args)} positional arguments")
        static_pos, dyn = split_static(args, static + named_pos)
        static_kw = {k: v for k, v in kwargs.items() if k in names}
        flat, in_tree = tree_flatten((dyn, {k: v for k, v in kwargs.items() if k not in names}))
        flat = _x64.canonicalize_all(flat)
        flat_fun, store = flatten_fun(
            lambda d, kw: fun(*merge_static(args, static_pos, d), **static_kw, **kw), in_tree)
        try:
            with _refs.scope():
                closed = trace_to_jaxpr(flat_fun, [aval_of(x) for x in flat], name="checkpoint",
                                        parent=ctx.trace)
        except _refs.ClosedRefs as e:  # refs it closes over: their values in and out
            return threaded(e.refs, args, kwargs)
        closed, consts = lift_traced_consts(closed)
        outs = checkpoint_p.bind(*consts, *flat, jaxpr=closed, **_params(bool(prevent_cse), policy))
        return tree_unflatten(store[0], outs)

    return wrapped


remat = checkpoint
