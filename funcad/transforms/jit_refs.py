"""jit of a function that takes or closes over mutable array references (funcad.Ref).

The refs' values go in as extra inputs and their final values come back as extra
outputs of one jitted function, `threaded_fun(values, *args, **kwargs)`, in which each
Ref argument is a placeholder (`_RefSlot`, part of the signature); the caller writes the
results back into the refs, so it sees the mutations, as with JAX's jit.
"""
from __future__ import annotations

import threading

from ..core import refs as _refs
from ..core.pytree import register_pytree_node, tree_flatten, tree_map, tree_unflatten
from ..core.refs import Ref

__all__: list = []


class _RefSlot:
    """Where a Ref argument was: static in the signature, by its index among the refs."""

    __slots__ = ("k",)

    def __init__(self, k: int):
        self.k = k


register_pytree_node(_RefSlot, lambda s: ((), s.k), lambda k, _: _RefSlot(k))


class _Current(threading.local):
    refs: list = []


_current = _Current()


def has_refs(args, kwargs) -> bool:
    return any(isinstance(x, Ref) for x in tree_flatten((args, kwargs))[0])


def check_no_refs(outs, name: str) -> None:
    """JAX's error for a jitted function that returns a ref."""
    for x in outs:
        if isinstance(x, Ref):
            raise ValueError(
                f"function {name} traced for jit returned a mutable array reference of type "
                f"{x.aval.str_short()}, but mutable array references cannot be returned. Return "
                "its value (ref[...] or funcad.ref.freeze(ref)) instead.")


def _arg_refs(jitted, args, kwargs):
    """The Ref arguments in order, and the arguments with each replaced by a slot."""
    leaves, tree = tree_flatten((args, kwargs))
    found, where, out = [], {}, []
    for i, x in enumerate(leaves):
        if isinstance(x, Ref):
            if id(x) in where:
                raise ValueError(
                    "only one reference to a mutable array may be passed as an argument to a "
                    f"function, but when tracing {jitted.name} for jit the mutable array reference "
                    f"of type {x.aval.str_short()} appeared at both argument leaves {where[id(x)]} "
                    f"and {i}. Pass it once and use it twice inside.")
            where[id(x)] = i
            out.append(_RefSlot(len(found)))
            found.append(x)
        else:
            out.append(x)
    slotted_args, slotted_kwargs = tree_unflatten(tree, out)
    return found, slotted_args, slotted_kwargs


def _inner(jitted):
    """The jitted threaded function of `jitted` (made once, same options)."""
    inner = jitted._ref_inner
    if inner is None:
        fun = jitted.fun

        def threaded_fun(values, *args, **kwargs):
            refs = _current.refs
            args, kwargs = tree_map(lambda x: refs[x.k] if isinstance(x, _RefSlot) else x, (args, kwargs),
                                    is_leaf=lambda x: isinstance(x, _RefSlot))
            with _refs.threaded(refs, values) as final:
                out = fun(*args, **kwargs)
                check_no_refs(tree_flatten(out)[0], jitted.name)
                new = final()
            return out, new

        threaded_fun.__name__ = jitted.name
        shift = lambda nums: tuple(i + 1 if i >= 0 else i for i in nums)  # noqa: E731
        ins = jitted.in_shardings
        if isinstance(ins, tuple):
            ins = (None, *ins)
        outs = jitted.out_shardings
        inner = type(jitted)(threaded_fun, shift(jitted.static_argnums), jitted.static_argnames,
                             shift(jitted.donate_argnums), jitted.backend, ins,
                             None if outs is None else (outs, None), jitted.donate_argnames,
                             jitted.keep_unused, jitted.device, jitted.inline,
                             jitted.compiler_options)
        inner._ref_inner = False  # lets ClosedRefs through to this router
        jitted._ref_inner = inner
    return inner


def call(jitted, args, kwargs):
    """Call `jitted` whose arguments hold refs or whose function closes over some."""
    while True:
        arg_refs, args2, kwargs2 = _arg_refs(jitted, args, kwargs)
        ids = {id(r) for r in arg_refs}
        refs = arg_refs + [r for r in jitted._closed_refs if id(r) not in ids]
        values = _refs.values(refs)
        prev, _current.refs = _current.refs, refs
        try:
            out, new = _inner(jitted)(values, *args2, **kwargs2)
        except _refs.ClosedRefs as e:  # the function touched refs it closes over: thread those too
            jitted._closed_refs = jitted._closed_refs + [r for r in e.refs if id(r) not in ids]
            continue
        finally:
            _current.refs = prev
        _refs.write_back(refs, new)
        return out
