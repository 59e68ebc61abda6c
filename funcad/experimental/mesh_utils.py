"""funcad.experimental.mesh_utils: device grids for `Mesh`, as `jax.experimental.mesh_utils`.

`create_device_mesh(shape)` arranges devices into an n-d array for
`funcad.sharding.Mesh`; `create_hybrid_device_mesh(ici, dcn)` tiles one such
grid per slice (or per process) into a larger one. funcad runs on CPU and GPU,
where JAX's order is the devices' own (CPU) or sorted by id (GPU); its
TPU-topology orders have no devices to apply to here, and on these platforms
`contiguous_submeshes` and `allow_split_physical_axes` change nothing, as in JAX.

>>> import funcad
>>> from funcad.experimental import mesh_utils
>>> mesh_utils.create_device_mesh((funcad.device_count(),)).shape == (funcad.device_count(),)
True
"""
from __future__ import annotations as _annotations

import math as _math
from typing import Any as _Any, Sequence as _Sequence

import numpy as _np

from ..core.errors import FuncadValueError as _FuncadValueError
from ..lowering.devices import devices as _all_devices

__all__ = ["create_device_mesh", "create_hybrid_device_mesh"]


def _axis_sizes(mesh_shape) -> tuple | None:
    try:
        return tuple(int(s) for s in mesh_shape)
    except (TypeError, ValueError):
        return None


def _object_array(devices: _Sequence[_Any]) -> _np.ndarray:
    out = _np.empty(len(devices), dtype=object)
    out[:] = list(devices)
    return out


def create_device_mesh(mesh_shape: _Sequence[int], devices: _Sequence[_Any] | None = None, *,
                       contiguous_submeshes: bool = False,
                       allow_split_physical_axes: bool = False) -> _np.ndarray:
    """An array of `mesh_shape` holding `devices` (default `funcad.devices()`), for
    `funcad.sharding.Mesh`.

    The order is JAX's for the platform: CPU devices as given, GPU devices by id.
    `mesh_shape` lists axes by increasing communication (e.g. replica, data, model).

    >>> import funcad
    >>> from funcad.sharding import Mesh
    >>> d = funcad.devices()
    >>> Mesh(create_device_mesh((1, len(d))), ("data", "model")).shape["model"] == len(d)
    True
    """
    del contiguous_submeshes, allow_split_physical_axes  # TPU topologies only (see module doc)
    if devices is None:
        devices = _all_devices()
    sizes = _axis_sizes(mesh_shape)
    if sizes is None:
        raise _FuncadValueError(f"`mesh_shape` passed to `create_device_mesh` should be a sequence of "
                         f"ints. Got {mesh_shape}")
    devices = list(devices)
    if _math.prod(sizes) != len(devices):
        raise _FuncadValueError(f"Number of devices {len(devices)} must equal the product of mesh_shape "
                         f"{sizes}")
    if devices and devices[-1].platform in ("gpu", "cuda", "rocm"):
        # XLA's global numbering follows the topology; the listing follows processes
        devices = sorted(devices, key=lambda d: d.id)
    return _object_array(devices).reshape(sizes)


def create_hybrid_device_mesh(mesh_shape: _Sequence[int], dcn_mesh_shape: _Sequence[int],
                              devices: _Sequence[_Any] | None = None, *,
                              process_is_granule: bool = False,
                              should_sort_granules_by_key: bool = True,
                              allow_split_physical_axes: bool = False) -> _np.ndarray:
    """A device array of shape `mesh_shape * dcn_mesh_shape` (elementwise) whose blocks
    of `mesh_shape` are the granules (slices, or with `process_is_granule=True`
    processes) laid out as `dcn_mesh_shape`; each block is `create_device_mesh` of
    its granule's devices. CPU and GPU devices have no `slice_index`, so there
    granules are processes.

    >>> import funcad
    >>> n = funcad.device_count()
    >>> create_hybrid_device_mesh((n, 1), (1, 1), process_is_granule=True).shape == (n, 1)
    True
    """
    if devices is None:
        devices = _all_devices()
    devices = list(devices)
    attr = "process_index" if process_is_granule else "slice_index"
    if not hasattr(devices[0], attr):
        raise _FuncadValueError(f"Device {devices[0]} does not have attribute {attr}. See "
                         f"`process_is_granule` option.")
    groups: dict = {}
    for d in devices:
        groups.setdefault(getattr(d, attr), []).append(d)
    keys = sorted(groups) if should_sort_granules_by_key else list(groups)
    granules = [groups[k] for k in keys]
    if _math.prod(dcn_mesh_shape) != len(granules):
        raise _FuncadValueError(f"Number of slices {len(granules)} must equal the product of "
                         f"dcn_mesh_shape {dcn_mesh_shape}")
    blocks = [create_device_mesh(mesh_shape, g, allow_split_physical_axes=allow_split_physical_axes)
              for g in granules]
    # np.block joins the nested list of blocks along the trailing axes, as JAX does
    # (a dcn shape of fewer axes than mesh_shape joins along the last ones)
    layout = _np.arange(len(granules)).reshape(tuple(dcn_mesh_shape)).tolist()
    return _np.block(_nest(layout, blocks))


def _nest(layout, blocks):
    if isinstance(layout, list):
        return [_nest(x, blocks) for x in layout]
    return blocks[layout]
