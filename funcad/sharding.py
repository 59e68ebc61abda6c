"""funcad.sharding: how arrays are laid out over devices, as `jax.sharding`.

A `Mesh` names the axes of an n-d grid of devices; a `PartitionSpec` says,
per array dimension, which mesh axes split it; `NamedSharding(mesh, spec)`
joins them and `SingleDeviceSharding(device)` keeps an array on one device.
`funcad.device_put(x, sharding)` lays an array out, `funcad.jit(f,
in_shardings=..., out_shardings=...)` runs an SPMD program that XLA
partitions, and `funcad.lax.with_sharding_constraint` fixes a layout inside
one.

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
from .core.sharding import Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding

__all__ = ["Mesh", "NamedSharding", "PartitionSpec", "Sharding", "SingleDeviceSharding",
           "make_mesh"]


def make_mesh(axis_shapes: _Sequence[int], axis_names: _Sequence[str], devices=None) -> Mesh:
    """A mesh of `axis_shapes` over `devices` (default: all devices of the default backend).

    >>> import funcad
    >>> funcad.make_mesh((funcad.device_count(),), ("data",)).axis_names
    ('data',)
    """
    axis_shapes = tuple(int(s) for s in axis_shapes)
    if devices is None:
        from ._helpers import devices as all_devices
        devices = all_devices()
    devices = list(devices)
    n = _math.prod(axis_shapes)
    if n != len(devices):
        raise _FuncadValueError(f"make_mesh: the mesh shape {axis_shapes} needs {n} devices, but "
                               f"{len(devices)} are given; pick axis sizes whose product is "
                               f"{len(devices)}, or pass devices=...")
    return Mesh(_np.array(devices, dtype=object).reshape(axis_shapes), axis_names)
