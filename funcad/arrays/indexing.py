"""NumPy indexing on traced arrays: basic slicing with static slices and
dynamic_slice, advanced integer/boolean indexing with gather, and `.at[]` updates."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadIndexError, NonConcreteBooleanIndexError, FuncadTypeError, FuncadValueError
from ..core.errors import ShardingTypeError
from ..core.staging import trace_to_jaxpr
from ..core.trace import Tracer, ctx, set_trace
from ..core.typed_sharding import spec_of
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ..primitives.sharding import on_auto_axes, out_sharded, typed_as
from ..transforms.control_flow_api import while_loop
from ..primitives.elementwise import weakly
from .dtypes import asarray_or_tracer, cast, is_weak
from .shape import broadcast_to, concatenate, moveaxis, ravel, reshape, stack
from .ufuncs import clip, maximum, minimum, power, true_divide, where
from .reductions import max as _max
from .creation import ones_like
from .creation import full


def _is_int_scalar(i):
    if isinstance(i, (bool, np.bool_)):
        return False
    if isinstance(i, (int, np.integer)):
        return True
    return isinstance(i, Tracer) and i.ndim == 0 and i.dtype.kind in "iu"


def _is_array_index(i):
    if isinstance(i, Tracer):  # a traced integer scalar is a basic index (dynamic_slice)
        return not _is_int_scalar(i)
    return isinstance(i, (list, np.ndarray)) or hasattr(i, "__funcad_array__")


# A 0-d boolean index (x[np.True_], x[np.array(False)]) adds an axis of size 1 or 0.
_NEW_AXIS_KEPT, _NEW_AXIS_EMPTIED = object(), object()


def _expand(x, idx):
    """Normalise an index into one entry per dimension of x (None inserted as new axes)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    # Boolean masks become integer index arrays (their shape must be static).
    out = []
    for i in idx:
        if _is_array_index(i) and not isinstance(i, Tracer):
            i = np.asarray(i.__funcad_array__() if hasattr(i, "__funcad_array__") else i)
        if isinstance(i, np.bool_):
            i = np.asarray(i)
        if isinstance(i, np.ndarray) and i.dtype == np.bool_:
            if i.ndim == 0:  # NumPy's rule: a new axis, kept (True) or emptied (False)
                out.append(_NEW_AXIS_KEPT if i else _NEW_AXIS_EMPTIED)
                continue
            out.extend(np.nonzero(i))
            continue
        if isinstance(i, Tracer) and i.dtype == np.bool_:
            raise NonConcreteBooleanIndexError(
                "boolean mask indexing with a traced mask has a data-dependent shape. "
                "Use funcad.numpy.where(mask, x, 0) instead, or pass the mask as a NumPy array.")
        out.append(i)
    idx = tuple(out)
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis
                   and i is not _NEW_AXIS_KEPT and i is not _NEW_AXIS_EMPTIED)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise FuncadIndexError("an index can only have a single ellipsis ('...')")
    nd = aval_of(x).ndim
    if consumed > nd:
        raise FuncadIndexError(f"too many indices for {aval_of(x).str_short()}: it has {nd} dimensions, but "
                               f"{consumed} were indexed")
    full = []
    for i in idx:
        if i is Ellipsis:
            full.extend([slice(None)] * (nd - consumed))
        else:
            full.append(i)
    if not any(i is Ellipsis for i in idx):  # `in` would compare arrays elementwise
        full.extend([slice(None)] * (nd - consumed))
    # Insert the new axes into x itself, indexed by full slices.
    shape, k, entries = [], 0, []
    for i in full:
        if i is None or i is _NEW_AXIS_KEPT or i is _NEW_AXIS_EMPTIED:
            shape.append(1)
            entries.append(slice(0, 0) if i is _NEW_AXIS_EMPTIED else slice(None))
        else:
            shape.append(aval_of(x).shape[k])
            entries.append(i)
            k += 1
    if len(shape) != nd:
        x = S.reshape(x, shape)
    return x, entries


def _normalize_int(i, n, dim):
    if isinstance(i, Tracer):
        i = cast(i, np.int64) if i.dtype != np.int64 else i
        return E.select_n(E.lt(i, np.int64(0)), i, E.add(i, np.int64(n)))
    i = int(i)
    if n == 0:
        raise FuncadIndexError(f"index {i} is out of bounds for axis {dim} with size 0")
    # JAX clamps a static out-of-bounds index (after wrapping negatives once), as
    # dynamic_slice does for a traced one: x[10] of 5 entries is x[4], x[-10] is x[0].
    return min(max(i + n if i < 0 else i, 0), n - 1)


def getitem(x, idx):
    x = asarray_or_tracer(x)
    x, entries = _expand(x, idx)
    shape = aval_of(x).shape
    advanced = [d for d, i in enumerate(entries) if _is_array_index(i)]
    if not advanced:
        return _basic(x, entries)
    # Integer scalars join the advanced indices, as in NumPy.
    adv_dims = [d for d, i in enumerate(entries) if _is_array_index(i) or _is_int_scalar(i)]
    # Apply the slices first, keeping the advanced dimensions whole.
    x = _basic(x, [slice(None) if d in adv_dims else i for d, i in enumerate(entries)])
    shape = aval_of(x).shape
    arrays = []
    for d in adv_dims:
        i = entries[d]
        a = i if isinstance(i, Tracer) else np.asarray(i)
        if aval_of(a).dtype.kind not in "iu":
            raise FuncadIndexError(f"arrays used as indices must be of integer or boolean type, got {aval_of(a).dtype}")
        if isinstance(a, Tracer):
            a = _normalize_int(a, shape[d], d)
        else:
            if a.size and shape[d] == 0:
                raise FuncadIndexError(f"index out of bounds for axis {d} with size 0")
            # Out-of-bounds entries clamp, as JAX's gather does (gather clamps traced ones).
            a = np.clip(np.where(a < 0, a + shape[d], a), 0, max(shape[d] - 1, 0)).astype(np.int64)
        arrays.append(a)
    bshape = np.broadcast_shapes(*[aval_of(a).shape for a in arrays])
    idx = stack([broadcast_to(cast(a, np.int64), bshape) for a in arrays], -1)
    rest = [d for d in range(len(shape)) if d not in adv_dims]
    xt = S.transpose(x, adv_dims + rest) if adv_dims + rest != list(range(len(shape))) else x
    out = I.gather(xt, idx)
    contiguous = adv_dims == list(range(adv_dims[0], adv_dims[0] + len(adv_dims)))
    if contiguous and adv_dims[0] > 0:
        nb = len(bshape)
        out = moveaxis(out, tuple(range(nb)), tuple(range(adv_dims[0], adv_dims[0] + nb)))
    return out


def _basic(x, entries):
    shape = aval_of(x).shape
    start, stop, step, flip, squeeze = [], [], [], [], []
    dyn = {}
    for d, (i, n) in enumerate(zip(entries, shape)):
        if isinstance(i, slice):
            s, e, st = i.indices(n)
            if st > 0:
                start.append(s); stop.append(max(e, s)); step.append(st)
            else:
                # Reverse, then slice forwards.
                cnt = len(range(s, e, st))
                flip.append(d)
                s2 = n - 1 - s
                start.append(s2); stop.append(s2 + (cnt - 1) * (-st) + 1 if cnt else s2); step.append(-st)
        elif _is_int_scalar(i):
            if isinstance(i, Tracer):
                dyn[d] = _normalize_int(i, n, d)
                start.append(0); stop.append(n); step.append(1)
            else:
                j = _normalize_int(i, n, d)
                start.append(j); stop.append(j + 1); step.append(1)
            squeeze.append(d)
        else:
            raise FuncadIndexError(f"only integers, slices (`:`), ellipsis (`...`), None and integer or "
                             f"boolean arrays are valid indices, got {type(i).__name__}")
    if flip:
        x = S.rev(x, flip)
    if (start, stop, step) != ([0] * len(shape), list(shape), [1] * len(shape)):
        x = S.slice(x, start, stop, step)
    if dyn:
        cur = aval_of(x).shape
        starts = [dyn.get(d, np.int64(0)) for d in range(len(cur))]
        sizes = [1 if d in dyn else cur[d] for d in range(len(cur))]
        x = I.dynamic_slice(x, [cast(s, np.int64) if isinstance(s, Tracer) else np.int64(s) for s in starts], sizes)
    if squeeze:
        x = S.squeeze(x, squeeze)
    return x


_TAKE_MODES = (None, "fill", "clip", "wrap")


def _take_mode(mode, fn):
    if mode == "raise":
        raise FuncadValueError(f"{fn}(mode='raise') cannot check indices of traced arrays and is not "
                               "supported (as in JAX); use mode='fill' (the default), 'clip' or 'wrap'")
    if mode not in _TAKE_MODES:
        raise FuncadValueError(f"{fn}: mode must be one of None, 'fill', 'clip' or 'wrap', got {mode!r}")
    return mode or "fill"


def _index_array(indices, fn):
    idx = asarray_or_tracer(indices)
    if aval_of(idx).dtype.kind not in "iu":
        raise FuncadIndexError(f"{fn}: indices must be integers, got {aval_of(idx).dtype}")
    return cast(idx, np.int64)


def _fill_out_of_bounds(out, ok, fill_value, dtype):
    fill = _default_fill(dtype) if fill_value is None else fill_value
    return where(ok, out, np.asarray(fill).astype(dtype))


def take(a, indices, axis=None, out=None, mode=None, unique_indices=False, indices_are_sorted=False,
         fill_value=None):
    """Elements of `a` at `indices` along `axis` (the flattened array if None), as JAX's take.

    Out-of-bounds indices give `fill_value` (NaN for floats) with the default mode "fill";
    "clip" clamps them (negative ones to 0) and "wrap" takes them modulo the axis length.

    >>> import funcad.numpy as fnp
    >>> fnp.take(fnp.arange(5.0), [1, -1, 7]).tolist()
    [1.0, 4.0, nan]
    """
    if out is not None:
        raise FuncadValueError("take(out=...) is not supported: funcad arrays are immutable; "
                               "use the returned array")
    mode = _take_mode(mode, "take")
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = ravel(a), 0
    nd = aval_of(a).ndim
    axis = canonical_axis(axis, nd, 'take', a)
    n = aval_of(a).shape[axis]
    idx = _index_array(indices, "take")
    lead = (slice(None),) * axis
    if mode == "wrap":
        return getitem(a, lead + (idx % max(n, 1),))
    if mode == "clip":
        return getitem(a, lead + (clip(idx, 0, max(n - 1, 0)),))
    idx = idx + n * (idx < 0)
    ok = (idx >= 0) & (idx < n)
    if n == 0:
        shape = aval_of(a).shape[:axis] + aval_of(idx).shape + aval_of(a).shape[axis + 1:]
        return full(shape, _default_fill(aval_of(a).dtype) if fill_value is None else fill_value,
                    aval_of(a).dtype)
    res = getitem(a, lead + (clip(idx, 0, n - 1),))
    ok = ok.reshape((1,) * axis + aval_of(idx).shape + (1,) * (nd - axis - 1))
    return _fill_out_of_bounds(res, ok, fill_value, aval_of(a).dtype)


def take_along_axis(arr, indices, axis=-1, mode=None, fill_value=None, *, wrap_negative_indices=True):
    """`arr` indexed by `indices` along `axis`, the other axes matched (broadcast) position
    by position, as JAX's take_along_axis; `axis=None` takes from the flattened array.

    Out-of-bounds indices give `fill_value` (NaN for floats) with the default mode "fill"
    and clamp with mode "clip".

    >>> import funcad.numpy as fnp
    >>> x = fnp.array([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0]])
    >>> fnp.take_along_axis(x, fnp.argsort(x, axis=1), axis=1).tolist()
    [[1.0, 2.0, 3.0], [0.0, 4.0, 5.0]]
    """
    mode = _take_mode(mode, "take_along_axis")
    if mode == "wrap":
        raise FuncadValueError("take_along_axis: mode must be None, 'fill' or 'clip' (as in JAX); "
                               "for 'wrap', take indices % n first")
    arr = asarray_or_tracer(arr)
    idx = _index_array(indices, "take_along_axis")
    if axis is None:
        if aval_of(idx).ndim != 1:
            raise FuncadValueError("take_along_axis(axis=None): indices must be 1-d")
        arr, axis = ravel(arr), 0
    nd = aval_of(arr).ndim
    if aval_of(idx).ndim != nd:
        raise FuncadValueError(f"take_along_axis: indices and arr must have the same number of "
                               f"dimensions, got {aval_of(idx).ndim} and {nd}")
    axis = canonical_axis(axis, nd, 'take_along_axis', arr)
    typed = I.take_along_sharding(arr, idx, axis)  # JAX's rule on Explicit axes (its batch dims)
    if typed is not None:
        arr, idx = on_auto_axes(arr), on_auto_axes(idx)
    n = aval_of(arr).shape[axis]
    if wrap_negative_indices:
        idx = idx + n * (idx < 0)
    ok = (idx >= 0) & (idx < n)
    safe = clip(idx, 0, max(n - 1, 0))
    shape = np.broadcast_shapes(aval_of(idx).shape,
                                tuple(1 if d == axis else s for d, s in enumerate(aval_of(arr).shape)))
    entries = []
    for d in range(nd):
        if d == axis:
            entries.append(safe)
        else:
            entries.append(np.arange(aval_of(arr).shape[d]).reshape([-1 if k == d else 1 for k in range(nd)]))
    res = getitem(arr, tuple(entries))
    if mode != "clip":
        res = _fill_out_of_bounds(res, ok, fill_value, aval_of(arr).dtype)
    return res if typed is None else typed_as(res, typed)


class _IndexUpdateHelper:
    """`x.at[idx]`: JAX's functional indexed updates (`set`, `add`, `multiply`, `divide`,
    `power`, `min`, `max`, `apply`) and `get`, for tracers and concrete arrays alike.

    >>> import funcad.numpy as fnp
    >>> x = fnp.arange(5.0)
    >>> x.at[[0, 0, 2]].add(1.0).tolist(), x.at[9].get(mode="fill").tolist()
    ([2.0, 1.0, 3.0, 3.0, 4.0], nan)
    """

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _IndexUpdateRef(self.x, idx)

    def __repr__(self):
        return f"_IndexUpdateHelper({self.x!r})"


# How each JAX mode treats out-of-bounds indices: get() clamps them or returns fill_value;
# updates drop them or clamp them.
_GET_MODES = {None: "clamp", "promise_in_bounds": "clamp", "clip": "clamp", "fill": "drop", "drop": "drop"}
_UPDATE_MODES = {None: "drop", "promise_in_bounds": "drop", "clip": "clamp", "fill": "drop", "drop": "drop"}


def _mode_kind(mode, table, method):
    name = getattr(mode, "name", mode)  # also GatherScatterMode-like enums (CLIP, FILL_OR_DROP, ...)
    if isinstance(name, str):
        name = {"fill_or_drop": "fill"}.get(name.lower(), name.lower())
    if name not in table:
        raise FuncadValueError(f"x.at[...].{method}(mode={mode!r}): mode must be one of None, "
                               "'promise_in_bounds', 'clip', 'drop' or 'fill'")
    return table[name]


def _default_fill(dtype):
    """JAX's fill value for out-of-bounds get(): NaN, the smallest signed or largest unsigned
    integer, True."""
    if dtype.kind in "fc":
        return np.nan
    if dtype.kind == "b":
        return True
    return np.iinfo(dtype).min if dtype.kind == "i" else np.iinfo(dtype).max


class _IndexUpdateRef:
    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def __repr__(self):
        return f"_IndexUpdateRef({self.x!r}, {self.idx!r})"

    # -- where the index points --------------------------------------------------
    def _positions(self, kind, wrap_negative=True):
        """x and the flat positions of the indexed entries, shaped like `x[idx]`: NumPy ints
        when the index is static, else traced. Out-of-bounds indices are clamped (kind
        "clamp") or give -1 (kind "drop")."""
        x = asarray_or_tracer(self.x)
        shape = aval_of(x).shape
        n = aval_of(x).size
        with set_trace(None):  # the table of positions is a constant, never staged
            flat, entries = _expand(np.arange(n).reshape(shape), self.idx)
            eshape = tuple(aval_of(flat).shape)
            # One extra slot per dimension holds -1: where dropped indices point.
            table = np.full(tuple(d + 1 for d in eshape), -1, np.int64)
            table[tuple(slice(0, d) for d in eshape)] = np.asarray(flat)
        fixed = tuple(_bound_entry(i, d, kind, wrap_negative) for i, d in zip(entries, eshape))
        if any(isinstance(i, Tracer) for i in fixed):
            return x, getitem(table, fixed)
        with set_trace(None):
            return x, np.asarray(getitem(table, fixed))

    # -- reading ------------------------------------------------------------------
    def get(self, *, indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None,
            out_sharding=None, wrap_negative_indices=True):
        """`x[idx]`; out-of-bounds indices clamp, or give `fill_value` with mode "fill".
        `out_sharding`: the result's sharding, the gather run on Auto axes (as JAX's); it
        is what indexing an Explicit-split dimension needs."""
        if out_sharding is not None:
            x = asarray_or_tracer(self.x)
            entries = self.idx if isinstance(self.idx, tuple) else (self.idx,)
            if all(e is None or e is Ellipsis or isinstance(e, (int, np.integer, slice)) for e in entries):
                # a static index is a slice first, as JAX's: its sharding rule applies
                trace_to_jaxpr(lambda a: [getitem(a, self.idx)], [aval_of(x)], name="at", parent=ctx.trace)
            ref = _IndexUpdateRef(on_auto_axes(x), self.idx)
            return out_sharded(ref.get(mode=mode, fill_value=fill_value,
                                       wrap_negative_indices=wrap_negative_indices), out_sharding)
        kind = _mode_kind(mode, _GET_MODES, "get")
        x, pos = self._positions(kind, wrap_negative_indices)
        flat = ravel(x)
        if kind == "clamp":
            return getitem(flat, pos)
        if fill_value is not None and np.ndim(fill_value) != 0:
            raise FuncadValueError("x.at[...].get(fill_value=...): fill_value must be a scalar")
        dtype = aval_of(x).dtype
        fill = np.asarray(_default_fill(dtype) if fill_value is None else fill_value).astype(dtype)
        if aval_of(x).size == 0:
            return full(aval_of(pos).shape, fill, dtype)
        ok = E.ge(pos, np.int64(0)) if isinstance(pos, Tracer) else pos >= 0
        safe = E.select_n(ok, np.zeros((), np.int64), pos) if isinstance(pos, Tracer) else np.where(ok, pos, 0)
        return E.select_n(ok, np.broadcast_to(fill, aval_of(pos).shape) if not isinstance(ok, Tracer)
                          else _bcast(fill, aval_of(pos).shape), getitem(flat, safe))

    # -- updates ------------------------------------------------------------------
    def _update(self, values, how, mode, method, wrap_negative_indices, out_sharding=None, row_op=None):
        x = asarray_or_tracer(self.x)
        typed = aval_of(x)._sharding
        if out_sharding is not None or (typed is not None and any(p is not None for p in typed.spec)):
            # On Explicit axes the scatter runs on Auto axes, its result typed as asked, or as
            # x where JAX's rule resolves it (the updates split as x[idx] is)
            auto = None if values is None else on_auto_axes(asarray_or_tracer(values))
            ref = _IndexUpdateRef(on_auto_axes(x), self.idx)
            if out_sharding is None:
                _check_typed_update(x, self.idx, values)
                return typed_as(ref._update(auto, how, mode, method, wrap_negative_indices, row_op=row_op), typed)
            return out_sharded(ref._update(auto, how, mode, method, wrap_negative_indices, row_op=row_op),
                               out_sharding)
        kind = _mode_kind(mode, _UPDATE_MODES, method)
        rows = _traced_row_index(x, self.idx) if how is _scatter_set or row_op is not None else None
        if rows is not None:
            return _set_rows(x, rows, values, kind, wrap_negative_indices, row_op)
        x, pos = self._positions(kind, wrap_negative_indices)
        shape, dtype = aval_of(x).shape, aval_of(x).dtype
        if values is None:
            v = None
        else:
            v = ravel(broadcast_to(cast(asarray_or_tracer(values), dtype), aval_of(pos).shape))
        p = reshape(pos, (-1,)) if isinstance(pos, Tracer) else pos.reshape(-1)
        # a scatter's result is as weak as its operand (JAX's rule), whatever the values
        return weakly(reshape(how(ravel(x), p, v), shape), is_weak(x))

    def set(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """`x[idx] = values`; with repeated indices the last one wins, as in NumPy."""
        return self._update(values, _scatter_set, mode, "set", wrap_negative_indices,
                            out_sharding)

    def add(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """`x[idx] += values`, every repeated index adding."""
        if aval_of(asarray_or_tracer(self.x)).dtype == np.bool_:
            raise FuncadTypeError("x.at[...].add: booleans cannot be added (as in JAX); use .max for "
                                  "a logical or, or cast x to an integer dtype first")
        return self._update(values, _scatter_sum, mode, "add", wrap_negative_indices,
                            out_sharding, E.add)

    def multiply(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
                 out_sharding=None, wrap_negative_indices=True):
        """`x[idx] *= values`, every repeated index multiplying."""
        return self._update(values, _combining(E.mul), mode, "multiply", wrap_negative_indices,
                            out_sharding, E.mul)

    mul = multiply

    def divide(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
               out_sharding=None, wrap_negative_indices=True):
        """`x[idx] /= values` (as JAX: x divided by the product of the values at each index)."""
        ones = _IndexUpdateRef(ones_like(self.x), self.idx)
        return true_divide(self.x, ones.multiply(values, mode=mode, wrap_negative_indices=wrap_negative_indices,
                                                 out_sharding=out_sharding))

    def power(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
              out_sharding=None, wrap_negative_indices=True):
        """`x[idx] **= values` (as JAX: x to the product of the values at each index)."""
        ones = _IndexUpdateRef(ones_like(self.x), self.idx)
        return power(self.x, ones.multiply(values, mode=mode, wrap_negative_indices=wrap_negative_indices,
                                           out_sharding=out_sharding))

    def min(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """`x[idx] = minimum(x[idx], values)`, over all repeated indices."""
        return self._update(values, _combining(minimum), mode, "min", wrap_negative_indices,
                            out_sharding, minimum)

    def max(self, values, *, indices_are_sorted=False, unique_indices=False, mode=None,
            out_sharding=None, wrap_negative_indices=True):
        """`x[idx] = maximum(x[idx], values)`, over all repeated indices."""
        return self._update(values, _combining(maximum), mode, "max", wrap_negative_indices,
                            out_sharding, maximum)

    def apply(self, func, *, indices_are_sorted=False, unique_indices=False, mode=None,
              wrap_negative_indices=True):
        """`x[idx] = func(x[idx])` for an elementwise `func`, applied once per occurrence of an
        index (twice for an index given twice), as JAX's scatter_apply."""
        return self._update(None, lambda flat, p, _: _scatter_apply(flat, p, func), mode, "apply",
                            wrap_negative_indices)


_SCATTER_ERROR = ("Use `.at[...].set/add/mul/...(out_sharding=)` to provide output PartitionSpec for "
                  "the scatter update as out sharding could not be resolved unambiguously (or would "
                  "require collectives on inputs). Got operand={}, updates={}")


def _check_typed_update(x, idx, values):
    """JAX's scatter rule on Explicit axes, at the level of `.at`: x[idx] must be typed
    without ambiguity (no split dimension indexed) and the updates, broadcast to it,
    split as it is; else JAX's errors."""
    xa = aval_of(x)
    ua = None if values is None else aval_of(asarray_or_tracer(values))
    try:
        view = trace_to_jaxpr(lambda a: [getitem(a, idx)], [xa], name="at", parent=ctx.trace).out_avals[0]
    except ShardingTypeError:
        raise ShardingTypeError(_SCATTER_ERROR.format(xa, ua)) from None
    want = spec_of(view)
    got = (None,) * len(want) if ua is None else (None,) * (len(want) - ua.ndim) + spec_of(ua)
    if got == want:
        return
    if ua is not None and any(p is not None for p in spec_of(ua)):
        raise FuncadValueError(f"Incompatible types for broadcasting: input type={ua.str_short()} "
                               f"and requested type={view.update(dtype=ua.dtype).str_short()}; "
                               f"reshard the updates (funcad.sharding.reshard) to x[idx]'s sharding")
    raise ShardingTypeError(_SCATTER_ERROR.format(xa, ua))


def _bcast(v, shape):
    return broadcast_to(v, shape)


def _traced_row_index(x, idx):
    """The integer entries of an index that picks whole trailing rows (`x[i]`, `x[i, j]`,
    `x[i, ...]`, `x[i, :]`) with at least one traced integer, else None."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    k = 0
    while k < len(entries) and _is_int_scalar(entries[k]):
        k += 1
    rest = entries[k:]
    if (not any(isinstance(i, Tracer) for i in entries[:k]) or rest.count(Ellipsis) > 1
            or not all(r is Ellipsis or r == slice(None) for r in rest)
            or k + sum(r is not Ellipsis for r in rest) > aval_of(x).ndim):
        return None
    return entries[:k]


def _set_rows(x, ints, values, kind, wrap_negative, combine=None):
    """`x.at[i, j].set(values)` with traced integers as JAX's program has it once XLA has
    simplified its one-index scatter: a dynamic_update_slice whose update is the old row
    where the index is out of bounds (mode "drop"); dynamic_update_slice clamps the start
    itself (mode "clip"). The sort-based general scatter would keep a while loop that
    holds it from being compiled as one kernel as JAX's is, and XLA contracts the
    arithmetic of such a kernel into fused multiply-adds: JAX's numbers need JAX's form.
    With `combine` (add, mul, min, max) the new row is combine(old row, values): one index
    names one row, so the scatter combines each entry once."""
    shape, dtype = aval_of(x).shape, aval_of(x).dtype
    k = len(ints)
    window = (1,) * k + tuple(shape[k:])
    update = reshape(broadcast_to(cast(asarray_or_tracer(values), dtype), shape[k:]), window)
    starts, ok = [], None
    for i, n in zip(ints, shape):
        if not isinstance(i, Tracer):
            i = int(i) + n if wrap_negative and int(i) < 0 else int(i)
            if not 0 <= i < n and kind == "drop":
                return x  # the whole update falls outside, as XLA's scatter drops it
            starts.append(np.int64(i))
            continue
        i = cast(i, np.int64)
        if wrap_negative:
            i = E.select_n(E.lt(i, np.int64(0)), i, E.add(i, np.int64(n)))
        if kind == "drop":
            inside = E.bitwise_and(E.ge(i, np.int64(0)), E.lt(i, np.int64(n)))
            ok = inside if ok is None else E.bitwise_and(ok, inside)
        starts.append(i)
    starts += [np.int64(0)] * (len(shape) - k)
    if combine is not None or ok is not None:
        old = I.dynamic_slice(x, starts, window)
        if combine is not None:
            update = cast(combine(old, update), dtype)
        if ok is not None:
            update = E.select_n(_bcast(ok, window), old, update)
    return weakly(I.dynamic_update_slice(x, update, starts), is_weak(x))


def _bound_entry(i, n, kind, wrap_negative):
    """One per-dimension index entry with its out-of-bounds values clamped into [0, n) or
    sent to n (the table's -1 slot); slices are made explicit so they never reach slot n."""
    if isinstance(i, slice):
        start, stop, step = i.indices(n)
        return slice(start, None if stop < 0 else stop, step)
    traced = isinstance(i, Tracer)
    if not traced:
        i = np.asarray(i)
        if i.dtype.kind not in "iu":
            raise FuncadIndexError(f"arrays used as indices must be of integer or boolean type, got {i.dtype}")
        i = i.astype(np.int64)
        if wrap_negative:
            i = np.where(i < 0, i + n, i)
        if kind == "clamp":
            return np.clip(i, 0, max(n - 1, 0))
        return np.where((i < 0) | (i >= n), n, i)
    i = cast(i, np.int64)
    zero, size = np.int64(0), np.int64(n)
    if wrap_negative:
        i = E.select_n(E.lt(i, zero), i, E.add(i, size))
    if kind == "clamp":
        return E.min(E.max(i, zero), np.int64(max(n - 1, 0)))
    bad = E.bitwise_or(E.lt(i, zero), E.ge(i, size))
    return E.select_n(bad, i, _bcast(size, aval_of(i).shape))


# -- scatters over flat positions: flat is x raveled, p the positions (-1: dropped), v the values --

def _work_dtype(dtype):
    return np.dtype(np.uint8) if dtype == np.bool_ else dtype


def _put(flat, target, new, static):
    """flat with `new[k]` written at `target[k]`; targets are unique, except `n` (dropped)."""
    n = aval_of(flat).size
    dtype = aval_of(flat).dtype
    wd = _work_dtype(dtype)
    idx = target.reshape(-1, 1) if static else S.reshape(target, (aval_of(target).shape[0], 1))
    if static:
        hit = np.zeros(n + 1, bool)
        hit[target] = True
        hit = hit[:n]
    else:
        counts = I.scatter_add(np.zeros(n + 1, np.int32), idx, _bcast(np.int32(1), aval_of(target).shape))
        hit = E.gt(getitem(counts, slice(0, n)), np.int32(0))
    # Each real position receives one value, so the sum is that value exactly.
    vals = I.scatter_add(np.zeros(n + 1, wd), idx, cast(new, wd))
    vals = getitem(vals, slice(0, n))
    if wd != dtype:
        vals = E.ne(vals, np.zeros((), wd))
    return E.select_n(hit, flat, vals)


def _sorted(p):
    """(order, sorted positions) of p, stable; dropped (-1) entries first."""
    if not isinstance(p, Tracer):
        order = np.argsort(p, kind="stable")
        return order, p[order]
    ps, order = I.sort([p, S.iota(np.dtype(np.int64), aval_of(p).shape, 0)], 0, 1)
    return order, ps


def _segment_ends(ps, static):
    if static:
        return np.r_[ps[1:] != ps[:-1], True] if len(ps) else np.zeros(0, bool)
    return concatenate([E.ne(getitem(ps, slice(1, None)), getitem(ps, slice(None, -1))), np.ones(1, bool)])


def _targets(ps, ends, n, static):
    """Where each sorted entry writes: its position at the end of its run of equal positions,
    else n (nowhere)."""
    if static:
        return np.where(ends & (ps >= 0), ps, n)
    ok = E.bitwise_and(ends, E.ge(ps, np.int64(0)))
    return E.select_n(ok, _bcast(np.int64(n), aval_of(ps).shape), ps)


def _scatter_set(flat, p, v):
    static = not isinstance(p, Tracer)
    if aval_of(p).size == 0:
        return flat
    order, ps = _sorted(p)
    target = _targets(ps, _segment_ends(ps, static), aval_of(flat).size, static)
    return _put(flat, target, getitem(v, order), static)


def _scatter_sum(flat, p, v):
    n = aval_of(flat).size
    if aval_of(p).size == 0:
        return flat
    if not isinstance(p, Tracer):
        keep = p >= 0
        if not keep.all():
            p, v = p[keep], getitem(v, np.nonzero(keep)[0])
        if p.size == 0:
            return flat
        target = p
    else:
        target = E.select_n(E.ge(p, np.int64(0)), _bcast(np.int64(n), aval_of(p).shape), p)
    dtype = aval_of(flat).dtype
    idx = target.reshape(-1, 1) if not isinstance(target, Tracer) else S.reshape(target, (aval_of(target).shape[0], 1))
    ext = concatenate([flat, np.zeros(1, dtype)])
    return getitem(I.scatter_add(ext, idx, v), slice(0, n))


def _combining(op):
    """A scatter that combines every value at an index with op (mul, minimum, maximum)."""
    def how(flat, p, v):
        static = not isinstance(p, Tracer)
        k = aval_of(p).size
        if k == 0:
            return flat
        n = aval_of(flat).size
        order, ps = _sorted(p)
        acc = getitem(v, order)
        if static:
            runs = np.unique(ps, return_counts=True)[1]
            steps = int(np.ceil(np.log2(runs.max()))) if runs.size else 0
        else:
            steps = int(np.ceil(np.log2(k))) if k > 1 else 0
        shift = 1
        for _ in range(steps):  # segmented inclusive scan: runs of equal positions combine
            same = (ps[shift:] == ps[:-shift]) if static else \
                E.eq(getitem(ps, slice(shift, None)), getitem(ps, slice(None, -shift)))
            head, tail, prev = getitem(acc, slice(0, shift)), getitem(acc, slice(shift, None)), \
                getitem(acc, slice(None, -shift))
            acc = concatenate([head, E.select_n(same, tail, op(tail, prev))])
            shift *= 2
        target = _targets(ps, _segment_ends(ps, static), n, static)
        ext = concatenate([flat, np.zeros(1, aval_of(flat).dtype)])
        return _put(flat, target, op(getitem(ext, target), acc), static)
    return how


def _scatter_apply(flat, p, func):
    """func applied at each position as many times as the position occurs in p."""
    n = aval_of(flat).size
    if aval_of(p).size == 0:
        return flat
    if not isinstance(p, Tracer):
        counts = np.bincount(p[p >= 0], minlength=n)[:n]
        out = flat
        for r in range(int(counts.max()) if counts.size else 0):
            out = where(counts > r, func(out), out)
        return out
    target = E.select_n(E.ge(p, np.int64(0)), _bcast(np.int64(n), aval_of(p).shape), p)
    counts = getitem(I.scatter_add(np.zeros(n + 1, np.int32), S.reshape(target, (aval_of(p).size, 1)),
                                   _bcast(np.int32(1), aval_of(p).shape)), slice(0, n))

    def body(state):
        r, out = state
        return E.add(r, np.int32(1)), where(E.gt(counts, r), func(out), out)
    return while_loop(lambda s: E.lt(s[0], _max(counts)), body, (np.int32(0), flat))[1]
