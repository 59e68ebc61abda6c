"""funcad.distributed: programs over several processes (as `jax.distributed`).

Call `initialize` first thing in every process, before any computation:

    funcad.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=i)

Afterwards `funcad.devices()` lists the devices of all processes,
`funcad.local_devices()` this process's, and a `jit` over a mesh of all
devices (`funcad.make_mesh`) runs as one SPMD program whose collectives cross
the processes (on the CPU through gloo's TCP collectives). Each process puts
and reads only the pieces of its own devices; replicated results are
readable everywhere. The plumbing is in funcad/lowering/distributed.py.
"""
from __future__ import annotations as _annotations

from typing import Sequence as _Sequence

from .core.errors import FuncadTypeError as _TypeError, FuncadValueError as _ValueError
from .lowering import distributed as _rt
from .lowering import xla as _xla

__all__ = ["initialize", "is_initialized", "shutdown"]


def initialize(coordinator_address: str, num_processes: int, process_id: int,
               local_device_ids: int | _Sequence[int] | None = None, *,
               coordinator_bind_address: str | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100) -> None:
    """Connect this process to the others of a multi-process program.

    `coordinator_address` ("host:port") is where process 0 serves the
    coordination service (bound to `coordinator_bind_address`, by default
    every interface on that port); every process, process 0 included,
    connects to it, waiting up to `initialization_timeout` seconds for the
    others. `local_device_ids` picks the devices this process uses (the
    first len(ids) CPU devices; by default all, set with
    XLA_FLAGS=--xla_force_host_platform_device_count=N). The distributed
    client is made on the CPU, which becomes funcad's default backend.

    >>> is_initialized()  # until initialize has run
    False
    """
    if not isinstance(coordinator_address, str) or ":" not in coordinator_address:
        raise _ValueError(f"funcad.distributed.initialize needs coordinator_address as "
                               f"'host:port', got {coordinator_address!r}")
    if not isinstance(num_processes, int) or num_processes < 1:
        raise _ValueError(f"num_processes must be a positive int, got {num_processes!r}")
    if not isinstance(process_id, int) or not 0 <= process_id < num_processes:
        raise _ValueError(f"process_id must be an int in [0, {num_processes}), got "
                               f"{process_id!r}")
    n_local = None
    if local_device_ids is not None:
        ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
        if sorted(ids) != list(range(len(ids))):
            raise _TypeError(f"local_device_ids on the CPU must be 0, 1, ..., n-1 (the "
                                  f"first n CPU devices), got {local_device_ids!r}")
        n_local = len(ids)
    _rt.initialize(coordinator_address, num_processes, process_id,
                   coordinator_bind_address=coordinator_bind_address,
                   initialization_timeout=initialization_timeout,
                   heartbeat_timeout_seconds=heartbeat_timeout_seconds,
                   num_local_devices=n_local)
    _xla.set_default_backend("cpu")


def shutdown() -> None:
    """Disconnect from the other processes (process 0 stops the service); a no-op
    when not initialized.

    >>> shutdown()
    """
    _rt.shutdown()


def is_initialized() -> bool:
    """Whether `initialize` has connected this process.

    >>> is_initialized()
    False
    """
    return _rt.is_initialized()
