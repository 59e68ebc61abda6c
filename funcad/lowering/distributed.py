"""Several processes over jaxlib's distributed runtime (device plumbing of
`funcad.distributed`).

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
from typing import NamedTuple

from . import xla
from ..core.errors import FuncadError


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


def initialize(coordinator_address: str, num_processes: int, process_id: int, *,
               coordinator_bind_address: str | None = None, initialization_timeout: int = 300,
               heartbeat_timeout_seconds: int = 100, num_local_devices: int | None = None) -> None:
    """Start (process 0) or join the coordination service and make the CPU client
    that spans all processes. See `funcad.distributed.initialize`."""
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
    """Disconnect from the coordination service (and stop it on process 0)."""
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
