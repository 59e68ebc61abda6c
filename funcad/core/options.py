"""funcad's options, each declared once: name, default, environment variable, validator,
doc, whether jit's cache key holds it, and its `with funcad.<name>(...)` scope.

Everything else is generated from `OPTIONS`: `funcad.config` (`update`, `read`,
`override`, `config.<name>`, JAX's `jax_<name>` spellings), the top-level scopes,
start-up from the environment, jit's cache key (`jit_key`, rebuilt when one of its
options changes, so a jitted call reads one tuple) and the names
`explain_cache_misses` gives its entries. Adding an option is one `_declare` call.

Each value is an attribute of this module (`options.numpy_rank_promotion`), so a hot
path reads it for one attribute lookup and lower layers need not import config. An
option whose state another module keeps (x64 mode, the backend, the persistent cache)
is bound by that module with `bind`: its setter (`on_set`), and its reader where other
code can change the state too (`get`).

>>> from funcad.core import options
>>> options.OPTIONS["softmax_custom_jvp"].env, options.OPTIONS["softmax_custom_jvp"].jit_key
('FUNCAD_SOFTMAX_CUSTOM_JVP', True)
"""
from __future__ import annotations

import os
import sys
from typing import Any, Callable

from .errors import FuncadTypeError

__all__ = ["Option", "OPTIONS", "NO_SCOPE", "NO_ARG", "bind", "set_value", "get_value", "jit_key",
           "jit_key_names", "on_jit_key_change"]

NO_ARG = object()    # a scope called without a value takes the one given here, or refuses
NO_SCOPE = object()  # the option has no generated `with funcad.<name>(...)` scope


class Option:
    """One option's declaration (see the module docstring)."""
    __slots__ = ("name", "default", "validate", "doc", "env", "env_aliases", "jit_key", "clears_fast",
                 "scope", "scope_doc", "read_env", "on_set", "get")

    def __init__(self, name: str, default: Any, validate: Callable[[str, Any], Any], doc: str, *,
                 env: str | None = None, env_aliases: tuple = (), jit_key: bool = False,
                 clears_fast: bool = False, scope: Any = NO_SCOPE, scope_doc: str = "",
                 read_env: bool = True, on_set: Callable | None = None):
        self.name, self.default, self.validate, self.doc = name, default, validate, doc
        self.env = env or "FUNCAD_" + name.upper()
        self.env_aliases, self.read_env = env_aliases, read_env
        # clears_fast: jitted calls' fast paths skip a check the option enters (jit-key
        # options always drop them: the fast path skips the key).
        self.jit_key, self.clears_fast = jit_key, clears_fast or jit_key
        self.scope, self.scope_doc = scope, scope_doc
        self.on_set, self.get = on_set, None

    def __repr__(self):
        return f"Option({self.name!r}, default={self.default!r}, env={self.env!r})"


OPTIONS: dict[str, Option] = {}
jit_key: tuple = ()          # the values of the jit-key options, in declaration order
jit_key_names: tuple = ()    # their JAX names, for explain_cache_misses
_key_listeners: list[Callable[[], None]] = []  # called when a clears_fast option changes


def on_jit_key_change(fn: Callable[[], None]) -> None:
    """Call `fn()` whenever an option that jit's key or fast path depends on changes."""
    _key_listeners.append(fn)


def get_value(name: str) -> Any:
    opt = OPTIONS[name]
    return opt.get() if opt.get is not None else getattr(sys.modules[__name__], name)


def set_value(name: str, value: Any) -> None:
    """Set an already validated value: store it, run its owner's setter, refresh jit's key."""
    global jit_key
    opt = OPTIONS[name]
    setattr(sys.modules[__name__], name, value)
    if opt.on_set is not None:
        opt.on_set(value)
    if opt.jit_key:
        jit_key = tuple(get_value(o.name) for o in OPTIONS.values() if o.jit_key)
    if opt.clears_fast:
        for fn in _key_listeners:
            fn()


def bind(name: str, *, on_set: Callable | None = None, get: Callable | None = None,
         validate: Callable | None = None) -> None:
    """Attach the module that keeps option `name`'s state: its setter, reader, validator."""
    opt = OPTIONS[name]
    if on_set is not None:
        opt.on_set = on_set
    if get is not None:
        opt.get = get
    if validate is not None:
        opt.validate = validate


def _declare(name: str, default: Any, validate: Callable, doc: str, **kw) -> None:
    global jit_key, jit_key_names
    OPTIONS[name] = opt = Option(name, default, validate, doc, **kw)
    setattr(sys.modules[__name__], name, default)
    if opt.jit_key:
        jit_key += (default,)
        jit_key_names += ("jax_" + name,)


def from_environment() -> None:
    """Set each option whose environment variable is set (funcad.config calls it once
    the owners have bound their options)."""
    for opt in OPTIONS.values():
        raw = os.environ.get(opt.env)
        for alias in opt.env_aliases:
            raw = raw or os.environ.get(alias)
        if raw and opt.read_env:
            set_value(opt.name, opt.validate(opt.name, raw))


# -- validators ---------------------------------------------------------------------

def boolean(name: str, v) -> bool:
    if isinstance(v, str) and v.lower() in ("1", "true", "on", "yes", "0", "false", "off", "no", ""):
        return v.lower() in ("1", "true", "on", "yes")
    if isinstance(v, (bool, int)) and v in (0, 1):
        return bool(v)
    raise FuncadTypeError(f"config option {name} takes True or False, got {v!r}")


def choice(*allowed, none=False) -> Callable:
    def check(name: str, v):
        if none and v is None:
            return None
        if isinstance(v, str) and v in allowed:
            return v
        raise FuncadTypeError(f"config option {name} takes one of {', '.join(map(repr, allowed))}"
                              f"{' or None' if none else ''}, got {v!r}")
    return check


def _filtering(name: str, v) -> str:
    if isinstance(v, bool):
        return "on" if v else "off"
    if isinstance(v, str) and v.lower() in ("on", "off", "auto", "1", "0", "true", "false"):
        return "off" if v.lower() in ("off", "0", "false") else "on"
    raise FuncadTypeError(f"config option {name} takes 'on' or 'off', got {v!r}")


def _cache_size(name: str, v) -> int:
    if isinstance(v, str) and v.strip().isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int) or v < 1:
        raise FuncadTypeError(f"config option {name} takes a positive int, got {v!r}")
    return v


def _int(name: str, v) -> int:
    if isinstance(v, str) and v.strip().lstrip("-").isdigit():
        v = int(v)
    if isinstance(v, bool) or not isinstance(v, int):
        raise FuncadTypeError(f"config option {name} takes an int, got {v!r}")
    return v


def _float(name: str, v) -> float:
    try:
        if not isinstance(v, bool):
            return float(v)
    except (TypeError, ValueError):
        pass
    raise FuncadTypeError(f"config option {name} takes a number, got {v!r}")


def _path_or_none(name: str, v):
    if v is None or v == "":
        return None
    if isinstance(v, (str, os.PathLike)):
        return os.fspath(v)
    raise FuncadTypeError(f"config option {name} takes a directory path or None, got {v!r}")


def _unbound(name: str, v):
    raise FuncadTypeError(f"config option {name} is checked by the module that keeps it, which "
                          "is not loaded: import funcad first")


PRNG_IMPLS = ("threefry2x32", "rbg", "unsafe_rbg", "threefry4x32", "philox2x32", "philox4x32")
PRECISIONS = ("default", "high", "highest", "bfloat16", "tensorfloat32", "float32",
              "ANY_F8_ANY_F8_F32", "ANY_F8_ANY_F8_F32_FAST_ACCUM", "ANY_F8_ANY_F8_ANY",
              "ANY_F8_ANY_F8_ANY_FAST_ACCUM", "F16_F16_F16", "F16_F16_F32", "BF16_BF16_BF16",
              "BF16_BF16_F32", "BF16_BF16_F32_X3", "BF16_BF16_F32_X6", "BF16_BF16_F32_X9",
              "TF32_TF32_F32", "TF32_TF32_F32_X3", "F32_F32_F32", "F64_F64_F64")
GUARD_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
GUARDS = ("host_to_device", "device_to_device", "device_to_host")


def _guard_level(name: str, v):
    return "allow" if v is None else choice(*GUARD_LEVELS, none=True)(name, v)


def _set_guards(_v) -> None:
    """`transfer_guards`, the one flag hot paths read: whether any direction is guarded."""
    global transfer_guards
    transfer_guards = any(getattr(sys.modules[__name__], "transfer_guard_" + d) != "allow" for d in GUARDS)


def _set_all_guards(v) -> None:
    for d in GUARDS:
        set_value("transfer_guard_" + d, v)


transfer_guards = False

# -- the declarations ------------------------------------------------------------------
# In jit's key order first (explain_cache_misses names the entries in this order).

_declare("debug_nans", False, boolean, "raise NaNError at the first primitive that produces a NaN",
         jit_key=True, scope=True, scope_doc="""`with funcad.debug_nans(True):` each primitive that makes a
NaN raises NaNError (a FloatingPointError) naming it and the user's line, eagerly and under jit.""")
_declare("debug_infs", False, boolean, "raise InfError at the first primitive that produces an inf",
         jit_key=True, scope=True, scope_doc="""`with funcad.debug_infs(True):` each primitive that makes an
inf raises InfError (a FloatingPointError), as debug_nans does for NaNs.""")
_declare("enable_x64", True, boolean,
         "64-bit dtypes as in NumPy (True) or JAX's default 32-bit dtypes (False)",
         env_aliases=("JAX_ENABLE_X64",), jit_key=True, scope=True,
         scope_doc="""`funcad.enable_x64(flag)`: 64-bit dtypes on (True, funcad's default) or off (JAX's
default 32-bit dtypes) for a `with` block, then the previous mode again; as
`jax.enable_x64`. `funcad.enable_x64.value` is the current mode; set it for the whole
program with `funcad.config.update("enable_x64", flag)`.

>>> import funcad, funcad.numpy as fnp
>>> with funcad.enable_x64(False):
...     print(fnp.array(1.5).dtype)
float32
>>> funcad.enable_x64.value
True
""")
_declare("default_prng_impl", "threefry2x32", choice(*PRNG_IMPLS),
         "PRNG implementation of keys made without impl=: " + ", ".join(PRNG_IMPLS),
         jit_key=True, scope=NO_ARG, scope_doc="""`with funcad.default_prng_impl("rbg"):` keys made without `impl=`
(and raw keys) use that PRNG implementation in the block.

>>> import funcad, funcad.random as fr
>>> with funcad.default_prng_impl("rbg"):
...     print(fr.PRNGKey(0).shape)
(4,)
""")
_declare("threefry_partitionable", True, boolean,
         "threefry's counter layout: JAX's current (True) or older (False) bits",
         jit_key=True, scope=True, scope_doc="""`with funcad.threefry_partitionable(False):` threefry keys use
JAX's older, non-partitionable counter layout in the block (JAX's bits for that setting).

>>> import funcad, funcad.random as fr
>>> with funcad.threefry_partitionable(False):
...     print(fr.bits(fr.PRNGKey(0), (2,), "uint32"))
[ 928981903 3453687069]
""")
_declare("default_matmul_precision", None, choice(*PRECISIONS, none=True),
         "precision of dot/matmul/einsum/conv given none: JAX's names or a DotAlgorithmPreset name",
         jit_key=True, scope=NO_ARG, scope_doc="""`with
funcad.default_matmul_precision("float32"):` dot, matmul, einsum, tensordot and convolutions
given no `precision=` use this one (JAX's names: 'default', 'high', 'highest', 'bfloat16',
'tensorfloat32', 'float32', or a DotAlgorithmPreset name such as 'BF16_BF16_F32').""")
_declare("numpy_rank_promotion", "allow", choice("allow", "warn", "raise"),
         "binary funcad.numpy ops on operands of different ranks: allow, warn, raise",
         jit_key=True, scope=NO_ARG, scope_doc="""`with
funcad.numpy_rank_promotion("raise"):` (or "warn") binary funcad.numpy operations refuse
(or warn about) broadcasting operands of different nonzero ranks, as JAX's.""")
_declare("default_device", None, _unbound,  # lowering/xla.py binds the check (platform names)
         "the device jit (without shardings) and device_put without a device use: "
         "a Device, a platform name, or None (the default backend's first device)",
         jit_key=True, scope=NO_ARG, scope_doc="""`with funcad.default_device(device):` jitted
functions (without in_shardings) run on `device` and `device_put` without a device copies there
(a Device, a platform name such as "cpu", or None for the default backend's first device). Eager
operations run on NumPy, on the host, as before; jit's cache keys on the setting.

>>> import funcad, numpy as np
>>> cpu = funcad.devices("cpu")[-1]
>>> with funcad.default_device(cpu):
...     funcad.jit(lambda x: x + 1)(np.ones(2)).devices() == {cpu}
True""")
_declare("numpy_dtype_promotion", "standard", choice("standard", "strict"),
         "implicit promotion between different dtypes: 'standard', or 'strict' "
         "(refused, as JAX's TypePromotionError; Python scalars still mix)",
         jit_key=True, scope=NO_ARG, scope_doc="""`with
funcad.numpy_dtype_promotion("strict"):` funcad.numpy operations and `result_type` refuse to
promote between different dtypes (JAX's TypePromotionError); weakly typed Python scalars still
join arrays of their kind or a wider one (`x_f32 * 2` is fine, `x_i32 * 2.0` is not).

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> with funcad.numpy_dtype_promotion("strict"):
...     print(fnp.ones(2, np.float32) * 2.0)
[2. 2.]
>>> with funcad.numpy_dtype_promotion("strict"):
...     fnp.ones(2, np.float32) + fnp.ones(2, np.int32)  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
funcad.core.errors.TypePromotionError: Input dtypes ('float32', 'int32') have no available ...""")
_declare("softmax_custom_jvp", False, boolean,
         "nn.softmax's derivatives: its custom rule y*(dx - sum(y*dx)) (True) or the "
         "formula's with the max held constant (False, JAX's default)",
         jit_key=True, scope=True, scope_doc="""`with funcad.softmax_custom_jvp(True):`
funcad.nn.softmax is differentiated by its custom rule y * (dx - sum(y * dx)), as JAX's option
of that name; off (the default, as JAX's) by the formula with its max held constant.
log_softmax's derivatives are the same either way (as in JAX).

>>> import funcad, funcad.nn as nn, numpy as np
>>> with funcad.softmax_custom_jvp(True):
...     print(funcad.grad(lambda x: nn.softmax(x)[0])(np.zeros(2)))
[ 0.25 -0.25]""")
_declare("debug_key_reuse", False, boolean,
         "typed keys (funcad.random.key) are tracked, and using one after a sampler, "
         "split or bits consumed it raises KeyReuseError, as JAX's option",
         jit_key=True, scope=True, scope_doc="""`with funcad.debug_key_reuse(True):` typed keys
(funcad.random.key) are checked as JAX checks them: using a key after a sampler, `split` or
`bits` consumed it raises funcad.errors.KeyReuseError, eagerly, at jitted calls and inside
traced programs (see funcad/random/_key_reuse.py).""")

_declare("use_shardy_partitioner", True, boolean,
         "partition programs over several devices with Shardy (the sdy dialect, JAX's default) "
         "or, False, with GSPMD (mhlo.sharding; also where jaxlib predates Shardy)",
         env_aliases=("JAX_USE_SHARDY_PARTITIONER",), jit_key=True)

_declare("log_compiles", False, boolean, "log each jit trace and XLA compilation (logger 'funcad', WARNING)",
         scope=True, scope_doc="""`with funcad.log_compiles(True):` each jit trace and
XLA compilation is logged at WARNING level on the "funcad" logger.""")
_declare("no_tracing", False, boolean, "a jit trace (a cache miss) raises RuntimeError",
         scope=True, scope_doc="""`with funcad.no_tracing(True):` a jitted function that would
trace (a new argument signature) raises RuntimeError: checks that a loop reuses its compilations.""")
_declare("no_execution", False, boolean, "running a jitted function raises RuntimeError",
         clears_fast=True, scope=True, scope_doc="""`with funcad.no_execution(True):` running a jitted
function raises RuntimeError (tracing and lowering still work).""")
_declare("enable_checks", False, boolean, "type-check every traced jaxpr (raises JaxprTypeError on a bad one)",
         scope=True, scope_doc="""`with funcad.enable_checks(True):` every traced jaxpr
is type-checked (each equation's outputs against its primitive's shape rule; JaxprTypeError).""")
_declare("explain_cache_misses", False, boolean,
         "log why a jitted function traces again (logger 'funcad', WARNING)",
         scope=True, scope_doc="""`with funcad.explain_cache_misses(True):`
each time a jitted function traces again, a WARNING on the "funcad" logger says why, in JAX's
words: the argument (by name and path) whose shape, dtype or weak type changed, the pytree that
changed, the static argument or the configuration option.""")
# transfer_guard's scope sets the four at once and restores each (funcad/core/config.py)
_declare("transfer_guard", "allow", _guard_level, "sets the three transfer guards at once: allow, log, "
         "disallow, log_explicit, disallow_explicit", on_set=_set_all_guards)
_declare("transfer_guard_host_to_device", "allow", _guard_level,
         "host-to-device transfers: allow, log, disallow (implicit ones), log_explicit, disallow_explicit (all)",
         clears_fast=True, on_set=_set_guards, scope=NO_ARG, scope_doc="""`with
funcad.transfer_guard_host_to_device(level):` guards copies of NumPy arrays and Python scalars
to a device: 'allow', 'log' (implicit ones: arguments of jitted calls), 'disallow' (implicit
ones raise; `device_put` is explicit and allowed), 'log_explicit', 'disallow_explicit' (all).""")
_declare("transfer_guard_device_to_device", "allow", _guard_level,
         "device-to-device transfers: allow, log, disallow (implicit ones), log_explicit, disallow_explicit (all)",
         clears_fast=True, on_set=_set_guards, scope=NO_ARG, scope_doc="""`with
funcad.transfer_guard_device_to_device(level):` guards copies between devices: implicit ones (an
Array of one device passed to a program compiled for another) and explicit ones (`device_put`
to another device); the levels as for transfer_guard_host_to_device.""")
_declare("transfer_guard_device_to_host", "allow", _guard_level,
         "device-to-host transfers: allow, log, disallow (implicit ones), log_explicit, disallow_explicit (all)",
         clears_fast=True, on_set=_set_guards, scope=NO_ARG, scope_doc="""`with
funcad.transfer_guard_device_to_host(level):` guards reading device Arrays on the host: implicit
(`np.asarray`, `float`, printing, eager funcad.numpy operations on them) and explicit
(`device_get`). As in JAX, an array on a CPU device is host memory already: no transfer.""")
_declare("legacy_prng_key", "allow", choice("allow", "warn", "error"),
         "raw uint32 keys passed to funcad.random functions: allow, warn, error "
         "(typed keys from funcad.random.key always pass)",
         scope=NO_ARG, scope_doc="""`with funcad.legacy_prng_key("error"):` raw
uint32 keys (`funcad.random.PRNGKey`, or their splits) passed to funcad.random functions raise
ValueError ("warn": a UserWarning) with JAX's text; typed keys (`funcad.random.key`) pass.

>>> import funcad, warnings
>>> with funcad.legacy_prng_key("error"):
...     funcad.random.split(funcad.random.PRNGKey(0))  # doctest: +ELLIPSIS
Traceback (most recent call last):
...
ValueError: Legacy uint32 key array passed as key to funcad.random function. ...""")
_declare("check_tracer_leaks", False, boolean,
         "raise TracerLeakError when a public call returns while a tracer of a "
         "transformation it ran is still held (a global, closure, list, attribute)",
         scope=True, scope_doc="""`with funcad.check_tracer_leaks(True):`
a public call (grad, jit, vmap, ... or a transformed function) that returns while a tracer
of a transformation it ran is still held by user code (a global, a closure, a list, an
attribute) raises TracerLeakError naming the tracer and what holds it. It costs a garbage
collection per outermost call, so it is off by default, as in JAX.""")
_declare("enable_custom_prng", False, boolean,
         "funcad.random's PRNGKey, split, fold_in and clone return typed keys, and "
         "raw keys passed to it warn (FutureWarning), as JAX's option",
         scope=True, scope_doc="""`with funcad.enable_custom_prng(True):`
funcad.random's `PRNGKey`, `split`, `fold_in` and `clone` return typed key arrays (as
`funcad.random.key` does) and a raw uint32 key passed to a funcad.random function warns
(FutureWarning), as JAX's option does; the bits are unchanged.

>>> import funcad, funcad.random as fr
>>> with funcad.enable_custom_prng(True):
...     print(fr.PRNGKey(0).dtype)
key<fry>
""")
_declare("default_backend", None, _unbound,  # lowering/xla.py binds it and reads FUNCAD_BACKEND lazily
         "backend jit uses when none is given: 'cpu', 'gpu' or None (automatic)",
         env="FUNCAD_BACKEND", read_env=False)
_declare("eager_backend", "numpy", choice("numpy", "xla"),
         "where eager primitives whose rounding is not exact (exp, log, tanh, sums, dots ...) "
         "run: 'numpy' (funcad's default) or 'xla' (as JAX; the drop-in funcad.as_jax's default)",
         scope=NO_ARG, scope_doc="""`with funcad.eager_backend("xla"):` eager primitives whose
results NumPy may round differently from XLA (transcendental and special functions, sums,
products, dots, linear algebra, FFT) run as one compiled XLA operation each, cached per
primitive, parameters and operand types, so eager float32 values are JAX's bit for bit;
exactly rounded operations stay on NumPy. 'numpy' (the default under `import funcad`)
computes every eager operation with NumPy; the drop-in `funcad.as_jax` sets 'xla'.
See funcad/transforms/eager_xla.py.

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> x = np.float32([0.5, 1.5])
>>> with funcad.eager_backend("xla"):  # XLA's float32 exp, as JAX's
...     print(fnp.exp(x))
[1.6487212 4.481689 ]""")
_declare("jit_cache_size", 128, _cache_size, "compiled argument signatures kept per jitted function (LRU)")
_declare("traceback_filtering", "on", _filtering,
         "'on' hides funcad's internal frames from tracebacks, 'off' shows them")
_declare("compilation_cache_dir", None, _path_or_none,
         "directory of the persistent compilation cache (None: no cache); "
         "see funcad.experimental.compilation_cache")
_declare("enable_compilation_cache", True, boolean,
         "False turns the persistent compilation cache off even with a directory")
_declare("persistent_cache_min_compile_time_secs", 1.0, _float,
         "programs that compile quicker are not written to the cache")
_declare("persistent_cache_min_entry_size_bytes", 0, _int,
         "smaller cache entries are not written (0 or -1: any size)")

# doctest runs the scopes' examples (their docstrings are instances', which it skips)
__test__ = {o.name: o.scope_doc for o in OPTIONS.values() if ">>>" in o.scope_doc}
