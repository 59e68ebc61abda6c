"""NumPy's own functions applied to traced values.

Under eager `grad` a tracer holds a concrete value, so `np.sin(x)` would
quietly compute on that value and drop the derivative: a silently wrong
gradient. NumPy hands ufuncs and array functions to `__array_ufunc__` and
`__array_function__` first; tracers answer with funcad.numpy's function of
the same name, so `np.sin(x)` traces like `fnp.sin(x)`, and where funcad.numpy
has no such function they raise, naming the funcad function to use.
(`np.asarray(x)`, and so SciPy, raise TracerArrayConversionError on a
tracer, as in JAX.)

>>> import funcad, numpy as np
>>> float(funcad.grad(lambda x: np.sin(x))(0.0))
1.0
"""
from __future__ import annotations

import functools
import importlib

from ..core.trace import check_alive
from ..core.errors import FuncadTypeError

_NAMESPACES = {"numpy": "funcad.numpy", "numpy.linalg": "funcad.numpy.linalg"}


@functools.lru_cache(maxsize=None)
def _counterpart(module: str | None, name: str):
    # Cached: funcad's own rules call NumPy functions (np.shape, ...) on tracers, so this
    # runs on hot paths; the namespaces' functions do not change once imported.
    target = _NAMESPACES.get(module or "numpy")
    if target is None:
        return None
    fn = getattr(importlib.import_module(target), name, None)
    return fn if callable(fn) else None


def _refuse(what: str, name: str, x):
    return FuncadTypeError(
        f"NumPy's {what} got a traced value {x!r}: NumPy cannot trace, differentiate or compile it. "
        f"Use funcad.numpy's version instead (funcad.numpy.{name} where it exists).")


def array_ufunc(self, ufunc, method, *inputs, **kwargs):
    check_alive(self)  # a leaked tracer: the leak error, not a NumPy call on it
    fn = _counterpart("numpy", ufunc.__name__) if method == "__call__" and not kwargs else None
    if fn is None:
        what = f"ufunc {ufunc.__name__}" + ("" if method == "__call__" else f".{method}")
        raise _refuse(what + (f" with {sorted(kwargs)}" if kwargs else ""), ufunc.__name__, self)
    return fn(*inputs)


def array_function(self, func, types, args, kwargs):
    check_alive(self)
    fn = _counterpart(getattr(func, "__module__", None), func.__name__)
    if fn is None:
        raise _refuse(f"function {func.__name__}", func.__name__, self)
    return fn(*args, **kwargs)
