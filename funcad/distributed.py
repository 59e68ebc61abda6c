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
from .lowering.distributed import initialize, is_initialized, shutdown

__all__ = ["initialize", "is_initialized", "shutdown"]
