"""funcad.experimental.multihost_utils: values across the processes of a
multi-process program, as `jax.experimental.multihost_utils`.

`process_allgather` gathers every process's value, `broadcast_one_to_all`
sends one process's value to all, `sync_global_devices` is a barrier and
`assert_equal` checks that all processes hold the same values (each runs a
small SPMD program over all devices). `host_local_array_to_global_array`
and `global_array_to_host_local_array` convert between a process's part of
an array and the global array over a mesh. Over one process every value is
already everyone's. Processes connect with `funcad.distributed.initialize`.

>>> import numpy as np
>>> process_allgather(np.arange(3.0)).tolist()  # one process: a stack of one
[[0.0, 1.0, 2.0]]
"""
from __future__ import annotations as _annotations

import contextlib as _contextlib
import zlib as _zlib
from typing import Any as _Any

import numpy as _np

from ..core.errors import FuncadValueError as _FuncadValueError
from ..core.pytree import tree_flatten as _tree_flatten, tree_map as _tree_map
from ..core.pytree import tree_unflatten as _tree_unflatten
from ..core.sharding import Mesh as _Mesh, NamedSharding as _NamedSharding
from ..core.sharding import PartitionSpec as _PartitionSpec, flatten_prefix as _flatten_prefix
from ..primitives.host_local import global_to_local_p as _global_to_local_p
from ..primitives.host_local import local_to_global_p as _local_to_global_p
from ..lowering.devices import (devices as _devices, local_device_count as _local_device_count,
                                process_count as _process_count, process_index as _process_index)
from ..lowering.array import is_device_array as _is_device_array
from ..lowering import distributed as _distributed
from ..lowering.make_array import make_array_from_process_local_data as _make_array_from_process_local_data
from ..transforms.jit import jit as _jit
from .. import numpy as _fnp

__all__ = ["assert_equal", "broadcast_one_to_all", "global_array_to_host_local_array",
           "host_local_array_to_global_array", "live_devices", "process_allgather",
           "ProcessFailureError", "reached_preemption_sync_point", "sync_global_devices"]


def _process_mesh() -> _Mesh:
    """All devices as a (process, local device) grid."""
    grid = _np.empty(len(_devices()), dtype=object)
    grid[:] = _devices()
    return _Mesh(grid.reshape(_process_count(), _local_device_count()),
                ("processes", "local_devices"))


def _first_local(x) -> _np.ndarray:
    return _np.asarray(x.addressable_shards[0].data)


def _identity(x):
    return x


def _sum0(xs):
    return _tree_map(lambda x: _fnp.sum(x, axis=0, dtype=x.dtype), xs)


def _is_global(x) -> bool:
    return _is_device_array(x) and any(d.process_index != d.client.process_index()
                                      for d in x.sharding.device_set)


def broadcast_one_to_all(in_tree: _Any, is_source: bool | None = None) -> _Any:
    """`in_tree` (a pytree of arrays of the same shapes on every process) as the
    source process holds it (`is_source`, by default process 0), as NumPy arrays.

    >>> broadcast_one_to_all({"step": 3})
    {'step': array(3)}
    """
    if _process_count() == 1:
        return _tree_map(_np.asarray, in_tree)
    if is_source is None:
        is_source = _process_index() == 0
    mesh = _process_mesh()

    def pre(x):
        x = _np.asarray(x)
        return host_local_array_to_global_array((x if is_source else _np.zeros_like(x))[None], mesh,
                                                _PartitionSpec("processes"))

    # the non-sources contribute zeros: the sum over processes is the source's value
    out = _jit(_sum0, out_shardings=_NamedSharding(mesh, _PartitionSpec()))(_tree_map(pre, in_tree))
    return _tree_map(_first_local, out)


def _allgather_leaf(x, tiled: bool) -> _np.ndarray:
    if _is_global(x):
        if not tiled:
            raise _FuncadValueError("Gathering global non-fully-addressable arrays only supports "
                                   "tiled=True")
        everywhere = _NamedSharding(x.sharding.mesh, _PartitionSpec()) \
            if isinstance(x.sharding, _NamedSharding) else None
        return _first_local(_jit(_identity, out_shardings=everywhere)(x))
    host = _np.asarray(x)
    if _process_count() == 1:
        return host if tiled else host[None]
    if host.ndim == 0 or not tiled:
        host = host[None]
    mesh = _process_mesh()
    glob = _make_array_from_process_local_data(_NamedSharding(mesh, _PartitionSpec("processes")), host)
    return _first_local(_jit(_identity, out_shardings=_NamedSharding(mesh, _PartitionSpec()))(glob))


def process_allgather(in_tree: _Any, tiled: bool = False) -> _Any:
    """Every process's value of each leaf of `in_tree`, as NumPy arrays: stacked on a
    new leading axis (`tiled=False`), or concatenated along axis 0 (`tiled=True`;
    scalars are stacked). A global array over several processes comes back whole
    (only with `tiled=True`).

    >>> import numpy as np
    >>> process_allgather(np.arange(2), tiled=True).tolist()
    [0, 1]
    """
    return _tree_map(lambda x: _allgather_leaf(x, tiled), in_tree)


def assert_equal(in_tree: _Any, fail_message: str = "") -> None:
    """Raise AssertionError (with `fail_message`) unless every process holds the same
    values in `in_tree`.

    >>> import numpy as np
    >>> assert_equal({"w": np.ones(2)}, "weights differ")
    """

    def expected(x):
        if _is_global(x):
            return _first_local(x)
        x = _np.asarray(x)
        return _np.concatenate([x.reshape(-1) if x.ndim == 0 else x] * _process_count())

    got = process_allgather(in_tree, tiled=True)
    want = _tree_map(expected, in_tree)
    if not all(bool(_np.all(_np.equal(a, b))) for a, b in
               zip(_tree_flatten(want)[0], _tree_flatten(got)[0])):
        raise AssertionError(f"{fail_message}. Expected: {got}; got: {in_tree}.")


def sync_global_devices(name: str) -> None:
    """A barrier: returns once every process has called it with the same `name`
    (an AssertionError if the names differ).

    >>> sync_global_devices("checkpoint saved")
    """
    h = _np.uint32(_zlib.crc32(name.encode()))
    assert_equal(h, f"sync_global_devices name mismatch ('{name}')")


def reached_preemption_sync_point(step_id: int) -> bool:
    """Whether all processes have reached the step at which to save a checkpoint after
    one of them got a preemption notice (SIGTERM); call it at every step from the
    same starting step on every process. False when not running distributed.

    >>> reached_preemption_sync_point(0)
    False
    """
    manager = _distributed.preemption_sync_manager()
    if manager is None:
        return False
    return manager.reached_sync_point(step_id)


# ------------------------------------------------- host-local <-> global ----

def _is_spec_leaf(p) -> bool:
    return p is None or isinstance(p, _PartitionSpec)


def _flat_specs(pspecs, tree_value, what: str) -> list:
    n = len(_tree_flatten(tree_value)[0])
    if _is_spec_leaf(pspecs):
        return [pspecs] * n
    out = []
    for p, sub in zip(_tree_flatten(pspecs, is_leaf=_is_spec_leaf)[0],
                      _flatten_prefix(pspecs, tree_value, what)):
        out += _flat_specs(p, sub, what)
    return out


def _laid_out(x, mesh, pspec):
    """A global array over several processes resharded as `pspec` asks (the
    primitive takes this process's blocks as they lie)."""
    if not _is_global(x) or pspec is None:
        return x
    want = _NamedSharding(mesh, pspec)
    if x.sharding.devices_indices_map(x.shape) == want.devices_indices_map(x.shape):
        return x
    return _jit(_identity, out_shardings=want)(x)


def _check_mesh(mesh, what):
    if not isinstance(mesh, _Mesh):
        raise _FuncadValueError(f"{what} expects a funcad.sharding.Mesh as global_mesh, got "
                               f"{type(mesh).__name__}")


def host_local_array_to_global_array(local_inputs: _Any, global_mesh: _Mesh, pspecs: _Any) -> _Any:
    """This process's parts (`local_inputs`, a pytree) as global arrays over
    `global_mesh`, laid out as `pspecs` (one PartitionSpec, or a tree prefix of the
    inputs): a dimension split over mesh axes that span several processes grows by
    their number of processes (each process supplies its contiguous part). Works
    under jit (as the identity), grad and vmap.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import PartitionSpec as P
    >>> mesh = funcad.make_mesh((funcad.device_count(),), ("x",))
    >>> host_local_array_to_global_array(np.zeros(2 * funcad.device_count()), mesh, P("x")).shape[0] \\
    ...     == 2 * funcad.device_count()
    True
    """
    what = "host_local_array_to_global_array"
    _check_mesh(global_mesh, what)
    leaves, tree = _tree_flatten(local_inputs)
    specs = _flat_specs(pspecs, local_inputs, what)
    return _tree_unflatten(tree, [_local_to_global_p.bind(x, global_mesh=global_mesh, pspec=p)
                                 for x, p in zip(leaves, specs)])


def global_array_to_host_local_array(global_inputs: _Any, global_mesh: _Mesh, pspecs: _Any) -> _Any:
    """The parts of `global_inputs` (a pytree of global arrays over `global_mesh`)
    that this process's devices hold, laid out as `pspecs`: the inverse of
    `host_local_array_to_global_array`. Works under jit (as the identity), grad and vmap.

    >>> import funcad, numpy as np
    >>> from funcad.sharding import PartitionSpec as P
    >>> mesh = funcad.make_mesh((funcad.device_count(),), ("x",))
    >>> global_array_to_host_local_array(np.arange(funcad.device_count()), mesh, P("x")).shape \\
    ...     == (funcad.device_count(),)
    True
    """
    what = "global_array_to_host_local_array"
    _check_mesh(global_mesh, what)
    leaves, tree = _tree_flatten(global_inputs)
    specs = _flat_specs(pspecs, global_inputs, what)
    leaves = [_laid_out(x, global_mesh, p) for x, p in zip(leaves, specs)]
    return _tree_unflatten(tree, [_global_to_local_p.bind(x, global_mesh=global_mesh, pspec=p)
                                 for x, p in zip(leaves, specs)])


# ------------------------------------------------------------ live devices ----

class ProcessFailureError(Exception):
    """Raised by `live_devices` when processes failed during its block;
    `failed_devices` holds their devices."""

    def __init__(self, failed_devices: set):
        self.failed_devices = failed_devices
        super().__init__(f"Devices failed: {failed_devices}")


def _live(devices) -> dict:
    """{device: its process's incarnation} for the given devices whose process is alive."""
    pids = {d.process_index for d in devices}
    if _process_index() not in pids:
        raise _FuncadValueError("Provided devices do not have any local devices.")
    alive = _distributed.live_nodes(pids)
    return {d: alive[d.process_index] for d in devices if d.process_index in alive}


class _LiveDevices:
    """`with live_devices(devices) as alive:` runs its block on the devices of
    `devices` whose processes are alive (`alive`, sorted by id), as JAX's. Entering
    waits for those processes; leaving raises `ProcessFailureError` on every one of
    them if a process failed (or restarted) meanwhile, else the block's own error.
    Needs `funcad.distributed.initialize`.

    >>> import funcad
    >>> with live_devices(funcad.devices()) as alive:  # doctest: +SKIP
    ...     step = funcad.jit(train_step)(...)          # on the processes of `alive`
    """

    def __init__(self):
        self.devices = None  # what the last call saw, the baseline of the next

    @_contextlib.contextmanager
    def __call__(self, devices):
        if not _distributed.is_initialized():
            raise RuntimeError("Distributed funcad not initialized: call "
                               "funcad.distributed.initialize(...) first.")
        if not devices:
            raise _FuncadValueError("No devices provided.")
        if self.devices is None:
            self.devices = _live(devices)
        error = None
        try:
            yield sorted(self.devices, key=lambda d: d.id)
        except Exception as e:  # re-raised below, after the failure check all processes share
            error = e
        finally:
            before, self.devices = self.devices, _live(devices)
            failed = {d for d in before if self.devices.get(d, None) != before[d]}
            if failed:
                raise ProcessFailureError(failed) from error
            if error is not None:
                raise error


live_devices = _LiveDevices()
