"""Several processes over jaxlib's distributed runtime (device plumbing of
`funcad.distributed`, whose functions are here).

Process 0 runs the coordination service (`get_distributed_runtime_service`);
every process connects a client to it (`get_distributed_runtime_client`) and
then makes its CPU client with that distributed client, its node id, the
number of nodes and gloo's TCP collectives
(`make_gloo_tcp_collectives`), as JAX does; like JAX's default, each also
starts a preemption sync manager (a SIGTERM is a preemption notice, see
`multihost_utils.reached_preemption_sync_point`). The CPU client then knows the
devices of every process (`client.devices()`; `local_devices()` are this
process's), and a program compiled over devices of several processes runs
its collectives across them. These names are in `jaxlib._jax` (jaxlib >= 0.7)
and `jaxlib.xla_extension` (0.6) with the same signatures.
"""
from __future__ import annotations

import atexit
from typing import NamedTuple, Sequence

from . import xla
from ..core.errors import FuncadError, FuncadTypeError, FuncadValueError


class DistributedError(FuncadError, RuntimeError):
    """The distributed runtime cannot be started or used as asked."""


class _State(NamedTuple):
    service: object
    client: object
    process_id: int
    num_processes: int
    preemption: object  # the preemption sync manager (multihost_utils.reached_preemption_sync_point)


_state: _State | None = None


def _extension():
    return xla.jaxlib_modules().extension


def _heartbeat(fn, timeout: int) -> dict:
    """The heartbeat keywords of `fn`: a timeout (jaxlib >= 0.7) or, on 0.6, an
    interval of 10 s and the number of missed beats that add up to it."""
    if "heartbeat_timeout" in (fn.__doc__ or ""):
        return {"heartbeat_timeout": timeout}
    return {"heartbeat_interval": 10, "max_missing_heartbeats": max(1, -(-timeout // 10))}


def initialize(coordinator_address: str, num_processes: int, process_id: int,
               local_device_ids: int | Sequence[int] | None = None, *,
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
        raise FuncadValueError(f"funcad.distributed.initialize needs coordinator_address as "
                              f"'host:port', got {coordinator_address!r}")
    if not isinstance(num_processes, int) or num_processes < 1:
        raise FuncadValueError(f"num_processes must be a positive int, got {num_processes!r}")
    if not isinstance(process_id, int) or not 0 <= process_id < num_processes:
        raise FuncadValueError(f"process_id must be an int in [0, {num_processes}), got "
                              f"{process_id!r}")
    n_local = None
    if local_device_ids is not None:
        ids = [local_device_ids] if isinstance(local_device_ids, int) else list(local_device_ids)
        if sorted(ids) != list(range(len(ids))):
            raise FuncadTypeError(f"local_device_ids on the CPU must be 0, 1, ..., n-1 (the "
                                 f"first n CPU devices), got {local_device_ids!r}")
        n_local = len(ids)
    _connect(coordinator_address, num_processes, process_id,
             coordinator_bind_address=coordinator_bind_address,
             initialization_timeout=initialization_timeout,
             heartbeat_timeout_seconds=heartbeat_timeout_seconds, num_local_devices=n_local)
    xla.set_default_backend("cpu")


def _connect(coordinator_address: str, num_processes: int, process_id: int, *,
             coordinator_bind_address: str | None = None, initialization_timeout: int = 300,
             heartbeat_timeout_seconds: int = 100, num_local_devices: int | None = None) -> None:
    """Start (process 0) or join the coordination service and make the CPU client
    that spans all processes."""
    global _state
    if _state is not None:
        raise DistributedError("funcad.distributed.initialize should only be called once; call "
                               "funcad.distributed.shutdown() first to start over")
    if xla.get_client.cache_info().currsize or xla.installed_clients:
        raise DistributedError(
            "funcad.distributed.initialize must be called before any funcad computation or "
            "device query (funcad.devices(), jit, device_put) has started the backend; call it "
            "first thing in the program")
    ext = _extension()
    service = None
    if process_id == 0:
        port = coordinator_address.rsplit(":", 1)[1]
        service = ext.get_distributed_runtime_service(
            coordinator_bind_address or f"[::]:{port}", num_processes,
            **_heartbeat(ext.get_distributed_runtime_service, heartbeat_timeout_seconds))
    try:
        client = ext.get_distributed_runtime_client(
            coordinator_address, process_id, init_timeout=initialization_timeout,
            use_compression=True,
            **_heartbeat(ext.get_distributed_runtime_client, heartbeat_timeout_seconds))
        client.connect()
        # as JAX's (its preemption service is on by default): SIGTERM is a preemption notice
        preemption = ext.create_preemption_sync_manager()
        preemption.initialize(client)
        collectives = ext.make_gloo_tcp_collectives(distributed_client=client)
        cpu = xla._xc.make_cpu_client(distributed_client=client, node_id=process_id,
                                      num_nodes=num_processes, collectives=collectives,
                                      num_devices=num_local_devices)
    except Exception as e:
        if service is not None:
            service.shutdown()
        raise DistributedError(f"funcad.distributed.initialize could not connect process "
                               f"{process_id} of {num_processes} to the coordinator at "
                               f"{coordinator_address}: {e}") from e
    xla.install_client("cpu", cpu)
    _state = _State(service, client, process_id, num_processes, preemption)


def shutdown() -> None:
    """Disconnect from the other processes (process 0 stops the service); a no-op
    when not initialized.

    >>> shutdown()
    """
    global _state
    if _state is None:
        return
    state, _state = _state, None
    if hasattr(state.preemption, "shutdown"):  # jaxlib >= 0.7; before the client it uses
        state.preemption.shutdown()
    state.client.shutdown()
    if state.service is not None:
        state.service.shutdown()


def is_initialized() -> bool:
    """Whether `initialize` has connected this process.

    >>> is_initialized()
    False
    """
    return _state is not None


def live_nodes(process_ids) -> dict:
    """{process id: incarnation} of those of `process_ids` that are alive (jaxlib 0.6
    reports no incarnations: 0 for each), or None when not distributed."""
    if _state is None:
        return None
    live = _state.client.get_live_nodes(list(process_ids))
    return dict(live) if isinstance(live, dict) else {int(p): 0 for p in live}


def preemption_sync_manager():
    """jaxlib's preemption sync manager of this process, or None when not distributed."""
    return None if _state is None else _state.preemption


atexit.register(shutdown)
