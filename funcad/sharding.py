"""funcad.sharding: how arrays are laid out over devices, as `jax.sharding`.

A `Mesh` names the axes of an n-d grid of devices; a `PartitionSpec` says,
per array dimension, which mesh axes split it; `NamedSharding(mesh, spec)`
joins them and `SingleDeviceSharding(device)` keeps an array on one device.
`funcad.device_put(x, sharding)` lays an array out, `funcad.jit(f,
in_shardings=..., out_shardings=...)` runs an SPMD program that XLA
partitions, and `funcad.lax.with_sharding_constraint` fixes a layout inside
one. `set_mesh(mesh)` sets a context mesh: where a Sharding is expected a
bare `PartitionSpec` then means `NamedSharding(mesh, spec)`, and `shard_map`
needs no `mesh=`. Every mesh axis is `AxisType.Auto` (XLA propagates the
shardings); JAX's Explicit axes (shardings in types) are not modelled.

>>> import funcad
>>> from funcad.sharding import NamedSharding, PartitionSpec as P
>>> mesh = funcad.make_mesh((funcad.device_count(),), ("data",))
>>> NamedSharding(mesh, P("data")).shard_shape((8 * funcad.device_count(), 3))
(8, 3)
"""

import math as _math
from typing import Sequence as _Sequence

import numpy as _np

from .core.errors import FuncadValueError as _FuncadValueError
from .core.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, Sharding,
                            SingleDeviceSharding, get_abstract_mesh, get_mesh, set_mesh)
from .core.pytree import tree_flatten as _tree_flatten, tree_unflatten as _tree_unflatten
from .core.sharding import resolve_spec as _resolve_spec, _axes
from .lowering.array import Array as _Array
from .lowering.devices import devices as _all_devices
from .numpy import asarray as _asarray

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "get_abstract_mesh", "get_mesh", "make_mesh",
           "make_single_device_sharding", "reshard", "set_mesh", "use_mesh"]

use_mesh = set_mesh  # the name of older JAX releases (0.6, 0.7)


def make_mesh(axis_sizes: _Sequence[int], axis_names: _Sequence[str], axis_types=None, *,
              devices=None) -> Mesh:
    """A mesh of `axis_sizes` over `devices` (default: all devices of the default backend).

    Its axes are `AxisType.Auto` (JAX 0.12 makes Explicit ones by default; funcad
    has no Explicit axes).

    >>> import funcad
    >>> funcad.make_mesh((funcad.device_count(),), ("data",)).axis_names
    ('data',)
    """
    axis_shapes = tuple(int(s) for s in axis_sizes)
    if devices is None:
        devices = _all_devices()
    devices = list(devices)
    n = _math.prod(axis_shapes)
    if n != len(devices):
        raise _FuncadValueError(f"make_mesh: the mesh shape {axis_shapes} needs {n} devices, but "
                               f"{len(devices)} are given; pick axis sizes whose product is "
                               f"{len(devices)}, or pass devices=...")
    return Mesh(_np.array(devices, dtype=object).reshape(axis_shapes), axis_names, axis_types)


def make_single_device_sharding(device) -> SingleDeviceSharding:
    """`SingleDeviceSharding(device)`.

    >>> import funcad
    >>> make_single_device_sharding(funcad.devices()[0]).num_devices
    1
    """
    return SingleDeviceSharding(device)


def reshard(xs, out_shardings):
    """xs (a pytree) resharded as `out_shardings` (a Sharding or PartitionSpec, or a tree
    of them), as `jax.sharding.reshard`.

    JAX's reshard changes the sharding in an array's *type*, which exists only for
    Explicit mesh axes; for Auto axes (all of funcad's) a spec may name no mesh axis,
    and then reshard leaves the layout to XLA: the values come back unchanged. To
    place values on Auto axes use `funcad.device_put` or `with_sharding_constraint`.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import PartitionSpec as P
    >>> with set_mesh(funcad.make_mesh((1,), ("x",), devices=funcad.devices()[:1])):
    ...     reshard(np.arange(2.0), P()).tolist()
    [0.0, 1.0]
    """
    leaves, tree = _tree_flatten(xs)
    is_leaf = lambda s: isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    if is_leaf(out_shardings):
        shardings = [out_shardings] * len(leaves)
    else:
        shardings, s_tree = _tree_flatten(out_shardings, is_leaf=is_leaf)
        if s_tree != tree:
            raise _FuncadValueError(f"reshard: out_shardings {out_shardings!r} does not match the "
                                    f"structure of the values; pass one sharding or a matching tree")
    out = []
    for x, s in zip(leaves, shardings):
        s = _resolve_spec(s, "reshard")
        if isinstance(s, NamedSharding):
            named = [a for p in s.spec for a in _axes(p)]
            if named:
                raise _FuncadValueError(
                    f"PartitionSpec passed to reshard cannot contain axis names that are of type "
                    f"Auto or Manual. Got PartitionSpec: {s.spec} with axis name: {named[0]} of "
                    f"type: AxisType.Auto. Lay values out on Auto axes with funcad.device_put or "
                    f"funcad.lax.with_sharding_constraint")
        elif not isinstance(s, Sharding):
            raise _FuncadValueError(f"reshard expects Shardings or PartitionSpecs, got {s!r}")
        out.append(x if isinstance(x, _Array) else _asarray(x))
    return _tree_unflatten(tree, out)
