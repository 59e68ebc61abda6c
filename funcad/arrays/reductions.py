"""Reductions with NumPy's axis/keepdims/dtype conventions."""
from __future__ import annotations

import ml_dtypes
import numpy as np
from ..core.narrow import kind as _kind

from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.eager import EagerArray, wrap
from ..primitives import elementwise as E
from ..primitives import reductions as R
from ..primitives import structural as S
from ..primitives._base import broadcast_to as _broadcast, canonical_axis
from .broadcast import broadcast_to
from .dtypes import asarray_or_tracer, cast, no_out, promote, strong, to_inexact
from .ufuncs import (_as_bool, abs as _abs, exp, isfinite, log, not_equal, sqrt, square, subtract,
    where as _where)
from ..transforms.eager_xla import jitted_like_jax

_ARRAYS = (np.ndarray, EagerArray)
_PRIMS = {R.reduce_sum: R.reduce_sum_p, R.reduce_max: R.reduce_max_p, R.reduce_min: R.reduce_min_p,
          R.reduce_prod: R.reduce_prod_p}


def _norm_axes(nd, axis):
    if axis is None:
        return tuple(range(nd))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    out = [canonical_axis(a, nd) for a in axes]
    if len(set(out)) != len(out):
        raise FuncadValueError(f"repeated axis in {axis!r}; name each axis once")
    return tuple(sorted(out))


def _keep(y, shape, axes, keepdims):
    if not keepdims:
        return y
    return S.reshape(y, tuple(1 if i in axes else s for i, s in enumerate(shape)))


def _reduce(prim_fn, x, axis, keepdims, dtype=None):
    x = asarray_or_tracer(x)
    if type(x) not in _ARRAYS:  # jnp's reductions give strong results, as JAX's (its init values are)
        x = strong(x)
    if dtype is not None:
        x = cast(x, np.dtype(dtype))
    shape = x.shape if type(x) in _ARRAYS else aval_of(x).shape
    axes = _norm_axes(len(shape), axis)
    prim = _PRIMS.get(prim_fn)  # axes are canonical already: bind without re-checking them
    return _keep(prim.bind(x, axes=axes) if prim is not None else prim_fn(x, axes), shape, axes, keepdims)


def _sum_dtype(x):
    d = x.dtype if type(x) in _ARRAYS else aval_of(x).dtype
    k = d.kind if d.kind != "V" else _kind(d)  # NumPy calls the narrow dtypes 'V'
    if k == "b" or (k in "iu" and d.itemsize < np.dtype(np.int_).itemsize):
        return np.dtype(np.int_) if k != "u" else np.dtype(np.uint)
    return d


_HALF = (np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16))


def _upcast_sum(prim_fn, a, axis, keepdims, dtype):
    # JAX accumulates float16/bfloat16 sums and products in float32 and rounds once.
    d = np.dtype(dtype)
    if d in _HALF:
        return cast(_reduce(prim_fn, a, axis, keepdims, np.float32), d)
    return _reduce(prim_fn, a, axis, keepdims, d)


def _identity(name: str, dtype: np.dtype):
    """The identity of reduction `name` in `dtype` (what masked-out entries become)."""
    if name == "sum":
        return np.zeros((), dtype)
    if name == "prod":
        return np.ones((), dtype)
    k = _kind(dtype)
    if k == "b":
        return np.array(name == "min", dtype)
    if k in "iu":
        info = np.iinfo(dtype)
        return np.array(info.min if name == "max" else info.max, dtype)
    return np.array(-np.inf if name == "max" else np.inf, dtype)


_OPS = {"sum": E.add, "prod": E.mul, "max": E.max, "min": E.min}


def check_where(name: str, where) -> None:
    """JAX's rule: a `where` mask is a boolean array (an integer one is an error)."""
    if where is not None:
        d = where.dtype if hasattr(where, "dtype") else aval_of(asarray_or_tracer(where)).dtype
        if d != np.bool_:
            raise ValueError(f"jnp.{name}: where must be None or a boolean array; got where.dtype={d!r}.")


def _initial_only(a, axis, keepdims, initial):
    """max/min over an empty axis with `initial`: that value, in the result's shape (JAX's)."""
    shape = aval_of(a).shape
    axes = _norm_axes(len(shape), axis)
    if initial is None or 0 not in [shape[i] for i in axes]:
        return None
    out = tuple(1 if i in axes else n for i, n in enumerate(shape)) if keepdims else \
        tuple(n for i, n in enumerate(shape) if i not in axes)
    return wrap(_broadcast(cast(asarray_or_tracer(initial), aval_of(a).dtype), out))


def _finish(name, result, a, where, initial, has_identity=True):
    """Mask `a` with `where` and fold `initial` into the reduction `result(masked a)`, as
    JAX's reductions do: masked entries become the identity; `initial` joins afterwards."""
    d = aval_of(a).dtype
    check_where(name, where)
    if where is not None:
        if not has_identity and initial is None:
            raise ValueError(f"reduction operation {name} does not have an identity, so to use a "
                             f"where mask one has to specify 'initial'")
        a = _where(where, a, _identity(name, d))
    out = result(a)
    if initial is not None:
        init = cast(asarray_or_tracer(initial), aval_of(out).dtype)
        if aval_of(init).shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {aval_of(init).shape}")
        out = _OPS[name](init, out)
    return out


def _int_dtype(a, promote_integers):
    d = aval_of(a).dtype
    if promote_integers:
        return _sum_dtype(a)
    return np.dtype(np.int32) if d == np.bool_ else d


def _accumulate(name, prim_fn, a, axis, dtype, out, keepdims, initial, where, promote_integers):
    # sum and prod: integers widened unless promote_integers=False, half floats in float32
    no_out(out, name)
    a = asarray_or_tracer(a)
    d = dtype or _int_dtype(a, promote_integers)
    if where is None and initial is None:
        return _upcast_sum(prim_fn, a, axis, keepdims, d)
    return _finish(name, lambda a: _upcast_sum(prim_fn, a, axis, keepdims, d), cast(a, np.dtype(d)),
                   where, initial)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
        promote_integers=True):
    return _accumulate("sum", R.reduce_sum, a, axis, dtype, out, keepdims, initial, where, promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
         promote_integers=True):
    return _accumulate("prod", R.reduce_prod, a, axis, dtype, out, keepdims, initial, where, promote_integers)


def _extreme(name, prim_fn, a, axis, out, keepdims, initial, where):
    # max and min have no identity: a where mask needs `initial`, and an empty axis gives it.
    no_out(out, name)
    if where is None and initial is None:
        a = asarray_or_tracer(a)
        shape = a.shape if type(a) in _ARRAYS else aval_of(a).shape
        if 0 in shape and 0 in [shape[i] for i in _norm_axes(len(shape), axis)]:
            raise FuncadValueError(f"zero-size array to reduction operation {name} which has no "
                                   "identity; pass initial= (the value for an empty axis)")
        return _reduce(prim_fn, a, axis, keepdims)
    a = asarray_or_tracer(a)
    empty = _initial_only(a, axis, keepdims, initial)
    if empty is not None:
        return empty
    return _finish(name, lambda a: _reduce(prim_fn, a, axis, keepdims), a, where, initial, has_identity=False)


def max_or_identity(a, axis):
    """max over `axis` (kept), -inf over an empty one (max with initial=-inf, cheaper)."""
    return _reduce(R.reduce_max, a, axis, True)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _extreme("max", R.reduce_max, a, axis, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _extreme("min", R.reduce_min, a, axis, out, keepdims, initial, where)


amax, amin = max, min


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    no_out(out, "all")
    check_where("all", where)
    a = _as_bool(a)
    if where is not None:
        a = _where(where, a, np.True_)
    return _reduce(R.reduce_min, a, axis, keepdims)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    no_out(out, "any")
    check_where("any", where)
    a = _as_bool(a)
    if where is not None:
        a = _where(where, a, np.False_)
    return _reduce(R.reduce_max, a, axis, keepdims)


def _count(shape, axes):
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


def _mean_dtype(a, dtype):
    if dtype is not None:
        return np.dtype(dtype)
    d = aval_of(a).dtype
    if _kind(d) in "fc":
        return d
    # JAX's table: bool and integers up to 32 bits average in float32, 64-bit ones in float64.
    return np.dtype(np.float64) if d.itemsize == 8 else np.dtype(np.float32)


def _where_count(a, axis, keepdims, where, d):
    """How many entries of `a` each reduction over `axis` takes: the size, or with a
    `where` mask the number of True entries (as an array of dtype `d`)."""
    shape = aval_of(a).shape
    if where is None:
        return np.array(_count(shape, _norm_axes(len(shape), axis)), d)
    return sum(broadcast_to(where, shape), axis, d, keepdims=keepdims)


@jitted_like_jax(static_argnames=('axis', 'dtype', 'keepdims'))
def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    no_out(out, "mean")
    check_where("mean", where)
    a = asarray_or_tracer(a)
    d = _mean_dtype(a, dtype)
    if d in _HALF:  # in float32, rounded once (JAX's)
        n = _where_count(a, axis, keepdims, where, np.float32)
        return cast(E.div(sum(a, axis, np.float32, keepdims=keepdims, where=where), n), d)
    return E.div(sum(a, axis, d, keepdims=keepdims, where=where), _where_count(a, axis, keepdims, where, d))


def _correction(name, ddof, correction):
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    no_out(out, "var")
    check_where("var", where)
    return _var(a, axis, dtype, _correction("var", ddof, correction), keepdims, where, mean)


# As JAX's, compiled with the correction as an argument (eager_backend="xla"): XLA then
# divides by `count - correction` computed at run time, as in JAX's program.
@jitted_like_jax(static_argnames=('axis', 'dtype', 'keepdims'))
def _var(a, axis, dtype, correction, keepdims, where, mean):
    a = asarray_or_tracer(a)
    d = _mean_dtype(a, dtype)
    a = cast(a, d)
    if mean is None:
        mean = _mean(a, axis, d, keepdims=True, where=where)
    else:
        mean = cast(asarray_or_tracer(mean), d)
        if aval_of(mean).ndim not in (0, aval_of(a).ndim):
            axes = _norm_axes(aval_of(a).ndim, axis)
            want = tuple(1 if i in axes else n for i, n in enumerate(aval_of(a).shape))
            raise TypeError(f"var: `mean` must have the shape the mean has with keepdims=True, {want}, "
                            f"or be a scalar; got shape {aval_of(mean).shape}")
    centered = subtract(a, mean)
    if _kind(d) == "c":  # |x - mean|², real as NumPy's and JAX's
        re, im = E.real(centered), E.imag(centered)
        sq, d = E.add(E.mul(re, re), E.mul(im, im)), aval_of(re).dtype
    elif _kind(d) == "f":
        sq = E.mul(centered, centered)
    else:
        sq = E.mul(centered, E.div(centered, np.ones((), d)))
    denom = E.sub(asarray_or_tracer(_where_count(a, axis, keepdims, where, d)),
                  cast(asarray_or_tracer(correction), d))
    total = sum(sq, axis, d, keepdims=keepdims, where=where)
    # No degrees of freedom left (correction >= the count): nan, as JAX gives (not x / 0).
    return _where(E.gt(denom, np.zeros((), d)), E.div(total, denom), np.array(np.nan, d))


_mean = mean


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None,
        correction=None):
    no_out(out, "std")
    check_where("std", where)
    return _std(a, axis, dtype, _correction("std", ddof, correction), keepdims, where, mean)


@jitted_like_jax(static_argnames=('axis', 'dtype', 'keepdims'))
def _std(a, axis, dtype, correction, keepdims, where, mean):
    return sqrt(_var(a, axis, dtype, correction, keepdims, where, mean))


def _arg(prim_fn, a, axis, keepdims):
    a = asarray_or_tracer(a)
    if axis is None:
        nd = aval_of(a).ndim
        out = prim_fn(S.reshape(a, (aval_of(a).size,)), 0)
        return S.reshape(out, (1,) * nd) if keepdims else out
    nd = aval_of(a).ndim
    ax = _norm_axes(nd, axis)[0]
    out = prim_fn(a, ax)
    return _keep(out, aval_of(a).shape, (ax,), keepdims)


def argmax(a, axis=None, out=None, keepdims=None):
    no_out(out, "argmax")
    return _arg(R.argmax, a, axis, bool(keepdims))


def argmin(a, axis=None, out=None, keepdims=None):
    no_out(out, "argmin")
    return _arg(R.argmin, a, axis, bool(keepdims))


def _cumulative(prim_fn, a, axis, dtype):
    a = strong(asarray_or_tracer(a))
    if dtype is not None:
        a = cast(a, np.dtype(dtype))
    elif prim_fn in (R.cumsum, R.cumprod):
        # 64-bit mode: NumPy's widening; 32-bit mode: JAX's (integers keep their dtype)
        if _x64.enabled:
            a = cast(a, _sum_dtype(a))
        elif aval_of(a).dtype == np.bool_:
            a = cast(a, np.dtype(np.int32))
    if axis is None:
        a = S.reshape(a, (aval_of(a).size,))
        axis = 0
    return prim_fn(a, _norm_axes(aval_of(a).ndim, axis)[0])


def cumsum(a, axis=None, dtype=None, out=None):
    no_out(out, "cumsum")
    return _cumulative(R.cumsum, a, axis, dtype)


def cumprod(a, axis=None, dtype=None, out=None):
    no_out(out, "cumprod")
    return _cumulative(R.cumprod, a, axis, dtype)


def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False, where=None):
    """log(sum(b * exp(a))) over `axis`, computed stably (scipy.special.logsumexp).

    The maximum is shifted out first and held constant under differentiation,
    so gradients are finite wherever the result is, also with -inf entries.
    `b` scales the terms (a zero drops its term); `where` masks entries out;
    `return_sign=True` gives (log|sum|, sign(sum)), otherwise a negative sum
    gives NaN.

    >>> import funcad.numpy as fnp
    >>> float(fnp.logsumexp(fnp.array([0.0, 0.0]), b=fnp.array([2.0, -1.0])))
    0.0
    """
    a = asarray_or_tracer(a)
    if where is not None:
        a = _where(where, a, 0)
    if b is not None:
        a, b = promote(to_inexact(a), to_inexact(b))
        a = _where(not_equal(b, 0), a, -np.inf)
    else:
        a = to_inexact(a)
    complex_ = _kind(aval_of(a).dtype) == "c"  # the principal log of the complex sum, as JAX's
    masked = a if where is None else _where(where, a, -np.inf)
    amax = max_or_identity(E.real(masked) if complex_ else masked, axis)
    amax = E.stop_gradient(_where(isfinite(amax), amax, 0))
    terms = exp(E.sub(a, cast(amax, aval_of(a).dtype)))
    if b is not None:
        terms = E.mul(terms, b)
    if where is not None:
        terms = _where(where, terms, 0)
    total = sum(terms, axis, keepdims=True)
    sign = E.sign(total)
    if complex_ and not return_sign:
        out = E.add(log(total), cast(amax, aval_of(total).dtype))
    else:
        out = E.add(log(_abs(total)), amax)
    if not keepdims:
        shape = aval_of(out).shape
        drop = _norm_axes(len(shape), axis)
        out = S.reshape(out, tuple(s for i, s in enumerate(shape) if i not in drop))
        sign = S.reshape(sign, aval_of(out).shape)
    if return_sign:
        return out, sign
    if b is not None and not complex_:
        out = _where(E.lt(sign, np.zeros((), aval_of(sign).dtype)), np.nan, out)
    return out
