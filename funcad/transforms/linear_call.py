"""`linear_call`: a linear function called with a user-given transpose, as JAX's
`linear_call` (in its custom_derivatives namespace).

The primitive's operands are the callee's closed-over constants, the residual
leaves, then the linear leaves; `jaxpr` is `fun` traced on (residuals, linear
inputs). Its rules:

- jvp: the function is linear in its linear inputs, so the tangent is the same call
  on their tangents (the residuals and constants must not carry tangents);
- transpose: a linear_call of `fun_transpose` (traced when first needed) whose own
  transpose is `fun` again, so transposing twice gives back the original call;
- vmap (which JAX's lacks, so jacfwd/jacrev/hessian of it fail there): a linear_call of
  the batched callee whose transpose is the batched transpose.
"""
from __future__ import annotations

from typing import Any, Callable

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError
from ..core.ir import ClosedJaxpr
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.staging import convert_constvars, trace_to_jaxpr
from ..core.avals import ShapedArray
from ..core.trace import Primitive, ctx, eval_jaxpr
from ..primitives._base import is_undefined, zeros_tangent
from ..primitives.structural import broadcast_in_dim, moveaxis0
from .calls import define_call
from .vmap import vmap_flat

__all__ = ["linear_call"]

linear_call_p = Primitive("linear_call", multiple_results=True)


def _trace(fun: Callable, res_avals, res_tree, lin_avals, lin_tree, name: str):
    """fun(residuals, linear) traced on flat leaves -> (jaxpr without consts, consts, out tree)."""
    n, box = len(res_avals), []

    def flat(*xs):
        out = fun(tree_unflatten(res_tree, list(xs[:n])), tree_unflatten(lin_tree, list(xs[n:])))
        leaves, tree = tree_flatten(out)
        box.append(tree)
        return leaves

    closed = trace_to_jaxpr(flat, list(res_avals) + list(lin_avals), name=name, parent=ctx.trace)
    jaxpr, consts = convert_constvars(closed)
    return ClosedJaxpr(jaxpr, []), list(consts), box[0]


class _Transpose:
    """The transpose callee, traced on first use: (jaxpr, consts, its own transpose)."""

    __slots__ = ("make", "done")

    def __init__(self, make: Callable):
        self.make, self.done = make, None

    def __call__(self):
        if self.done is None:
            self.done = self.make()
        return self.done

    def __repr__(self):
        return "<transpose>"


def linear_call(fun: Callable, fun_transpose: Callable, residual_args: Any, linear_args: Any) -> Any:
    """Call `fun(residual_args, linear_args)`, a function linear in `linear_args`, whose
    transpose with respect to them is `fun_transpose(residual_args, cotangents)`, as
    JAX's `linear_call`: reverse mode and `linear_transpose` use `fun_transpose`
    instead of transposing `fun`; forward mode differentiates `linear_args` only.

    >>> import funcad
    >>> from funcad.custom_derivatives import linear_call
    >>> def div_add(x, denom):
    ...     return x + linear_call(lambda r, x: x / r, lambda r, t: t / r, denom, x)
    >>> float(div_add(9.0, 3.0))
    12.0
    >>> float(funcad.grad(div_add)(1.0, 3.0))
    1.3333333333333333
    """
    res_leaves, res_tree = tree_flatten(residual_args)
    lin_leaves, lin_tree = tree_flatten(linear_args)
    res_avals = [aval_of(x) for x in res_leaves]
    lin_avals = [aval_of(x) for x in lin_leaves]
    callee, consts, out_tree = _trace(fun, res_avals, res_tree, lin_avals, lin_tree, "linear_call fun")
    out_avals = callee.out_avals

    forward = _Transpose(None)  # this call's transpose; the transpose's transpose is this call

    def make_transpose():
        t_callee, t_consts, t_tree = _trace(fun_transpose, res_avals, res_tree, out_avals, out_tree,
                                            "linear_call fun_transpose")
        if t_tree != lin_tree:
            raise FuncadTypeError(
                "transpose output pytree structure must match that of linear inputs, got output "
                f"structure {t_tree} and input structure {lin_tree}.")
        return t_callee, t_consts, _Transpose(lambda: (callee, consts, forward))

    forward.make = make_transpose
    outs = linear_call_p.bind(*consts, *res_leaves, *lin_leaves, jaxpr=callee,
                              transpose=forward, num_consts=len(consts),
                              num_res=len(res_leaves))
    return tree_unflatten(out_tree, outs)


def _jvp(primals, tangents, *, jaxpr, transpose, num_consts, num_res):
    k = num_consts + num_res
    if any(t is not None for t in tangents[:k]):
        raise FuncadTypeError(
            "linear_call is differentiable in its linear_args only: a residual argument (or a "
            "value `fun` closes over) carries a tangent. Pass the values you differentiate "
            "with respect to as linear_args, or stop_gradient the residuals.")
    params = dict(jaxpr=jaxpr, transpose=transpose, num_consts=num_consts, num_res=num_res)
    outs = linear_call_p.bind(*primals, **params)
    if all(t is None for t in tangents[k:]):
        return outs, [None] * len(outs)
    lin = [zeros_tangent(p) if t is None else t for p, t in zip(primals[k:], tangents[k:])]
    return outs, linear_call_p.bind(*primals[:k], *lin, **params)


def _transpose(cts, *args, jaxpr, transpose, num_consts, num_res):
    k = num_consts + num_res
    if any(is_undefined(a) for a in args[:k]) or not all(is_undefined(a) for a in args[k:]):
        raise FuncadTypeError("linear_call is linear in its linear_args only; the residual arguments "
                              "cannot be transposed")
    t_callee, t_consts, back = transpose()
    cts = [zeros_tangent(a) if ct is None else ct for ct, a in zip(cts, jaxpr.out_avals)]
    outs = linear_call_p.bind(*t_consts, *args[num_consts:k], *cts, jaxpr=t_callee, transpose=back,
                              num_consts=len(t_consts), num_res=num_res)
    return [None] * k + list(outs)


def _batched_callee(callee: ClosedJaxpr, consts, dims, axis_size):
    """`callee` applied to (consts, *args) batched along `dims` (None: unbatched), every
    output batched along 0, as (jaxpr taking consts then args, its consts)."""
    avals = [a if d is None else ShapedArray((axis_size,) + a.shape, a.dtype)
             for a, d in zip(callee.in_avals, dims)]
    k = len(consts)

    def run(*xs):
        return vmap_flat(lambda *a: eval_jaxpr(callee.jaxpr, [], *xs[:k], *a), list(xs[k:]), dims,
                         axis_size)

    closed = trace_to_jaxpr(run, [aval_of(c) for c in consts] + avals, name="linear_call batched",
                            parent=ctx.trace)
    jaxpr, inner = convert_constvars(closed)
    return ClosedJaxpr(jaxpr, []), list(inner)


def _batch(vals, dims, *, axis_size, jaxpr, transpose, num_consts, num_res):
    k = num_consts + num_res
    head = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals[:k], dims[:k])]
    head_dims = [None if d is None else 0 for d in dims[:k]]
    # Linear inputs all get the batch axis, so the batched transpose maps batched
    # cotangents to batched cotangents (funcad sums a broadcast input's for it).
    lin = [moveaxis0(v, d, axis_size) if d is not None else
           broadcast_in_dim(v, (axis_size,) + aval_of(v).shape, tuple(range(1, aval_of(v).ndim + 1)))
           for v, d in zip(vals[k:], dims[k:])]
    callee, inner = _batched_callee(jaxpr, [], head_dims + [0] * len(lin), axis_size)
    consts = inner + head[:num_consts]

    def make_transpose():
        t_callee, t_consts, _ = transpose()
        n_ct = len(t_callee.in_avals) - len(t_consts) - num_res
        b_callee, b_inner = _batched_callee(t_callee, [], [None] * len(t_consts) + head_dims[num_consts:]
                                            + [0] * n_ct, axis_size)
        return b_callee, b_inner + list(t_consts), _Transpose(lambda: (callee, consts, forward))

    forward = _Transpose(make_transpose)
    outs = linear_call_p.bind(*consts, *head[num_consts:], *lin, jaxpr=callee, transpose=forward,
                              num_consts=len(consts), num_res=num_res)
    return outs, [0] * len(outs)


# the passes keep it whole: its transpose belongs to the call
define_call(linear_call_p, optimizable=False, jvp=_jvp, transpose=_transpose, batch=_batch)
