"""The XLA clients funcad runs programs on (JAX's `extend.backend` namespace).

>>> from funcad.extend import backend
>>> backend.get_backend().platform in ("cpu", "gpu", "cuda", "rocm", "tpu")
True
"""
from __future__ import annotations

from ..lowering import xla as _xla


def get_backend(platform: str | None = None):
    """The client of `platform` (default: the backend jit uses)."""
    return _xla.get_client(_xla._canonical(platform) if platform else _xla.default_backend())


def get_default_device():
    """The device jit runs on by default."""
    return _xla.get_device(None)


def backends() -> dict:
    """The clients funcad can use, by platform name."""
    out = {"cpu": get_backend("cpu")}
    if _xla.gpu_available():
        out["gpu"] = get_backend("gpu")
    return out


def clear_in_memory_compilation_cache() -> None:
    """Forget the executables compiled in this process."""
    _xla.clear_executable_cache()
