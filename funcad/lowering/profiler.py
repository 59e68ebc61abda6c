"""jaxlib's profiler bindings, found where the installed jaxlib keeps them.

jaxlib 0.12 has them as `jaxlib._profiler` (and the parsed-trace classes as
`jaxlib._profile_data`); jaxlib 0.6 as `jaxlib.xla_client.profiler`, with no
Python-visible ProfileData. Both have the same ProfilerSession (`stop()` gives the
serialized XSpace, `export(xspace, log_dir)` writes `plugins/profile/<run>/`),
TraceMe, ProfileOptions and start_server, which is all funcad.profiler needs.

>>> bindings().TraceMe.__name__
'TraceMe'
"""
from __future__ import annotations

import functools
import gzip

__all__ = ["bindings", "profile_data_module", "heap_profile"]


@functools.lru_cache(maxsize=None)
def bindings():
    """The jaxlib module with ProfilerSession, TraceMe, ProfileOptions, start_server."""
    try:
        from jaxlib import _profiler
        return _profiler
    except ImportError:  # jaxlib < 0.7
        from jaxlib import xla_client
        return xla_client.profiler


@functools.lru_cache(maxsize=None)
def profile_data_module():
    """jaxlib's ProfileData classes, or None where jaxlib does not expose them (0.6)."""
    try:
        from jaxlib import _profile_data
        return _profile_data
    except ImportError:
        return None


def heap_profile(client) -> bytes:
    """A gzipped pprof heap profile of the PJRT `client`'s live buffers and executables."""
    return gzip.compress(client.heap_profile())  # the raw proto on jaxlib 0.6 .. 0.12
