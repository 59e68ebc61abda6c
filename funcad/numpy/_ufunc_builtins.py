"""The built-in ufuncs with JAX's fast paths: `add.reduce` is `sum`, `add.accumulate` is
`cumsum`, `add.at` is `.at[].add`, `maximum.reduce` is `max`, `logaddexp.reduce` is
`logsumexp`, ... (so they differentiate and batch as those do). The other methods run
the generic loops of `_ufunc_api.ufunc`, as in JAX."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..arrays.dtypes import asarray_or_tracer, cast, to_inexact
from ..arrays.indexing import _IndexUpdateHelper as _at
from ._ufunc_api import make_builtin
from ..arrays.reductions import _norm_axes, logsumexp
from ..arrays.ufuncs import divide, logaddexp, multiply, negative, where as _where
from ..arrays import reductions as red
from ..primitives import structural as S
from ..lax import _reduce
from ..arrays.ufuncs import _as_bool

__all__ = ["install"]


def _axes(nd, axis):
    return _norm_axes(nd, axis)


def _reducer(base, combine, fill=None, pre=None):
    """A ufunc.reduce fast path from `base(a, axis, dtype, keepdims)`: a `where` mask fills
    the masked entries with the identity (or `initial` for max/min, which have none), and
    `initial` is combined with the result, as JAX's reductions do."""
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        a = asarray_or_tracer(a)
        if pre is not None:
            a = pre(a)
        if where is not None:
            f = fill if fill is not None else initial
            a = _where(where, a, np.asarray(f).astype(aval_of(a).dtype))
        r = base(a, axis, dtype, keepdims)
        if initial is not None:
            r = combine(cast(asarray_or_tracer(initial), aval_of(r).dtype), r)
        return r
    return reduce


def _cast_first(fn):
    def base(a, axis, dtype, keepdims):
        return fn(a if dtype is None else cast(a, np.dtype(dtype)), axis, keepdims=keepdims)
    return base


def _cast_after(fn):
    def base(a, axis, dtype, keepdims):
        r = fn(a, axis, keepdims=keepdims)
        return r if dtype is None else cast(r, np.dtype(dtype))
    return base


def _lax_reduce(lax_fn):
    def fn(a, axis, keepdims=False):
        shape = aval_of(a).shape
        axes = _axes(len(shape), axis)
        r = lax_fn(a, axes)
        return S.reshape(r, tuple(1 if i in axes else s for i, s in enumerate(shape))) if keepdims else r
    return fn


def _logsumexp_reduce(scale):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        # dtype is accepted and unused, as in JAX's logaddexp.reduce.
        a = to_inexact(a)
        if scale != 1.0:
            a = multiply(a, scale)
            initial = None if initial is None else multiply(initial, scale)
        r = logsumexp(a, axis, keepdims=keepdims, where=where)
        if initial is not None:
            r = logaddexp(initial, r)
        return r if scale == 1.0 else divide(r, scale)
    return reduce


def _as_int_for_bool(op_name):
    def at(a, indices, b):
        a = asarray_or_tracer(a)
        if aval_of(a).dtype == np.bool_:
            a32 = cast(a, np.int32)
            b32 = cast(_as_bool(b), np.int32)
            return cast(getattr(_at(a32)[indices], op_name)(b32), np.bool_)
        return getattr(_at(a)[indices], op_name)(b)
    return at


def _subtract_at(a, indices, b):
    a = asarray_or_tracer(a)
    return _at(a)[indices].add(negative(asarray_or_tracer(b)))


def install(ns: dict) -> None:
    """Make the built-in ufuncs of the namespace `ns` (those JAX's numpy has) ufuncs."""

    def lazy(name):  # funcad.lax loads after funcad.numpy
        def fn(a, axes):
            return getattr(_reduce, name)(a, axes)
        return fn
    reduce_and, reduce_or, reduce_xor = lazy("reduce_and"), lazy("reduce_or"), lazy("reduce_xor")
    ns["add"] = make_builtin(ns["add"], 2, 0, reduce=_reducer(
        lambda a, axis, dtype, keepdims: red.sum(a, axis, dtype, keepdims=keepdims), ns["add"], fill=0),
        accumulate=lambda a, axis, dtype: red.cumsum(a, axis, dtype), at=_as_int_for_bool("add"))
    ns["multiply"] = make_builtin(ns["multiply"], 2, 1, reduce=_reducer(
        lambda a, axis, dtype, keepdims: red.prod(a, axis, dtype, keepdims=keepdims), ns["multiply"], fill=1),
        accumulate=lambda a, axis, dtype: red.cumprod(a, axis, dtype), at=_as_int_for_bool("multiply"))
    ns["subtract"] = make_builtin(ns["subtract"], 2, None, at=_subtract_at)
    ns["maximum"] = make_builtin(ns["maximum"], 2, None, reduce=_reducer(_cast_first(red.max), ns["maximum"]))
    ns["minimum"] = make_builtin(ns["minimum"], 2, None, reduce=_reducer(_cast_first(red.min), ns["minimum"]))
    for name, fn, ident in (("bitwise_and", reduce_and, -1), ("bitwise_or", reduce_or, 0),
                            ("bitwise_xor", reduce_xor, 0)):
        ns[name] = make_builtin(ns[name], 2, ident, reduce=_reducer(
            _cast_after(_lax_reduce(fn)), ns[name], fill=ident))
    for name, fn, ident in (("logical_and", red.all, True), ("logical_or", red.any, False),
                            ("logical_xor", _lax_reduce(reduce_xor), False)):
        ns[name] = make_builtin(ns[name], 2, ident, reduce=_reducer(
            _cast_after(fn), ns[name], fill=ident, pre=_as_bool))
    ns["logaddexp"] = make_builtin(ns["logaddexp"], 2, -np.inf, reduce=_logsumexp_reduce(1.0))
    ns["logaddexp2"] = make_builtin(ns["logaddexp2"], 2, -np.inf, reduce=_logsumexp_reduce(float(np.log(2))))
    ns["negative"] = make_builtin(ns["negative"], 1, None)
