"""Array creation: array, zeros, ones, full, arange, linspace, eye, identity."""
from __future__ import annotations

import functools
import operator
from types import SimpleNamespace

import numpy as np
from ..core.narrow import kind as _kind

from ..core import x64
from ..core.avals import aval_of
from ..core.eager import eager_result
from ..core.trace import Tracer, ctx
from ..core.typed_sharding import is_sharded_array
from ..primitives import structural as S
from ..primitives._base import full as _full
from ..primitives.elementwise import weakly
from .dtypes import cast, hooks as _dtypes_hooks, is_weak, promote, strong_cast
from . import ufuncs as U
from .placement import place
from .shape import stack
from ..primitives._base import broadcast_to
from ..core.errors import ConcretizationError
from ..transforms.jit import jit


def _has_tracer(x):
    if isinstance(x, Tracer):
        return True
    if isinstance(x, (list, tuple)):
        return any(_has_tracer(e) for e in x)
    return hasattr(x, "__funcad_array__")


def array(object, dtype=None, *, copy=True, order="K", ndmin=0, device=None, out_sharding=None):
    """Like np.array; nested lists may hold traced values. `order` only as None or
    'K' (JAX's rule),
    `ndmin` prepends axes, `device`/`out_sharding` place the result."""
    if order not in (None, "K"):
        raise NotImplementedError("Only implemented for order='K'")
    out = _array(object, dtype, copy)
    if ndmin > _ndim(out):
        out = S.reshape(out, (1,) * (ndmin - _ndim(out)) + tuple(aval_of(out).shape)) \
            if isinstance(out, Tracer) else out.reshape((1,) * (ndmin - out.ndim) + out.shape)
    return place(out, device, out_sharding, name="array")


def _ndim(x):
    return aval_of(x).ndim if isinstance(x, Tracer) else np.ndim(x)


def _array(obj, dtype=None, copy=True):
    if isinstance(obj, (list, tuple)) and _has_tracer(obj):
        out = stack([_array(e) for e in obj])
        return out if dtype is None else strong_cast(out, x64.explicit_dtype(dtype, "array"))
    if isinstance(obj, Tracer):
        return x64.canonicalize_held(obj) if dtype is None else strong_cast(obj, x64.explicit_dtype(dtype, "array"))
    if hasattr(obj, "__funcad_array__"):
        if not is_sharded_array(obj):  # an array typed on Explicit mesh axes stays on its devices
            obj = weakly(obj.__funcad_array__(), obj.weak_type)
        return obj if dtype is None else astype(obj, dtype)
    weak = dtype is None and is_weak(obj)
    if x64.enabled:
        return weakly(_numeric(np.array(obj, dtype=dtype, copy=copy), obj), weak)
    return weakly(x64.canonicalize(_numeric(np.array(obj, dtype=x64.explicit_dtype(dtype, "array"),
                                                      copy=copy), obj)), weak)


def _numeric(out: np.ndarray, obj):
    if out.dtype.kind in "OUS":  # NumPy keeps objects and strings; funcad cannot compute on them
        raise TypeError(f"Value {obj!r:.80} with dtype {out.dtype} is not a valid array type: funcad "
                        "computes on numeric and bool arrays only (as JAX). Convert the elements to "
                        "numbers first.")
    return out


def asarray(a, dtype=None, order=None, *, copy=None, device=None, out_sharding=None):
    """Like np.asarray (JAX's signature): `copy=True` always copies (funcad arrays are
    immutable, so a copy is only observable as a new buffer), `order` as in `array`."""
    if order not in (None, "K"):
        raise NotImplementedError("Only implemented for order='K'")
    out = _array(a, dtype, True) if copy else _asarray(a, dtype)
    return place(out, device, out_sharding, name="asarray")


def _asarray(obj, dtype=None):
    if isinstance(obj, Tracer):
        if dtype is None:
            return obj
        return strong_cast(obj, x64.explicit_dtype(dtype, "asarray"))
    if hasattr(obj, "__funcad_array__") and dtype is None:
        return obj if is_sharded_array(obj) else weakly(obj.__funcad_array__(), obj.weak_type)
    # copy=None: copy only when needed (NumPy 2's copy=False raises for lists, scalars, casts).
    if isinstance(obj, np.ndarray) and dtype is None:
        return obj if x64.enabled else x64.canonicalize(obj)
    return _array(obj, dtype, copy=None)


def astype(x, dtype, /, *, copy=False, device=None):
    """x converted to `dtype` (`copy` as JAX's: results are new immutable arrays either
    way), placed on `device` if given."""
    return place(strong_cast(_asarray(x), x64.explicit_dtype(dtype, "astype")), device, name="astype")


def _shape(shape):
    return (int(shape),) if np.ndim(shape) == 0 else tuple(int(s) for s in shape)


def _dtype(dtype, name):
    """A creation function's dtype: the default float, or the (canonical) one asked for."""
    return x64.default_float() if dtype is None else x64.explicit_dtype(dtype, name)


def zeros(shape, dtype=None, *, device=None, out_sharding=None):
    return place(np.zeros(_shape(shape), _dtype(dtype, "zeros")), device, out_sharding, name="zeros")


def ones(shape, dtype=None, *, device=None, out_sharding=None):
    return place(np.ones(_shape(shape), _dtype(dtype, "ones")), device, out_sharding, name="ones")


def empty(shape, dtype=None, *, device=None, out_sharding=None):
    return place(np.zeros(_shape(shape), _dtype(dtype, "empty")), device, out_sharding, name="empty")


def full(shape, fill_value, dtype=None, *, device=None, out_sharding=None):
    return place(_fill(shape, fill_value, dtype), device, out_sharding, name="full")


def _fill(shape, fill_value, dtype=None):
    if isinstance(fill_value, Tracer):
        v = fill_value if dtype is None else strong_cast(fill_value, x64.explicit_dtype(dtype, "full"))
        return broadcast_to(v, _shape(shape))
    return weakly(x64.canonicalize(np.full(_shape(shape), fill_value, x64.explicit_dtype(dtype, "full"))),
                   dtype is None and is_weak(fill_value))


def _like(x, dtype, shape):
    if _is_duck_array(x):  # a ShapeDtypeStruct or other duck-typed array: its type only
        like_shape, like_dtype = tuple(x.shape), x64.explicit_dtype(x.dtype, "full_like")
    else:
        a = aval_of(_asarray(x))
        like_shape, like_dtype = a.shape, a.dtype
    return ((like_shape if shape is None else _shape(shape)),
            (like_dtype if dtype is None else x64.explicit_dtype(dtype, "full_like")))


def _is_duck_array(x) -> bool:
    """Whether x has `shape` and `dtype` but no values (JAX's *_like take such an x)."""
    return (hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__")
            and not isinstance(x, (Tracer, np.generic)))


def zeros_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    s, d = _like(a, dtype, shape)
    out = _full(s, 0, d) if isinstance(a, Tracer) else np.zeros(s, d)
    return place(weakly(out, dtype is None and is_weak(a)), device, out_sharding, name="zeros_like")


def ones_like(a, dtype=None, shape=None, *, device=None, out_sharding=None):
    s, d = _like(a, dtype, shape)
    out = _full(s, 1, d) if isinstance(a, Tracer) else np.ones(s, d)
    return place(weakly(out, dtype is None and is_weak(a)), device, out_sharding, name="ones_like")


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    return zeros_like(prototype, dtype, shape, device=device)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None, out_sharding=None):
    s, d = _like(a, dtype, shape)
    if isinstance(a, Tracer) or isinstance(fill_value, Tracer):
        out = _fill(s, fill_value, d)
    else:
        out = np.full(s, fill_value, d)
    return place(weakly(out, dtype is None and is_weak(a)), device, out_sharding, name="full_like")


def arange(start, stop=None, step=None, dtype=None, *, device=None, out_sharding=None):
    return place(_arange(start, stop, step, dtype), device, out_sharding, name="arange")


def _arange(start, stop=None, step=None, dtype=None):
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            raise ConcretizationError("arange needs concrete bounds: its length must be known. "
                                      "Pass the bounds as static arguments (static_argnums).")
    if not x64.enabled:
        return _arange32(start, stop, step, dtype)
    return np.arange(start, stop, step, dtype=dtype) if stop is not None else np.arange(start, dtype=dtype)


def _arange32(start, stop, step, dtype):
    # JAX's arange with x64 off: start + step * iota, computed in the 32-bit dtype.
    dtype = x64.explicit_dtype(dtype, "arange")
    if dtype is None:
        dtype = x64.canonicalize_dtype(np.result_type(*[v for v in (start, stop, step) if v is not None]))
    if stop is None:
        start, stop = 0, start
    n = max(0, int(np.ceil((stop - start) / (1 if step is None else step))))
    if _kind(dtype) not in "f" or dtype.itemsize < 4:
        return np.arange(start, stop, step, dtype=dtype)
    iota = np.arange(n, dtype=dtype)
    if step is not None:
        iota = np.asarray(step, dtype) * iota
    return np.asarray(start, dtype) + iota


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    out = place(_linspace(start, stop, num, endpoint, dtype, axis), device, name="linspace")
    if not retstep:
        return out
    div = (num - 1) if endpoint else num
    step_dtype = aval_of(out).dtype if _kind(aval_of(out).dtype) in "fc" else x64.default_float()
    step = U.true_divide(U.subtract(cast(asarray(stop), step_dtype), cast(asarray(start), step_dtype)),
                         np.array(div, step_dtype)) if div > 0 else np.array(np.nan, step_dtype)
    return out, step


def _linspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    if dtype is not None:
        dtype = x64.explicit_dtype(dtype, "linspace")
    num, endpoint, axis = operator.index(num), bool(endpoint), operator.index(axis)
    if ctx.trace is not None:  # staged in the caller's program, which XLA compiles
        return _linspace_program(start, stop, num, endpoint, dtype, axis)
    # an eager value like other creation functions' (device arrays only come from jit)
    return np.asarray(_linspace_jit()(start, stop, num=num, endpoint=endpoint, dtype=dtype, axis=axis))


def _linspace_program(start, stop, num, endpoint, dtype, axis):
    # JAX's linspace, start * (1 - i/div) + (stop/div) * i, and jitted as JAX's is: XLA turns
    # the divisions by div into products with 1/div and contracts the sum into a fused
    # multiply-add, so computing it op by op on NumPy would differ in the last bit.
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    start, stop = promote(start, stop)  # NEP 50: a Python float takes the array's dtype
    if dtype is None:
        dtype = _inexact(aval_of(start).dtype)
    cd = _inexact(np.dtype(dtype))
    start, stop = cast(start, cd), cast(stop, cd)
    shape = list(np.broadcast_shapes(aval_of(start).shape, aval_of(stop).shape))
    axis = len(shape) + axis + 1 if axis < 0 else axis
    bshape = shape[:axis] + [1] + shape[axis:]
    start = S.reshape(_broadcast(start, shape), tuple(bshape))
    stop = S.reshape(_broadcast(stop, shape), tuple(bshape))
    div = (num - 1) if endpoint else num
    if num > 1:
        real = np.finfo(cd).dtype
        ishape = [1] * len(bshape)
        ishape[axis] = div
        iota = S.reshape(S.iota(real, (div,)), tuple(ishape))
        step = cast(U.true_divide(iota, np.array(div, real)), cd)
        out = U.add(U.multiply(start, U.subtract(np.array(1, cd), step)),
                    U.multiply(U.true_divide(stop, np.array(div, cd)), cast(iota, cd)))
        if endpoint:
            out = S.concatenate([out, stop], axis)
    elif num == 1:
        out = start
    else:
        out = _full(tuple(shape[:axis] + [0] + shape[axis:]), 0, cd)
    if _kind(dtype) in "iu" and _kind(cd) not in "iu":
        out = U.floor(out)
    return cast(out, dtype)


def _inexact(dtype: np.dtype) -> np.dtype:
    return x64.canonicalize_dtype(dtype if _kind(dtype) in "fc" else np.result_type(dtype, np.float16))


def _broadcast(x, shape):
    s = aval_of(x).shape
    if tuple(s) == tuple(shape):
        return x
    return S.broadcast_in_dim(x, tuple(shape), tuple(range(len(shape) - len(s), len(shape))))


@functools.cache
def _linspace_jit():
    return jit(_linspace_program, static_argnames=("num", "endpoint", "dtype", "axis"))


def eye(N, M=None, k=0, dtype=None, *, device=None):
    return place(np.eye(N, M, k, dtype=_dtype(dtype, "eye")), device, name="eye")


def identity(n, dtype=None):
    return np.identity(n, dtype=_dtype(dtype, "identity"))


_dtypes_hooks.array = staticmethod(array)

# funcad.numpy's creation functions: these, with results that are immutable funcad arrays
# (lax's compositions build with them too, so eager results have one type).
public = SimpleNamespace(**{f.__name__: eager_result(f) for f in (
    arange, array, asarray, astype, empty, empty_like, eye, full, full_like, identity, linspace, ones,
    ones_like, zeros, zeros_like)})
