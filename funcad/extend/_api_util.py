"""Helpers for libraries that build transformations on wrapped functions
(JAX's `api_util` namespace): flattening pytrees in and out, splitting static
arguments, abstract values of arguments, donation masks.

>>> from funcad.extend import linear_util as lu
>>> from funcad.tree_util import tree_flatten
>>> args, in_tree = tree_flatten(((1.0, {"b": 2.0}), {}))
>>> flat_f, out_tree = flatten_fun(lu.wrap_init(lambda a, d: (a, d["b"]), debug_info=None), in_tree)
>>> flat_f.call_wrapped(*args), out_tree()
([1.0, 2.0], PyTreeDef((*, *)))
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from ..core.avals import ShapedArray, aval_of
from ..core.pytree import PyTreeDef, tree_flatten, tree_unflatten, treedef_children
from . import _linear_util as lu

__all__ = ["argnums_partial", "debug_info", "donation_vector", "flatten_axes", "flatten_fun",
           "flatten_fun_nokwargs", "rebase_donate_argnums", "safe_map", "shaped_abstractify"]


@lu.transformation_with_aux2
def _flatten_fun(f, store, in_tree: PyTreeDef, *args_flat):
    args, kwargs = tree_unflatten(in_tree, args_flat)
    out, out_tree = tree_flatten(f(*args, **kwargs))
    store.store(out_tree)
    return out


def flatten_fun(f: lu.WrappedFun, in_tree: PyTreeDef) -> tuple[lu.WrappedFun, Callable[[], PyTreeDef]]:
    """`f(*args, **kwargs)` as a function of the leaves of `(args, kwargs)` (structure
    `in_tree`) returning its output's leaves; the thunk gives the output structure."""
    return _flatten_fun(f, in_tree)


@lu.transformation_with_aux2
def _flatten_fun_nokwargs(f, store, in_tree: PyTreeDef, *args_flat):
    out, out_tree = tree_flatten(f(*tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out


def flatten_fun_nokwargs(f: lu.WrappedFun, in_tree: PyTreeDef) -> tuple[lu.WrappedFun, Callable[[], PyTreeDef]]:
    """As flatten_fun, where `in_tree` is the structure of the positional arguments only."""
    return _flatten_fun_nokwargs(f, in_tree)


def shaped_abstractify(x) -> ShapedArray:
    """The abstract value (shape, dtype, weak type) of an array, scalar or tracer, or of
    any object with a shape and a dtype (a ShapeDtypeStruct)."""
    if not hasattr(x, "aval") and hasattr(x, "shape") and hasattr(x, "dtype") \
            and not isinstance(x, (np.ndarray, np.generic)):
        return ShapedArray(x.shape, x.dtype, bool(getattr(x, "weak_type", False)))
    return aval_of(x)


def argnums_partial(f: lu.WrappedFun, dyn_argnums: int | Sequence[int], args: Sequence,
                    require_static_args_hashable: bool = True) -> tuple[lu.WrappedFun, tuple]:
    """`f` as a function of the arguments at `dyn_argnums` only, the others fixed to
    their values in `args`; returns it and the dynamic arguments."""
    dyn = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    dyn = tuple(sorted(d % len(args) for d in dyn))
    static = []
    for i, a in enumerate(args):
        if i in dyn:
            continue
        if require_static_args_hashable:
            try:
                hash(a)
            except TypeError:
                raise ValueError(f"Non-hashable static arguments are not supported: argument {i} "
                                 f"is {type(a).__name__}; make it hashable or dynamic") from None
        static.append((i, a))

    def partial(g, *dyn_args, **kw):
        full = list(args)
        for i, a in zip(dyn, dyn_args):
            full[i] = a
        return g(*full, **kw)
    return f.wrap(partial), tuple(args[i] for i in dyn)


def _arg_names(fun: Callable, args, kwargs, static_argnums, static_argnames) -> tuple | None:
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
    except (TypeError, ValueError):
        return None
    static = {i % max(len(args), 1) for i in static_argnums}
    names = []
    for i, (name, value) in enumerate(bound.arguments.items()):
        if i in static or name in static_argnames:
            continue
        leaves, _ = tree_flatten(value)
        names.extend([name] * len(leaves))
    return tuple(names)


def debug_info(traced_for: str, fun: Callable, args: Sequence[Any], kwargs: Mapping[str, Any], *,
               static_argnums: Sequence[int] = (), static_argnames: Sequence[str] = (),
               result_paths_thunk: Callable | None = None, sourceinfo: str | None = None,
               signature: inspect.Signature | None = None) -> lu.DebugInfo:
    """What `fun` is traced for, where it is defined and its flat argument names."""
    if sourceinfo is None:
        code = getattr(fun, "__code__", None)
        name = getattr(fun, "__name__", type(fun).__name__)
        sourceinfo = f"{name} at {code.co_filename}:{code.co_firstlineno}" if code else name
    names = _arg_names(fun, args, kwargs, static_argnums, static_argnames)
    return lu.DebugInfo(traced_for, sourceinfo, names, result_paths_thunk)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """`donate_argnums` renumbered among the arguments left once `static_argnums` are removed."""
    static = sorted(set(static_argnums))
    out = []
    for d in sorted(set(donate_argnums)):
        if d in static:
            raise ValueError(f"static arguments cannot be donated: argument {d} is in both "
                             "static_argnums and donate_argnums")
        out.append(d - sum(s < d for s in static))
    return tuple(out)


def donation_vector(donate_argnums, donate_argnames, in_tree: PyTreeDef, kws: bool = True) -> tuple[bool, ...]:
    """One flag per leaf of the arguments (structure `in_tree`, of `(args, kwargs)` if
    `kws`): whether that leaf is donated."""
    top = treedef_children(in_tree)
    args_tree, kw_tree = (top[0], top[1]) if kws else (in_tree, None)
    flags: list = []
    for i, sub in enumerate(treedef_children(args_tree)):
        flags += [i in donate_argnums] * sub.num_leaves
    if kw_tree is not None:
        keys = tree_unflatten(kw_tree, [0] * kw_tree.num_leaves)
        for k in sorted(keys):
            flags += [k in donate_argnames] * tree_flatten(keys[k])[1].num_leaves
    return tuple(flags)


def flatten_axes(name: str, treedef: PyTreeDef, axis_tree, *, kws: bool = False,
                 tupled_args: bool = False) -> list:
    """`axis_tree` (a prefix of the tree `treedef`, e.g. vmap's in_axes) broadcast to one
    entry per leaf of `treedef`."""
    if kws:
        axis_tree = (axis_tree, {})
    proxy = tree_unflatten(treedef, [object()] * treedef.num_leaves)
    out: list = []

    def expand(ax, sub):
        if ax is None or isinstance(ax, int):
            out.extend([ax] * tree_flatten(sub)[1].num_leaves)
            return
        subs = treedef_children(tree_flatten(sub)[1])
        ax_children = list(ax.values()) if isinstance(ax, dict) else list(ax)
        if isinstance(ax, dict) and isinstance(sub, dict):
            ax_children = [ax[k] for k in sorted(sub)]
        if len(ax_children) != len(subs):
            raise ValueError(f"{name} specification must be a tree prefix of the corresponding "
                             f"value, got specification {axis_tree} for value tree {treedef}")
        for a, s in zip(ax_children, subs):
            expand(a, tree_unflatten(s, [object()] * s.num_leaves))
    expand(axis_tree, proxy)
    return out


def safe_map(f: Callable, *args) -> list:
    """`list(map(f, *args))`, raising if the argument lists differ in length."""
    n = len(args[0])
    for a in args[1:]:
        if len(a) != n:
            raise ValueError(f"safe_map: argument lengths differ: {[len(x) for x in args]}")
    return list(map(f, *args))
