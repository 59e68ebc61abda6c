"""32-bit mode (`enable_x64` off): JAX's default dtype canonicalisation.

funcad keeps NumPy's 64-bit defaults. With x64 off every value entering funcad
gets the dtype JAX gives it by default: float64 -> float32, int64 -> int32,
uint64 -> uint32, complex128 -> complex64; Python scalars are weak float32 /
int32 / complex64, and an explicit 64-bit `dtype=` is truncated with JAX's
warning. Values enter at a few choke points, and this module canonicalises
each one:

- `Primitive.bind`: NumPy arguments, dtype-valued params (`new_dtype`, an
  index dtype) and eager results, so NumPy computes in 32 bits, staged
  constants are 32-bit and no primitive ever sees a 64-bit dtype;
- `ShapedArray`: every abstract value, so tracing, shape rules, `jit`'s
  argument types and the StableHLO all see the 32-bit dtypes;
- the dtypes of Python scalars (`avals._PY_SCALARS`) and of promotion
  (`avals.result_type`);
- `dtype=` arguments and default dtypes (`explicit_dtype`, `default_float`),
  read by array creation and the random samplers.

x64 on costs nothing: turning it off swaps the canonicalising versions of
`Primitive.bind` and `ShapedArray.__init__` onto their classes and fills the
two dtype tables; turning it on restores them. `funcad.config.update(
"enable_x64", False)` (or `"jax_enable_x64"`, or `funcad.enable_x64(False)` for
a block) calls `set_enabled`.

>>> import funcad, funcad.numpy as fnp
>>> with funcad.enable_x64(False):
...     print(fnp.ones(3).dtype, fnp.arange(3).dtype, (fnp.ones(2) * 2.0).dtype)
float32 int32 float32
"""
from __future__ import annotations

import os
import sys
import warnings

import numpy as np

from . import avals as _avals
from .avals import ShapedArray
from .trace import Primitive, ctx
from . import eager as _eager
from . import ieee_warnings as _ieee
from . import options as _options

# The 64-bit dtypes and what JAX turns them into with x64 off.
_TO_32 = {np.dtype(np.float64): np.dtype(np.float32), np.dtype(np.int64): np.dtype(np.int32),
          np.dtype(np.uint64): np.dtype(np.uint32), np.dtype(np.complex128): np.dtype(np.complex64)}

enabled = True  # x64 on: NumPy's dtypes, funcad's default

_bind64 = Primitive.bind
_init64 = ShapedArray.__init__
_PY64 = dict(_avals._PY_SCALARS)
_SCALARS = (int, float, complex)


def canonicalize_dtype(dtype) -> np.dtype:
    """The dtype funcad uses for `dtype` in the current mode (no warning).

    >>> canonicalize_dtype(np.float64)
    dtype('float64')
    """
    d = np.dtype(dtype)
    return d if enabled else _TO_32.get(d, d)


def explicit_dtype(dtype, fun_name: str = ""):
    """A dtype the user asked for (`None` stays `None`). With x64 off a 64-bit one is
    truncated to 32 bits with JAX's warning (shown once per calling line, as JAX's); Python's
    `int`, `float` and `complex` silently mean the default 32-bit types, as in JAX."""
    if dtype is None:
        return None
    d = np.dtype(dtype)
    if enabled:
        return d
    c = _TO_32.get(d)
    if c is None or dtype is int or dtype is float or dtype is complex:
        return d if c is None else c  # Python's types name the default width: no warning, as JAX
    where = f" requested in {fun_name}" if fun_name else ""
    warnings.warn(f"Explicitly requested dtype {d}{where} is not available, and will be "
                  f"truncated to dtype {c}. To enable more dtypes, set the enable_x64 "
                  "configuration option (funcad.config.update('enable_x64', True)) or the "
                  "JAX_ENABLE_X64 or FUNCAD_ENABLE_X64 shell environment variable.",
                  UserWarning, stacklevel=_user_stacklevel())
    return c


def _user_stacklevel() -> int:
    """The `stacklevel` of the first frame outside funcad (the user's line)."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    f, level = sys._getframe(2), 2
    while f is not None and os.path.abspath(f.f_code.co_filename).startswith(root + os.sep):
        f, level = f.f_back, level + 1
    return level


def default_float() -> np.dtype:
    """float64, or float32 with x64 off."""
    return np.dtype(np.float64 if enabled else np.float32)


def default_int() -> np.dtype:
    """int64, or int32 with x64 off."""
    return np.dtype(np.int64 if enabled else np.int32)


def default_complex() -> np.dtype:
    """complex128, or complex64 with x64 off."""
    return np.dtype(np.complex128 if enabled else np.complex64)


def canonicalize(x):
    """`x` with the current mode's dtype: NumPy arrays and scalars converted, Python
    scalars, tracers and device arrays as they are."""
    if enabled:
        return x
    return _value32(x)


def canonicalize_held(x):
    """`canonicalize`, also of the value a tracer holds: vmap keeps a NumPy input as
    given (as JAX's), and an op that makes a new array (conj, real, copy) gives it in
    the mode's dtype, as JAX's does. A tracer type that can hold such a value defines
    `canonical32`."""
    if enabled:
        return x
    m = getattr(type(x), "canonical32", None)
    return m(x) if m is not None else _value32(x)


def canonicalize_all(leaves: list) -> list:
    """`canonicalize` of each leaf (the list itself while x64 is on)."""
    if enabled:
        return leaves
    return [_value32(x) for x in leaves]


# -- the 32-bit versions of the choke points -----------------------------------

def _value32(x):
    if isinstance(x, np.ndarray):
        c = _TO_32.get(x.dtype)
        if c is not None:  # NumPy's astype: an eager array's own method would come back here
            _ieee.ensure()  # the cast overflows quietly, as JAX's conversion
            return np.ndarray.astype(x, c)
    elif isinstance(x, np.generic):
        c = _TO_32.get(x.dtype)
        if c is not None:
            _ieee.ensure()
            return x.astype(c)
    return x


def _param32(v):
    if isinstance(v, np.dtype) or (isinstance(v, type) and issubclass(v, np.generic)):
        d = np.dtype(v)
        return _TO_32.get(d, v)
    return v


def _bind32(self, *args, **params):
    if ctx.trace is None and args and all(type(a) in _SCALARS for a in args):
        # Only Python scalars: NumPy would compute in 64 bits; JAX computes in 32.
        args = [_scalar32(a) for a in args]
    else:
        args = [_value32(a) for a in args]
    if params:
        params = {k: _param32(v) for k, v in params.items()}
    out = _bind64(self, *args, **params)
    if ctx.trace is not None:
        return out
    if self.multiple_results:
        return type(out)(_result32(o) for o in out) if isinstance(out, (list, tuple)) else out
    return _result32(out)


def _scalar32(a):
    """A Python scalar in its 32-bit dtype, weakly typed as in JAX (a bool is strong)."""
    v = np.asarray(a, _avals._PY_SCALARS[type(a)])
    return v[()] if type(a) is bool else _eager.wrap_weak(v)


def _result32(x):
    c = _TO_32.get(x.dtype) if isinstance(x, np.ndarray) else None
    if c is None:
        return x
    _ieee.ensure()  # the cast overflows quietly, as JAX's conversion
    out = np.asarray(x).astype(c)
    return _eager.wrap_weak(out) if type(x) is _eager.WeakEagerArray else _eager.wrap(out)


def _init32(self, shape, dtype, weak_type: bool = False, sharding=None):
    self.shape = tuple(shape)
    d = np.dtype(dtype)
    self.dtype = _TO_32.get(d, d)
    self.weak_type = weak_type
    self._sharding = sharding


def set_enabled(on: bool) -> None:
    """Switch 64-bit mode on (NumPy's dtypes) or off (JAX's default 32-bit dtypes)."""
    global enabled
    on = bool(on)
    if on == enabled:
        return
    enabled = on
    _eager.set_lane(on, type(ctx).debug_nans)
    Primitive.bind = _bind64 if on else _bind32
    ShapedArray.__init__ = _init64 if on else _init32
    _avals._PY_SCALARS.update(_PY64 if on else {t: _TO_32.get(d, d) for t, d in _PY64.items()})
    _avals._PROMOTED.clear()
    if not on:
        _avals._PROMOTED.update(_TO_32)


_options.bind("enable_x64", on_set=set_enabled, get=lambda: enabled)
