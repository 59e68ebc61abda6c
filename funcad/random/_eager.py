"""Eager sampler calls run as one compiled program, as JAX's do.

An eager `normal(key, (10**6,))` traced op by op would run erf_inv through
SciPy, whose float rounding differs from XLA's polynomial by a few ulps, and
would pay funcad's per-op dispatch on every step. JAX's samplers are jitted
functions even when called eagerly; funcad's are too, with the arguments
that set shapes and dtypes static, so eager values equal JAX's bit for bit
and large draws cost one compiled call. Inside a transformation the sampler
is traced as it is when an argument is traced; a draw from known values only
(a key closed over by jit or grad) runs compiled as an eager call does, so it
equals the draw XLA computes in JAX's program. Either way the key's implementation (a typed key's own, or
the configured default for raw keys) is set for the call (`impl_scope`), and
is part of the compiled program's static signature.
"""
from __future__ import annotations

import functools
import inspect

import numpy as np

from ..core import options
from ..core.pytree import tree_leaves
from ..core.trace import Tracer, ctx
from ._keyarray import PRNGKeyArray
from ._key_reuse import consume
from ._keys import _inside, check_legacy, impl_of, impl_scope
from ..lowering.array import Array
from ..transforms.jit import jit

_DYNAMIC = (np.ndarray, np.generic, float, complex)


def _is_dynamic(v) -> bool:
    return (isinstance(v, _DYNAMIC) or type(v) is Array) and not isinstance(v, (bool, np.bool_))


def _static(v):
    if isinstance(v, list):
        return tuple(_static(x) for x in v)
    return v


def eager_jit(fn, dynamic: tuple = (), impls=None, site: str = "jit"):
    """`fn` compiled per (static arguments, argument types) when called eagerly.

    Arrays and floats are arguments of the compiled program; so are Python ints passed for
    the parameters named in `dynamic`, which JAX's sampler traces too (an exponent traced as
    a number computes `pow`, where a static int would square): the values then match.
    With `impls`, only keys of those implementations compile; others run op by op.
    `site` names the call in key-reuse errors (JAX's samplers are jitted functions;
    its `bits` is the primitive random_bits)."""
    sig = inspect.signature(fn)
    compiled: dict = {}

    def scoped(impl, *args, **kwargs):
        with impl_scope(impl):
            return fn(*args, **kwargs)

    @functools.wraps(fn)
    def sampler(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        check_legacy(bound.arguments.get("key"))  # the user's key; the parts see raw data
        if options.debug_key_reuse and not _inside[0] and "key" in bound.arguments:
            bound.arguments["key"] = consume(bound.arguments["key"], site)
            args, kwargs = bound.args, bound.kwargs
        _inside[0] += 1
        try:
            return _sample(bound, args, kwargs)
        finally:
            _inside[0] -= 1

    def _sample(bound, args, kwargs):
        impl = impl_of(bound.arguments.get("key"))
        # Inside a transformation a draw from known values (a key closed over by jit or grad)
        # is computed by the compiled program too: traced, funcad would evaluate it at trace
        # time op by op on NumPy, whose erf_inv and log1p round differently from XLA's.
        traced = ctx.trace is not None and any(isinstance(x, Tracer) for x in
                                               tree_leaves(tuple(bound.arguments.values())))
        if traced or impls is not None and impl not in impls:
            return scoped(impl, *args, **kwargs)
        names, values, statics = [], [], []
        for name, v in bound.arguments.items():
            if isinstance(v, PRNGKeyArray):
                v = v._data  # samplers read typed and raw keys alike
            if _is_dynamic(v) or name in dynamic and isinstance(v, int) and not isinstance(v, bool):
                names.append(name)
                values.append(v)
            else:
                statics.append((name, _static(v)))
        try:
            key = (tuple(names), tuple(statics), impl)
            f = compiled.get(key)
        except TypeError:  # an unhashable static value: no cache, run op by op
            return scoped(impl, *args, **kwargs)
        if f is None:
            kw = dict(statics)
            f = compiled[key] = jit(lambda *vals: scoped(impl, **kw, **dict(zip(names, vals))))
        return f(*values)
    return sampler
