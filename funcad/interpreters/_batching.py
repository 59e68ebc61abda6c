"""Batching (vmap) rules of primitives (JAX's `interpreters.batching`).

A batching rule is `(args, dims, **params) -> (out, out_dim)`, where `dims[i]` is
the batch axis of `args[i]` or `not_mapped`.

>>> import numpy as np, funcad
>>> from funcad.extend.core import Primitive
>>> from funcad.interpreters import batching
>>> double_p = Primitive("double")
>>> _ = double_p.def_impl(lambda x: 2 * x)
>>> _ = double_p.def_abstract_eval(lambda x: x)
>>> batching.defvectorized(double_p)
>>> funcad.vmap(double_p.bind)(np.arange(3.0)).tolist()
[0.0, 2.0, 4.0]
"""
from __future__ import annotations

from typing import Callable

import numpy as np

from ..core.trace import batch_rules
from ..lax import broadcast_in_dim as _broadcast_in_dim
from ..numpy import moveaxis as _moveaxis
from ..transforms.vmap import _naming as _vmap_naming
from ._tables import RuleTable

__all__ = ["axis_primitive_batchers", "bdim_at_front", "broadcast", "defbroadcasting", "defvectorized", "moveaxis",
           "not_mapped", "primitive_batchers"]

not_mapped = None  # the batch dimension of an unbatched value


def _batcher_to_funcad(prim, rule: Callable) -> Callable:
    def funcad_rule(args, dims, axis_size=None, **params):
        return rule(list(args), list(dims), **params)
    return funcad_rule


def _batcher_to_jax(prim, rule: Callable) -> Callable:
    def jax_rule(args, dims, **params):
        size = next(np.shape(a)[d] for a, d in zip(args, dims) if d is not None)
        return rule(list(args), list(dims), axis_size=size, **params)
    return jax_rule


primitive_batchers = RuleTable(batch_rules, _batcher_to_funcad, _batcher_to_jax)


def _axis_batcher_to_funcad(prim, rule: Callable) -> Callable:
    def funcad_rule(args, dims, axis_size=None, **params):
        return rule(axis_size, _vmap_naming.axis_name, None, list(args), list(dims), **params)
    return funcad_rule


def _axis_batcher_to_jax(prim, rule: Callable) -> Callable:
    def jax_rule(axis_size, axis_name, trace_type, args, dims, **params):
        return rule(list(args), list(dims), axis_size=axis_size, **params)
    return jax_rule


# rules that also take the vmap's axis size and name:
# `rule(axis_size, axis_name, trace_type, args, dims, **params)` (trace_type is None)
axis_primitive_batchers = RuleTable(batch_rules, _axis_batcher_to_funcad, _axis_batcher_to_jax)


def moveaxis(x, src: int, dst: int):
    """`x` with axis `src` moved to `dst`."""
    return x if src == dst else _moveaxis(x, src, dst)


def broadcast(x, sz: int, axis: int):
    """`x` with a new axis of length `sz` inserted at `axis`."""
    shape = list(np.shape(x))
    axis = axis % (len(shape) + 1)
    dims = [d for d in range(len(shape) + 1) if d != axis]
    return _broadcast_in_dim(x, tuple(shape[:axis] + [sz] + shape[axis:]), tuple(dims))


def bdim_at_front(x, bdim: int | None, size: int):
    """`x` with its batch axis first; an unbatched `x` is broadcast along a new one."""
    return broadcast(x, size, 0) if bdim is None else moveaxis(x, bdim, 0)


def _size(args, dims) -> int:
    return next(np.shape(a)[d] for a, d in zip(args, dims) if d is not None)


def defvectorized(prim) -> None:
    """`prim` acts on each element independently (one operand): the batch axis
    passes through it."""
    def rule(args, dims, **params):
        mapped = {d for d in dims if d is not None}
        if len(mapped) == 1 and None not in dims:
            out, d = prim.bind(*args, **params), mapped.pop()
        else:
            size = _size(args, dims)
            out, d = prim.bind(*[bdim_at_front(a, d, size) for a, d in zip(args, dims)], **params), 0
        return out, ([d] * len(out) if prim.multiple_results else d)
    primitive_batchers[prim] = rule


def defbroadcasting(prim) -> None:
    """`prim` is elementwise over operands of one shape: batch axes are moved to the
    front and unbatched operands broadcast along it."""
    def rule(args, dims, **params):
        shapes = {np.shape(a) for a in args}
        if len(set(dims)) == 1 and len(shapes) == 1:
            out = prim.bind(*args, **params)
            return out, ([dims[0]] * len(out) if prim.multiple_results else dims[0])
        size = _size(args, dims)
        out = prim.bind(*[bdim_at_front(a, d, size) for a, d in zip(args, dims)], **params)
        return out, ([0] * len(out) if prim.multiple_results else 0)
    primitive_batchers[prim] = rule
