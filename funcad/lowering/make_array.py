"""Global arrays from per-device or per-process pieces, as JAX's `make_array_from_*`.

`make_array_from_callback(shape, sharding, cb)` asks `cb` for each device's
block (given its index, a tuple of slices); `make_array_from_single_device_arrays`
joins single-device Arrays that already hold the blocks;
`make_array_from_process_local_data` joins what each process holds of the
global array (over one process: all of it).
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..core.avals import ShapedArray, aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.sharding import Sharding, SingleDeviceSharding, resolve_spec
from .spmd import _addressable
from . import spmd, xla
from .array import Array

__all__ = ["make_array_from_callback", "make_array_from_process_local_data",
           "make_array_from_single_device_arrays"]


def _sharding(s, what):
    s = resolve_spec(s, what)
    if not isinstance(s, Sharding):
        raise FuncadTypeError(f"{what} expects a funcad.sharding Sharding, got {s!r}")
    return s


def _local_devices(sharding) -> list:
    return [d for d in sharding._device_assignment if _addressable(d)]


def _build(shape, sharding, pieces: dict, dtype):
    """An Array of `shape` laid out as `sharding` from device -> host block."""
    aval = ShapedArray(tuple(shape), np.dtype(dtype))
    devices = _local_devices(sharding)
    bufs = [xla.device_put(np.asarray(pieces[d], dtype, order="C"), d) for d in devices]
    if isinstance(sharding, SingleDeviceSharding):
        return Array(bufs[0], aval, sharding._device)
    return spmd.wrap(spmd.assemble(aval.shape, sharding, bufs), aval, sharding)


def _check_block(what, d, block, expected):
    if tuple(np.shape(block)) != tuple(expected):
        raise FuncadValueError(f"{what}: the block for device {d} has shape {np.shape(block)}, "
                               f"but the sharding gives that device a block of shape {expected}")


def make_array_from_callback(shape: Sequence[int], sharding, data_callback: Callable,
                             dtype=None):
    """The array of `shape` laid out as `sharding`, each device's block being
    `data_callback(index)` (index: that block's tuple of slices of the global array).

    >>> import funcad, numpy as np
    >>> from funcad.sharding import SingleDeviceSharding
    >>> data = np.arange(6.0).reshape(2, 3)
    >>> make_array_from_callback((2, 3), SingleDeviceSharding(funcad.devices()[0]),
    ...                          lambda idx: data[idx]).sum()
    Array(15., dtype=float64)
    """
    what = "make_array_from_callback"
    sharding = _sharding(sharding, what)
    shape = tuple(int(s) for s in shape)
    index = sharding.devices_indices_map(shape)
    block_shape = sharding.shard_shape(shape)
    pieces = {}
    for d in _local_devices(sharding):
        block = np.asarray(data_callback(index[d]))
        _check_block(what, d, block, block_shape)
        pieces[d] = block
    if dtype is None:
        dtype = next(iter(pieces.values())).dtype
    return _build(shape, sharding, pieces, dtype)


def make_array_from_single_device_arrays(shape: Sequence[int], sharding, arrays: Sequence, *,
                                         dtype=None):
    """The array of `shape` laid out as `sharding` from one single-device Array per
    (addressable) device of the sharding, each holding that device's block.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import SingleDeviceSharding
    >>> d = funcad.devices()[0]
    >>> make_array_from_single_device_arrays((2,), SingleDeviceSharding(d),
    ...                                      [funcad.device_put(np.ones(2), d)])
    Array([1., 1.], dtype=float64)
    """
    what = "make_array_from_single_device_arrays"
    sharding = _sharding(sharding, what)
    shape = tuple(int(s) for s in shape)
    devices = _local_devices(sharding)
    arrays = list(arrays)
    if len(arrays) != len(devices):
        raise FuncadValueError(f"{what}: the sharding has {len(devices)} addressable devices, but "
                               f"{len(arrays)} arrays were given; pass one per device")
    by_device = {}
    for a in arrays:
        devs = getattr(a, "devices", None)
        devs = devs() if callable(devs) else None
        if not devs or len(devs) != 1:
            raise FuncadTypeError(f"{what} expects single-device funcad Arrays (from "
                                  f"funcad.device_put(x, device)), got {type(a).__name__}")
        by_device[next(iter(devs))] = a
    missing = [d for d in devices if d not in by_device]
    if missing:
        raise FuncadValueError(f"{what}: no array was given on device {missing[0]} of the sharding; "
                               f"pass one array on each of its devices")
    block_shape = sharding.shard_shape(shape)
    for d in devices:
        _check_block(what, d, by_device[d], block_shape)
    dtype = np.dtype(dtype) if dtype is not None else aval_of(arrays[0]).dtype
    return _build(shape, sharding, {d: np.asarray(by_device[d]) for d in devices}, dtype)


def make_array_from_process_local_data(sharding, local_data, global_shape=None):
    """The global array laid out as `sharding` whose blocks on this process's devices
    come from `local_data` (this process's part of the array; with one process, all
    of it). `global_shape` defaults to what `local_data` implies.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import SingleDeviceSharding
    >>> make_array_from_process_local_data(SingleDeviceSharding(funcad.devices()[0]),
    ...                                    np.arange(3.0))
    Array([0., 1., 2.], dtype=float64)
    """
    what = "make_array_from_process_local_data"
    sharding = _sharding(sharding, what)
    local_data = np.asarray(local_data)
    ndim = local_data.ndim
    devices = _local_devices(sharding)
    tiles = sharding._tiles(ndim)
    coords = {d: c for d, c in sharding._tile_coords(ndim)}
    # this process's devices hold k_i of the t_i blocks along dimension i
    held = [sorted({coords[d][i] for d in devices}) for i in range(ndim)]
    if global_shape is None:
        global_shape = tuple(s * t // len(h) for s, t, h in zip(local_data.shape, tiles, held))
    global_shape = tuple(int(s) for s in global_shape)
    if len(global_shape) != ndim:
        raise FuncadValueError(f"{what}: global_shape {global_shape} has another rank than the "
                               f"local data {local_data.shape}")
    index = sharding.devices_indices_map(global_shape)
    block = sharding.shard_shape(global_shape)
    for i in range(ndim):
        if local_data.shape[i] != block[i] * len(held[i]):
            raise FuncadValueError(
                f"{what}: this process's devices hold {len(held[i])} blocks of size {block[i]} "
                f"along dimension {i} of the global shape {global_shape}, so the local data "
                f"must have size {block[i] * len(held[i])} there, not {local_data.shape[i]}")
    pieces = {}
    for d in devices:
        local_index = []
        for i, sl in enumerate(index[d]):
            if tiles[i] == 1:
                local_index.append(slice(None))
            else:
                k = held[i].index(coords[d][i])
                local_index.append(slice(k * block[i], (k + 1) * block[i]))
        pieces[d] = local_data[tuple(local_index)]
    return _build(global_shape, sharding, pieces, local_data.dtype)
