"""Reductions over segments of an array's leading axis (`funcad.ops`, as `jax.ops`).

Each is one scatter into an array filled with the reduction's identity, as JAX's: the
`funcad.lax` scatters with dimension numbers, so derivatives, batching and lowering come
from them. segment_max/min carry JAX's derivative convention as a custom_jvp (rows tied
at a segment's extreme share its tangent equally). With `bucket_size` the rows are first
scattered into one row of partial results per bucket, then reduced across buckets
(shorter sums, for accuracy).

>>> import numpy as np
>>> segment_sum(np.arange(5.0), np.array([0, 0, 1, 1, 2])).tolist()
[1.0, 5.0, 4.0]
"""
import operator as _operator

import numpy as _np

from .. import numpy as _fnp
from ..core.avals import aval_of as _aval_of
from ..core.errors import ConcretizationError as _ConcretizationError, FuncadTypeError as _FuncadTypeError, \
    FuncadValueError as _FuncadValueError
from ..core.trace import Tracer as _Tracer
from ..lax import GatherScatterMode as _GatherScatterMode, ScatterDimensionNumbers as _ScatterDimensionNumbers, \
    scatter_add as _scatter_add, scatter_max as _scatter_max, scatter_min as _scatter_min, \
    scatter_mul as _scatter_mul
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer, cast as _cast
from ..transforms.custom import custom_jvp as _custom_jvp

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _identity(kind: str, dtype: _np.dtype):
    """JAX's fill for a segment nothing lands in: 0, 1, or the dtype's far end for min/max."""
    if kind == "sum":
        return 0
    if kind == "prod":
        return 1
    low = kind == "max"
    if dtype == _np.bool_:
        return not low
    if dtype.kind in "iu":
        info = _np.iinfo(dtype)
        return info.min if low else info.max
    return -_np.inf if low else _np.inf


def _check_arraylike(name: str, *args) -> None:
    for pos, a in enumerate(args):
        if not (isinstance(a, (_np.ndarray, _np.generic, _Tracer, int, float, complex, bool))
                or hasattr(a, "__array__")):
            raise _FuncadTypeError(f"{name} requires ndarray or scalar arguments, got {type(a)} at "
                                  f"position {pos}; wrap it with numpy.asarray first")


def _num_segments(name: str, num_segments, segment_ids) -> int:
    if num_segments is None:
        if isinstance(segment_ids, _Tracer):
            try:
                segment_ids = segment_ids.concrete()
            except _ConcretizationError:
                raise _ConcretizationError(
                    f"Abstract tracer value encountered where concrete value is expected: traced array "
                    f"with shape {_aval_of(segment_ids).str_short()}\n{name}() `num_segments` argument. "
                    f"Its default, max(segment_ids) + 1, depends on traced values: pass num_segments "
                    f"as a Python int (static under jit, e.g. jit(f, static_argnums=...)).") from None
        ids = _np.asarray(segment_ids)
        num_segments = int(ids.max()) + 1 if ids.size else 0
    if isinstance(num_segments, _Tracer):
        try:
            num_segments = num_segments.concrete()
        except _ConcretizationError:
            raise _ConcretizationError(
                f"Abstract tracer value encountered where concrete value is expected: traced array "
                f"with shape {_aval_of(num_segments).str_short()}\n{name}() `num_segments` argument. "
                "It sets the output's length: pass a Python int (static under jit).") from None
    try:
        n = _operator.index(_np.asarray(num_segments).item() if _np.ndim(num_segments) == 0
                           and hasattr(num_segments, "dtype") else num_segments)
    except TypeError:
        raise _FuncadTypeError(f"{name}: num_segments must be an integer, got {num_segments!r}") from None
    if n < 0:
        raise _FuncadValueError("num_segments must be non-negative.")
    return n


_SCATTERS = {"sum": _scatter_add, "prod": _scatter_mul, "max": _scatter_max, "min": _scatter_min}
_REDUCERS = {"sum": _fnp.sum, "prod": _fnp.prod, "max": _fnp.max, "min": _fnp.min}


def _extremal(kind, out, idx, updates, dn, mode, sorted_, unique):
    """scatter_max/min of `updates` into `out` with JAX's derivative: the rows that reach a
    segment's extreme share its tangent equally (with the fill too, where it ties)."""
    scatter = _SCATTERS[kind]

    @_custom_jvp
    def f(u, idx):
        return scatter(out, idx, u, dn, indices_are_sorted=sorted_, unique_indices=unique, mode=mode)

    @f.defjvp
    def f_jvp(primals, tangents):
        u, idx = primals
        t = tangents[0]
        res = f(u, idx)
        last = idx.shape[-1]
        # Where each row lands (clamped as `mode` does; a dropped row never counts).
        bounds = _np.array(_aval_of(out).shape[:last])
        if mode == _GatherScatterMode.CLIP:
            pos, ok = _fnp.clip(idx, 0, bounds - 1), None
        else:
            ok = _fnp.all((idx >= 0) & (idx < bounds), axis=-1)
            pos = _fnp.where(ok[..., None], idx, 0)
        at = res[tuple(pos[..., k] for k in range(last))]
        hit = u == at
        if ok is not None:
            hit = hit & _fnp.reshape(ok, ok.shape + (1,) * (at.ndim - ok.ndim))
        ones = _fnp.where(hit, 1.0, 0.0).astype(_aval_of(u).dtype)
        count = _scatter_add(_fnp.zeros_like(res), pos, ones, dn) + (res == out).astype(ones.dtype)
        share = count[tuple(pos[..., k] for k in range(last))]
        tan = _fnp.where(hit, t / _fnp.where(hit, share, 1), 0)
        return res, _scatter_add(_fnp.zeros_like(res), pos, tan, dn)
    return f(updates, idx)


def _scatter(kind, out, idx, updates, dn, mode, sorted_, unique):
    if kind in ("max", "min") and _aval_of(out).dtype.kind in "fc":
        return _extremal(kind, out, idx, updates, dn, mode, sorted_, unique)
    return _SCATTERS[kind](out, idx, updates, dn, indices_are_sorted=sorted_, unique_indices=unique, mode=mode)


def _segment(kind: str, data, segment_ids, num_segments, indices_are_sorted, unique_indices,
             bucket_size, mode):
    name = f"segment_{kind}"
    _check_arraylike(name, data, segment_ids)
    data, ids = _asarray_or_tracer(data), _asarray_or_tracer(segment_ids)
    dtype = _aval_of(data).dtype
    if _aval_of(ids).dtype.kind not in "iu":
        raise _FuncadTypeError(f"{name}: segment_ids must have an integer dtype, got "
                               f"{_aval_of(ids).dtype}; cast them, e.g. segment_ids.astype(int)")
    if dtype == _np.bool_ and kind in ("sum", "prod"):
        raise _FuncadTypeError(f"{name} does not accept dtype bool (as in JAX); cast data to an "
                               "integer dtype first, or use segment_max/segment_min for or/and")
    n = _num_segments(name, num_segments, ids)
    mode = _GatherScatterMode.FILL_OR_DROP if mode is None else _GatherScatterMode.from_any(mode)
    rest = tuple(_aval_of(data).shape[1:])
    fill = _identity(kind, dtype)
    if bucket_size is None:
        out = _fnp.full((n,) + rest, fill, dtype=dtype)
        ishape = tuple(_aval_of(ids).shape)
        updates = _fnp.broadcast_to(data, ishape + rest)
        dn = _ScatterDimensionNumbers(update_window_dims=tuple(range(len(ishape), len(ishape) + len(rest))),
                                      inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,))
        return _scatter(kind, out, _fnp.expand_dims(ids, -1), updates, dn, mode, indices_are_sorted,
                        unique_indices)
    bucket_size = _operator.index(bucket_size)
    if bucket_size <= 0:
        raise _FuncadValueError(f"{name}: bucket_size must be a positive integer, got {bucket_size}")
    if _aval_of(ids).ndim != 1:
        raise _FuncadValueError(f"{name}: with bucket_size, segment_ids must be one-dimensional, got shape "
                                f"{tuple(_aval_of(ids).shape)}")
    m = _aval_of(ids).shape[0]
    buckets = -(-m // bucket_size)
    out = _fnp.full((buckets, n) + rest, fill, dtype=dtype)
    which = _np.arange(m, dtype=_aval_of(ids).dtype) // bucket_size
    idx = _fnp.stack([_fnp.asarray(which), ids], axis=-1)
    updates = _fnp.broadcast_to(data, (m,) + rest)
    dn = _ScatterDimensionNumbers(update_window_dims=tuple(range(1, 1 + len(rest))),
                                  inserted_window_dims=(0, 1), scatter_dims_to_operand_dims=(0, 1))
    out = _scatter(kind, out, idx, updates, dn, mode, indices_are_sorted, unique_indices)
    return _cast(_REDUCERS[kind](out, axis=0), dtype)


_ARGS = """
    Args:
      data: the values; segments run along its leading axis.
      segment_ids: integer array, the segment of each row of `data` (repeats and any order).
      num_segments: the number of segments (default max(segment_ids) + 1); it sets the
        output's length, so under jit pass it as a static Python int.
      indices_are_sorted, unique_indices: hints, as JAX's (the result is the same).
      bucket_size: reduce within buckets of this many rows first, then across buckets.
      mode: a `funcad.lax.GatherScatterMode` or its name; by default ids outside
        [0, num_segments) are dropped, with "clip" they are clamped into range.

    Returns:
      An array of shape (num_segments,) + data.shape[1:], of data's dtype; a segment that
      receives no row holds {identity}.
"""


def segment_sum(data, segment_ids, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode=None):
    """The sum of the rows of `data` within each segment, as `jax.ops.segment_sum`.

    >>> import numpy as np
    >>> segment_sum(np.arange(5), np.array([0, 0, 1, 1, 2])).tolist()
    [1, 5, 4]
    """
    return _segment("sum", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)


def segment_prod(data, segment_ids, num_segments: int | None = None, indices_are_sorted: bool = False,
                 unique_indices: bool = False, bucket_size: int | None = None, mode=None):
    """The product of the rows of `data` within each segment, as `jax.ops.segment_prod`.

    >>> import numpy as np
    >>> segment_prod(np.arange(6), np.array([0, 0, 1, 1, 2, 2])).tolist()
    [0, 6, 20]
    """
    return _segment("prod", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)


def segment_max(data, segment_ids, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode=None):
    """The maximum of the rows of `data` within each segment, as `jax.ops.segment_max`.

    >>> import numpy as np
    >>> segment_max(np.arange(6.0), np.array([0, 0, 1, 1, 3, 3])).tolist()
    [1.0, 3.0, -inf, 5.0]
    """
    return _segment("max", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)


def segment_min(data, segment_ids, num_segments: int | None = None, indices_are_sorted: bool = False,
                unique_indices: bool = False, bucket_size: int | None = None, mode=None):
    """The minimum of the rows of `data` within each segment, as `jax.ops.segment_min`.

    >>> import numpy as np
    >>> segment_min(np.arange(6.0), np.array([0, 0, 1, 1, 3, 3])).tolist()
    [0.0, 2.0, inf, 4.0]
    """
    return _segment("min", data, segment_ids, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, mode)


for _f, _id in ((segment_sum, "0"), (segment_prod, "1"),
                (segment_max, "-inf (the dtype's least value for integers, False for booleans)"),
                (segment_min, "inf (the dtype's greatest value for integers, True for booleans)")):
    _f.__doc__ = _f.__doc__.replace("\n\n    >>>", "\n" + _ARGS.format(identity=_id) + "\n    >>>", 1)
del _f, _id
