"""Turning user values into arrays and promoting dtypes the NumPy 2 (NEP 50) way."""
from __future__ import annotations

from functools import lru_cache
from typing import Any

import warnings as _warnings

import numpy as np
from ..core.typed_sharding import is_sharded_array
from ..core.narrow import KINDS as _NARROW, kind as _kind

from ..core import ieee_warnings as _ieee
from ..core import options as _options
from ..core import x64 as _x64
from ..core.avals import _PROMOTED, ShapedArray, aval_of, result_type
from ..core.eager import EagerArray, WeakEagerArray, wrap, wrap_weak
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.refs import Ref
from ..core.trace import Tracer, ctx
from ..primitives.elementwise import convert_element_type

_SCALARS = (int, float, complex, bool)


class hooks:
    """Set by creation.py, which builds on this module: `array(x)`, for nested lists."""
    array = None


def asarray_or_tracer(x):
    """A value funcad's primitives accept: ndarray, NumPy scalar, Python scalar or tracer."""
    # funcad's code may compute on NumPy inputs with NumPy's operators: keep its IEEE
    # warnings hidden from the first op in a new filter list on (core/ieee_warnings.py)
    if _warnings.filters is not _ieee.installed or (_ieee.installed or _ieee.NONE)[0] is not _ieee.first:
        _ieee.install()
    t = type(x)
    # A NumPy array passes as itself: a staged program keeps one constant per array object.
    if t is np.ndarray or t is EagerArray or isinstance(x, (Tracer, np.generic)) or t in _SCALARS \
            or t is WeakEagerArray:
        return x
    if isinstance(x, np.ndarray):
        return np.asarray(x)
    if hasattr(x, "__funcad_array__"):  # an array typed on Explicit mesh axes stays on its devices
        if is_sharded_array(x):
            return x
        # eagerly an immutable Array (an op returning its operand must not hand out the
        # host copy); staged, the cached host copy itself, so a program keeps one constant
        return x.__funcad_array__() if ctx.trace is not None else wrap(x.__funcad_array__())
    if isinstance(x, (list, tuple)):
        return hooks.array(x)
    if hasattr(x, "__array__") and not isinstance(x, (str, bytes)):
        return np.asarray(x)
    raise FuncadTypeError(f"expected an array, got a value of type {type(x).__name__}: {x!r:.60}")


def cast(x, dtype, weak=False):
    """x converted to dtype (a no-op when it already has it)."""
    if (type(x) is np.ndarray or type(x) is EagerArray) and x.dtype == dtype:
        return x
    if type(x) in _SCALARS:
        if weak and aval_of(x).dtype == dtype:
            return x  # stays a weak Python scalar, printed as a literal
        return wrap_weak(np.array(x, dtype)) if weak else np.array(x, dtype)
    a = aval_of(x)
    # Same dtype: nothing to do, except make a strong value weak. (Weak-to-strong needs no
    # conversion: a primitive's result is strong as soon as one operand is.)
    if a.dtype == dtype and (a.weak_type or not weak or not isinstance(x, Tracer)):
        return x
    return convert_element_type(x, dtype, weak)


_WEAK = (int, float, complex)  # not bool: a Python bool is strongly typed, as in JAX


def is_weak(x) -> bool:
    """Whether x is weakly typed (JAX's rule): a Python int, float or complex, or an
    array or tracer with `weak_type`."""
    return type(x) in _WEAK or getattr(x, "weak_type", False) is True


def strong(x):
    """x strongly typed: JAX's reductions and explicit casts give strong results even
    from weakly typed values (a Python scalar becomes a NumPy array)."""
    t = type(x)
    if t is WeakEagerArray:
        return wrap(np.ndarray.view(x, np.ndarray))
    if t in _SCALARS:
        return np.asarray(x, aval_of(x).dtype)
    if isinstance(x, Tracer):
        a = aval_of(x)
        if a.weak_type:
            return convert_element_type(x, a.dtype, False)
    return x


def strong_cast(x, dtype):
    """x converted to dtype as an explicit cast (`astype`, `asarray(x, dtype)`): the
    result is strongly typed even where x was weak and had that dtype already."""
    return strong(cast(x, dtype))


def promote(*xs):
    """Arguments converted to their common NEP 50 dtype."""
    if ctx.trace is None:
        # Eager fast path for ndarrays and Python scalars: NumPy 2 itself applies NEP 50.
        arrays = 0
        for x in xs:
            t = type(x)
            if t is np.ndarray or t is EagerArray:
                arrays += 1
            elif t not in _SCALARS:
                break
        else:
            if arrays:
                if arrays == len(xs):
                    d0 = xs[0].dtype
                    for x in xs:
                        if x.dtype != d0:
                            break
                    else:
                        return list(xs)
                if _options.numpy_dtype_promotion != "strict" and \
                        not any(type(x) not in _SCALARS and x.dtype in _NARROW for x in xs):
                    dtype = np.result_type(*xs)
                    for x in xs:  # a kind-lifting Python scalar (int array + 1.5) is weak: below
                        if type(x) not in _SCALARS and x.dtype.kind == dtype.kind:
                            break
                    else:
                        return _promote_typed(xs)
                    return [x if type(x) not in _SCALARS and x.dtype == dtype else np.asarray(x, dtype)
                            for x in xs]
    return _promote_typed(xs)


def _promote_typed(xs):
    xs = [asarray_or_tracer(x) for x in xs]
    if all(type(x) is np.ndarray or type(x) is EagerArray for x in xs) and all(x.dtype == xs[0].dtype for x in xs):
        return xs
    avals = [aval_of(x) for x in xs]
    d0, w0 = avals[0].dtype, avals[0].weak_type
    for a in avals:  # one dtype and weak type (tracers of a differentiated program): nothing to do
        if a.dtype != d0 or a.weak_type != w0:
            break
    else:
        if _options.numpy_dtype_promotion != "strict" and d0 not in _PROMOTED:
            return xs
    dtype, weak = result_type(*avals)
    return [cast(x, dtype, weak) for x in xs]


@lru_cache(maxsize=None)
def _numpy_ufunc_dtype(ufunc, *dtypes):
    dtypes = dtypes * ufunc.nin if len(dtypes) == 1 else dtypes  # to_inexact(x, np.arctan2)
    with np.errstate(all="ignore"):  # only the dtype matters, not 0/0
        return ufunc(*[np.zeros((), d) for d in dtypes]).dtype


def ufunc_dtype(ufunc, *dtypes):
    """The output dtype NumPy's ufunc gives for these input dtypes; with x64 off, bools and
    small integers that NumPy would make float16 become float32, JAX's default float."""
    d = _numpy_ufunc_dtype(ufunc, *dtypes)
    if d == np.float16 and not _x64.enabled and all(np.dtype(t).kind in "biu" for t in dtypes):
        return np.dtype(np.float32)
    return d


def to_inexact(x, ufunc=np.sin):
    """Integer/bool input to a float ufunc: convert the way NumPy would."""
    t = type(x)
    if (t is np.ndarray or t is EagerArray) and (x.dtype.kind in "fc" or _kind(x.dtype) == "f") or t is float:
        # the common cases, first (NumPy's own float kinds before the narrow floats)
        return x
    x = asarray_or_tracer(x)
    a = aval_of(x)
    if _kind(a.dtype) in "fc":
        return x
    return cast(x, ufunc_dtype(ufunc, a.dtype), a.weak_type)


def canonical_dtype(dtype):
    return None if dtype is None else np.dtype(dtype)


def no_out(out, fn: str) -> None:
    """Refuse `out=` as JAX does (its error and text): funcad's arrays are immutable,
    results are returned."""
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{fn} is not supported.")


def typeof(x: Any) -> ShapedArray:
    """The abstract value of `x`: its shape, dtype, weak type and the sharding in its
    type (`.sharding`, over Explicit mesh axes); a tracer's too.

    >>> import numpy as np
    >>> typeof(np.ones((2, 3), np.float32)).str_short()
    'f32[2,3]'
    """
    if isinstance(x, Ref):  # a ref's type is Ref{...}, as JAX's
        return x.aval
    return aval_of(asarray_or_tracer(x))


def real_args(name, *xs):
    """The arguments as one float dtype (integers become floats), as JAX's promote_args_inexact."""
    # A Python int stays weak (as in JAX): 0 as loc must not turn float32 into float64.
    xs = promote(*[float(x) if type(x) in (int, bool) else to_inexact(asarray_or_tracer(x)) for x in xs])
    if _kind(aval_of(xs[0]).dtype) != "f":  # bfloat16 is a float too (NumPy calls it kind 'V')
        raise FuncadTypeError(f"{name} needs real inputs, got {aval_of(xs[0]).str_short()}")
    return xs
