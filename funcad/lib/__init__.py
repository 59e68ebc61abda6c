"""jaxlib's plumbing as funcad uses it (JAX's `lib` namespace): `xla_client`, the
jaxlib module of clients and devices, and `xla_bridge`, funcad's choice of backend.

>>> from funcad.lib import xla_bridge
>>> xla_bridge.get_backend().platform in ("cpu", "gpu", "cuda", "rocm", "tpu")
True
"""
from . import xla_bridge
from ..lowering import xla as _xla


def __getattr__(name: str):
    if name == "xla_client":
        return _xla._load()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["xla_bridge", "xla_client"]
