"""JAX's top-level option scopes and environment helpers.

Each option of `funcad.config` that JAX also offers as a context manager is one here:
`with funcad.debug_nans(True):`, `with funcad.numpy_rank_promotion("raise"):`, ...
(`.value` reads the current setting). The helpers: `Device`, `host_count`, `host_id`,
`host_ids`, `process_indices`, `live_arrays`, `copy_to_host_async`,
`print_environment_info`.

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> with funcad.numpy_rank_promotion("raise"):
...     fnp.ones((2, 3)) + fnp.ones(3)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: Operands could not be broadcast together for add on shapes (2, 3) (3,) ...
>>> funcad.process_indices()
[0]
"""
from __future__ import annotations

import contextlib
import gc
import importlib.metadata
import platform
import sys
from typing import Any, Iterator

from ._helpers import _NO_ARG, _OptionScope, process_count, process_index
from .core.pytree import tree_leaves
from .lowering import xla
from .lowering.array import Array, ShardedArray

__all__ = ["check_tracer_leaks", "checking_leaks", "copy_to_host_async", "debug_infs", "debug_key_reuse", "effects_barrier", "enable_custom_prng", "debug_nans", "default_device",
           "default_matmul_precision", "enable_checks", "explain_cache_misses", "host_count",
           "host_id", "host_ids", "legacy_prng_key", "live_arrays", "log_compiles", "no_execution", "no_tracing",
           "numpy_dtype_promotion", "numpy_rank_promotion", "print_environment_info",
           "process_indices", "softmax_custom_jvp", "transfer_guard", "transfer_guard_device_to_device",
           "transfer_guard_device_to_host", "transfer_guard_host_to_device"]


def _scope(option: str, default_arg, doc: str) -> _OptionScope:
    scope = _OptionScope(option, default_arg)
    scope.__doc__ = doc
    return scope


debug_nans = _scope("debug_nans", True, """`with funcad.debug_nans(True):` each primitive that makes a
NaN raises NaNError (a FloatingPointError) naming it and the user's line, eagerly and under jit.""")
debug_key_reuse = _scope("debug_key_reuse", True, """`with funcad.debug_key_reuse(True):` typed keys
(funcad.random.key) are checked as JAX checks them: using a key after a sampler, `split` or
`bits` consumed it raises funcad.errors.KeyReuseError, eagerly, at jitted calls and inside
traced programs (see funcad/random/_key_reuse.py).""")
debug_infs = _scope("debug_infs", True, """`with funcad.debug_infs(True):` each primitive that makes an
inf raises InfError (a FloatingPointError), as debug_nans does for NaNs.""")
default_matmul_precision = _scope("default_matmul_precision", _NO_ARG, """`with
funcad.default_matmul_precision("float32"):` dot, matmul, einsum, tensordot and convolutions
given no `precision=` use this one (JAX's names: 'default', 'high', 'highest', 'bfloat16',
'tensorfloat32', 'float32', or a DotAlgorithmPreset name such as 'BF16_BF16_F32').""")
numpy_rank_promotion = _scope("numpy_rank_promotion", _NO_ARG, """`with
funcad.numpy_rank_promotion("raise"):` (or "warn") binary funcad.numpy operations refuse
(or warn about) broadcasting operands of different nonzero ranks, as JAX's.""")
check_tracer_leaks = _scope("check_tracer_leaks", True, """`with funcad.check_tracer_leaks(True):`
a public call (grad, jit, vmap, ... or a transformed function) that returns while a tracer
of a transformation it ran is still held by user code (a global, a closure, a list, an
attribute) raises TracerLeakError naming the tracer and what holds it. It costs a garbage
collection per outermost call, so it is off by default, as in JAX.""")


def effects_barrier() -> None:
    """Wait until every jitted function called so far has finished its callbacks
    (`debug.callback`, `debug.print`, `io_callback`, `pure_callback`), as JAX's: dispatch
    is asynchronous, so without it a callback may still be running when the call returns.
    An error raised inside one of them is raised here.

    >>> import funcad, funcad.numpy as fnp
    >>> f = funcad.jit(lambda x: funcad.debug.print("x = {}", x) or x + 1)
    >>> y = f(1.0); funcad.effects_barrier()
    x = 1.0
    """
    xla.effects_barrier()


def checking_leaks() -> _OptionScope:
    """`with funcad.checking_leaks():` is `with funcad.check_tracer_leaks(True):`.

    >>> import funcad, funcad.numpy as fnp
    >>> with funcad.checking_leaks():
    ...     float(funcad.grad(fnp.sin)(0.0))
    1.0
    """
    return check_tracer_leaks(True)


enable_custom_prng = _scope("enable_custom_prng", True, """`with funcad.enable_custom_prng(True):`
funcad.random's `PRNGKey`, `split`, `fold_in` and `clone` return typed key arrays (as
`funcad.random.key` does) and a raw uint32 key passed to a funcad.random function warns
(FutureWarning), as JAX's option does; the bits are unchanged.

>>> import funcad, funcad.random as fr
>>> with funcad.enable_custom_prng(True):
...     print(fr.PRNGKey(0).dtype)
key<fry>
""")
log_compiles = _scope("log_compiles", True, """`with funcad.log_compiles(True):` each jit trace and
XLA compilation is logged at WARNING level on the "funcad" logger.""")
no_tracing = _scope("no_tracing", True, """`with funcad.no_tracing(True):` a jitted function that would
trace (a new argument signature) raises RuntimeError: checks that a loop reuses its compilations.""")
no_execution = _scope("no_execution", True, """`with funcad.no_execution(True):` running a jitted
function raises RuntimeError (tracing and lowering still work).""")
enable_checks = _scope("enable_checks", True, """`with funcad.enable_checks(True):` every traced jaxpr
is type-checked (each equation's outputs against its primitive's shape rule; JaxprTypeError).""")
numpy_dtype_promotion = _scope("numpy_dtype_promotion", _NO_ARG, """`with
funcad.numpy_dtype_promotion("strict"):` funcad.numpy operations and `result_type` refuse to
promote between different dtypes (JAX's TypePromotionError); weakly typed Python scalars still
join arrays of their kind or a wider one (`x_f32 * 2` is fine, `x_i32 * 2.0` is not).

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> with funcad.numpy_dtype_promotion("strict"):
...     fnp.ones(2, np.float32) * 2.0
...     fnp.ones(2, np.float32) + fnp.ones(2, np.int32)  # doctest: +ELLIPSIS
array([2., 2.], dtype=float32)
Traceback (most recent call last):
...
funcad.core.errors.TypePromotionError: Input dtypes ('float32', 'int32') have no available ...""")
explain_cache_misses = _scope("explain_cache_misses", True, """`with funcad.explain_cache_misses(True):`
each time a jitted function traces again, a WARNING on the "funcad" logger says why, in JAX's
words: the argument (by name and path) whose shape, dtype or weak type changed, the pytree that
changed, the static argument or the configuration option.""")
default_device = _scope("default_device", _NO_ARG, """`with funcad.default_device(device):` jitted
functions (without in_shardings) run on `device` and `device_put` without a device copies there
(a Device, a platform name such as "cpu", or None for the default backend's first device). Eager
operations run on NumPy, on the host, as before; jit's cache keys on the setting.

>>> import funcad, numpy as np
>>> cpu = funcad.devices("cpu")[-1]
>>> with funcad.default_device(cpu):
...     funcad.jit(lambda x: x + 1)(np.ones(2)).devices() == {cpu}
True""")
transfer_guard_host_to_device = _scope("transfer_guard_host_to_device", _NO_ARG, """`with
funcad.transfer_guard_host_to_device(level):` guards copies of NumPy arrays and Python scalars
to a device: 'allow', 'log' (implicit ones: arguments of jitted calls), 'disallow' (implicit
ones raise; `device_put` is explicit and allowed), 'log_explicit', 'disallow_explicit' (all).""")
transfer_guard_device_to_device = _scope("transfer_guard_device_to_device", _NO_ARG, """`with
funcad.transfer_guard_device_to_device(level):` guards copies between devices: implicit ones (an
Array of one device passed to a program compiled for another) and explicit ones (`device_put`
to another device); the levels as for transfer_guard_host_to_device.""")
transfer_guard_device_to_host = _scope("transfer_guard_device_to_host", _NO_ARG, """`with
funcad.transfer_guard_device_to_host(level):` guards reading device Arrays on the host: implicit
(`np.asarray`, `float`, printing, eager funcad.numpy operations on them) and explicit
(`device_get`). As in JAX, an array on a CPU device is host memory already: no transfer.""")

softmax_custom_jvp = _scope("softmax_custom_jvp", True, """`with funcad.softmax_custom_jvp(True):`
funcad.nn.softmax is differentiated by its custom rule y * (dx - sum(y * dx)), as JAX's option
of that name; off (the default, as JAX's) by the formula with its max held constant.
log_softmax's derivatives are the same either way (as in JAX).

>>> import funcad, funcad.nn as nn, numpy as np
>>> with funcad.softmax_custom_jvp(True):
...     print(funcad.grad(lambda x: nn.softmax(x)[0])(np.zeros(2)))
[ 0.25 -0.25]""")

legacy_prng_key = _scope("legacy_prng_key", _NO_ARG, """`with funcad.legacy_prng_key("error"):` raw
uint32 keys (`funcad.random.PRNGKey`, or their splits) passed to funcad.random functions raise
ValueError ("warn": a UserWarning) with JAX's text; typed keys (`funcad.random.key`) pass.

>>> import funcad, warnings
>>> with funcad.legacy_prng_key("error"):
...     funcad.random.split(funcad.random.PRNGKey(0))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: Legacy uint32 key array passed as key to funcad.random function. ...""")


class _TransferGuard(_OptionScope):
    """`with funcad.transfer_guard(level):` all three directions at `level` in the block, each
    restored on leaving it (as JAX's)."""

    @contextlib.contextmanager
    def __call__(self, new_val=_NO_ARG) -> Iterator[None]:
        from . import config
        if new_val is _NO_ARG:
            raise TypeError("funcad.transfer_guard() needs the level to set in the block")
        # the set-all option first: restored first, then each direction to its own level
        with config.override(transfer_guard=new_val, transfer_guard_host_to_device=new_val,
                             transfer_guard_device_to_device=new_val,
                             transfer_guard_device_to_host=new_val):
            yield


transfer_guard = _TransferGuard("transfer_guard", _NO_ARG)
transfer_guard.__doc__ = """`with funcad.transfer_guard(level):` guards every transfer between the host
and devices: 'allow', 'log' or 'disallow' implicit transfers (jit arguments from NumPy, reading
device Arrays as NumPy), and 'log_explicit' or 'disallow_explicit' to include explicit ones
(`device_put`, `device_get`); refused ones raise TransferGuardError (a RuntimeError) with JAX's
text. See funcad/lowering/transfer_guard.py."""


# -------------------------------------------------------------- processes ----

def host_count(backend: str | None = None) -> int:
    """The number of processes (JAX's older name of `process_count`)."""
    _renamed("host_count", "process_count")
    return process_count(backend)


def host_id(backend: str | None = None) -> int:
    """This process's index (JAX's older name of `process_index`)."""
    _renamed("host_id", "process_index")
    return process_index(backend)


def _renamed(old: str, new: str) -> None:
    import warnings
    warnings.warn(f"funcad.{old} has been renamed to funcad.{new} (as in JAX). This alias will "
                  "eventually be removed; please update your code.", stacklevel=3)


def process_indices(backend: str | None = None) -> list[int]:
    """The indices of all processes of `backend`: `[0, ..., process_count() - 1]`.

    >>> import funcad
    >>> funcad.process_indices()
    [0]
    """
    return list(range(process_count(backend)))


def host_ids(backend: str | None = None) -> list[int]:
    """JAX's older name of `process_indices`."""
    _renamed("host_ids", "process_indices")
    return process_indices(backend)


# ----------------------------------------------------------------- arrays ----

def device_class() -> type:
    """jaxlib's Device class (`funcad.Device`, loaded on first use as jaxlib is)."""
    return xla._load().Device


def live_arrays(platform: str | None = None) -> list:
    """The device Arrays alive in this process (not deleted or donated), on `platform`
    (default: the default backend's), for finding what holds device memory.

    >>> import funcad, numpy as np
    >>> x = funcad.device_put(np.ones(3))
    >>> any(a is x for a in funcad.live_arrays())
    True
    """
    want = xla._canonical(platform) if platform else xla.default_backend()
    out = []
    for obj in gc.get_objects():
        if type(obj) is Array or type(obj) is ShardedArray:
            try:
                if obj.is_deleted():
                    continue
                if xla._canonical(next(iter(obj.devices())).platform) == want:
                    out.append(obj)
            except Exception:  # a half-built Array: not live
                continue
    return out


def copy_to_host_async(x: Any) -> Any:
    """Start copying each device Array of the pytree `x` to the host, without waiting;
    a later `np.asarray` then finds the data there. Other leaves are left alone.
    Returns `x`.

    >>> import funcad, numpy as np
    >>> y = funcad.copy_to_host_async(funcad.jit(lambda v: v * 2)(np.ones(2)))
    >>> np.asarray(y).tolist()
    [2.0, 2.0]
    """
    for leaf in tree_leaves(x):
        # funcad's Arrays wrap jaxlib's buffers, which start the transfer themselves.
        start = getattr(getattr(leaf, "_buf", None), "copy_to_host_async", None)
        if start is None:
            start = getattr(leaf, "copy_to_host_async", None)
        if start is not None and callable(start):
            start()
    return x


# ------------------------------------------------------------ environment ----

def print_environment_info(return_string: bool = False) -> str | None:
    """Print (or return) the versions of funcad, NumPy, Python, jax/jaxlib and the
    devices, for bug reports.

    >>> import funcad
    >>> "funcad:" in funcad.print_environment_info(return_string=True)
    True
    """
    import numpy as np
    from . import __version__
    try:
        jax_version = importlib.metadata.version("jax")
    except importlib.metadata.PackageNotFoundError:
        jax_version = "not installed"
    try:
        devices = ", ".join(str(d) for d in xla.get_client(xla.default_backend()).devices())
        backend = xla.default_backend()
    except Exception as e:  # no usable jaxlib: report why
        devices, backend = f"unavailable ({e})", "unavailable"
    info = (f"funcad:    {__version__}\n"
            f"jax:       {jax_version}\n"
            f"jaxlib:    {_jaxlib_version()}\n"
            f"numpy:     {np.__version__}\n"
            f"python:    {sys.version.replace(chr(10), ' ')}\n"
            f"platform:  {platform.platform()}\n"
            f"backend:   {backend}\n"
            f"devices:   {devices}\n")
    if return_string:
        return info
    print(info)
    return None


def _jaxlib_version() -> str:
    try:
        return xla.jaxlib_version()
    except Exception:
        return "not installed"
