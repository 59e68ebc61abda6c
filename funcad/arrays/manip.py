"""More shape manipulation: pad, append/insert/delete, rot90, block, resize, unstack,
dstack/dsplit, select/choose/piecewise, put/place/put_along_axis/fill_diagonal
(functional: they return new arrays), apply_along_axis."""
from __future__ import annotations

import builtins

import numpy as np

from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.errors import ConcretizationError, FuncadValueError
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives._base import (broadcast_shapes as broadcast_shapes_of, broadcast_to as _broadcast_to,
                               canonical_axis, canonical_axis as _ax)
from ..primitives.structural import iota
from ..primitives.elementwise import weakly
from .dtypes import asarray_or_tracer, cast, is_weak, no_out, promote
from ..core.eager import wrap
from .indexing import _IndexUpdateHelper, getitem, take
from .placement import place as _place
from .shape import (broadcast_arrays, broadcast_to, concatenate, flip,
                     moveaxis, ndim, ravel, reshape, shape, split, stack, swapaxes, transpose,
                     _reshape)
from .ufuncs import _as_bool, add, clip, mod, multiply, subtract, where
from .reductions import cumsum, max as _max, mean as _mean, min as _min
from .setops import searchsorted
from .shape import diag, vstack
from ..transforms.vmap import vmap
from .ufuncs import floor
from .stats import median
from .ufuncs import round as _round
from .setops import concrete_or_raise
from .shape import tile

__all__ = ["repeat", "pad", "append", "insert", "delete", "row_stack", "dstack", "dsplit", "concat",
           "permute_dims", "rollaxis", "rot90", "unstack", "resize", "block", "trim_zeros",
           "atleast_3d", "broadcast_shapes", "select", "choose", "piecewise", "put_along_axis",
           "put", "place", "fill_diagonal", "apply_along_axis", "apply_over_axes", "diagflat", "copy"]


# -------------------------------------------------------------------- pad ----

def _pad_widths(pw, nd):
    pw = np.asarray(pw.concrete() if isinstance(pw, Tracer) else pw)
    if pw.dtype.kind not in "iu" and pw.size and not np.all(pw == np.round(pw)):
        raise FuncadValueError("pad: pad_width must be integers")
    pw = np.broadcast_to(pw.astype(np.int64), (nd, 2))
    if np.any(pw < 0):
        raise FuncadValueError("pad: pad_width must be non-negative")
    return [(int(a), int(b)) for a, b in pw]


def _per_axis(value, nd, name):
    """A pad keyword (constant_values, end_values...) as one (before, after) pair per axis."""
    if isinstance(value, Tracer) or (hasattr(value, "shape") and np.ndim(value) > 0 and not isinstance(value, (list, tuple))):
        v = asarray_or_tracer(value)
        if len(shape(v)) == 0:
            return [(v, v)] * nd
        v = broadcast_to(v, (nd, 2))
        return [(getitem(v, (i, 0)), getitem(v, (i, 1))) for i in range(nd)]
    arr = np.asarray(value, dtype=object)
    if arr.ndim == 0:
        return [(value, value)] * nd
    arr = np.broadcast_to(arr, (nd, 2))
    return [(arr[i, 0], arr[i, 1]) for i in range(nd)]


def _slice_axis(a, ax, lo, hi, step=1):
    sh = shape(a)
    start, stop, strides = [0] * len(sh), list(sh), [1] * len(sh)
    start[ax], stop[ax], strides[ax] = lo, hi, step
    return S.slice(a, start, stop, strides)


def pad(array, pad_width, mode="constant", **kwargs):
    """array padded by pad_width entries per axis side, in NumPy's modes ('constant',
    'edge', 'reflect', 'symmetric', 'wrap', 'linear_ramp', 'maximum', 'minimum', 'mean',
    'median', 'empty') or with a callable.

    >>> import funcad.numpy as fnp
    >>> fnp.pad(fnp.array([1, 2, 3]), (2, 1), mode="reflect")
    Array([3, 2, 1, 2, 3, 2], dtype=int64)
    """
    a = asarray_or_tracer(array)
    # JAX pads with constants made like the array: the result is as weak as the array
    return weakly(_pad(a, pad_width, mode, kwargs), is_weak(a))


def _pad(a, pad_width, mode, kwargs):
    nd = len(shape(a))
    widths = _pad_widths(pad_width, nd)
    if callable(mode):
        return _pad_callable(a, widths, mode, kwargs)
    allowed = {"constant": {"constant_values"}, "edge": set(), "wrap": set(), "empty": set(),
               "linear_ramp": {"end_values"}, "maximum": {"stat_length"}, "minimum": {"stat_length"},
               "mean": {"stat_length"}, "median": {"stat_length"}, "reflect": {"reflect_type"},
               "symmetric": {"reflect_type"}}
    if mode not in allowed:
        raise FuncadValueError(f"pad: unknown mode {mode!r}; use one of {', '.join(sorted(allowed))} or a callable")
    extra = set(kwargs) - allowed[mode]
    if extra:
        raise FuncadValueError(f"pad: unsupported keyword arguments for mode {mode!r}: {sorted(extra)}")
    dt = aval_of(a).dtype
    if mode in ("constant", "empty"):
        vals = _per_axis(kwargs.get("constant_values", 0), nd, "constant_values")
        for ax, ((lo, hi), (vlo, vhi)) in enumerate(zip(widths, vals)):
            if lo == 0 and hi == 0:
                continue
            parts = []
            if lo:
                parts.append(broadcast_to(cast(asarray_or_tracer(vlo), dt), _side_shape(a, ax, lo)))
            parts.append(a)
            if hi:
                parts.append(broadcast_to(cast(asarray_or_tracer(vhi), dt), _side_shape(a, ax, hi)))
            a = concatenate(parts, ax)
        return a
    if mode in ("reflect", "symmetric"):
        rtype = kwargs.get("reflect_type", "even")
        if rtype not in ("even", "odd"):
            raise FuncadValueError(f"pad: reflect_type must be 'even' or 'odd', got {rtype!r}")
        for ax, (lo, hi) in enumerate(widths):
            a = _pad_reflect(a, ax, lo, hi, mode == "reflect", rtype == "odd")
        return a
    for ax, (lo, hi) in enumerate(widths):
        if lo == 0 and hi == 0:
            continue
        n = shape(a)[ax]
        if n == 0:
            raise FuncadValueError(f"pad: can't extend an empty axis {ax} with mode {mode!r}")
        if mode == "edge":
            before = _repeat_side(_slice_axis(a, ax, 0, 1), ax, lo)
            after = _repeat_side(_slice_axis(a, ax, n - 1, n), ax, hi)
        elif mode == "wrap":
            before, after = _wrap_side(a, ax, lo, True), _wrap_side(a, ax, hi, False)
        elif mode == "linear_ramp":
            ends = _per_axis(kwargs.get("end_values", 0), nd, "end_values")[ax]
            before = _ramp(_slice_axis(a, ax, 0, 1), ends[0], lo, ax, True)
            after = _ramp(_slice_axis(a, ax, n - 1, n), ends[1], hi, ax, False)
        else:
            stat = kwargs.get("stat_length")
            lens = _per_axis(n if stat is None else stat, nd, "stat_length")[ax]
            before = _repeat_side(_stat(a, ax, mode, int(lens[0]), True), ax, lo)
            after = _repeat_side(_stat(a, ax, mode, int(lens[1]), False), ax, hi)
        a = concatenate([p for p in (before, a, after) if shape(p)[ax]], ax)
    return a


def _side_shape(a, ax, k):
    sh = list(shape(a))
    sh[ax] = k
    return tuple(sh)


def _repeat_side(edge, ax, k):
    return broadcast_to(edge, _side_shape(edge, ax, k))


def _wrap_side(a, ax, k, before):
    n = shape(a)[ax]
    idx = (np.arange(-k, 0) % n) if before else (np.arange(n, n + k) % n)
    return getitem(a, (slice(None),) * ax + (idx,))


def _pad_reflect(a, ax, lo, hi, reflect, odd):
    n = shape(a)[ax]
    if lo == 0 and hi == 0:
        return a
    if n == 0:
        raise FuncadValueError(f"pad: can't extend an empty axis {ax} with a reflecting mode")
    # Indices of the padded axis into the original one, by reflecting repeatedly.
    period = 2 * (n - 1) if reflect else 2 * n
    if reflect and n == 1:
        idx = np.zeros(lo + n + hi, np.int64)
    else:
        pos = np.arange(-lo, n + hi)
        m = pos % period
        idx = np.where(m < n, m, period - m - (0 if reflect else 1))
    out = getitem(a, (slice(None),) * ax + (idx,))
    if not odd:
        return out
    # Odd reflection: 2 * edge - reflected value, repeatedly per period crossing.
    # NumPy's odd mode extends each side from its edge: out = 2*edge - mirrored, chained.
    return _odd_reflect(a, ax, lo, hi, reflect)


def _odd_reflect(a, ax, lo, hi, reflect):
    dt = aval_of(a).dtype
    # Grow one reflection at a time from each side, as NumPy does.
    while lo > 0 or hi > 0:
        n = shape(a)[ax]
        chunk = (n - 1) if reflect else n
        chunk = max(chunk, 1)
        if lo > 0:
            k = min(lo, chunk)
            edge = _slice_axis(a, ax, 0, 1)
            src = _slice_axis(a, ax, 1, 1 + k) if reflect else _slice_axis(a, ax, 0, k)
            if reflect and n == 1:
                src = _repeat_side(edge, ax, k)
            part = subtract(multiply(edge, np.array(2, dt)), flip(src, ax))
            a = concatenate([part, a], ax)
            lo -= k
        if hi > 0:
            n = shape(a)[ax]
            k = min(hi, chunk)
            edge = _slice_axis(a, ax, n - 1, n)
            src = _slice_axis(a, ax, n - 1 - k, n - 1) if reflect else _slice_axis(a, ax, n - k, n)
            if reflect and n == 1:
                src = _repeat_side(edge, ax, k)
            part = subtract(multiply(edge, np.array(2, dt)), flip(src, ax))
            a = concatenate([a, part], ax)
            hi -= k
    return a


def _ramp(edge, end, k, ax, before):
    if k == 0:
        return _repeat_side(edge, ax, 0)
    dt = aval_of(edge).dtype
    t = np.arange(k, dtype=np.float64) / k  # from the end value towards the edge
    if not before:
        t = t[::-1]
    tb = reshape(np.asarray(t), tuple(k if d == ax else 1 for d in range(len(shape(edge)))))
    fe = cast(edge, np.float64) if dt.kind in "iub" else edge
    end = asarray_or_tracer(end)
    out = add(end, multiply(subtract(fe, end), cast(tb, aval_of(fe).dtype)))
    if dt.kind in "iu":
        out = cast(floor(out), dt) if dt.kind in "iu" else out
    return cast(out, dt)


def _stat(a, ax, mode, length, before):
    n = shape(a)[ax]
    length = n if length <= 0 and length != 0 else min(max(length, 1), n)
    part = _slice_axis(a, ax, 0, length) if before else _slice_axis(a, ax, n - length, n)
    if mode == "maximum":
        return _max(part, ax, keepdims=True)
    if mode == "minimum":
        return _min(part, ax, keepdims=True)
    if mode == "mean":
        out = _mean(part, ax, keepdims=True)
    else:
        out = median(part, ax, keepdims=True)
    dt = aval_of(a).dtype
    if dt.kind in "iu":
        out = cast(_round(out), dt)
    return cast(out, dt)


def _pad_callable(a, widths, fn, kwargs):
    """mode=callable: fn(vector, pad_width, iaxis, kwargs) returns the padded vector."""
    a = pad(a, widths, "constant")
    for ax in range(len(shape(a))):
        moved = moveaxis(a, ax, -1)
        sh = shape(moved)
        rows = reshape(moved, (-1, sh[-1]))
        out = stack([asarray_or_tracer(fn(getitem(rows, i), widths[ax], ax, kwargs))
                     for i in range(shape(rows)[0])]) if shape(rows)[0] else rows
        a = moveaxis(reshape(out, sh), -1, ax)
    return a


# ----------------------------------------------------------- insert, delete ----

def append(arr, values, axis: int | None = None):
    """arr with values appended (flattened when axis is None)."""
    arr, values = promote(arr, values)
    if axis is None:
        return concatenate([ravel(arr), ravel(values)])
    return concatenate([arr, values], axis)


def _concrete_index(obj, fn):
    if isinstance(obj, Tracer):
        return concrete_or_raise(obj, fn)
    return obj


def delete(arr, obj, axis: int | None = None, *, assume_unique_indices: bool = False):
    """arr without the entries (or slices along axis) at obj (an int, slice or index array)."""
    a = asarray_or_tracer(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, len(shape(a)), "delete", a)
    n = shape(a)[ax]
    obj = _concrete_index(obj, "delete")
    if isinstance(obj, slice):
        drop = np.arange(n)[obj]
    else:
        o = np.asarray(obj)
        if o.dtype == np.bool_:
            if o.shape != (n,):
                raise FuncadValueError(f"delete: boolean mask must have length {n}")
            drop = np.nonzero(o)[0]
        else:
            if o.size and (o.min() < -n or o.max() >= n):
                raise FuncadValueError(f"delete: index out of bounds for axis {ax} with size {n}")
            drop = o.astype(np.int64).ravel() % max(n, 1)
    keep = np.setdiff1d(np.arange(n), drop)
    return getitem(a, (slice(None),) * ax + (keep,))


def insert(arr, obj, values, axis: int | None = None):
    """arr with values inserted before the index (or indices) obj along axis."""
    a = asarray_or_tracer(arr)
    if axis is None:
        a, axis = ravel(a), 0
    ax = canonical_axis(axis, len(shape(a)), "insert", a)
    n = shape(a)[ax]
    obj = _concrete_index(obj, "insert")
    values = cast(asarray_or_tracer(values), aval_of(a).dtype)
    idx = np.arange(n + 1)[obj] if isinstance(obj, slice) else np.asarray(obj)
    scalar = idx.ndim == 0
    idx = np.atleast_1d(idx).astype(np.int64)
    if idx.size and (idx.min() < -n or idx.max() > n):
        raise FuncadValueError(f"insert: index out of bounds for axis {ax} with size {n}")
    idx = np.where(idx < 0, idx + n, idx)
    vals = asarray_or_tracer(values)
    if scalar:
        vals = moveaxis(vals, 0, ax) if len(shape(vals)) == len(shape(a)) else vals
        vs = list(shape(a))
        vs[ax] = 1 if len(shape(vals)) < len(shape(a)) else shape(vals)[ax]
        if len(shape(vals)) < len(shape(a)):
            vals = reshape(broadcast_to(vals, tuple(vs[:ax] + vs[ax + 1:])) if len(shape(vals)) else
                           broadcast_to(vals, tuple(vs[:ax] + vs[ax + 1:])), tuple(vs))
        else:
            vals = broadcast_to(vals, tuple(vs))
        k = vs[ax]
        pos = np.full(k, idx[0])
    else:
        k = idx.size
        vs = list(shape(a))
        vs[ax] = k
        if len(shape(vals)) == 1 and shape(vals)[0] == k and len(vs) > 1:
            vals = reshape(vals, tuple(k if d == ax else 1 for d in range(len(vs))))
        vals = broadcast_to(vals, tuple(vs))
        pos = idx
    # Stable order: originals keep their order; inserted entries go before position pos.
    order = np.argsort(np.concatenate([np.arange(n) * 2 + 1, np.asarray(pos) * 2]), kind="stable")
    both = concatenate([a, vals], ax)
    src = np.concatenate([np.arange(n), n + np.arange(k)])[order]
    return getitem(both, (slice(None),) * ax + (src,))


# ---------------------------------------------------------------- stacking ----

def row_stack(tup):
    """vstack (an old NumPy alias)."""
    return vstack(tup)


def atleast_3d(*arys):
    """Each input viewed with at least 3 dimensions (1-d (N,) becomes (1, N, 1))."""
    out = []
    for a in arys:
        a = asarray_or_tracer(a)
        nd = len(shape(a))
        if nd == 0:
            a = reshape(a, (1, 1, 1))
        elif nd == 1:
            a = reshape(a, (1, shape(a)[0], 1))
        elif nd == 2:
            a = reshape(a, shape(a) + (1,))
        out.append(a)
    return out[0] if len(out) == 1 else out


def dstack(tup, dtype=None):
    """Stack along the third axis."""
    arrs = [atleast_3d(a) for a in tup]
    out = concatenate(arrs, 2)
    return out if dtype is None else cast(out, np.dtype(dtype))


def dsplit(ary, indices_or_sections):
    """split along the third axis."""
    if len(shape(asarray_or_tracer(ary))) < 3:
        raise FuncadValueError("dsplit only works on arrays of 3 or more dimensions")
    return split(ary, indices_or_sections, 2)


def concat(arrays, /, *, axis: int | None = 0):
    """concatenate (the array API's name)."""
    return concatenate(arrays, axis)


def permute_dims(a, /, axes):
    """transpose (the array API's name)."""
    return transpose(a, axes)


def rollaxis(a, axis: int, start: int = 0):
    """Move axis to position start (as numpy.rollaxis)."""
    a = asarray_or_tracer(a)
    nd = len(shape(a))
    axis = canonical_axis(axis, nd, "rollaxis", a)
    if not -nd <= start <= nd:
        raise FuncadValueError(f"rollaxis: start={start} out of range for {nd} dimensions")
    start = start + nd if start < 0 else start
    if axis < start:
        start -= 1
    return moveaxis(a, axis, start)


def rot90(m, k: int = 1, axes=(0, 1)):
    """Rotate by 90 degrees k times in the plane of axes."""
    m = asarray_or_tracer(m)
    nd = len(shape(m))
    if len(axes) != 2:
        raise FuncadValueError("rot90: axes must be two axes")
    a0, a1 = canonical_axis(axes[0], nd, "rot90", m), canonical_axis(axes[1], nd, "rot90", m)
    if a0 == a1:
        raise FuncadValueError("rot90: axes must be different")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, a0), a1)
    if k == 1:
        return swapaxes(flip(m, a1), a0, a1)
    return flip(swapaxes(m, a0, a1), a1)


def unstack(x, /, *, axis: int = 0):
    """The slices of x along axis, as a tuple."""
    x = asarray_or_tracer(x)
    if len(shape(x)) == 0:
        raise FuncadValueError("unstack requires an array of at least 1 dimension")
    ax = canonical_axis(axis, len(shape(x)), "unstack", x)
    return tuple(getitem(x, (slice(None),) * ax + (i,)) for i in range(shape(x)[ax]))


def resize(a, new_shape):
    """a's entries repeated (cyclically) to fill new_shape."""
    a = ravel(asarray_or_tracer(a))
    new_shape = (int(new_shape),) if np.ndim(new_shape) == 0 else tuple(int(s) for s in new_shape)
    if any(s < 0 for s in new_shape):
        raise FuncadValueError("resize: all elements of new_shape must be non-negative")
    total = int(np.prod(new_shape, dtype=np.int64))
    n = shape(a)[0]
    if n == 0 or total == 0:
        return np.zeros(new_shape, aval_of(a).dtype)
    reps = -(-total // n)
    return reshape(S.slice(tile(a, reps), (0,), (total,)), new_shape)


def block(arrays):
    """Assemble an array from nested lists of blocks (as numpy.block)."""
    def depth(x):
        return 1 + depth(x[0]) if isinstance(x, list) and x else (1 if isinstance(x, list) else 0)
    if isinstance(arrays, tuple):
        raise FuncadValueError("block: arrays is a tuple; only lists can be used to arrange blocks")
    d = depth(arrays)
    ndim_max = builtins.max([d] + [len(shape(asarray_or_tracer(x))) for x in _leaves(arrays)])

    def rec(x, level):
        if isinstance(x, list):
            if not x:
                raise FuncadValueError("block: lists cannot be empty")
            parts = [rec(e, level + 1) for e in x]
            return concatenate(promote(*parts), -(d - level))
        x = asarray_or_tracer(x)
        return reshape(x, (1,) * (ndim_max - len(shape(x))) + shape(x))
    return rec(arrays, 0)


def _leaves(x):
    if isinstance(x, list):
        for e in x:
            yield from _leaves(e)
    else:
        yield x


def trim_zeros(filt, trim: str = "fb", axis=None):
    """filt without its leading ('f') and/or trailing ('b') zeros (concrete input)."""
    a = asarray_or_tracer(filt)
    c = concrete_or_raise(a, "trim_zeros") if isinstance(a, Tracer) else np.asarray(a)
    if c.ndim != 1 and axis is None:
        raise FuncadValueError("trim_zeros: input must be 1-d (or give axis=)")
    axes = tuple(range(c.ndim)) if axis is None else tuple(
        canonical_axis(x, c.ndim) for x in ((axis,) if np.ndim(axis) == 0 else axis))
    idx = []
    for ax in range(c.ndim):
        if ax not in axes:
            idx.append(slice(None))
            continue
        nz = np.nonzero(np.any(c != 0, axis=tuple(d for d in range(c.ndim) if d != ax)))[0]
        if nz.size == 0:
            idx.append(slice(0, 0))
            continue
        lo = nz[0] if "f" in trim.lower() else 0
        hi = nz[-1] + 1 if "b" in trim.lower() else c.shape[ax]
        idx.append(slice(int(lo), int(hi)))
    return getitem(a, tuple(idx))


def broadcast_shapes(*shapes):
    """The shape that arrays of these shapes broadcast to."""
    return broadcast_shapes_of(*[tuple(s) if np.ndim(s) else (int(s),) for s in shapes])


# --------------------------------------------------------------- selection ----

def select(condlist, choicelist, default=0):
    """The entry of the first choice whose condition holds (default where none does)."""
    if len(condlist) != len(choicelist):
        raise FuncadValueError(f"select: {len(condlist)} conditions but {len(choicelist)} choices")
    if len(condlist) == 0:
        raise FuncadValueError("select: condlist must not be empty")
    choices = promote(default, *choicelist)
    out = choices[0]
    for c, v in reversed(list(zip(condlist, choices[1:]))):
        c = asarray_or_tracer(c)
        if aval_of(c).dtype != np.bool_:
            raise FuncadValueError(f"select: condlist entries must be boolean, got {aval_of(c).dtype}")
        out = where(c, v, out)
    return out


def choose(a, choices, out=None, mode: str = "raise"):
    """Entries from choices[a] (mode 'raise', 'wrap' or 'clip')."""
    no_out(out, "choose")
    a = cast(asarray_or_tracer(a), np.int64)
    choices = list(choices) if not (isinstance(choices, Tracer) or hasattr(choices, "shape")) else \
        [getitem(asarray_or_tracer(choices), i) for i in range(shape(asarray_or_tracer(choices))[0])]
    n = len(choices)
    if mode == "raise":
        c = _concrete_index(a, "choose")
        c = np.asarray(c)
        if c.size and (c.min() < 0 or c.max() >= n):
            raise FuncadValueError("choose: invalid entry in choice array; use mode='wrap' or 'clip'")
    elif mode == "wrap":
        a = mod(a, n)
    elif mode == "clip":
        a = clip(a, 0, n - 1)
    else:
        raise FuncadValueError(f"choose: mode must be 'raise', 'wrap' or 'clip', got {mode!r}")
    arrs = broadcast_arrays(a, *promote(*choices))
    a, chs = arrs[0], arrs[1:]
    res = chs[0]
    for i in range(1, n):
        res = where(E.eq(a, np.int64(i)), chs[i], res)
    return res


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) where condlist[i] holds (later conditions win); an extra function
    is the default. Every function is evaluated on all of x (as in JAX)."""
    x = asarray_or_tracer(x)
    conds = [asarray_or_tracer(c) for c in (condlist if isinstance(condlist, (list, tuple)) else
                                             ([condlist] if len(shape(asarray_or_tracer(condlist))) == len(shape(x))
                                              else list(condlist)))]
    nc, nf = len(conds), len(funclist)
    if nf == nc + 1:
        default, funcs = funclist[-1], funclist[:-1]
    elif nf == nc:
        default, funcs = 0, funclist
    else:
        raise FuncadValueError(f"piecewise: with {nc} condition(s), either {nc} or {nc + 1} functions are needed")

    def val(f):
        return f(x, *args, **kw) if callable(f) else f
    out = cast(broadcast_to(asarray_or_tracer(val(default)), shape(x)), aval_of(x).dtype)
    for c, f in zip(conds, funcs):
        out = where(_as_bool(c), cast(broadcast_to(asarray_or_tracer(val(f)), shape(x)), aval_of(x).dtype), out)
    return out


# ----------------------------------------------- functional in-place updates ----

def _need_not_inplace(inplace, fn):
    if inplace:
        raise FuncadValueError(
            f"{fn}: funcad arrays are immutable, so in-place updates are not possible; pass "
            f"inplace=False to get the updated array back (as in JAX)")


def put_along_axis(arr, indices, values, axis, inplace: bool = True, *, mode=None):
    """arr with values written at indices along axis (needs inplace=False, as in JAX)."""
    _need_not_inplace(inplace, "put_along_axis")
    a = asarray_or_tracer(arr)
    if axis is None:
        a_flat = ravel(a)
        return reshape(put_along_axis(a_flat, ravel(asarray_or_tracer(indices)), ravel(asarray_or_tracer(values)), 0,
                                      False, mode=mode), shape(a))
    nd = len(shape(a))
    ax = canonical_axis(axis, nd, "put_along_axis", a)
    idx = cast(asarray_or_tracer(indices), np.int64)
    if len(shape(idx)) != nd:
        raise FuncadValueError("put_along_axis: indices must have the same number of dimensions as arr")
    n = shape(a)[ax]
    idx = where(E.lt(idx, np.int64(0)), E.add(idx, np.int64(n)), idx)
    bshape = np.broadcast_shapes(shape(idx), tuple(1 if d == ax else s for d, s in enumerate(shape(a))))
    idx = broadcast_to(idx, bshape)
    full_idx = tuple(idx if d == ax else np.arange(shape(a)[d]).reshape([-1 if k == d else 1 for k in range(nd)])
                     for d in range(nd))
    return _IndexUpdateHelper(a)[full_idx].set(broadcast_to(asarray_or_tracer(values), bshape))


def put(a, ind, v, mode=None, *, inplace: bool = True):
    """a with ravel(a)[ind] = v (needs inplace=False); mode 'wrap'/'clip' handle
    out-of-range indices."""
    _need_not_inplace(inplace, "put")
    a = asarray_or_tracer(a)
    n = int(np.prod(shape(a), dtype=np.int64))
    ind = ravel(cast(asarray_or_tracer(ind), np.int64))
    v = ravel(asarray_or_tracer(v))
    k = shape(ind)[0]
    if k == 0:
        return a
    if shape(v)[0] != k:
        v = S.slice(tile(v, -(-k // max(shape(v)[0], 1))), (0,), (k,)) if shape(v)[0] else v
    if mode == "wrap":
        ind = mod(ind, n)
    elif mode == "clip":
        ind = clip(ind, 0, n - 1)
    elif mode in (None, "fill", "raise"):
        if mode == "raise":
            c = np.asarray(_concrete_index(ind, "put"))
            if c.size and (c.min() < -n or c.max() >= n):
                raise FuncadValueError("put: index out of range; use mode='wrap' or 'clip'")
        ind = where(E.lt(ind, np.int64(0)), E.add(ind, np.int64(n)), ind)
    else:
        raise FuncadValueError(f"put: mode must be None, 'fill', 'raise', 'wrap' or 'clip', got {mode!r}")
    return reshape(_IndexUpdateHelper(ravel(a))[ind].set(v), shape(a))


def place(arr, mask, vals, *, inplace: bool = True):
    """arr with the entries where mask is true replaced by vals, cycled (needs
    inplace=False; mask must be concrete)."""
    _need_not_inplace(inplace, "place")
    a = asarray_or_tracer(arr)
    m = np.asarray(_concrete_index(asarray_or_tracer(mask), "place"), bool)
    pos = np.nonzero(m.ravel())[0]
    vals = ravel(asarray_or_tracer(vals))
    if pos.size == 0:
        return a
    nv = shape(vals)[0]
    if nv == 0:
        raise FuncadValueError("place: cannot replace entries with an empty vals")
    v = getitem(vals, np.arange(pos.size) % nv)
    return reshape(_IndexUpdateHelper(ravel(a))[pos].set(v), shape(a))


def fill_diagonal(a, val, wrap: bool = False, *, inplace: bool = True):
    """a with its main diagonal set to val (needs inplace=False)."""
    _need_not_inplace(inplace, "fill_diagonal")
    a = asarray_or_tracer(a)
    sh = shape(a)
    if len(sh) < 2:
        raise FuncadValueError("fill_diagonal: array must be at least 2-d")
    if len(sh) > 2 and len(set(sh)) != 1:
        raise FuncadValueError("fill_diagonal: all dimensions of input must be of equal length")
    n = int(np.prod(sh, dtype=np.int64))
    if len(sh) == 2:
        step = sh[1] + 1
        end = n if wrap else min(n, sh[1] * sh[1])
    else:
        step = 1 + int(np.sum(np.cumprod(sh[:-1])))
        end = n
    pos = np.arange(0, end, step)
    v = ravel(asarray_or_tracer(val))
    nv = shape(v)[0]
    if nv == 0:
        return a
    v = getitem(cast(v, aval_of(a).dtype), np.arange(pos.size) % nv)
    return reshape(_IndexUpdateHelper(ravel(a))[pos].set(v), sh)


# ------------------------------------------------------------------- apply ----

def apply_along_axis(func1d, axis: int, arr, *args, **kwargs):
    """func1d applied to each 1-d slice along axis (vectorised with funcad.vmap); its
    output dimensions take the place of axis."""
    arr = asarray_or_tracer(arr)
    nd = len(shape(arr))
    ax = canonical_axis(axis, nd, "apply_along_axis", arr)
    sh = shape(arr)
    rows = reshape(moveaxis(arr, ax, -1), (-1, sh[ax]))
    out = asarray_or_tracer(vmap(lambda x: func1d(x, *args, **kwargs))(rows))
    pre, post, o = sh[:ax], sh[ax + 1:], shape(out)[1:]
    out = reshape(out, pre + post + o)
    perm = (list(range(len(pre))) + list(range(len(pre) + len(post), len(pre) + len(post) + len(o)))
            + list(range(len(pre), len(pre) + len(post))))
    return transpose(out, perm)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping the dimensions."""
    a = asarray_or_tracer(a)
    for ax in (axes,) if np.ndim(axes) == 0 else axes:
        nd = len(shape(a))
        axc = canonical_axis(ax, nd, "apply_over_axes", a)
        res = asarray_or_tracer(func(a, axc))
        if len(shape(res)) == nd - 1:
            res = S.expand_dims(res, (axc,))
        elif len(shape(res)) != nd:
            raise FuncadValueError("apply_over_axes: function is not returning an array of the correct shape")
        a = res
    return a


def diagflat(v, k: int = 0):
    """A 2-d array with ravel(v) on the k-th diagonal."""
    return diag(ravel(asarray_or_tracer(v)), k)


def copy(a, order=None):
    """A copy of a (a new array; funcad arrays are never aliased by later updates)."""
    a = asarray_or_tracer(a)
    if isinstance(a, np.ndarray):
        return weakly(wrap(np.array(a, copy=True)), is_weak(a))
    return _x64.canonicalize_held(a)


def repeat(a, repeats, axis=None, *, total_repeat_length=None, out_sharding=None):
    """Each element of `a` repeated `repeats` times along `axis` (flattened for None).
    With `total_repeat_length` the output has that length along the axis whatever
    the repeats are: longer results are cut, shorter ones padded with the last
    element; that makes traced `repeats` work under jit (as JAX's)."""
    out = _repeat(a, repeats, axis, total_repeat_length)
    return _place(out, out_sharding=out_sharding, name="repeat")


def _repeat(a, repeats, axis, total):
    a = asarray_or_tracer(a)
    if axis is None:
        a = _reshape(a, (-1,))
        axis = 0
    ax = _ax(axis, ndim(a), 'repeat', a)
    sh = shape(a)
    if total is not None:
        return _repeat_to_length(a, repeats, ax, int(total))
    if isinstance(repeats, Tracer):
        raise ConcretizationError("repeat: traced `repeats` give an output of unknown length; pass "
                                  "total_repeat_length=N (the output length along the axis), or make "
                                  "`repeats` static (static_argnums)")
    if np.ndim(repeats) == 0:
        r = int(repeats)
        b = S.broadcast_in_dim(a, sh[:ax + 1] + (r,) + sh[ax + 1:], tuple(range(ax + 1)) + tuple(range(ax + 2, len(sh) + 1)))
        return S.reshape(b, sh[:ax] + (sh[ax] * r,) + sh[ax + 1:])
    idx = np.repeat(np.arange(sh[ax]), np.asarray(repeats))
    return take(a, idx, axis=ax, mode="clip")


def _repeat_to_length(a, repeats, ax, total):
    # Output position p takes element i, the number of elements before the last whose
    # repeat blocks end at or before p: cut when the repeats add up to more than
    # `total`, the last element repeated when they add up to less.
    n = shape(a)[ax]
    if total == 0 or n == 0:
        return _reshape(a[(slice(None),) * ax + (slice(0, 0),)], shape(a)[:ax] + (0,) + shape(a)[ax + 1:]) \
            if n else a
    r = asarray_or_tracer(repeats)
    if aval_of(r).ndim == 0:
        r = _broadcast_to(r, (n,))
    ends = cumsum(r)[:-1]
    idx = searchsorted(ends, iota(aval_of(ends).dtype, (total,), 0), side="right")
    return take(a, idx, axis=ax, mode="clip")
