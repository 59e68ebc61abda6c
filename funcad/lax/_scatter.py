"""XLA's general gather and scatter, with JAX's dimension numbers and modes, as
compositions over funcad's two point primitives (`gather` and `scatter_add` of whole
index vectors).

Each window element's full operand index is computed from the index vectors and
iotas; out-of-bounds windows are clamped (CLIP, and PROMISE_IN_BOUNDS for gathers,
its default), or filled/dropped as a whole (FILL_OR_DROP, the scatters' default, and
PROMISE_IN_BOUNDS for scatters). Scatters that do not
add (set, mul, min, max, apply) sort the flat target positions, reduce each run of
equal positions with a segmented associative scan, and write the one result per
position; so repeated indices combine as XLA's do (set: the last update wins), and
every derivative comes from the composition.
"""
from __future__ import annotations

import operator
from typing import Callable, Sequence

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from ._types import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers
from ..arrays.dtypes import asarray_or_tracer
from ._scans import associative_scan
from ..transforms.vmap import vmap
from ..transforms.control_flow_api import while_loop
from ..primitives.reductions import reduce_max
from ..arrays.dtypes import cast

__all__ = ["gather", "scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min",
           "scatter_max", "scatter_apply"]


def _arr(x):
    return asarray_or_tracer(x)


def _i64(x):
    return E.convert_element_type(x, np.int64)


def _c(value, dt=np.int64):
    return np.array(value, dt)


def _place(v, out_shape, dims):
    """v (an array over `dims` of the output) broadcast to out_shape."""
    return S.broadcast_in_dim(v, tuple(out_shape), tuple(dims))


def _window_index(operand_shape, idx, out_shape, batch_pos, window_pos, window_dims, index_map,
                  operand_batching, indices_batching, window_sizes, clip):
    """Full operand index (one int64 array of out_shape per operand dim) of each element of a
    gather output / scatter update, and whether its window lies in bounds.

    batch_pos: the output dims that run over the index batch (in the indices' order);
    window_pos/window_dims: the output dims that run over the window and the operand dims
    they cover; window_sizes: the window's extent in every operand dim."""
    rank = len(operand_shape)
    ok = None
    full = []
    for d in range(rank):
        if d in operand_batching:
            j = indices_batching[operand_batching.index(d)]
            full.append(S.iota(np.int64, tuple(out_shape), batch_pos[j]))
            continue
        if d in index_map:
            k = index_map.index(d)
            start = _place(_i64(S.squeeze(S.slice(idx, [0] * (aval_of(idx).ndim - 1) + [k],
                                                 list(aval_of(idx).shape[:-1]) + [k + 1]), (aval_of(idx).ndim - 1,))),
                           out_shape, batch_pos)
            hi = _c(operand_shape[d] - window_sizes[d])
            if clip:
                start = E.clamp(_c(0), start, hi)
            else:
                inside = E.bitwise_and(E.ge(start, _c(0)), E.le(start, hi))
                ok = inside if ok is None else E.bitwise_and(ok, inside)
        else:
            start = None
        if d in window_dims:
            off = S.iota(np.int64, tuple(out_shape), window_pos[window_dims.index(d)])
            start = off if start is None else E.add(start, off)
        full.append(S.broadcast_in_dim(_c(0), tuple(out_shape), ()) if start is None else start)
    return full, ok


def _stack(full, out_shape):
    if not full:
        return np.zeros(tuple(out_shape) + (0,), np.int64)
    return S.concatenate([S.reshape(f, tuple(out_shape) + (1,)) for f in full], len(out_shape))


def _default_fill(dt):
    dt = np.dtype(dt)
    if dt.kind in "fc":
        return np.nan
    if dt.kind == "i":
        return np.iinfo(dt).min
    if dt.kind == "u":
        return np.iinfo(dt).max
    return True


def _check_indices(name, idx):
    if aval_of(idx).dtype.kind not in "iu":
        raise FuncadTypeError(f"{name}: indices must be integers, got {aval_of(idx).str_short()}")
    if aval_of(idx).ndim == 0:
        raise FuncadTypeError(f"{name}: indices must have rank >= 1 (their last axis holds the index "
                              f"vectors), got a scalar")


def gather(operand, start_indices, dimension_numbers: GatherDimensionNumbers | None = None,
           slice_sizes: Sequence[int] | None = None, *, unique_indices: bool = False,
           indices_are_sorted: bool = False, mode=None, fill_value=None):
    """XLA's Gather: for each index vector (the last axis of `start_indices`), the
    window of `slice_sizes` starting there; JAX's dimension numbers and modes (the
    default, PROMISE_IN_BOUNDS, and 'clip' clamp each window into the operand; 'fill'
    gives `fill_value`, NaN for floats, for a window partly out of bounds). Without dimension_numbers it is funcad's point gather
    `operand[idx[..., 0], ..., idx[..., k-1]]` with clamped indices.

    >>> dn = GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    >>> gather(np.arange(12.0).reshape(4, 3), np.array([[2], [0]]), dn, (1, 3)).tolist()
    [[6.0, 7.0, 8.0], [0.0, 1.0, 2.0]]
    """
    x, idx = _arr(operand), _arr(start_indices)
    _check_indices("gather", idx)
    if dimension_numbers is None and slice_sizes is None:
        return I.gather(x, idx)
    if dimension_numbers is None or slice_sizes is None:
        raise FuncadValueError("gather: pass both dimension_numbers and slice_sizes (or neither, for "
                               "funcad's point gather)")
    dn = GatherDimensionNumbers(*[tuple(map(int, f)) for f in dimension_numbers])
    mode = GatherScatterMode.PROMISE_IN_BOUNDS if mode is None else GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise FuncadValueError("gather: mode ONE_HOT is for scatters only")
    shape = aval_of(x).shape
    sizes = tuple(operator.index(s) for s in slice_sizes)
    if len(sizes) != len(shape) or any(not 0 <= s <= n for s, n in zip(sizes, shape)):
        raise FuncadValueError(f"gather: slice_sizes {sizes} must give one size in [0, n] per operand "
                               f"dimension of {aval_of(x).str_short()}")
    if aval_of(idx).shape[-1] != len(dn.start_index_map):
        raise FuncadValueError(f"gather: the index vectors have length {aval_of(idx).shape[-1]} but "
                               f"start_index_map has {len(dn.start_index_map)} entries")
    window_dims = [d for d in range(len(shape))
                   if d not in dn.collapsed_slice_dims and d not in dn.operand_batching_dims]
    batch_shape = aval_of(idx).shape[:-1]
    out_rank = len(batch_shape) + len(window_dims)
    if len(dn.offset_dims) != len(window_dims):
        raise FuncadValueError(f"gather: offset_dims {dn.offset_dims} must name one output dimension per "
                               f"uncollapsed operand dimension ({len(window_dims)})")
    batch_pos = [p for p in range(out_rank) if p not in dn.offset_dims]
    out_shape = [0] * out_rank
    for p, b in zip(batch_pos, batch_shape):
        out_shape[p] = b
    for p, d in zip(dn.offset_dims, window_dims):
        out_shape[p] = sizes[d]
    clip = mode != GatherScatterMode.FILL_OR_DROP
    full, ok = _window_index(shape, idx, out_shape, batch_pos, list(dn.offset_dims), window_dims,
                             list(dn.start_index_map), list(dn.operand_batching_dims),
                             list(dn.start_indices_batching_dims), sizes, clip)
    if 0 in out_shape:
        return np.zeros(tuple(out_shape), aval_of(x).dtype)
    out = I.gather(x, _stack(full, out_shape))
    if ok is not None:
        fill = _default_fill(aval_of(x).dtype) if fill_value is None else fill_value
        out = E.select_n(ok, S.broadcast_in_dim(np.array(fill, aval_of(x).dtype), tuple(out_shape), ()), out)
    return out


# ----------------------------------------------------------------- scatter ----

def _scatter_setup(name, operand, scatter_indices, updates, dimension_numbers, mode):
    x, idx, u = _arr(operand), _arr(scatter_indices), _arr(updates)
    _check_indices(name, idx)
    if aval_of(u).dtype != aval_of(x).dtype:
        u = cast(u, aval_of(x).dtype)
    dn = ScatterDimensionNumbers(*[tuple(map(int, f)) for f in dimension_numbers])
    mode = GatherScatterMode.from_any(mode)
    if mode == GatherScatterMode.ONE_HOT:
        raise FuncadValueError(f"{name}: mode ONE_HOT is a TPU layout hint funcad does not have; use "
                               "the default mode")
    shape, ushape = aval_of(x).shape, aval_of(u).shape
    window_dims = [d for d in range(len(shape))
                   if d not in dn.inserted_window_dims and d not in dn.operand_batching_dims]
    if len(dn.update_window_dims) != len(window_dims):
        raise FuncadValueError(f"{name}: update_window_dims {dn.update_window_dims} must name one update "
                               f"dimension per operand window dimension ({len(window_dims)})")
    if aval_of(idx).shape[-1] != len(dn.scatter_dims_to_operand_dims):
        raise FuncadValueError(f"{name}: the index vectors have length {aval_of(idx).shape[-1]} but "
                               f"scatter_dims_to_operand_dims has {len(dn.scatter_dims_to_operand_dims)}")
    batch_pos = [p for p in range(len(ushape)) if p not in dn.update_window_dims]
    if tuple(ushape[p] for p in batch_pos) != aval_of(idx).shape[:-1]:
        raise FuncadValueError(f"{name}: the updates' scatter dimensions {tuple(ushape[p] for p in batch_pos)} "
                               f"must equal the indices' batch shape {aval_of(idx).shape[:-1]}")
    sizes = [1] * len(shape)
    for p, d in zip(dn.update_window_dims, window_dims):
        if ushape[p] > shape[d]:
            raise FuncadValueError(f"{name}: update window size {ushape[p]} exceeds operand dimension {d} "
                                   f"of size {shape[d]}")
        sizes[d] = ushape[p]
    full, ok = _window_index(shape, idx, ushape, batch_pos, list(dn.update_window_dims), window_dims,
                             list(dn.scatter_dims_to_operand_dims), list(dn.operand_batching_dims),
                             list(dn.scatter_indices_batching_dims), sizes,
                             mode == GatherScatterMode.CLIP)
    if ok is not None and full:
        # A dropped window: send every one of its elements out of range.
        full[0] = E.select_n(ok, S.broadcast_in_dim(_c(shape[0]), tuple(ushape), ()), full[0])
    return x, u, full


def _combine(name, operand, scatter_indices, updates, dimension_numbers, mode, kind):
    x, u, full = _scatter_setup(name, operand, scatter_indices, updates, dimension_numbers, mode)
    ushape = aval_of(u).shape
    if 0 in ushape:
        return x
    if kind in ("add", "sub"):
        return I.scatter_add(x, _stack(full, ushape), E.neg(u) if kind == "sub" else u)
    return _segmented(x, u, full, kind)


def _segmented(x, u, full, kind):
    """Scatter with a non-additive combiner: one reduced update per distinct position."""
    shape = aval_of(x).shape
    n = int(np.prod(shape, dtype=np.int64))
    m = int(np.prod(aval_of(u).shape, dtype=np.int64))
    pos = _c(0)
    stride = 1
    valid = None
    for d in reversed(range(len(shape))):
        inside = E.bitwise_and(E.ge(full[d], _c(0)), E.lt(full[d], _c(shape[d])))
        valid = inside if valid is None else E.bitwise_and(valid, inside)
        pos = E.add(pos, E.mul(full[d], _c(stride)))
        stride *= shape[d]
    pos = S.reshape(E.select_n(valid, S.broadcast_in_dim(_c(n), aval_of(valid).shape, ()), pos)
                    if valid is not None else S.broadcast_in_dim(pos, aval_of(u).shape, ()), (m,))
    order = S.iota(np.int64, (m,), 0)
    ps, perm = I.sort([pos, order], 0, 2)  # by position, then update order
    vs = I.gather(S.reshape(u, (m,)), S.reshape(perm, (m, 1)))
    if m > 1:
        new_seg = S.concatenate([np.ones((1,), np.bool_), E.ne(S.slice(ps, [1], [m]), S.slice(ps, [0], [m - 1]))], 0)
        last = S.concatenate([E.ne(S.slice(ps, [1], [m]), S.slice(ps, [0], [m - 1])), np.ones((1,), np.bool_)], 0)
    else:
        new_seg = last = np.ones((1,), np.bool_)
    if kind != "set":
        op = {"mul": E.mul, "min": E.min, "max": E.max}[kind]

        def seg(a, b):
            fa, va = a
            fb, vb = b
            return E.bitwise_or(fa, fb), E.select_n(fb, op(va, vb), vb)
        _, vs = associative_scan(seg, (new_seg, vs))
    target = E.select_n(last, S.broadcast_in_dim(_c(n), (m,), ()), ps)
    target = S.reshape(target, (m, 1))
    flat = S.reshape(x, (n,))
    hit = E.gt(I.scatter_add(np.zeros((n,), np.int32), target, np.ones((m,), np.int32)), np.int32(0))
    if kind == "set":
        new = vs
    else:
        old = I.gather(flat, target)
        new = {"mul": E.mul, "min": E.min, "max": E.max}[kind](old, vs)
    zero = S.broadcast_in_dim(np.array(0, aval_of(x).dtype), (n,), ())
    placed = I.scatter_add(zero, target, new)
    return S.reshape(E.select_n(hit, flat, placed), shape)


def _point_numbers(operand, scatter_indices):
    """funcad's shorthand: index vectors of length k address the operand's first k
    dimensions and each update is the whole trailing slice (x[i0, ..., ik-1] op= u)."""
    nd, k = aval_of(_arr(operand)).ndim, aval_of(_arr(scatter_indices)).shape[-1]
    nb = aval_of(_arr(scatter_indices)).ndim - 1
    return ScatterDimensionNumbers(tuple(range(nb, nb + nd - k)), tuple(range(k)), tuple(range(k)))


_DOC = """{what} at the windows that `scatter_indices` (index vectors on its last axis) and
    `dimension_numbers` (a ScatterDimensionNumbers) pick, as XLA's Scatter. Modes: default
    FILL_OR_DROP (a window partly out of bounds is dropped), 'clip' (windows clamped into
    the operand), 'promise_in_bounds'. {dup} Without dimension_numbers (funcad's
    shorthand) index vectors of length k address the first k dimensions and each update
    is the trailing slice there."""


def _make(kind, what, dup, example):
    def fun(operand, scatter_indices, updates, dimension_numbers: ScatterDimensionNumbers | None = None,
            *, indices_are_sorted: bool = False, unique_indices: bool = False, mode=None):
        if dimension_numbers is None:
            dimension_numbers = _point_numbers(operand, scatter_indices)
        return _combine(f"scatter_{kind}" if kind != "set" else "scatter", operand, scatter_indices,
                        updates, dimension_numbers, mode, kind)
    fun.__name__ = fun.__qualname__ = "scatter" if kind == "set" else f"scatter_{kind}"
    fun.__doc__ = _DOC.format(what=what, dup=dup) + "\n\n" + example
    return fun


_EX = """    >>> dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                              scatter_dims_to_operand_dims=(0,))
    >>> {name}(np.ones(4), np.array([[1], [1], [3]]), np.array([2.0, 3.0, 5.0]), dn).tolist()
    {result}
"""
scatter = _make("set", "`operand` with `updates` written", "With repeated indices the last update wins.",
                _EX.format(name="scatter", result="[1.0, 3.0, 1.0, 5.0]"))
scatter_add = _make("add", "`operand` with `updates` added", "Repeated indices accumulate.",
                    _EX.format(name="scatter_add", result="[1.0, 6.0, 1.0, 6.0]"))
scatter_sub = _make("sub", "`operand` with `updates` subtracted", "Repeated indices accumulate.",
                    _EX.format(name="scatter_sub", result="[1.0, -4.0, 1.0, -4.0]"))
scatter_mul = _make("mul", "`operand` multiplied by `updates`", "Repeated indices multiply together; "
                    "the derivative holds for repeated indices too.",
                    _EX.format(name="scatter_mul", result="[1.0, 6.0, 1.0, 5.0]"))
scatter_min = _make("min", "the minimum of `operand` and `updates`", "Repeated indices take the least.",
                    _EX.format(name="scatter_min", result="[1.0, 1.0, 1.0, 1.0]"))
scatter_max = _make("max", "the maximum of `operand` and `updates`", "Repeated indices take the greatest.",
                    _EX.format(name="scatter_max", result="[1.0, 3.0, 1.0, 5.0]"))


def scatter_apply(operand, scatter_indices, func: Callable, dimension_numbers: ScatterDimensionNumbers, *,
                  update_shape: Sequence[int] = (), indices_are_sorted: bool = False,
                  unique_indices: bool = False, mode=None):
    """`operand` with the scalar function `func` applied at the scattered windows (an
    index hit k times gets func applied k times, as XLA does); `update_shape` is the
    shape the updates would have.

    >>> dn = ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
    ...                              scatter_dims_to_operand_dims=(0,))
    >>> scatter_apply(np.ones(4), np.array([[1], [1], [2]]), lambda v: v * 3, dn, update_shape=(3,)).tolist()
    [1.0, 9.0, 3.0, 1.0]
    """
    x = _arr(operand)
    ones = np.ones(tuple(update_shape), np.int32)
    counts = _combine("scatter_apply", np.zeros(aval_of(x).shape, np.int32), scatter_indices, ones,
                      dimension_numbers, mode, "add")
    n = int(np.prod(aval_of(x).shape, dtype=np.int64))
    if n == 0:
        return x
    flat, cflat = S.reshape(x, (n,)), S.reshape(counts, (n,))
    top = reduce_max(cflat, (0,))
    f = vmap(func)

    def body(state):
        k, cur = state
        return E.add(k, np.int32(1)), E.select_n(E.gt(cflat, k), cur, f(cur))
    _, out = while_loop(lambda s: E.lt(s[0], top), body, (np.int32(0), flat))
    return S.reshape(out, aval_of(x).shape)
