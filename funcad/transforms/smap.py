"""`smap`: JAX's single-axis shard_map, which maps `f` over one mesh axis of the context
mesh at a time, with vmap-style `in_axes`/`out_axes` instead of PartitionSpecs."""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError
from ..core.pytree import tree_leaves, tree_map
from ..core.sharding import AxisType, PartitionSpec, context_mesh
from .shard_map import shard_map

__all__ = ["smap"]


class _Infer:
    """JAX's `jax.sharding.Infer`: take the axes from the arguments' (Explicit) shardings."""

    def __repr__(self):
        return "Infer"


Infer = _Infer()


def _spec(axis_name, axis) -> PartitionSpec:
    # JAX's spec for an axis: the mapped axis at position `axis`, the earlier ones whole
    # (a negative axis gives no leading Nones, as in JAX: the mapped axis is the first).
    return PartitionSpec() if axis is None else PartitionSpec(*[None] * axis, axis_name)


def _axis_of(x, axis_name):
    """The dimension of x's type split over `axis_name` (None: none is)."""
    s = aval_of(x)._sharding
    for d, p in enumerate(() if s is None else s.spec):
        if p == axis_name or (isinstance(p, tuple) and axis_name in p):
            return d
    return None


def smap(f: Callable | None = None, /, *, in_axes: Any = Infer, out_axes: Any,
         axis_name) -> Callable:
    """Map `f` over mesh axis `axis_name` of the context mesh (`funcad.set_mesh`), as
    JAX's `jax.smap`: `in_axes` (an int, None, or a tuple with one entry per positional
    argument, nested as the arguments) says which array axis of each argument is split
    over the devices along `axis_name` (None: not split), `out_axes` where that axis
    goes in each output. Inside `f`, `axis_name` is a manual axis: the collectives of
    `funcad.lax` use it.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> mesh = funcad.make_mesh((1,), ("i",))
    >>> with funcad.set_mesh(mesh):
    ...     f = funcad.smap(lambda x: x * 2, in_axes=0, out_axes=0, axis_name="i")
    ...     print(f(np.arange(3.0)))
    [0. 2. 4.]
    """
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise FuncadTypeError(f"smap axis_name should be a `str` or a `Hashable`, but got {axis_name}")
    if in_axes is Infer:  # from the arguments' types: the dimension split over axis_name

        @functools.wraps(f)
        def inferred(*args):
            mesh = context_mesh()
            types = dict(zip(mesh.axis_names, mesh.axis_types)) if mesh is not None else {}
            if types.get(axis_name) is not AxisType.Explicit:
                raise FuncadTypeError(
                    f"smap without in_axes infers them from the arguments' types, which needs "
                    f"{axis_name!r} to be an Explicit axis of the context mesh ({mesh}); pass "
                    f"in_axes (an int, None, or a tuple per positional argument)")
            return smap(f, in_axes=tuple(tree_map(lambda x: _axis_of(x, axis_name), a) for a in args),
                        out_axes=out_axes, axis_name=axis_name)(*args)
        return inferred
    if in_axes is not None and not isinstance(in_axes, (int, tuple)):
        raise FuncadTypeError(
            "smap in_axes must be an int, None, jax.sharding.Infer, or a tuple of entries "
            f"corresponding to the positional arguments passed to the function, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_leaves(in_axes)):  # (None is no leaf)
        raise FuncadTypeError("smap in_axes must be an int, None, jax.sharding.Infer, or (nested) "
                              f"container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_leaves(out_axes)):
        raise FuncadTypeError("smap out_axes must be an int, None, or (nested) container with those "
                              f"types as leaves, but got {out_axes}.")
    to_spec = lambda a: _spec(axis_name, a)  # noqa: E731
    in_specs = tree_map(to_spec, in_axes, is_leaf=lambda x: x is None)
    out_specs = tree_map(to_spec, out_axes, is_leaf=lambda x: x is None)
    return shard_map(f, in_specs=in_specs, out_specs=out_specs, axis_names={axis_name})
