"""custom_vmap: a function with its own batching rule (jax.custom_batching).

`sequential_vmap(f)` is a custom_vmap whose rule loops over the batch with `lax.map`.

`custom_vmap(f)` applied to arguments binds `custom_vmap_call`, whose `call`
param is f's jaxpr (what impl, lowering and to_python run) and whose `rule`
param is the user's rule, flat: `rule(axis_size, in_batched, args) -> (outs,
out_batched)`. Under vmap the batching rule calls it instead of batching the
body. As in JAX, forward mode works: the jvp binds the primitive again with
the body's jvp and the rule's jvp (the rule differentiated with `jvp`, and
batched over the axes where only a primal or only a tangent is batched).
Reverse mode raises: a custom_vmap function has no transpose; wrap it in
`custom_vjp` to give it one.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..core.narrow import kind as _kind
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_flatten, tree_map, tree_unflatten
from ..core.staging import lift_traced_consts, trace_to_jaxpr
from ..core.trace import Primitive, ctx, eval_jaxpr
from ..primitives._base import zeros_tangent
from ..primitives.structural import moveaxis0
from .calls import define_call
from .control_flow_api import map as _map
from .custom import _resolve_kwargs
from .jaxpr_transforms import jvp_jaxpr, nonzero_tangent
from .jvp import jvp_flat
from .vmap import batch_call

__all__ = ["custom_vmap", "custom_vmap_p", "sequential_vmap"]

custom_vmap_p = Primitive("custom_vmap_call", multiple_results=True)


class _FlatRule:
    """The user's rule over flat lists, checking what it returns against the function's output."""

    def __init__(self, rule, name, in_tree, out_tree, n_consts):
        self.rule, self.name, self.in_tree, self.out_tree, self.n_consts = rule, name, in_tree, out_tree, n_consts

    def __call__(self, axis_size, in_batched, args):
        if any(in_batched[:self.n_consts]):
            raise FuncadTypeError(
                f"custom_vmap function {self.name} closes over a value batched by an enclosing vmap; "
                "pass that value as an argument instead, so that its rule sees it batched.")
        user_args = tree_unflatten(self.in_tree, list(args[self.n_consts:]))
        user_batched = tree_unflatten(self.in_tree, list(in_batched[self.n_consts:]))
        result = self.rule(axis_size, list(user_batched), *user_args)
        if not (isinstance(result, (tuple, list)) and len(result) == 2):
            raise FuncadTypeError(f"the vmap rule of {self.name} must return a pair (out, out_batched), "
                                  f"got {type(result).__name__}")
        out, out_batched = result
        flat, tree = tree_flatten(out)
        flat_b, tree_b = tree_flatten(out_batched)
        if tree != tree_b:
            raise FuncadValueError(
                f"structure of output value and output batching specification returned by the vmap rule "
                f"of {self.name} do not match.\nOutput values: {tree}\nBatching spec: {tree_b}")
        if tree != self.out_tree:
            raise FuncadValueError(
                f"structure of output returned by the vmap rule of {self.name} does not match that of "
                f"the original custom_vmap function.\nOriginal output: {self.out_tree}\nRule output: {tree}")
        return flat, [bool(b) for b in flat_b]

    def __repr__(self):
        return self.name


def _impl(*args, call, rule):
    return eval_jaxpr(call.jaxpr, call.consts, *args)


def _batch(vals, dims, *, axis_size, call, rule):
    vals = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    outs, out_batched = rule(axis_size, [d is not None for d in dims], vals)
    for i, (o, b, aval) in enumerate(zip(outs, out_batched, call.out_avals)):
        want = ((axis_size,) if b else ()) + aval.shape
        if aval_of(o).shape != want:
            raise FuncadTypeError(
                f"the vmap rule of {rule!r} returned output {i} of shape {aval_of(o).shape} marked "
                f"{'batched' if b else 'unbatched'}; the function's output has shape {aval.shape}, so "
                f"it must be {want}")
    return list(outs), [0 if b else None for b in out_batched]


def _jvp(primals, tangents, *, call, rule):
    in_nz = [nonzero_tangent(p, t) or (t is None and _kind(aval_of(p).dtype) in "fc")
             for p, t in zip(primals, tangents)]
    tangents = [t if t is not None else zeros_tangent(p) for p, t, nz in zip(primals, tangents, in_nz) if nz]
    n_out = len(call.out_avals)
    jvp_call, out_nz = jvp_jaxpr(call, in_nz, [True] * n_out)
    outs = custom_vmap_p.bind(*primals, *tangents, call=jvp_call, rule=_JvpRule(rule, in_nz, out_nz))
    it = iter(outs[n_out:])
    return outs[:n_out], [next(it) if nz else None for nz in out_nz]


class _JvpRule:
    """The batching rule of a custom_vmap function's jvp: the rule under jvp, batched
    as an ordinary function over the axes where a primal or its tangent alone is batched."""

    def __init__(self, rule, in_nz, out_nz):
        self.rule, self.in_nz, self.out_nz = rule, in_nz, out_nz
        self.name = rule.name

    def __call__(self, axis_size, in_batched, args):
        n = len(self.in_nz)
        ps, ts = list(args[:n]), list(args[n:])
        pb, tb_nz = in_batched[:n], iter(in_batched[n:])
        tb = [next(tb_nz) if nz else False for nz in self.in_nz]
        mutual = [p and (t or not nz) for p, t, nz in zip(pb, tb, self.in_nz)]
        extra = ([0 if p and not m else None for p, m in zip(pb, mutual)]
                 + [0 if t and not m else None for t, m, nz in zip(tb, mutual, self.in_nz) if nz])
        rule_batched: list = []

        def to_jvp(*primals):
            outs, out_b = self.rule(axis_size, mutual, list(primals))
            rule_batched[:] = out_b
            return outs

        def fn(*xs):
            it = iter(xs[n:])
            p_out, t_out = jvp_flat(to_jvp, list(xs[:n]), [next(it) if nz else None for nz in self.in_nz],
                                    instantiate=False)
            return list(p_out) + [t if t is not None else zeros_tangent(p)
                                  for p, t, nz in zip(p_out, t_out, self.out_nz) if nz]

        pairs = batch_call(fn, ps + ts, extra, axis_size)
        vals = [v if d is None else moveaxis0(v, d, axis_size) for v, d in pairs]
        m = len(self.out_nz)
        out_b = [rb or d is not None for rb, (_, d) in zip(rule_batched, pairs[:m])]
        nz_b = iter(rb for rb, nz in zip(rule_batched, self.out_nz) if nz)
        t_b = [next(nz_b) or d is not None for _, d in pairs[m:]]
        return vals, out_b + t_b

    def __repr__(self):
        return f"jvp({self.rule!r})"


def _partial_eval(trace, args, params):
    raise FuncadValueError(
        f"custom_vmap function {params['rule'].name} cannot be differentiated in reverse mode (grad, vjp, "
        "linearize, jacrev): as in JAX, a custom_vmap function has a jvp but no transpose. Wrap it in "
        "funcad.custom_vjp (outside the custom_vmap) to give it a reverse-mode rule.")


# the passes keep the call, and so the user's batching rule
define_call(custom_vmap_p, "call", optimizable=False, impl=_impl, batch=_batch, jvp=_jvp,
            partial_eval=_partial_eval)


class custom_vmap:
    """A function with a custom batching rule (jax.custom_batching.custom_vmap).

    The rule, set with `def_vmap`, is `rule(axis_size, in_batched, *args) ->
    (out, out_batched)`: `in_batched` has a bool per argument leaf (in the
    arguments' tree, as a list over the arguments), batched arguments carry the
    batch axis first, and `out_batched` says the same of the output.

    >>> import funcad, funcad.numpy as fnp
    >>> from funcad.custom_batching import custom_vmap
    >>> @custom_vmap
    ... def f(x, y):
    ...     return x + y
    >>> @f.def_vmap
    ... def f_vmap_rule(axis_size, in_batched, xs, ys):
    ...     return xs * ys, True
    >>> print(funcad.vmap(f)(fnp.arange(3), fnp.arange(1, 4)))
    [0 2 6]
    """

    def __init__(self, fun: Callable[..., Any]):
        functools.update_wrapper(self, fun)
        self.fun = fun
        self.vmap_rule: Callable | None = None

    def def_vmap(self, vmap_rule: Callable[..., tuple]) -> Callable[..., tuple]:
        """Set the batching rule; returns it unchanged (usable as a decorator)."""
        self.vmap_rule = vmap_rule
        return vmap_rule

    def __call__(self, *args, **kwargs):
        name = getattr(self.fun, "__name__", repr(self.fun))
        if self.vmap_rule is None:
            raise AttributeError(f"No batching rule defined for custom_vmap function {name} using def_vmap.")
        args = _resolve_kwargs(self.fun, args, kwargs, "custom_vmap")
        if ctx.trace is None:
            return self.fun(*args)  # eager and unbatched: the function itself
        flat, in_tree = tree_flatten(tuple(args))
        store: list = []

        def flat_fun(*xs):
            out = self.fun(*tree_unflatten(in_tree, list(xs)))
            out_flat, out_tree = tree_flatten(out)
            store.append(out_tree)
            return out_flat

        closed = trace_to_jaxpr(flat_fun, [aval_of(x) for x in flat], name="custom_vmap", parent=ctx.trace)
        closed, consts = lift_traced_consts(closed)
        rule = _FlatRule(self.vmap_rule, name, in_tree, store[0], len(consts))
        outs = custom_vmap_p.bind(*consts, *flat, call=closed, rule=rule)
        return tree_unflatten(store[0], outs)


def sequential_vmap(f: Callable) -> custom_vmap:
    """`f` batched by a loop over the batch (`lax.map`) instead of by vmap
    (jax.custom_batching.sequential_vmap): for functions that cannot be batched.
    Arguments that are not batched are passed to each call as they are.

    >>> import funcad, funcad.numpy as fnp
    >>> g = sequential_vmap(lambda x, y: x * y)
    >>> print(funcad.vmap(g, in_axes=(0, None))(fnp.arange(3.0), 2.0))
    [0. 2. 4.]
    """
    f = custom_vmap(f)

    @f.def_vmap
    def rule(axis_size, in_batched, *args):
        args = list(args)
        mapped = tree_map(lambda b, a: a if b else None, in_batched, args)

        def one(mapped_args):
            return f(*tree_map(lambda b, m, a: m if b else a, in_batched, mapped_args, args))

        out = _map(one, mapped)
        return out, tree_map(lambda _: True, out)

    return f
