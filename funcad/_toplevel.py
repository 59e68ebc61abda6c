"""JAX's top-level option scopes and environment helpers.

Each option of `funcad.config` that JAX also offers as a context manager is one here:
`with funcad.debug_nans(True):`, `with funcad.numpy_rank_promotion("raise"):`, ...
(`.value` reads the current setting). The helpers: `Device`, `host_count`, `host_id`,
`host_ids`, `process_indices`, `live_arrays`, `copy_to_host_async`,
`print_environment_info`.

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> with funcad.numpy_rank_promotion("raise"):
...     fnp.ones((2, 3)) + fnp.ones(3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: Operands could not be broadcast together for add on shapes (2, 3) (3,) ...
>>> funcad.process_indices()
[0]
"""
from __future__ import annotations

import contextlib
import gc
import importlib.metadata
import platform
import sys
from typing import Any, Iterator

from . import config
from ._helpers import process_count, process_index
from .config import OptionScope
from .core.options import NO_ARG
from .core.pytree import tree_leaves
from .lowering import xla
from .lowering.array import Array, ShardedArray

__all__ = ["checking_leaks", "copy_to_host_async", "effects_barrier", "host_count", "host_id", "host_ids",
           "live_arrays", "print_environment_info", "process_indices", "transfer_guard"]


# `with funcad.<option>(value):` for each option declared with a scope (core/options.py)
globals().update(config.scopes)
__all__ += list(config.scopes)


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


def checking_leaks() -> OptionScope:
    """`with funcad.checking_leaks():` is `with funcad.check_tracer_leaks(True):`.

    >>> import funcad, funcad.numpy as fnp
    >>> with funcad.checking_leaks():
    ...     float(funcad.grad(fnp.sin)(0.0))
    1.0
    """
    return config.scopes["check_tracer_leaks"](True)




class _TransferGuard(OptionScope):
    """`with funcad.transfer_guard(level):` all three directions at `level` in the block, each
    restored on leaving it (as JAX's)."""

    @contextlib.contextmanager
    def __call__(self, new_val=NO_ARG) -> Iterator[None]:
        if new_val is NO_ARG:
            raise TypeError("funcad.transfer_guard() needs the level to set in the block")
        # the set-all option first: restored first, then each direction to its own level
        with config.override(transfer_guard=new_val, transfer_guard_host_to_device=new_val,
                             transfer_guard_device_to_device=new_val,
                             transfer_guard_device_to_host=new_val):
            yield


transfer_guard = _TransferGuard("transfer_guard", NO_ARG)
transfer_guard.__doc__ = """`with funcad.transfer_guard(level):` guards every transfer between the host
and devices: 'allow', 'log' or 'disallow' implicit transfers (jit arguments from NumPy, reading
device Arrays as NumPy), and 'log_explicit' or 'disallow_explicit' to include explicit ones
(`device_put`, `device_get`); refused ones raise TransferGuardError (a RuntimeError) with JAX's
text. See funcad/lowering/transfer_guard.py."""


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
    import warnings
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
    import numpy as np
    from . import __version__
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
