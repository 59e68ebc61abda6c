"""pmap: the older parallel map, a thin layer over jit and shard_map (as JAX's now is).

`pmap(f, axis_name)(x)` runs `f` once per device on the slices of x along the
mapped axis: a 1-d mesh of that many devices, the mapped axis split over it
(`shard_map(..., check_vma=False)`, JAX's convention for pmap's collectives
and derivatives), the whole compiled with `jit`.
"""
from __future__ import annotations

import functools
from typing import Any, Callable, Sequence

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.sharding import Mesh, PartitionSpec
from ..primitives.structural import expand_dims, moveaxis, squeeze
from .jit import jit
from .shard_map import shard_map
from .vmap import _expand_axes
from ..lowering import xla
from ..primitives.structural import slice as slice_

__all__ = ["pmap"]


def _ints(x) -> tuple:
    return (int(x),) if isinstance(x, int) else tuple(int(i) for i in x)


def pmap(fun: Callable, axis_name=None, *, in_axes: Any = 0, out_axes: Any = 0,
         static_broadcasted_argnums=(), devices: Sequence | None = None,
         backend: str | None = None, axis_size: int | None = None, donate_argnums=()) -> Callable:
    """Map `fun` over the leading axis (or `in_axes`) of its arguments, one device per entry.

    Collectives over `axis_name` act across the devices; `devices` picks them (default:
    the first ones of `backend`), and the mapped size must not exceed their number.
    `static_broadcasted_argnums` are passed as Python values to every device; keyword
    arguments are mapped over their leading axis (JAX's rule: `in_axes` covers only the
    positional ones);
    `donate_argnums` lets XLA reuse those arguments' buffers.

    >>> import funcad, numpy as np
    >>> funcad.pmap(lambda x: funcad.lax.psum(x, "i"), axis_name="i")(np.ones(1))
    Array([1.], dtype=float64)
    """
    if not callable(fun):
        raise FuncadTypeError(f"pmap requires a callable, got {fun!r}")
    static = _ints(static_broadcasted_argnums)
    donate = _ints(donate_argnums)
    name = axis_name if axis_name is not None else "_pmap_axis"
    if isinstance(in_axes, list):
        in_axes = tuple(in_axes)

    @functools.wraps(fun)
    def mapped(*args, **kwargs):
        n_args = len(args)
        static_pos = {i % n_args for i in static if -n_args <= i < n_args}
        dyn = tuple(a for i, a in enumerate(args) if i not in static_pos)
        if isinstance(in_axes, tuple):
            if len(in_axes) != n_args:
                raise FuncadTypeError(f"pmap: in_axes has {len(in_axes)} entries but the function "
                                      f"was called with {n_args} positional arguments")
            dyn_axes = tuple(a for i, a in enumerate(in_axes) if i not in static_pos)
        else:
            dyn_axes = in_axes
        flat, tree = tree_flatten((dyn, kwargs))
        axes = _expand_axes((dyn_axes, 0), (dyn, kwargs), "in_axes")
        for x, d in zip(flat, axes):
            nd = aval_of(x).ndim
            if d is not None and not -nd <= d < nd:
                raise FuncadValueError(
                    f"pmap was requested to map its argument along axis {d}, which implies that its "
                    f"rank should be at least {d + 1 if d >= 0 else -d}, but is only {nd} (its shape "
                    f"is {aval_of(x).shape}); pass it with in_axes None or as a static argument "
                    f"(static_broadcasted_argnums)")
        axes = [None if d is None else d % aval_of(x).ndim for x, d in zip(flat, axes)]
        sizes = {aval_of(x).shape[d] for x, d in zip(flat, axes) if d is not None}
        if len(sizes) > 1:
            raise FuncadValueError(f"pmap got inconsistent sizes for the mapped axes: {sorted(sizes)}")
        n = sizes.pop() if sizes else axis_size
        if n is None:
            raise FuncadTypeError("pmap needs at least one mapped argument or axis_size=")
        if axis_size is not None and n != axis_size:
            raise FuncadValueError(f"pmap: axis_size={axis_size} but the mapped axes have size {n}")
        devs = _devices(devices, backend, n)
        mesh = Mesh(np.array(devs, dtype=object), (name,))
        key = (tree, tuple(axes), tuple(args[i] for i in sorted(static_pos)), mesh)
        run = _compiled(fun, key, args, static_pos, out_axes, name, mesh, backend, donate)
        return run(*flat)

    return mapped


def _devices(devices, backend, n):
    devs = list(devices) if devices is not None else list(xla.get_client(backend or xla.default_backend()).devices())
    if devices is not None and len(devs) != n:
        raise FuncadValueError(f"pmap: the mapped axis has size {n}, but {len(devs)} devices were "
                               f"given; pass exactly one device per entry")
    if n > len(devs):
        raise FuncadValueError(f"pmap: the mapped axis has size {n}, more than the {len(devs)} "
                               f"available devices; map over at most {len(devs)} (on CPU, start "
                               f"with XLA_FLAGS=--xla_force_host_platform_device_count={n})")
    return devs[:n]


_cache: dict = {}


def _compiled(fun, key, args, static_pos, out_axes, name, mesh, backend, donate):
    """One jitted program per (function, argument structure, axes, statics, devices)."""
    try:
        hit = _cache.get((fun, out_axes if _hashable(out_axes) else id(out_axes), key))
    except TypeError:
        hit = None
    if hit is not None:
        return hit
    tree, axes, _, _ = key
    n = mesh.size
    # Only the static arguments are kept (the compiled function is cached): the others
    # may be tracers of the caller's trace.
    statics, n_args = {i: args[i] for i in static_pos}, len(args)
    spec_in = [PartitionSpec() if d is None else PartitionSpec(name) for d in axes]
    out_dims: list = []

    def body(*xs):
        xs = [x if d is None else squeeze(x, (0,)) for x, d in zip(xs, axes)]
        dyn, kwargs = tree_unflatten(tree, xs)
        dyn = iter(dyn)
        full = [statics[i] if i in statics else next(dyn) for i in range(n_args)]
        outs = fun(*full, **kwargs)
        leaves, out_tree = tree_flatten(outs)
        dims = _expand_axes(out_axes, outs, "out_axes")
        out_dims[:] = [out_tree, dims]
        # every output gets the device axis; an unmapped one (out_axes None) is
        # the same on every device and is read from the first
        return [expand_dims(x, (0,)) for x in leaves]

    def outer(*flat):
        xs = [x if d is None else moveaxis(x, d, 0) for x, d in zip(flat, axes)]
        outs = shard_map(body, mesh=mesh, in_specs=tuple(spec_in), out_specs=PartitionSpec(name),
                         check_vma=False)(*xs)
        out_tree, dims = out_dims
        res = [squeeze(_first(o), (0,)) if d is None else moveaxis(o, 0, d % aval_of(o).ndim)
               for o, d in zip(outs, dims)]
        return tree_unflatten(out_tree, res)

    flat_donate = ()
    if donate:
        flags = []
        dyn_i = [i for i in range(len(args)) if i not in static_pos]
        for i in dyn_i:
            flags += [i in donate] * len(tree_flatten(args[i])[0])
        flat_donate = tuple(k for k, f in enumerate(flags) if f)
    run = jit(outer, donate_argnums=flat_donate, backend=backend)
    try:
        _cache[(fun, out_axes if _hashable(out_axes) else id(out_axes), key)] = run
    except TypeError:
        pass
    return run


def _hashable(x) -> bool:
    try:
        hash(x)
        return True
    except TypeError:
        return False


def _first(x):
    shape = aval_of(x).shape
    return slice_(x, (0,) * len(shape), (1,) + tuple(shape[1:]))
