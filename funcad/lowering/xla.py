"""PJRT plumbing through jaxlib: clients, compilation, transfers, execution.

jax and jaxlib are used here only as device plumbing (public
`jax.extend.backend` and `jaxlib.xla_client`); funcad traces and lowers by
itself. They are imported on first use, so `import funcad` stays light.

Facts this module relies on (checked against jaxlib 0.10):
  * `client.compile_and_load(text, [device], options)` compiles textual
    StableHLO; the options must pin the same device
    (`get_compile_options(..., device_assignment=[device])`).
  * Transfers use IMMUTABLE_ONLY_DURING_CALL: the default ZERO_COPY aliases
    aligned NumPy memory on CPU, so a later in-place NumPy update (or a
    donated buffer) would show through. `enable_x64=True` keeps float64 and
    int64 exact whatever jax's own x64 flag says.
  * Results must not be tuple-typed; multiple results come back flat.

>>> from funcad.lowering import xla
>>> exe = xla.compile_text('''module @m { func.func public @main(%a: tensor<2xf32>) -> tensor<2xf32> {
...   %0 = stablehlo.add %a, %a : tensor<2xf32>
...   return %0 : tensor<2xf32> } }''', "cpu")
>>> buf = xla.device_put(np.ones(2, np.float32), xla.get_device("cpu"))
>>> np.asarray(exe.execute_sharded([buf]).disassemble_into_single_device_arrays()[0][0])
array([2., 2.], dtype=float32)
"""
from __future__ import annotations

import functools
import os
from collections import OrderedDict

import numpy as np

from ..core.errors import FuncadError

_xc = None    # jaxlib.xla_client, once loaded
_jeb = None   # jax.extend.backend
_SA = None    # jax.core.ShapedArray: the aval type jaxlib's C++ side expects
_COPY = None  # HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL

_default_backend: str | None = None


class BackendError(FuncadError, RuntimeError):
    """A requested backend (e.g. "gpu") is not available."""


def _load():
    global _xc, _jeb, _SA, _COPY
    if _xc is None:
        import jax.core
        import jax.extend.backend as jeb
        from jaxlib import xla_client
        _jeb, _SA = jeb, jax.core.ShapedArray
        _COPY = xla_client.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
        _xc = xla_client
    return _xc


# ----------------------------------------------------------------- backends ----

_ALIASES = {"cuda": "gpu", "rocm": "gpu", "gpu": "gpu", "cpu": "cpu"}


def _canonical(backend: str) -> str:
    name = _ALIASES.get(str(backend).lower())
    if name is None:
        raise BackendError(f"unknown backend {backend!r}; use 'cpu' or 'gpu'")
    return name


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    """Whether a CUDA (or ROCm) PJRT plugin with at least one device is present."""
    _load()
    try:
        client = _jeb.get_backend("gpu")
    except RuntimeError:
        return False
    return client.platform in ("gpu", "cuda", "rocm") and bool(client.local_devices())


def set_default_backend(backend: str | None) -> None:
    """Backend used by `jit` when none is given ("cpu", "gpu", or None for automatic).

    The environment variable FUNCAD_BACKEND sets it at start-up (read on first use).
    Automatic means the GPU when one is present, else the CPU (as JAX does).

    >>> set_default_backend("cpu"); default_backend()
    'cpu'
    >>> set_default_backend(None)
    """
    global _default_backend
    _default_backend = None if backend is None else _canonical(backend)
    for hook in backend_change_hooks:
        hook()


backend_change_hooks: list = []  # called when the default backend changes (jit drops fast caches)


def default_backend() -> str:
    """The backend `jit` uses when none is given."""
    global _default_backend
    if _default_backend is None:
        env = os.environ.get("FUNCAD_BACKEND")
        _default_backend = _canonical(env) if env else ("gpu" if gpu_available() else "cpu")
    return _default_backend


@functools.lru_cache(maxsize=None)
def get_client(backend: str):
    """The PJRT client of "cpu" or "gpu"; a clear error when it is not available."""
    _load()
    backend = _canonical(backend)
    if backend == "gpu" and not gpu_available():
        raise BackendError("backend='gpu' was requested, but no CUDA GPU and PJRT plugin are "
                           "available (install jax[cuda12]); use backend='cpu'")
    return _jeb.get_backend(backend)


def get_device(backend: str | None = None):
    """The first device of a backend (None: the default backend)."""
    return _first_device(default_backend() if backend is None else _canonical(backend))


@functools.lru_cache(maxsize=None)
def _first_device(backend: str):
    return get_client(backend).local_devices()[0]


# ------------------------------------------------------------------ compile ----

_exe_cache: OrderedDict = OrderedDict()
EXECUTABLE_CACHE_SIZE = 256


def compile_text(mlir: str, backend: str | None = None):
    """Compile a textual StableHLO module for one device of `backend`.

    Executables are cached by (text, device) in a bounded LRU, so a program
    that lowers to the same text is compiled once.
    """
    device = get_device(backend)
    key = (mlir, device.id, device.platform)
    exe = _exe_cache.get(key)
    if exe is not None:
        _exe_cache.move_to_end(key)
        return exe
    client = get_client(backend or default_backend())
    options = _jeb.get_compile_options(num_replicas=1, num_partitions=1,
                                       device_assignment=[device], backend=client)
    exe = client.compile_and_load(mlir, [device], options)
    _exe_cache[key] = exe
    if len(_exe_cache) > EXECUTABLE_CACHE_SIZE:
        _exe_cache.popitem(last=False)
    return exe


def clear_executable_cache() -> None:
    _exe_cache.clear()


# ----------------------------------------------------------------- transfer ----

@functools.lru_cache(maxsize=4096)
def _jax_aval(shape: tuple, dtype: np.dtype):
    return _SA(shape, dtype)


@functools.lru_cache(maxsize=None)
def sharding(device):
    _load()
    return _xc.SingleDeviceSharding(device)


def device_put(x, device):
    """Copy a NumPy array or scalar to `device` (the host memory is copied, never aliased)."""
    x = np.asarray(x)
    return _xc.batched_device_put(_jax_aval(x.shape, x.dtype), sharding(device), [x], [device],
                                  committed=True, force_copy=False,
                                  host_buffer_semantics=_COPY, enable_x64=True)


def host_putter(shape, dtype, device):
    """A fast `device_put` for NumPy arrays of exactly this shape and dtype."""
    aval, sh, devs = _jax_aval(tuple(shape), np.dtype(dtype)), sharding(device), [device]
    put = _xc.batched_device_put

    def put_host(x: np.ndarray):
        return put(aval, sh, [x], devs, True, False, _COPY, True)
    return put_host


def result_handlers(out_avals, device) -> list:
    """Prebuilt C++ handlers that turn an execution's raw outputs into device arrays."""
    sh = sharding(device)
    return [_xc.array_result_handler(_jax_aval(tuple(a.shape), np.dtype(a.dtype)), sh, True,
                                     _skip_checks=True) for a in out_avals]


def is_device_buffer(x) -> bool:
    return _xc is not None and isinstance(x, _xc.ArrayImpl)
