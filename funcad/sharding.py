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

from .core.sharding import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec, Sharding,
                            SingleDeviceSharding, UnreducedKind, get_abstract_mesh, get_mesh, set_mesh,
                            use_abstract_mesh)
from .arrays.sharding import auto_axes, explicit_axes, make_mesh, make_single_device_sharding, reshard

__all__ = ["AbstractMesh", "AxisType", "Mesh", "NamedSharding", "PartitionSpec", "Sharding",
           "SingleDeviceSharding", "auto_axes", "explicit_axes", "get_abstract_mesh", "get_mesh",
           "make_mesh", "make_single_device_sharding", "reshard", "set_mesh", "UnreducedKind",
           "use_abstract_mesh", "use_mesh"]

use_mesh = set_mesh  # the name of older JAX releases (0.6, 0.7)
