"""Array creation: array, zeros, ones, full, arange, linspace, eye, identity."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.trace import Tracer
from ..primitives import structural as S
from ..primitives._base import full as _full
from ._dtypes import cast, promote


def _has_tracer(x):
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tracer(e) for e in x)
    return hasattr(x, "__funcad_array__")


def array(obj, dtype=None, copy=True):
    """Like np.array; nested lists may hold traced values."""
    if isinstance(obj, (list, tuple)) and _has_tracer(obj):
        from ._shape import stack
        out = stack([array(e) for e in obj])
        return out if dtype is None else cast(out, np.dtype(dtype))
    if isinstance(obj, Tracer):
        return obj if dtype is None else cast(obj, np.dtype(dtype))
    if hasattr(obj, "__funcad_array__"):
        obj = obj.__funcad_array__()
        return obj if dtype is None else astype(obj, dtype)
    return np.array(obj, dtype=dtype, copy=copy)


def asarray(obj, dtype=None):
    if isinstance(obj, Tracer):
        return obj if dtype is None or aval_of(obj).dtype == np.dtype(dtype) else cast(obj, np.dtype(dtype))
    if hasattr(obj, "__funcad_array__") and dtype is None:
        return obj.__funcad_array__()
    # copy=None: copy only when needed (NumPy 2's copy=False raises for lists, scalars, casts).
    return array(obj, dtype, copy=None) if not isinstance(obj, np.ndarray) or dtype is not None else obj


def astype(x, dtype):
    return cast(asarray(x), np.dtype(dtype))


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)


def zeros(shape, dtype=float):
    return np.zeros(_shape(shape), dtype)


def ones(shape, dtype=float):
    return np.ones(_shape(shape), dtype)


def empty(shape, dtype=float):
    return np.zeros(_shape(shape), dtype)


def full(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tracer):
        v = fill_value if dtype is None else cast(fill_value, np.dtype(dtype))
        from ..primitives._base import broadcast_to
        return broadcast_to(v, _shape(shape))
    return np.full(_shape(shape), fill_value, dtype)


def _like(x, dtype, shape):
    a = aval_of(asarray(x))
    return (a.shape if shape is None else _shape(shape)), (a.dtype if dtype is None else np.dtype(dtype))


def zeros_like(x, dtype=None, shape=None):
    s, d = _like(x, dtype, shape)
    return _full(s, 0, d) if isinstance(x, Tracer) else np.zeros(s, d)


def ones_like(x, dtype=None, shape=None):
    s, d = _like(x, dtype, shape)
    return _full(s, 1, d) if isinstance(x, Tracer) else np.ones(s, d)


def empty_like(x, dtype=None, shape=None):
    return zeros_like(x, dtype, shape)


def full_like(x, fill_value, dtype=None, shape=None):
    s, d = _like(x, dtype, shape)
    if isinstance(x, Tracer) or isinstance(fill_value, Tracer):
        return full(s, fill_value, d)
    return np.full(s, fill_value, d)


def arange(start, stop=None, step=None, dtype=None):
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            from ..core.errors import ConcretizationError
            raise ConcretizationError("arange needs concrete bounds: its length must be known. "
                                      "Pass the bounds as static arguments (static_argnums).")
    return np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)


def linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    if not (isinstance(start, Tracer) or isinstance(stop, Tracer)):
        return np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype, axis=axis)
    from . import _ufuncs as U
    start, stop = promote(start, stop)
    div = (num - 1) if endpoint else num
    t = np.arange(num, dtype=np.float64) / max(div, 1)
    out = U.add(start, U.multiply(U.subtract(stop, start), cast(t, aval_of(start).dtype)))
    return out if dtype is None else astype(out, dtype)


def eye(N, M=None, k=0, dtype=float):
    return np.eye(N, M, k, dtype=dtype)


def identity(n, dtype=float):
    return np.identity(n, dtype=dtype)
