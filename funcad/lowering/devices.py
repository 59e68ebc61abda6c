"""Devices and processes, as JAX's top-level helpers: device queries, transfers to the
host, waiting for results, the arrays alive in this process, the environment report.

>>> import funcad
>>> funcad.devices("cpu")
[CpuDevice(id=0)]
>>> funcad.process_indices()
[0]
"""
from __future__ import annotations

import gc
import importlib.metadata
import platform
import sys
import warnings
from typing import Any

import numpy as np

from ..core import options as _options
from ..core.pytree import tree_leaves, tree_map
from ..core.trace import Tracer
from ..core.version import __version__
from . import transfer_guard, xla
from .array import Array, ShardedArray

__all__ = ["block_until_ready", "copy_to_host_async", "default_backend", "device_count", "device_get",
           "devices", "effects_barrier", "host_count", "host_id", "host_ids", "live_arrays",
           "local_device_count", "local_devices", "print_environment_info", "process_count",
           "process_index", "process_indices"]


# ------------------------------------------------------------------ devices ----

def _client(backend):
    return xla.get_client(xla.default_backend() if backend is None else backend)


def default_backend() -> str:
    """The platform `jit` compiles for when none is given: "cpu" or "gpu".

    >>> funcad.default_backend() in ("cpu", "gpu")  # doctest: +SKIP
    True
    """
    return xla.default_backend()


def devices(backend: str | None = None) -> list:
    """The devices of `backend` (default: the default backend), as jaxlib device objects.

    >>> import funcad
    >>> funcad.devices("cpu")
    [CpuDevice(id=0)]
    """
    return list(_client(backend).devices())


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
    """The devices of `backend` attached to this process (`process_index`, default this one)."""
    index = host_id if process_index is None else process_index
    client = _client(backend)
    if index is None:
        return list(client.local_devices())
    return [d for d in client.devices() if d.process_index == index]


def device_count(backend: str | None = None) -> int:
    """How many devices `backend` has."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """How many devices of `backend` this process has."""
    return len(_client(backend).local_devices())


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of `backend` (0 on one machine)."""
    return _client(backend).process_index()


def process_count(backend: str | None = None) -> int:
    """How many processes share `backend` (1 on one machine)."""
    return len({d.process_index for d in _client(backend).devices()})


def device_get(x: Any):
    """Copy the arrays of a pytree to the host, as NumPy arrays; other leaves
    (Python scalars, strings) come back unchanged, tracers too.

    >>> import funcad, numpy as np
    >>> funcad.device_get({"w": funcad.jit(lambda v: v * 2)(np.ones(2)), "step": 3})
    {'step': 3, 'w': array([2., 2.])}
    """
    if _options.transfer_guards:  # its copies are explicit ones
        with transfer_guard.explicit():
            return tree_map(_device_get, x)
    return tree_map(_device_get, x)


def _device_get(x):
    if isinstance(x, Tracer):
        return x
    to_array = getattr(x, "__array__", None)
    return x if to_array is None else to_array()


def block_until_ready(x):
    """Wait until every array in the pytree `x` is computed; returns `x`. Leaves
    without a `block_until_ready` method (NumPy arrays, scalars) are ready.

    >>> import funcad, numpy as np
    >>> funcad.block_until_ready((funcad.jit(lambda v: v + 1)(np.ones(2)), 3.0))
    (Array([2., 2.], dtype=float64), 3.0)
    """
    for leaf in tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None and not isinstance(leaf, Tracer):
            wait()
    return x


def effects_barrier() -> None:
    """Wait until every jitted function called so far has finished its callbacks
    (`debug.callback`, `debug.print`, `io_callback`, `pure_callback`), as JAX's: dispatch
    is asynchronous, so without it a callback may still be running when the call returns.
    An error raised inside one of them is raised here.

    >>> import funcad, funcad.numpy as fnp
    >>> f = funcad.jit(lambda x: funcad.debug.print("x = {}", x) or x + 1)
    >>> y = f(1.0); funcad.effects_barrier()
    x = 1.0
    """
    xla.effects_barrier()


# -------------------------------------------------------------- processes ----

def host_count(backend: str | None = None) -> int:
    """The number of processes (JAX's older name of `process_count`)."""
    _renamed("host_count", "process_count")
    return process_count(backend)


def host_id(backend: str | None = None) -> int:
    """This process's index (JAX's older name of `process_index`)."""
    _renamed("host_id", "process_index")
    return process_index(backend)


def _renamed(old: str, new: str) -> None:
    warnings.warn(f"funcad.{old} has been renamed to funcad.{new} (as in JAX). This alias will "
                  "eventually be removed; please update your code.", stacklevel=3)


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of all processes of `backend`: `[0, ..., process_count() - 1]`.

    >>> import funcad
    >>> funcad.process_indices()
    [0]
    """
    return list(range(process_count(backend)))


def host_ids(backend: str | None = None) -> list[int]:
    """JAX's older name of `process_indices`."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


# ----------------------------------------------------------------- arrays ----

def device_class() -> type:
    """jaxlib's Device class (`funcad.Device`, loaded on first use as jaxlib is)."""
    return xla._load().Device


def live_arrays(platform: str | None = None) -> list:
    """The device Arrays alive in this process (not deleted or donated), on `platform`
    (default: the default backend's), for finding what holds device memory.

    >>> import funcad, numpy as np
    >>> x = funcad.device_put(np.ones(3))
    >>> any(a is x for a in funcad.live_arrays())
    True
    """
    want = xla._canonical(platform) if platform else xla.default_backend()
    out = []
    for obj in gc.get_objects():
        if type(obj) is Array or type(obj) is ShardedArray:
            try:
                if obj.is_deleted():
                    continue
                if xla._canonical(next(iter(obj.devices())).platform) == want:
                    out.append(obj)
            except Exception:  # a half-built Array: not live
                continue
    return out


def copy_to_host_async(x: Any) -> Any:
    """Start copying each device Array of the pytree `x` to the host, without waiting;
    a later `np.asarray` then finds the data there. Other leaves are left alone.
    Returns `x`.

    >>> import funcad, numpy as np
    >>> y = funcad.copy_to_host_async(funcad.jit(lambda v: v * 2)(np.ones(2)))
    >>> np.asarray(y).tolist()
    [2.0, 2.0]
    """
    for leaf in tree_leaves(x):
        # funcad's Arrays wrap jaxlib's buffers, which start the transfer themselves.
        start = getattr(getattr(leaf, "_buf", None), "copy_to_host_async", None)
        if start is None:
            start = getattr(leaf, "copy_to_host_async", None)
        if start is not None and callable(start):
            start()
    return x


# ------------------------------------------------------------ environment ----

def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions of funcad, NumPy, Python, jax/jaxlib and the
    devices, for bug reports.

    >>> import funcad
    >>> "funcad:" in funcad.print_environment_info(return_string=True)
    True
    """
    try:
        jax_version = importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        jax_version = "not installed"
    try:
        devices = ", ".join(str(d) for d in xla.get_client(xla.default_backend()).devices())
        backend = xla.default_backend()
    except Exception as e:  # no usable jaxlib: report why
        devices, backend = f"unavailable ({e})", "unavailable"
    info = (f"funcad:    {__version__}\n"
            f"jax:       {jax_version}\n"
            f"jaxlib:    {_jaxlib_version()}\n"
            f"numpy:     {np.__version__}\n"
            f"python:    {sys.version.replace(chr(10), ' ')}\n"
            f"platform:  {platform.platform()}\n"
            f"backend:   {backend}\n"
            f"devices:   {devices}\n")
    if return_string:
        return info
    print(info)
    return None


def _jaxlib_version() -> str:
    try:
        return xla.jaxlib_version()
    except Exception:
        return "not installed"
