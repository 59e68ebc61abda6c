"""PJRT plumbing through jaxlib: clients, compilation, transfers, execution.

jax and jaxlib are used here only as device plumbing (public
`jax.local_devices` and the devices' clients, `jaxlib.xla_client`, and on
GPUs `jax.extend.backend.get_compile_options`); funcad traces and lowers by
itself. They are imported on first use, so `import funcad` stays light; a CPU
program never imports `jax.extend` (whose import loads Pallas, tens of
milliseconds of every cold start).

jaxlib's Python surface changes between releases, so the supported range is
declared (`SUPPORTED_JAXLIB`, the same as pyproject.toml's) and tested at both
ends in CI. Two calls are fast private paths that have changed before:
`batched_device_put` (host -> device) and `array_result_handler` (raw
outputs -> device arrays). Each is probed once, on a real transfer, when the
backend loads; if a release changes it, funcad falls back to a public path
(`jax.device_put`, `disassemble_into_single_device_arrays`), so an upgrade
costs speed, never correctness. If nothing works, `BackendError` names the
installed version and the supported range.

Facts this module relies on (checked against jaxlib 0.6 to 0.12):
  * `client.compile_and_load(text, [device], options)` (0.6: `compile(text,
    options)`) compiles textual StableHLO; the options must pin the device
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
>>> run = xla.runner(exe, xla.result_handlers([buf.aval], xla.get_device("cpu")))
>>> np.asarray(run([buf])[0])
array([2., 2.], dtype=float32)
"""
from __future__ import annotations

import contextlib
import functools
import importlib
import os
import re
import sys
import threading
import time
from collections import OrderedDict
from typing import Callable

import numpy as np

from ..core import monitoring, options as _options
from ..core.errors import FuncadError, FuncadTypeError
from ..core.version import installed_jaxlib_version
from . import compilation_cache

# The jax/jaxlib releases funcad is tested with: >= the first, < the second.
# Keep in step with pyproject.toml (tests/lowering/test_jaxlib_range.py checks that).
SUPPORTED_JAXLIB = ((0, 6, 0), (0, 13, 0))

_jl = None    # funcad.lowering.jaxlib_api (jax's and jaxlib's modules), once loaded
_xc = None    # jaxlib.xla_client, once loaded
_SA = None    # jax.core.ShapedArray: the aval type jaxlib's C++ side expects
_COPY = None  # HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
_jax = None   # the jax module (public device_put fallback)

_default_backend: str | None = None


class BackendError(FuncadError, RuntimeError):
    """A requested backend (e.g. "gpu") is not available, or the installed
    jaxlib cannot serve as funcad's device plumbing."""


def _version_tuple(v: str) -> tuple:
    return tuple(int(p) for p in re.findall(r"\d+", v)[:3])


def _range_text() -> str:
    lo, hi = (".".join(map(str, v)) for v in SUPPORTED_JAXLIB)
    return f">={lo},<{hi}"


jaxlib_version = installed_jaxlib_version  # (read from jaxlib's metadata: jaxlib is not imported)


def _unsupported(what: str, err: BaseException | None = None) -> BackendError:
    try:
        v = jaxlib_version()
    except Exception:  # jaxlib itself does not import
        v = "not importable"
    msg = (f"funcad's jit cannot use the installed jax/jaxlib ({v}): {what}. funcad supports "
           f"jax/jaxlib {_range_text()}; install a version in that range, e.g. "
           f"pip install 'jax{_range_text()}' 'jaxlib{_range_text()}'")
    if err is not None:
        msg += f" (underlying error: {type(err).__name__}: {err})"
    return BackendError(msg)


def _load():
    global _jl, _xc, _SA, _COPY, _jax
    if _xc is None:
        try:
            from . import jaxlib_api  # jax and jaxlib load on the backend's first use
            _SA, _jax = jaxlib_api.jax.core.ShapedArray, jaxlib_api.jax
            _COPY = jaxlib_api.xla_client.HostBufferSemantics.IMMUTABLE_ONLY_DURING_CALL
        except (ImportError, AttributeError) as e:
            raise _unsupported("its Python API lacks what funcad needs", e) from None
        _jl, _xc = jaxlib_api, jaxlib_api.xla_client
    return _xc


def jaxlib_modules():
    """funcad.lowering.jaxlib_api: the jax and jaxlib modules the backend uses (loads them)."""
    _load()
    return _jl


def real_jax_attr(path: str):
    """`jax.<path>` of the installed jax, read through its module object (None if this
    jax lacks it). A submodule is imported only while `import jax` gives the real jax:
    under funcad.as_jax the name means funcad, and the drop-in imports what this
    module reads (`extend.backend`, `experimental`) before it hooks."""
    _load()
    obj, parts = _jax, path.split(".")
    for i, part in enumerate(parts):
        if not hasattr(obj, part) and i < len(parts) - 1 and sys.modules.get("jax") is _jax:
            try:
                importlib.import_module("jax." + ".".join(parts[:i + 1]))
            except ImportError:
                return None
        obj = getattr(obj, part, None)
        if obj is None:
            return None
    return obj


def runtime_error_class() -> type:
    """jaxlib's class for errors raised while XLA runs a program (JAX's
    `jax.errors.JaxRuntimeError`; `XlaRuntimeError` in older jaxlibs)."""
    return _load().XlaRuntimeError


# XLA's element type for each narrow dtype of ml_dtypes; older jaxlibs lack some (jaxlib
# 0.6 has no float6 types).
_XLA_TYPES = {"bfloat16": "BF16", "float8_e4m3fn": "F8E4M3FN", "float8_e5m2": "F8E5M2",
              "float8_e4m3fnuz": "F8E4M3FNUZ", "float8_e5m2fnuz": "F8E5M2FNUZ",
              "float8_e4m3b11fnuz": "F8E4M3B11FNUZ", "float8_e3m4": "F8E3M4", "float8_e4m3": "F8E4M3",
              "float8_e8m0fnu": "F8E8M0FNU", "float4_e2m1fn": "F4E2M1FN", "float6_e2m3fn": "F6E2M3FN",
              "float6_e3m2fn": "F6E3M2FN", "int4": "S4", "uint4": "U4"}


@functools.lru_cache(maxsize=None)
def check_dtype(dtype) -> None:
    """Raise a BackendError if the installed jaxlib's XLA has no element type for `dtype`."""
    name = _XLA_TYPES.get(np.dtype(dtype).name)
    if name is not None and not hasattr(_load().PrimitiveType, name):
        raise BackendError(
            f"jit cannot compile {np.dtype(dtype)} arrays with the installed jaxlib "
            f"{jaxlib_version()}: its XLA has no {name} element type. Upgrade jaxlib (0.12 has it), "
            "or compute eagerly, or convert to float32 before jit.")


# ----------------------------------------------------------------- backends ----

_ALIASES = {"cuda": "gpu", "rocm": "gpu", "gpu": "gpu", "cpu": "cpu"}


def _canonical(backend: str) -> str:
    name = _ALIASES.get(str(backend).lower())
    if name is None:
        raise BackendError(f"Unknown backend {backend!r}: funcad runs on 'cpu' or 'gpu'; use one of them")
    return name


@functools.lru_cache(maxsize=None)
def gpu_available() -> bool:
    """Whether a CUDA (or ROCm) PJRT plugin with at least one device is present."""
    _load()
    try:
        devices = _jax.local_devices(backend="gpu")
    except RuntimeError:
        return False
    return bool(devices) and devices[0].client.platform in ("gpu", "cuda", "rocm")


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


# backend -> a client made by funcad itself (funcad.distributed's CPU client over
# several processes), used instead of jax's backend of that name
installed_clients: dict = {}


def install_client(backend: str, client) -> None:
    """Use `client` for `backend` from now on (before any computation has run)."""
    installed_clients[_canonical(backend)] = client
    get_client.cache_clear()
    _first_device.cache_clear()


@functools.lru_cache(maxsize=None)
def get_client(backend: str):
    """The PJRT client of "cpu" or "gpu"; a clear error when it is not available."""
    _load()
    backend = _canonical(backend)
    if backend in installed_clients:
        return installed_clients[backend]
    if backend == "gpu" and not gpu_available():
        raise BackendError("Unknown backend: 'gpu' requested, but no CUDA GPU and PJRT plugin are "
                           "available (install jax[cuda12]); use backend='cpu'")
    return _jax.local_devices(backend=backend)[0].client


def get_device(backend: str | None = None):
    """The device programs of `backend` run on: the default device
    (`funcad.default_device`) when it is one of that backend's (or `backend` is None),
    else the backend's first device (None: the default backend)."""
    chosen = _options.default_device
    if chosen is not None:
        device = _first_device(_canonical(chosen)) if isinstance(chosen, str) else chosen
        if backend is None or _canonical(backend) == _canonical(device.platform):
            return device
    return _first_device(default_backend() if backend is None else _canonical(backend))


@functools.lru_cache(maxsize=None)
def _first_device(backend: str):
    return get_client(backend).local_devices()[0]


# ------------------------------------------------------------------ compile ----

_exe_cache: OrderedDict = OrderedDict()
EXECUTABLE_CACHE_SIZE = 256


def compile_text(mlir: str, backend: str | None = None, host_callbacks: tuple = (),
                 fun_name: str = "main"):
    """Compile a textual StableHLO module for one device of `backend`.

    Executables are cached by (text, device) in a bounded LRU, so a program
    that lowers to the same text is compiled once. `host_callbacks` are the
    Python functions its `xla_ffi_python_cpu_callback` custom calls name by index.
    A compilation is reported to funcad.monitoring's listeners with `fun_name`.
    """
    device = get_device(backend)
    key = (mlir, device.id, device.platform, compiler_overrides)
    # A program with callbacks is compiled afresh: its text names them only by index.
    exe = None if host_callbacks else _exe_cache.get(key)
    if exe is not None:
        _exe_cache.move_to_end(key)
        return exe
    client = get_client(_canonical(device.platform))  # the default device's may differ from backend's
    options = _compile_options(device, client)
    if host_callbacks:
        compile_ = functools.partial(compile_with_callbacks, client, mlir, [device], options,
                                     list(host_callbacks))
    elif hasattr(client, "compile_and_load"):  # jaxlib >= 0.7
        compile_ = functools.partial(client.compile_and_load, mlir, [device], options)
    else:  # jaxlib 0.6: compile returns a loaded executable
        compile_ = functools.partial(client.compile, mlir, options)
    # Long programs (tens of thousands of operations) overflow the 8 MiB main
    # stack in MLIR's and XLA's recursive passes and kill the process; they
    # are compiled on a thread with a large stack instead.
    persistent = None if host_callbacks or not compilation_cache.active() else \
        compilation_cache.key(mlir, device, compiler_overrides)
    if persistent is not None:  # compiled by an earlier process?
        exe = compilation_cache.load(persistent, functools.partial(_deserialize, client, device, options))
        if exe is not None:
            _exe_cache[key] = exe
            return exe
    start = time.perf_counter()
    with monitoring.timed(monitoring.BACKEND_COMPILE_EVENT, fun_name=fun_name):
        exe = compile_() if mlir.count("\n") < BIG_PROGRAM_LINES else _on_big_stack(compile_)
    if host_callbacks:
        return exe
    if persistent is not None:
        compilation_cache.store(persistent, client.serialize_executable(exe), time.perf_counter() - start)
    _exe_cache[key] = exe
    if len(_exe_cache) > EXECUTABLE_CACHE_SIZE:
        _exe_cache.popitem(last=False)
    return exe


def _deserialize(client, device, options, data: bytes):
    """A serialized executable loaded onto `device` (jaxlib 0.6 takes no devices)."""
    if hasattr(client, "compile_and_load"):
        return client.deserialize_executable(data, _xc.DeviceList((device,)), options)
    return client.deserialize_executable(data, options)


def compile_with_callbacks(client, mlir: str, devices, options, callbacks: list):
    """Compile a program for `devices` that calls Python functions on the host. jaxlib
    0.6's `compile` takes the text and the callbacks; later ones take them only with an
    MLIR module, parsed here in an MLIR context of jaxlib's own bindings."""
    if not hasattr(client, "compile_and_load"):
        return client.compile(mlir, options, host_callbacks=callbacks)
    with _mlir_context():
        module = _jl.ir.Module.parse(mlir)
        return client.compile_and_load(module, executable_devices=_xc.DeviceList(tuple(devices)),
                                       compile_options=options, host_callbacks=callbacks)


@functools.lru_cache(maxsize=None)
def _mlir_registry():
    jl = jaxlib_modules()
    registry = jl.ir.DialectRegistry()
    jl.mlir_dialects.register_dialects(registry)  # func, arith, ... as jaxlib's MLIR knows them
    return registry


def _mlir_context():
    """An MLIR context of jaxlib's own bindings that parses funcad's StableHLO text
    (the upstream dialects plus stablehlo, chlo and Shardy's sdy)."""
    jl = jaxlib_modules()
    ctx = jl.ir.Context()
    ctx.append_dialect_registry(_mlir_registry())
    ctx.load_all_available_dialects()
    for dialect in (jl.stablehlo, jl.chlo, jl.sdy):
        dialect.register_dialect(ctx)
    return ctx


def mlir_module(text: str):
    """StableHLO text as a module object of jaxlib's MLIR bindings (what JAX's
    `Lowered.compiler_ir()` gives)."""
    with _mlir_context():
        return _jl.ir.Module.parse(text)


def hlo_computation(text: str):
    """StableHLO text converted by jaxlib to an XLA computation (`.as_hlo_text()`)."""
    return _load()._xla.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False,
                                                            return_tuple=False)


BIG_PROGRAM_LINES = 2000
_STACK_BYTES = 1 << 30  # virtual: only the pages a compilation touches are committed


def _on_big_stack(fn):
    """fn() on a fresh thread with a large stack; its result or its exception."""
    out: list = []

    def run():
        try:
            out.append((True, fn()))
        except BaseException as e:  # handed to the caller's thread
            out.append((False, e))

    with _stack_lock:
        old = threading.stack_size(_STACK_BYTES)
        try:
            t = threading.Thread(target=run, name="funcad-compile")
            t.start()
        finally:
            threading.stack_size(old)
    t.join()
    ok, value = out[0]
    if not ok:
        raise value
    return value


_stack_lock = threading.Lock()  # threading.stack_size is process-wide


compiler_overrides: tuple = ()  # (name, value) pairs `compiler_options` sets for one compile

# Names JAX sets on the options objects rather than as XLA debug options.
_ON_COMPILE_OPTIONS = ("individually_defined_output_indices",)
_ON_BUILD_OPTIONS = ("optimization_level", "memory_fitting_level")
_EFFORT_LEVELS = (0, 9, 19, 29, 39)  # XLA's effort levels: unknown, O0 .. O3


@contextlib.contextmanager
def compiler_options(options: dict | None):
    """Compile with XLA options `options` ({name: value}, as JAX's
    `Lowered.compile(compiler_options=...)`) inside the block; XLA checks the
    names and values (an unknown name raises its "No such compile option")."""
    global compiler_overrides
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"compiler_options must be a dict of XLA option names to values, got "
                        f"{type(options).__name__}")
    for name in _ON_BUILD_OPTIONS:
        if options and name in options and options[name] not in _EFFORT_LEVELS:
            raise ValueError(f"{options[name]!r} is not a valid CompilerEffortLevel (for {name}: "
                             f"one of {', '.join(map(str, _EFFORT_LEVELS))})")
    old, compiler_overrides = compiler_overrides, tuple(sorted((options or {}).items()))
    try:
        yield
    finally:
        compiler_overrides = old


def _apply_overrides(options) -> None:
    rest = []
    for name, value in compiler_overrides:
        if name in _ON_COMPILE_OPTIONS:
            setattr(options, name, value)
        elif name in _ON_BUILD_OPTIONS:
            setattr(options.executable_build_options, name, value)
        else:
            rest.append((name, value))
    options.env_option_overrides = rest


def _compile_options(device, client):
    """Single-device compile options. On GPUs, jax's own defaults where this jax
    exports them (jax.extend.backend.get_compile_options, jax >= 0.7: they carry
    the CUDA data directory and effort levels); else, and always on the CPU, built
    directly with the same replica, partition and device settings. (On the CPU
    both give the same optimized HLO, checked on jaxlib 0.12; building them
    directly spares the cold start the import of jax.extend.)"""
    if device.platform != "cpu":
        get = real_jax_attr("extend.backend.get_compile_options")  # None on jax 0.6
        if get is not None:
            options = get(num_replicas=1, num_partitions=1, device_assignment=[device], backend=client)
            if compiler_overrides:
                _apply_overrides(options)
            return options
    options = _xc.CompileOptions()
    options.num_replicas = options.executable_build_options.num_replicas = 1
    options.num_partitions = options.executable_build_options.num_partitions = 1
    assignment = _xc.DeviceAssignment.create(np.array([[device.id]]))
    options.device_assignment = options.executable_build_options.device_assignment = assignment
    if compiler_overrides:
        _apply_overrides(options)
    return options


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


class _Paths:
    """The transfer and result-handling calls this jaxlib accepts, probed once.

    `put(aval, sharding, x, device)` copies a NumPy array to the device;
    `handler(aval, sharding)` makes a result handler or None, where None means
    outputs are taken with the public `disassemble_into_single_device_arrays`.
    """

    def __init__(self, put, put_name, handler, handler_name):
        self.put, self.put_name = put, put_name
        self.handler, self.handler_name = handler, handler_name


def _put_private(aval, sh, x, device):
    # Positional: keyword parsing costs ~1 us per call in nanobind.
    return _xc.batched_device_put(aval, sh, [x], [device], True, False, _COPY, True)


def jax_x64_scope():
    """A `with` scope in which jax keeps 64-bit dtypes. Without it jax's public
    plumbing (device_put, DLPack import) would turn float64 into float32; the
    switch is scoped so the user's own jax setting is left alone."""
    _load()
    if hasattr(_jax, "enable_x64"):
        return _jax.enable_x64(True)
    return real_jax_attr("experimental.enable_x64")()  # jax < 0.7


def _put_public(aval, sh, x, device):
    with jax_x64_scope():
        return _jax.device_put(np.array(x, copy=True), device)


def _handler_private_checked(aval, sh):
    return _xc.array_result_handler(aval, sh, True, _skip_checks=True)


def _handler_private(aval, sh):
    return _xc.array_result_handler(aval, sh, True)


@functools.lru_cache(maxsize=None)
def _paths(device) -> _Paths:
    """Probe the fast private calls on `device` once, falling back to public ones."""
    _load()
    sh = sharding(device)
    probe = np.arange(3, dtype=np.float64)
    aval = _jax_aval(probe.shape, probe.dtype)
    put = None
    for fn, name in ((_put_private, "batched_device_put"), (_put_public, "jax.device_put")):
        try:
            buf = fn(aval, sh, probe, device)
            if np.asarray(buf).dtype == probe.dtype and np.array_equal(np.asarray(buf), probe):
                put = (fn, name)
                break
        except Exception:  # a changed signature: try the next path
            continue
    if put is None:
        raise _unsupported("no way to copy a float64 array to the device worked")
    handler = (None, "disassemble_into_single_device_arrays")
    for fn, name in ((_handler_private_checked, "array_result_handler(_skip_checks)"),
                     (_handler_private, "array_result_handler")):
        try:
            fn(aval, sh)
            handler = (fn, name)
            break
        except Exception:
            continue
    return _Paths(put[0], put[1], handler[0], handler[1])


def plumbing(backend: str | None = None) -> dict:
    """Which device-transfer paths funcad uses with this jaxlib (for diagnostics).

    >>> sorted(plumbing("cpu"))
    ['jaxlib', 'put', 'results']
    """
    p = _paths(get_device(backend))
    return {"jaxlib": jaxlib_version(), "put": p.put_name, "results": p.handler_name}


def device_put(x, device):
    """Copy a NumPy array or scalar to `device` (the host memory is copied, never aliased)."""
    x = np.asarray(x)
    return _paths(device).put(_jax_aval(x.shape, x.dtype), sharding(device), x, device)


def host_putter(shape, dtype, device, other=None):
    """A fast `device_put` for NumPy arrays (and, for shape (), NumPy scalars) of
    exactly this shape's dtype; anything else goes to `other(x)` when given.
    The dtype test lives here so the hot path is one Python call."""
    dtype = np.dtype(dtype)
    aval, sh, put = _jax_aval(tuple(shape), dtype), sharding(device), _paths(device).put
    scalar = dtype.type if tuple(shape) == () else None
    if other is None:
        other = functools.partial(put, aval, sh, device=device)
    if put is _put_private:  # the hot path: one C++ call
        devs, bput, nd = [device], _xc.batched_device_put, np.ndarray

        def put_host(x):
            t = type(x)
            if (t is nd and x.dtype == dtype) or t is scalar:
                return bput(aval, sh, [x], devs, True, False, _COPY, True)
            return other(x)
        return put_host
    return lambda x: put(aval, sh, x, device) if type(x) is np.ndarray and x.dtype == dtype \
        else other(x)


def result_handlers(out_avals, device) -> list | None:
    """Prebuilt C++ handlers that turn an execution's raw outputs into device
    arrays, or None where this jaxlib offers none (see `execute`)."""
    make = _paths(device).handler
    if make is None:
        return None
    sh = sharding(device)
    return [make(_jax_aval(tuple(a.shape), np.dtype(a.dtype)), sh) for a in out_avals]


def runner(exe, handlers: list | None, effects: bool = False):
    """bufs -> the outputs of compiled `exe` as device arrays (the dispatch hot path).
    With `effects` (a program that calls back into Python), each run's runtime token is
    kept for `effects_barrier`."""
    run = tokened(exe) if effects else exe.execute_sharded
    if handlers is not None:
        return lambda bufs: run(bufs).consume_with_handlers(handlers)
    return lambda bufs: [xs[0] for xs in run(bufs).disassemble_into_single_device_arrays()]


# The runtime token of the last effectful run per device set: the runs on one device
# are ordered, so waiting for the last one waits for all before it.
_runtime_tokens: dict = {}


def tokened(exe) -> Callable:
    """`exe.execute_sharded` that records each run's runtime token for `effects_barrier`."""
    run, key = exe.execute_sharded, tuple(d.id for d in exe.local_devices())

    def execute_sharded(bufs):
        results = run(bufs, with_tokens=True)
        _runtime_tokens[key] = results.consume_token()
        return results
    return execute_sharded


def effects_barrier() -> None:
    """Wait until every jitted program run so far has finished its callbacks; an error
    raised in one of them is raised here (the first one, if several failed)."""
    tokens = list(_runtime_tokens.values())
    _runtime_tokens.clear()
    first = None
    for t in tokens:
        try:
            t.block_until_ready()
        except Exception as e:  # noqa: BLE001  (collected, the first re-raised below)
            first = first or e
    if first is not None:
        raise first


def _backend_option(name: str, v):
    return None if v is None or v == "" else _canonical(v)


def _device_option(name: str, v):
    if v is None or v == "":
        return None
    if isinstance(v, str):
        try:
            return _canonical(v)
        except BackendError:
            pass
    elif hasattr(v, "platform") and hasattr(v, "id") and hasattr(v, "client"):
        return v
    raise FuncadTypeError(f"config option {name} takes a Device object (e.g. funcad.devices('cpu')[0]) "
                          f"or a platform name string like 'cpu' or 'gpu', or None; got {v!r}")


_options.bind("default_backend", on_set=set_default_backend, get=lambda: _default_backend,
              validate=_backend_option)
_options.bind("default_device", validate=_device_option)
