"""closure_convert and custom_gradient, as in JAX.

closure_convert traces a function once and hoists the values of outer
transformations it closes over into explicit arguments, so that a custom
derivative rule (custom_jvp, custom_vjp, custom_root, custom_linear_solve) can see
them. custom_gradient is TensorFlow's form of a custom VJP: the function returns its
value and its gradient function.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..core.avals import ShapedArray, aval_of
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.staging import lift_traced_consts, trace_to_jaxpr
from ..core.trace import ctx, eval_jaxpr
from .custom import custom_vjp
from ..core.errors import FuncadTypeError

__all__ = ["closure_convert", "custom_gradient"]


def _avals(leaves):
    out = []
    for x in leaves:
        a = aval_of(x)
        out.append(ShapedArray(a.shape, a.dtype, a.weak_type))
    return out


def closure_convert(fun: Callable, *example_args) -> tuple[Callable, list[Any]]:
    """Closure conversion: `fun` traced at the types of `example_args`, with every
    closed-over value of an outer transformation (a tracer) hoisted out. Returns
    `(converted, consts)`; `converted(*args, *consts)` equals `fun(*args)`. Outside any
    transformation `consts` is empty.

    >>> import funcad, funcad.numpy as fnp
    >>> def outer(w):
    ...     f = lambda x: fnp.sin(w * x)
    ...     g, consts = closure_convert(f, 1.0)
    ...     return g(2.0, *consts)
    >>> round(float(funcad.grad(outer)(0.5)), 6)  # 2 cos(1.0)
    1.080605
    """
    leaves, in_tree = tree_flatten(example_args)
    store = []

    def flat(*xs):
        out_leaves, out_tree = tree_flatten(fun(*tree_unflatten(in_tree, list(xs))))
        store.append(out_tree)
        return out_leaves

    closed = trace_to_jaxpr(flat, _avals(leaves), name=getattr(fun, "__name__", "closure_convert"),
                            parent=ctx.trace)
    lifted, consts = lift_traced_consts(closed)
    out_tree, n_in, n_consts = store[0], len(leaves), len(consts)

    @functools.wraps(fun)
    def converted(*args):
        call_args, hoisted = args[:len(args) - n_consts], args[len(args) - n_consts:]
        arg_leaves, tree = tree_flatten(call_args)
        if tree != in_tree or len(arg_leaves) != n_in:
            raise FuncadTypeError(f"closure-converted {getattr(fun, '__name__', 'function')} takes arguments "
                                  f"structured as {in_tree} followed by {n_consts} hoisted constants")
        return tree_unflatten(out_tree, eval_jaxpr(lifted.jaxpr, lifted.consts, *hoisted, *arg_leaves))
    return converted, list(consts)


def custom_gradient(fun: Callable | None = None, *, with_logs: bool = False, remat: bool = False,
                    with_accums=None):
    """Define a function and its gradient together (TensorFlow's tf.custom_gradient):
    `fun(*args)` returns `(value, vjp)`, where `vjp(g)` returns one cotangent per
    argument. The vjp may close over the forward pass's intermediates; they are
    recomputed in the backward pass.

    >>> import funcad
    >>> @custom_gradient
    ... def f(x):
    ...     return x ** 2, lambda g: (g * x,)
    >>> float(f(3.0)), float(funcad.grad(f)(3.0))
    (9.0, 3.0)

    JAX's with_logs=True (backward-pass logs), remat=True (a rematerialisation rule)
    and with_accums (gradient accumulators) need custom_vjp features funcad lacks
    (defvjp_with_logs, defremat, defvjp_with_accums): they raise.
    """
    for name, value, missing in (("with_logs", with_logs, "custom_vjp.defvjp_with_logs"),
                                 ("remat", remat, "custom_vjp.defremat"),
                                 ("with_accums", with_accums is not None, "custom_vjp.defvjp_with_accums")):
        if value:
            raise NotImplementedError(f"custom_gradient: {name} needs JAX's {missing}, which funcad "
                                      f"lacks; leave {name} at its default")
    if fun is None:
        return custom_gradient

    @custom_vjp
    def wrapped(*args):
        return fun(*args)[0]

    def fwd(*args):
        return fun(*args)[0], args

    def bwd(args, g):
        cts = fun(*args)[1](g)
        return tuple(cts) if isinstance(cts, (tuple, list)) else (cts,)

    wrapped.defvjp(fwd, bwd)
    return functools.wraps(fun)(lambda *args: wrapped(*args))
