"""Device plumbing for programs over several devices (SPMD), through jaxlib.

funcad lowers an SPMD program itself (StableHLO annotated for Shardy or GSPMD,
see `partitioning.py` and `stablehlo.lower_jaxpr(partitioning=...)`); this module only
moves data and compiles: it lays a NumPy array out over devices, compiles a
module for a device assignment with `num_partitions` partitions, and turns
the per-device results back into arrays. jaxlib's multi-device array needs a
sharding object its C++ side knows; funcad's shardings are translated to
jax's public `jax.sharding.NamedSharding` for that, and nothing else of jax's
is used.

>>> import funcad, numpy as np
>>> from funcad.sharding import SingleDeviceSharding
>>> buf = put_host(np.arange(3.0), SingleDeviceSharding(funcad.devices()[0]))
>>> np.asarray(buf)
array([0., 1., 2.])
"""
from __future__ import annotations

import functools
from typing import Sequence

import numpy as np

from . import xla
from .array import Array, ShardedArray, is_device_array, shards  # noqa: F401  (spmd.shards)
from ..core import monitoring
from ..core.avals import aval_of, float0
from ..core.typed_sharding import type_sharding
from ..core.sharding import Mesh, NamedSharding, PartitionSpec, Sharding, SingleDeviceSharding
from ..core.trace import abstract_eval_rules
from ..core.typed_sharding import concrete, with_shardings


@functools.lru_cache(maxsize=1024)
def jax_sharding(sharding: Sharding):
    """The jaxlib-side sharding object of a funcad sharding (for arrays and results)."""
    xla._load()
    if isinstance(sharding, SingleDeviceSharding):
        return xla.sharding(sharding._device)
    js = xla._jax.sharding
    return js.NamedSharding(js.Mesh(sharding.mesh.devices, sharding.mesh.axis_names),
                            js.PartitionSpec(*sharding.spec))


def put_host(x: np.ndarray, sharding: Sharding):
    """A jaxlib array holding NumPy `x` laid out as `sharding` (host memory is copied)."""
    x = np.asarray(x)
    if isinstance(sharding, SingleDeviceSharding):
        return xla.device_put(x, sharding._device)
    index = sharding.devices_indices_map(x.shape)
    # over several processes each puts only the pieces of its own devices
    devices = [d for d in sharding._device_assignment if _addressable(d)]
    pieces = [np.array(x[index[d]], order="C") for d in devices]  # keeps 0-d arrays 0-d
    bufs = [xla.device_put(p, d) for p, d in zip(pieces, devices)]
    return assemble(x.shape, sharding, bufs)


def _addressable(device) -> bool:
    return device.process_index == device.client.process_index()


def local_backend(sharding) -> str:
    return "cpu" if next(iter(sharding.device_set)).platform == "cpu" else "gpu"


def assemble(shape, sharding: Sharding, bufs: list):
    """One jaxlib array of `shape` from per-device buffers (in the sharding's device order)."""
    return xla._jax.make_array_from_single_device_arrays(tuple(shape), jax_sharding(sharding), bufs)


def compile_spmd(text: str, assignment: Sequence, backend: str, choose_outputs: Sequence[bool],
                 cache: bool = True, shardy: bool = False, host_callbacks: Sequence = ()):
    """Compile a module of `len(assignment)` partitions, partition i on assignment[i];
    XLA picks the layout of the outputs marked in `choose_outputs`. `cache=False`
    compiles afresh (a program whose text names Python functions by address).
    `shardy`: the text is annotated in Shardy's dialect (else GSPMD's), and
    partitioned by Shardy. `host_callbacks`: the Python functions its host-callback
    custom calls name by index (such a program is compiled afresh)."""
    cache = cache and not host_callbacks
    key = (text, tuple(d.id for d in assignment), assignment[0].platform, tuple(choose_outputs),
           xla.compiler_overrides, shardy)
    exe = xla._exe_cache.get(key) if cache else None
    if exe is not None:
        return exe
    client = xla.get_client(backend)
    options = xla._compile_options(assignment[0], client)
    n = len(assignment)
    options.num_partitions = options.executable_build_options.num_partitions = n
    da = xla._xc.DeviceAssignment.create(np.array([[d.id for d in assignment]]))
    options.device_assignment = options.executable_build_options.device_assignment = da
    build = options.executable_build_options
    build.use_spmd_partitioning = n > 1
    if n > 1 and any(choose_outputs):
        build.allow_spmd_sharding_propagation_to_output = [bool(c) for c in choose_outputs]
    if hasattr(build, "use_shardy_partitioner"):
        build.use_shardy_partitioner = shardy
    with monitoring.timed(monitoring.BACKEND_COMPILE_EVENT):
        if host_callbacks:
            exe = xla.compile_with_callbacks(client, text, assignment, options, list(host_callbacks))
        elif hasattr(client, "compile_and_load"):
            exe = client.compile_and_load(text, list(assignment), options)
        else:
            exe = client.compile(text, options)
    if cache:
        xla._exe_cache[key] = exe
    return exe


def inspect_key(fn) -> str:
    """The backend config of an `InspectSharding` custom call that makes XLA's SPMD
    partitioner call `fn(HloSharding)` (jaxlib's encoding of the function's address,
    escaped for a StableHLO string; the caller keeps `fn` alive until compiled)."""
    xla._load()
    return "".join(f"\\{b:02X}" for b in xla._xc.encode_inspect_sharding_callback(fn))


def result_handlers(out_avals, shardings) -> list | None:
    """C++ handlers making arrays of the given shardings from raw outputs, or None."""
    if not shardings:
        return None
    # the transfer paths are probed on a device of this process (over several
    # processes the others' devices cannot be written to)
    local = [d for d in shardings[0].device_set if _addressable(d)]
    make = xla._paths(local[0] if local else xla.get_device(local_backend(shardings[0]))).handler
    if make is None:
        return None
    return [make(xla._jax_aval(tuple(a.shape), np.dtype(a.dtype)), jax_sharding(s))
            for a, s in zip(out_avals, shardings)]


def runner(exe, out_avals, shardings, effects: bool = False):
    """bufs -> outputs as jaxlib arrays laid out as `shardings` (`effects`: see xla.runner)."""
    handlers = result_handlers(out_avals, shardings)
    run = xla.tokened(exe) if effects else exe.execute_sharded
    if handlers is not None:
        return lambda bufs: run(bufs).consume_with_handlers(handlers)

    def slow(bufs):
        per_out = run(bufs).disassemble_into_single_device_arrays()
        return [assemble(a.shape, s, xs) for xs, a, s in zip(per_out, out_avals, shardings)]
    return slow


def output_shardings(exe, n_out: int, assignment: Sequence) -> list:
    """The layouts XLA chose for a program's outputs, as funcad shardings."""
    ops = exe.get_output_shardings()
    if ops is None:
        ops = [None] * n_out
    return [from_op_sharding(op, assignment) for op in ops]


def from_op_sharding(op, assignment: Sequence) -> Sharding:
    """A funcad sharding equal to XLA's OpSharding `op` over `assignment`."""
    if op is None:
        return NamedSharding(Mesh(np.array(assignment, dtype=object), ("_devices",)), PartitionSpec())
    return from_hlo_sharding(xla._xc.HloSharding.from_proto(op), assignment)


def from_hlo_sharding(hs, assignment: Sequence) -> Sharding:
    """A funcad sharding equal to XLA's HloSharding `hs` over `assignment`."""
    n = len(assignment)
    flat = Mesh(np.array(assignment, dtype=object), ("_devices",))
    if hs.is_replicated():
        return NamedSharding(flat, PartitionSpec())
    if hs.is_maximal():
        return SingleDeviceSharding(assignment[hs.tile_assignment_devices()[0]])
    dims = list(hs.tile_assignment_dimensions())
    devs = list(hs.tile_assignment_devices())
    subgroups = list(getattr(hs, "subgroup_types", lambda: [])())
    ndim = len(dims) - (1 if hs.replicate_on_last_tile_dim() else len(subgroups))
    grid = np.array([assignment[i] for i in devs], dtype=object).reshape(dims)
    names = tuple(f"_{i}" for i in range(len(dims)))
    spec = PartitionSpec(*[names[i] if dims[i] > 1 else None for i in range(ndim)])
    assert grid.size == n
    return NamedSharding(Mesh(grid, names), spec)


# --------------------------------------------------------------- transfers ----

def put(x, sharding: Sharding, aval=None):
    """A jaxlib array holding x (converted to aval's dtype) laid out as `sharding`."""
    if type(x) is ShardedArray and (x._device is sharding or x._device == sharding):
        return x._buf
    aval = aval or aval_of(x)
    if aval.dtype == float0:
        host = np.zeros(aval.shape, np.bool_)
    else:
        host = np.asarray(x._value() if is_device_array(x) else x)
        if host.dtype != aval.dtype:
            host = host.astype(aval.dtype)
    return put_host(host, sharding)


def wrap(buf, aval, sharding) -> Array:
    if isinstance(sharding, SingleDeviceSharding):
        return Array(buf, aval, sharding._device)
    if aval._sharding is not None or sharding.mesh.explicit_axes:
        # the sharding in the array's type is the layout's over the Explicit axes
        aval = aval.update(sharding=type_sharding(sharding, len(aval.shape)))
    return ShardedArray(buf, aval, sharding)


def device_put_sharded(x, sharding: Sharding) -> Array:
    """x laid out as `sharding` (a device Array on one device for SingleDeviceSharding)."""
    aval = aval_of(x).update(weak_type=False, sharding=None)
    if isinstance(sharding, SingleDeviceSharding) and type(x) is Array and \
            x._device is sharding._device:
        return x
    if type(x) is ShardedArray and x.sharding == sharding:
        return x
    sharding.devices_indices_map(aval.shape)  # checks rank and divisibility
    return wrap(put(x, sharding, aval), aval, sharding)
