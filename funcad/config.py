"""funcad's global settings: read them as attributes, set them with `update`,
or for a block of code with `override`.

| option               | default                      | environment variable          |
| -------------------- | ---------------------------- | ----------------------------- |
| debug_nans           | False                        | FUNCAD_DEBUG_NANS=1           |
| default_backend      | None (GPU if present, else CPU) | FUNCAD_BACKEND=cpu          |
| jit_cache_size       | 128 signatures per function  | FUNCAD_JIT_CACHE_SIZE=64      |
| traceback_filtering  | "on"                         | FUNCAD_TRACEBACK_FILTERING=off |
| enable_x64           | True (NumPy's 64-bit dtypes) | FUNCAD_ENABLE_X64=0 or JAX_ENABLE_X64=0 |
| default_prng_impl    | "threefry2x32"               | FUNCAD_DEFAULT_PRNG_IMPL=rbg  |
| threefry_partitionable | True                       | FUNCAD_THREEFRY_PARTITIONABLE=0 |
| debug_infs           | False                        | FUNCAD_DEBUG_INFS=1           |
| default_matmul_precision | None (each op's default) | FUNCAD_DEFAULT_MATMUL_PRECISION=float32 |
| numpy_rank_promotion | "allow" ("warn", "raise")    | FUNCAD_NUMPY_RANK_PROMOTION=raise |
| log_compiles         | False                        | FUNCAD_LOG_COMPILES=1         |
| no_tracing           | False                        | FUNCAD_NO_TRACING=1           |
| no_execution         | False                        | FUNCAD_NO_EXECUTION=1         |
| enable_checks        | False                        | FUNCAD_ENABLE_CHECKS=1        |
| numpy_dtype_promotion | "standard" ("strict")       | FUNCAD_NUMPY_DTYPE_PROMOTION=strict |
| explain_cache_misses | False                        | FUNCAD_EXPLAIN_CACHE_MISSES=1 |
| default_device       | None (the backend's first)   | FUNCAD_DEFAULT_DEVICE=cpu     |
| transfer_guard       | "allow" (sets the three below) | FUNCAD_TRANSFER_GUARD=disallow |
| transfer_guard_host_to_device, _device_to_device, _device_to_host | "allow" | FUNCAD_TRANSFER_GUARD_HOST_TO_DEVICE=log, ... |
| legacy_prng_key      | "allow" ("warn", "error")    | FUNCAD_LEGACY_PRNG_KEY=error  |
| softmax_custom_jvp   | False                        | FUNCAD_SOFTMAX_CUSTOM_JVP=1   |
| check_tracer_leaks   | False                        | FUNCAD_CHECK_TRACER_LEAKS=1   |
| enable_custom_prng   | False                        | FUNCAD_ENABLE_CUSTOM_PRNG=1   |
| compilation_cache_dir | None (no persistent cache)  | FUNCAD_COMPILATION_CACHE_DIR=/tmp/fc |
| enable_compilation_cache | True                     | FUNCAD_ENABLE_COMPILATION_CACHE=0 |
| persistent_cache_min_compile_time_secs | 1.0        | FUNCAD_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS=0 |
| persistent_cache_min_entry_size_bytes | 0           | FUNCAD_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES=0 |
| debug_key_reuse      | False                        | FUNCAD_DEBUG_KEY_REUSE=1      |

Every option is also accepted under JAX's name, `jax_<option>`
(`funcad.config.update("jax_debug_nans", True)`), and those JAX has as context managers
are top-level scopes too: `with funcad.debug_nans(True):` (see funcad/_toplevel.py).

`enable_x64`, `default_prng_impl` and `threefry_partitionable` are also accepted under
JAX's names, `jax_enable_x64`, `jax_default_prng_impl`, `jax_threefry_partitionable`
(`funcad.random` reads the last two: the implementation of keys made without `impl=`,
and threefry's counter layout; see `funcad.core.prng_settings`). Off, funcad
gives values JAX's default 32-bit dtypes (see `funcad.core.x64`), so a program
written for JAX computes the same numbers; `funcad.enable_x64(False)` switches
it for a block.

>>> import funcad
>>> funcad.config.debug_nans
False
>>> with funcad.config.override(debug_nans=True):
...     print(funcad.config.debug_nans)
True
>>> funcad.config.update("jit_cache_size", 64); funcad.config.jit_cache_size
64
>>> funcad.config.update("jit_cache_size", 128)
"""
import contextlib as _contextlib
import difflib as _difflib
import os as _os
import sys as _sys
from typing import Callable as _Callable, Iterator as _Iterator

from .core.errors import FuncadTypeError as _FuncadTypeError
from .core import traceback_util as _traceback_util
from .core import options as _opts, prng_settings as _prng, x64 as _x64
from .lowering import compilation_cache as _pcache, xla as _xla
from .transforms import jit as _jit


def _bool(name: str, v) -> bool:
    if isinstance(v, str) and v.lower() in ("1", "true", "on", "yes", "0", "false", "off", "no", ""):
        return v.lower() in ("1", "true", "on", "yes")
    if isinstance(v, (bool, int)) and v in (0, 1):
        return bool(v)
    raise _FuncadTypeError(f"config option {name} takes True or False, got {v!r}")


def _filtering(name: str, v) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, str) and v.lower() in ("on", "off", "auto", "1", "0", "true", "false"):
        return "off" if v.lower() in ("off", "0", "false") else "on"
    raise _FuncadTypeError(f"config option {name} takes 'on' or 'off', got {v!r}")


def _backend(name: str, v):
    if v is None or v == "":
        return None
    return _xla._canonical(v)


def _cache_size(name: str, v) -> int:
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise _FuncadTypeError(f"config option {name} takes a positive int, got {v!r}")
    return v


# -- where each option lives: its reader and writer ---------------------------

def _set_backend(v) -> None:
    _xla.set_default_backend(v)


def _get_backend():
    return _xla._default_backend


def _set_cache_size(n: int) -> None:
    _jit.CACHE_SIZE = n
    for f in list(_jit._live):  # shrink the caches that are now too big
        while len(f._cache) > n:
            f._cache.popitem(last=False)
        f._fast.clear()


def _get_cache_size() -> int:
    return _jit.CACHE_SIZE


def _set_x64(v: bool) -> None:
    if v == _x64.enabled:
        return
    _x64.set_enabled(v)
    from .transforms import jit
    for f in list(jit._live):  # their fast paths are keyed on the arguments' dtypes alone
        f._fast.clear()


def _prng_impl(name: str, v) -> str:
    if v not in _prng.IMPLS:
        raise _FuncadTypeError(f"config option {name} takes one of {', '.join(map(repr, _prng.IMPLS))}, "
                               f"got {v!r}")
    return v


def _set_prng(setter):
    def set_(v) -> None:
        setter(v)
        for f in list(_jit._live):  # their fast paths skip the trace-cache key
            f._fast.clear()
    return set_


def _set_checks(nans: bool, infs: bool) -> None:
    from .transforms import debugging
    debugging.set_checks(nans, infs)


def _checks():
    from .transforms import debugging
    return debugging


def _choice(*allowed, none=False):
    def check(name: str, v):
        if none and v is None:
            return None
        if isinstance(v, str) and v in allowed:
            return v
        raise _FuncadTypeError(f"config option {name} takes one of {', '.join(map(repr, allowed))}"
                               f"{' or None' if none else ''}, got {v!r}")
    return check


_PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
               "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
               "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
               "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
               "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")


def _flag(attr: str, clear_fast: bool = False):
    """(get, set) of a flag in funcad.core.options; `clear_fast` drops jit's fast paths,
    which skip the checks or the trace-cache key the flag enters."""
    def set_(v) -> None:
        setattr(_opts, attr, v)
        if clear_fast:
            for f in list(_jit._live):
                f._fast.clear()
    return (lambda: getattr(_opts, attr)), set_


def _device(name: str, v):
    if v is None or v == "":
        return None
    if isinstance(v, str):
        try:
            return _xla._canonical(v)
        except _xla.BackendError:
            pass
    elif hasattr(v, "platform") and hasattr(v, "id") and hasattr(v, "client"):
        return v
    raise _FuncadTypeError(f"config option {name} takes a Device object (e.g. funcad.devices('cpu')[0]) "
                           f"or a platform name string like 'cpu' or 'gpu', or None; got {v!r}")


_GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_GUARDS = ("host_to_device", "device_to_device", "device_to_host")


def _guard_level(name: str, v):
    return "allow" if v is None else _choice(*_GUARD_LEVELS, none=True)(name, v)


def _set_guard(direction: str):
    def set_(v) -> None:
        setattr(_opts, "transfer_guard_" + direction, v)
        _opts.transfer_guards = any(getattr(_opts, "transfer_guard_" + d) != "allow" for d in _GUARDS)
        for f in list(_jit._live):  # the fast path does not check transfers
            f._fast.clear()
    return set_


_all_guards = ["allow"]  # the last level given to transfer_guard (JAX's is set-only)


def _set_all_guards(v) -> None:
    _all_guards[0] = v
    for d in _GUARDS:
        _set_guard(d)(v)


def _set_key_reuse(v) -> None:
    _opts.debug_key_reuse = v
    # Typed keys exist only once funcad.random (a lazy namespace) is loaded; it installs
    # the checks itself when it loads with the option on.
    checker = _sys.modules.get("funcad.random._key_reuse")
    if checker is not None:
        checker.set_enabled(v)


_legacy_prng_key = ["allow"]  # read by funcad.random (random/_keys.py: check_legacy)


def _set_legacy(v) -> None:
    _legacy_prng_key[0] = v


def _path_or_none(name: str, v):
    if v is None or v == "":
        return None
    if isinstance(v, (str, _os.PathLike)):
        return _os.fspath(v)
    raise _FuncadTypeError(f"config option {name} takes a directory path or None, got {v!r}")


def _float(name: str, v) -> float:
    try:
        if not isinstance(v, bool):
            return float(v)
    except (TypeError, ValueError):
        pass
    raise _FuncadTypeError(f"config option {name} takes a number, got {v!r}")


def _int(name: str, v) -> int:
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise _FuncadTypeError(f"config option {name} takes an int, got {v!r}")
    return v


def _cache_setting(attr: str):
    """(get, set) of a setting of the persistent compilation cache (lowering/compilation_cache.py)."""
    def set_(v) -> None:
        setattr(_pcache, attr, v)
        if attr == "cache_dir":
            _pcache.set_cache_dir(v)
    return (lambda: getattr(_pcache, attr)), set_


# name -> (validate(name, value), get(), set(value), environment variable, doc)
_OPTIONS: dict[str, tuple[_Callable, _Callable, _Callable, str, str]] = {
    "debug_nans": (_bool, lambda: _checks().NANS, lambda v: _set_checks(v, _checks().INFS),
                   "FUNCAD_DEBUG_NANS", "raise NaNError at the first primitive that produces a NaN"),
    "debug_infs": (_bool, lambda: _checks().INFS, lambda v: _set_checks(_checks().NANS, v),
                   "FUNCAD_DEBUG_INFS", "raise InfError at the first primitive that produces an inf"),
    "default_matmul_precision": (_choice(*_PRECISIONS, none=True),
                                 *_flag("default_matmul_precision", clear_fast=True),
                                 "FUNCAD_DEFAULT_MATMUL_PRECISION",
                                 "precision of dot/matmul/einsum/conv given none: JAX's names or a "
                                 "DotAlgorithmPreset name"),
    "numpy_rank_promotion": (_choice("allow", "warn", "raise"),
                             *_flag("numpy_rank_promotion", clear_fast=True),
                             "FUNCAD_NUMPY_RANK_PROMOTION",
                             "binary funcad.numpy ops on operands of different ranks: allow, warn, raise"),
    "log_compiles": (_bool, *_flag("log_compiles"), "FUNCAD_LOG_COMPILES",
                     "log each jit trace and XLA compilation (logger 'funcad', WARNING)"),
    "no_tracing": (_bool, *_flag("no_tracing"), "FUNCAD_NO_TRACING",
                   "a jit trace (a cache miss) raises RuntimeError"),
    "no_execution": (_bool, *_flag("no_execution", clear_fast=True), "FUNCAD_NO_EXECUTION",
                     "running a jitted function raises RuntimeError"),
    "enable_checks": (_bool, *_flag("enable_checks"), "FUNCAD_ENABLE_CHECKS",
                      "type-check every traced jaxpr (raises JaxprTypeError on a bad one)"),
    "numpy_dtype_promotion": (_choice("standard", "strict"), *_flag("numpy_dtype_promotion", clear_fast=True),
                              "FUNCAD_NUMPY_DTYPE_PROMOTION",
                              "implicit promotion between different dtypes: 'standard', or 'strict' "
                              "(refused, as JAX's TypePromotionError; Python scalars still mix)"),
    "explain_cache_misses": (_bool, *_flag("explain_cache_misses"), "FUNCAD_EXPLAIN_CACHE_MISSES",
                             "log why a jitted function traces again (logger 'funcad', WARNING)"),
    "default_device": (_device, *_flag("default_device", clear_fast=True), "FUNCAD_DEFAULT_DEVICE",
                       "the device jit (without shardings) and device_put without a device use: "
                       "a Device, a platform name, or None (the default backend's first device)"),
    "transfer_guard": (_guard_level, lambda: _all_guards[0], _set_all_guards, "FUNCAD_TRANSFER_GUARD",
                       "sets the three transfer guards at once: allow, log, disallow, "
                       "log_explicit, disallow_explicit"),
    **{f"transfer_guard_{d}": (_guard_level, (lambda d=d: getattr(_opts, "transfer_guard_" + d)),
                               _set_guard(d), f"FUNCAD_TRANSFER_GUARD_{d.upper()}",
                               f"{d.replace('_', '-')} transfers: allow, log, disallow (implicit ones), "
                               "log_explicit, disallow_explicit (all)")
       for d in _GUARDS},
    "legacy_prng_key": (_choice("allow", "warn", "error"), lambda: _legacy_prng_key[0], _set_legacy,
                        "FUNCAD_LEGACY_PRNG_KEY",
                        "raw uint32 keys passed to funcad.random functions: allow, warn, error "
                        "(typed keys from funcad.random.key always pass)"),
    "softmax_custom_jvp": (_bool, *_flag("softmax_custom_jvp", clear_fast=True), "FUNCAD_SOFTMAX_CUSTOM_JVP",
                           "nn.softmax's derivatives: its custom rule y*(dx - sum(y*dx)) (True) or the "
                           "formula's with the max held constant (False, JAX's default)"),
    "check_tracer_leaks": (_bool, *_flag("check_tracer_leaks"), "FUNCAD_CHECK_TRACER_LEAKS",
                           "raise TracerLeakError when a public call returns while a tracer of a "
                           "transformation it ran is still held (a global, closure, list, attribute)"),
    "enable_custom_prng": (_bool, *_flag("enable_custom_prng"), "FUNCAD_ENABLE_CUSTOM_PRNG",
                           "funcad.random's PRNGKey, split, fold_in and clone return typed keys, and "
                           "raw keys passed to it warn (FutureWarning), as JAX's option"),
    "debug_key_reuse": (_bool, lambda: _opts.debug_key_reuse, _set_key_reuse, "FUNCAD_DEBUG_KEY_REUSE",
                        "typed keys (funcad.random.key) are tracked, and using one after a sampler, "
                        "split or bits consumed it raises KeyReuseError, as JAX's option"),
    "default_backend": (_backend, _get_backend, _set_backend, "FUNCAD_BACKEND",
                        "backend jit uses when none is given: 'cpu', 'gpu' or None (automatic)"),
    "jit_cache_size": (_cache_size, _get_cache_size, _set_cache_size, "FUNCAD_JIT_CACHE_SIZE",
                       "compiled argument signatures kept per jitted function (LRU)"),
    "traceback_filtering": (_filtering, lambda: _traceback_util.filtering,
                            lambda v: setattr(_traceback_util, "filtering", v),
                            "FUNCAD_TRACEBACK_FILTERING",
                            "'on' hides funcad's internal frames from tracebacks, 'off' shows them"),
    "enable_x64": (_bool, lambda: _x64.enabled, _set_x64, "FUNCAD_ENABLE_X64",
                   "64-bit dtypes as in NumPy (True) or JAX's default 32-bit dtypes (False)"),
    "default_prng_impl": (_prng_impl, lambda: _prng.default_impl, _set_prng(_prng.set_default_impl),
                          "FUNCAD_DEFAULT_PRNG_IMPL",
                          "PRNG implementation of keys made without impl=: threefry2x32, rbg, "
                          "unsafe_rbg, threefry4x32, philox2x32, philox4x32"),
    "compilation_cache_dir": (_path_or_none, *_cache_setting("cache_dir"), "FUNCAD_COMPILATION_CACHE_DIR",
                              "directory of the persistent compilation cache (None: no cache); "
                              "see funcad.experimental.compilation_cache"),
    "enable_compilation_cache": (_bool, *_cache_setting("enabled"), "FUNCAD_ENABLE_COMPILATION_CACHE",
                                 "False turns the persistent compilation cache off even with a directory"),
    "persistent_cache_min_compile_time_secs": (_float, *_cache_setting("min_compile_time_secs"),
                                               "FUNCAD_PERSISTENT_CACHE_MIN_COMPILE_TIME_SECS",
                                               "programs that compile quicker are not written to the cache"),
    "persistent_cache_min_entry_size_bytes": (_int, *_cache_setting("min_entry_size_bytes"),
                                              "FUNCAD_PERSISTENT_CACHE_MIN_ENTRY_SIZE_BYTES",
                                              "smaller cache entries are not written (0 or -1: any size)"),
    "threefry_partitionable": (_bool, lambda: _prng.threefry_partitionable,
                               _set_prng(_prng.set_threefry_partitionable),
                               "FUNCAD_THREEFRY_PARTITIONABLE",
                               "threefry's counter layout: JAX's current (True) or older (False) bits"),
}
# JAX's names for funcad's options.
_ALIASES = {"jax_enable_x64": "enable_x64", "jax_default_prng_impl": "default_prng_impl",
            "jax_threefry_partitionable": "threefry_partitionable"}


def _option(name: str):
    name = _ALIASES.get(name, name)
    if name.startswith("jax_") and name[4:] in _OPTIONS:  # JAX's name of every option
        name = name[4:]
    opt = _OPTIONS.get(name)
    if opt is None:
        near = _difflib.get_close_matches(name, list(_OPTIONS), n=3)
        hint = f" Did you mean {', '.join(repr(n) for n in near)}?" if near else ""
        raise AttributeError(f"funcad.config has no option {name!r}.{hint} Options: "
                             f"{', '.join(_OPTIONS)}.")
    return opt


def update(name: str, value) -> None:
    """Set option `name` (see the module docstring for the list).

    >>> import funcad
    >>> funcad.config.update("traceback_filtering", "off")
    >>> funcad.config.traceback_filtering
    'off'
    >>> funcad.config.update("traceback_filtering", "on")
    """
    check, _, set_, _, _ = _option(name)
    set_(check(name, value))


def config_with_absl() -> None:
    """Register an absl flag `--jax_<option>` for every option (as JAX's
    `config.config_with_absl`); the flags given on the command line are applied once
    `absl.app.run(main)` has parsed them. Needs the absl-py package.

    >>> import funcad
    >>> funcad.config.config_with_absl()  # then: absl.app.run(main)
    """
    try:
        from absl import app, flags
    except ImportError:
        raise ImportError("config_with_absl needs the absl-py package (pip install absl-py)") from None
    names = []
    for name, (check, get, _, _, doc) in _OPTIONS.items():
        flag = f"jax_{name}"
        if flag in flags.FLAGS:  # defined by an earlier call (or by JAX itself)
            names.append(name)
            continue
        value = get()
        if isinstance(value, bool):
            flags.DEFINE_bool(flag, value, doc)
        else:
            flags.DEFINE_string(flag, None if value is None else str(value), doc)
        names.append(name)

    def complete():
        for name in names:
            flag = flags.FLAGS[f"jax_{name}"]
            if flag.present:
                update(name, flag.value)
    app.call_after_init(complete)


def read(name: str):
    """The current value of option `name` (also readable as `funcad.config.<name>`)."""
    return _option(name)[1]()


@_contextlib.contextmanager
def override(**values) -> _Iterator[None]:
    """Set options for the duration of a `with` block, then restore them.

    >>> import funcad, funcad.numpy as fnp
    >>> with funcad.config.override(debug_nans=True):
    ...     fnp.log(-1.0)  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    funcad.core.errors.NaNError: debug_nans: primitive `log` produced a NaN ...
    """
    old = {k: read(k) for k in values}
    try:
        for k, v in values.items():
            update(k, v)
        yield
    finally:
        for k, v in old.items():
            _option(k)[2](v)


def values() -> dict:
    """Every option and its current value."""
    return {k: read(k) for k in _OPTIONS}


def describe() -> str:
    """One line per option: name, value, environment variable and meaning."""
    return "\n".join(f"{k} = {read(k)!r}  ({env}; {doc})" for k, (_, _, _, env, doc) in _OPTIONS.items())


__all__ = ["update", "read", "override", "values", "describe", "config_with_absl", *_OPTIONS]


def __getattr__(name: str):
    if name.startswith("__"):
        raise AttributeError(name)
    return read(name)


def __dir__():
    return sorted(list(globals()) + list(_OPTIONS))


def _from_environment() -> None:
    for name, (check, _, set_, env, _) in _OPTIONS.items():
        raw = _os.environ.get(env)
        if not raw and name == "enable_x64":
            raw = _os.environ.get("JAX_ENABLE_X64")
        if raw and name != "default_backend":  # xla reads FUNCAD_BACKEND itself, lazily
            set_(check(name, raw))


_from_environment()
