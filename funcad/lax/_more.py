"""funcad.lax functions that are compositions of primitives: *_in_dim slicing, index_take,
associative_scan, cumlogsumexp, top_k, reduce and reduce_window (any monoid or Python
reducer), full/broadcast helpers, sort_key_val, dot/batch_matmul, reduce_and/or/xor."""
from __future__ import annotations

import operator

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import reductions as R
from ..primitives import structural as S
from ..primitives._base import broadcast_to, canonical_axis
from ..numpy._dtypes import asarray_or_tracer, cast
from ..numpy._indexing import getitem
from ..numpy._shape import moveaxis, stack as _stack, tile as _tile
from ..numpy._ufuncs import logaddexp
from ..numpy._setops import top_k as _top_k
from .. import lax as flax, numpy as fnp
from ..core.trace import Tracer, bind_custom_jvp
from ..transforms.vmap import vmap
from ..numpy._creation import full as _full, full_like as _full_like
from ._extra import dot_general
from ..numpy._manip import unstack as _unstack

__all__ = ["slice_in_dim", "index_in_dim", "dynamic_slice_in_dim", "dynamic_index_in_dim",
           "dynamic_update_slice_in_dim", "dynamic_update_index_in_dim", "index_take",
           "associative_scan", "cumlogsumexp", "top_k", "reduce", "reduce_and", "reduce_or",
           "reduce_xor", "reduce_window", "full", "full_like", "empty", "broadcast",
           "broadcast_to_rank", "broadcasted_iota", "broadcast_shapes", "collapse", "sort_key_val",
           "dot", "batch_matmul", "tile", "split", "stack", "unstack", "reciprocal", "log2"]


def _arr(x):
    return asarray_or_tracer(x)


def _shape(x):
    return aval_of(x).shape


def slice_in_dim(operand, start_index, limit_index, stride: int = 1, axis: int = 0):
    """operand[start:limit:stride] along axis (static bounds; negatives count from the end)."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "slice_in_dim", x)
    n = _shape(x)[ax]
    start, stop, _ = slice(start_index, limit_index).indices(n)
    lo, hi, st = [0] * len(_shape(x)), list(_shape(x)), [1] * len(_shape(x))
    lo[ax], hi[ax], st[ax] = start, max(stop, start), int(stride)
    return S.slice(x, lo, hi, st)


def index_in_dim(operand, index: int, axis: int = 0, keepdims: bool = True):
    """The index-th slice along axis (static index)."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "index_in_dim", x)
    n = _shape(x)[ax]
    index = int(index)
    if not -n <= index < n:
        raise FuncadValueError(f"index_in_dim: index {index} is out of bounds for axis {ax} with size {n}")
    index %= n
    out = slice_in_dim(x, index, index + 1, 1, ax)
    return out if keepdims else S.squeeze(out, (ax,))


def _start(i, n, allow_negative):
    i = cast(_arr(i), np.int64)
    if allow_negative:
        i = E.select_n(E.lt(i, np.int64(0)), i, E.add(i, np.int64(n)))
    return i


def dynamic_slice_in_dim(operand, start_index, slice_size: int, axis: int = 0, *,
                         allow_negative_indices: bool = True):
    """dynamic_slice along one axis (the start is clamped so the slice fits, as XLA)."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "dynamic_slice_in_dim", x)
    starts = [np.int64(0)] * len(_shape(x))
    starts[ax] = _start(start_index, _shape(x)[ax], allow_negative_indices)
    sizes = list(_shape(x))
    sizes[ax] = int(slice_size)
    return I.dynamic_slice(x, starts, sizes)


def dynamic_index_in_dim(operand, index, axis: int = 0, keepdims: bool = True, *,
                         allow_negative_indices: bool = True):
    """The slice at a traced index along axis."""
    out = dynamic_slice_in_dim(operand, index, 1, axis, allow_negative_indices=allow_negative_indices)
    ax = canonical_axis(axis, len(_shape(out)))
    return out if keepdims else S.squeeze(out, (ax,))


def dynamic_update_slice_in_dim(operand, update, start_index, axis: int, *,
                                allow_negative_indices: bool = True):
    """dynamic_update_slice along one axis."""
    x, u = _arr(operand), _arr(update)
    ax = canonical_axis(axis, len(_shape(x)), "dynamic_update_slice_in_dim", x)
    starts = [np.int64(0)] * len(_shape(x))
    starts[ax] = _start(start_index, _shape(x)[ax], allow_negative_indices)
    return I.dynamic_update_slice(x, u, starts)


def dynamic_update_index_in_dim(operand, update, index, axis: int, *, allow_negative_indices: bool = True):
    """Write update (with or without the axis of size 1) at a traced index along axis."""
    x, u = _arr(operand), _arr(update)
    ax = canonical_axis(axis, len(_shape(x)), "dynamic_update_index_in_dim", x)
    if len(_shape(u)) == len(_shape(x)) - 1:
        u = S.expand_dims(u, (ax,))
    return dynamic_update_slice_in_dim(x, u, index, ax, allow_negative_indices=allow_negative_indices)


def index_take(src, idxs, axes):
    """src indexed by one integer array per axis in axes (the others kept whole)."""
    x = _arr(src)
    nd = len(_shape(x))
    axes = [canonical_axis(a, nd, "index_take", x) for a in axes]
    x = moveaxis(x, axes, list(range(len(axes))))
    return getitem(x, tuple(_arr(i) for i in idxs))


# ------------------------------------------------------------------ scans ----

def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan of an associative fn over pytrees of arrays along axis, in
    O(log n) parallel steps (up-sweep and down-sweep of odd and even entries)."""
    leaves, tree = tree_flatten(elems)
    leaves = [_arr(x) for x in leaves]
    if not leaves:
        raise FuncadValueError("associative_scan: elems has no arrays")
    nd = len(_shape(leaves[0]))
    ax = canonical_axis(axis, nd, "associative_scan", leaves[0])
    n = _shape(leaves[0])[ax]
    if any(_shape(x)[ax] != n for x in leaves):
        raise FuncadValueError("associative_scan: every array must have the same length along axis")
    if reverse:
        leaves = [S.rev(x, (ax,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise FuncadValueError("associative_scan: fn must return the structure of its arguments")
        return [_arr(o) for o in out_leaves]

    def sl(xs, lo, hi, step):
        out = []
        for x in xs:
            start, stop, st = [0] * nd, list(_shape(x)), [1] * nd
            start[ax], stop[ax], st[ax] = lo, max(hi, lo), step
            out.append(S.slice(x, start, stop, st))
        return out

    def interleave(a, b):
        # a holds positions 0, 2, 4...; b holds 1, 3, ...
        out = []
        for x, y in zip(a, b):
            na, nb = _shape(x)[ax], _shape(y)[ax]
            cfg_a = [(0, 0, 0)] * nd
            cfg_b = [(0, 0, 0)] * nd
            cfg_a[ax] = (0, nb - na + 1, 1)
            cfg_b[ax] = (1, na - nb, 1)
            zero = np.zeros((), aval_of(x).dtype)
            out.append(E.add(S.pad(x, zero, cfg_a), S.pad(y, zero, cfg_b)) if aval_of(x).dtype != np.bool_
                       else E.bitwise_or(S.pad(x, zero, cfg_a), S.pad(y, zero, cfg_b)))
        return out

    def scan(xs):
        m = _shape(xs[0])[ax]
        if m < 2:
            return xs
        reduced = combine(sl(xs, 0, m - 1, 2), sl(xs, 1, m, 2))
        odd = scan(reduced)
        if m % 2 == 0:
            even = combine(sl(odd, 0, _shape(odd[0])[ax] - 1, 1), sl(xs, 2, m, 2))
        else:
            even = combine(odd, sl(xs, 2, m, 2))
        even = [S.concatenate([s0, e], ax) for s0, e in zip(sl(xs, 0, 1, 1), even)]
        return interleave(even, odd)

    out = scan(leaves)
    if reverse:
        out = [S.rev(x, (ax,)) for x in out]
    return tree_unflatten(tree, out)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """log(cumsum(exp(x))) along axis, computed stably."""
    return associative_scan(logaddexp, _arr(operand), reverse=reverse, axis=axis)


def top_k(operand, k: int, *, axis: int = -1, is_stable: bool = True):
    """The k largest entries along axis (default: the last) in descending order, and their indices."""
    return _top_k(operand, k, axis=axis)


# -------------------------------------------------------------- reductions ----

def _monoid(computation, init):
    """The primitive reduction for a standard monoid whose identity is `init`, else None."""
    if isinstance(init, Tracer):
        return None  # a traced initial value: fold instead
    d = aval_of(init).dtype
    v = np.asarray(init)
    adds = (operator.add, fnp.add, flax.add, E.add)
    muls = (operator.mul, fnp.multiply, flax.mul, E.mul)
    maxs = (fnp.maximum, flax.max, E.max)
    mins = (fnp.minimum, flax.min, E.min)
    ors = (operator.or_, fnp.bitwise_or, flax.bitwise_or, fnp.logical_or)
    ands = (operator.and_, fnp.bitwise_and, flax.bitwise_and, fnp.logical_and)
    if computation in adds and v == 0:
        return R.reduce_sum
    if computation in muls and v == 1:
        return R.reduce_prod
    lo = -np.inf if d.kind == "f" else (np.iinfo(d).min if d.kind in "iu" else False)
    hi = np.inf if d.kind == "f" else (np.iinfo(d).max if d.kind in "iu" else True)
    if computation in maxs and v == lo:
        return R.reduce_max
    if computation in mins and v == hi:
        return R.reduce_min
    if d == np.bool_ and computation in ors and not v:
        return R.reduce_max
    if d == np.bool_ and computation in ands and v:
        return R.reduce_min
    return None


def reduce(operands, init_values, computation, dimensions):
    """Reduce operands over dimensions with computation, starting from init_values.

    Standard monoids (add/mul/max/min/and/or with their identities) become one
    reduction primitive; any other computation (pytrees of operands included) is
    applied as a sequential fold along the reduced dimensions, vectorised with vmap.

    >>> import numpy as np, funcad.lax as lax
    >>> lax.reduce(np.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))
    Array([ 3., 12.], dtype=float64)
    """
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise FuncadValueError("reduce: operands and init_values must have the same structure")
    flat_ops = [_arr(x) for x in flat_ops]
    flat_init = [np.array(v, aval_of(x).dtype) if isinstance(v, (int, float, bool)) else _arr(v)
                 for v, x in zip(flat_init, flat_ops)]  # Python scalars are weak, as in JAX
    nd = len(_shape(flat_ops[0]))
    dims = tuple(sorted(canonical_axis(d, nd, "reduce") for d in dimensions))
    if len(flat_ops) == 1:
        prim = _monoid(computation, flat_init[0])
        if prim is not None:
            return tree_unflatten(tree, [prim(flat_ops[0], dims)])
    return tree_unflatten(tree, _fold(flat_ops, flat_init, computation, dims, tree))


def _fold(ops, inits, computation, dims, tree):
    from ..numpy._shape import moveaxis, reshape
    from ._control_flow import scan
    nd = len(_shape(ops[0]))
    keep = [d for d in range(nd) if d not in dims]
    out_shape = tuple(_shape(ops[0])[d] for d in keep)
    m = int(np.prod(out_shape, dtype=np.int64))
    k = int(np.prod([_shape(ops[0])[d] for d in dims], dtype=np.int64))
    xs = [reshape(moveaxis(x, list(dims), list(range(len(dims)))), (k, m)) for x in ops]

    def comb(a, b):
        out = computation(tree_unflatten(tree, list(a)), tree_unflatten(tree, list(b)))
        return [_arr(o) for o in tree_flatten(out)[0]]
    vcomb = vmap(lambda a, b: comb(a, b))
    carry0 = [broadcast_to(i, (m,)) for i in inits]

    def body(carry, x):
        return vcomb(carry, x), None
    carry, _ = scan(body, carry0, xs)
    return [reshape(c, out_shape) for c in carry]


def reduce_and(operand, axes):
    x = _arr(operand)
    if aval_of(x).dtype == np.bool_:
        return R.reduce_min(x, tuple(axes))
    return reduce(x, np.array(-1, aval_of(x).dtype), E.bitwise_and, axes)


def reduce_or(operand, axes):
    x = _arr(operand)
    if aval_of(x).dtype == np.bool_:
        return R.reduce_max(x, tuple(axes))
    return reduce(x, np.array(0, aval_of(x).dtype), E.bitwise_or, axes)


def reduce_xor(operand, axes):
    x = _arr(operand)
    return reduce(x, np.array(0, aval_of(x).dtype) if aval_of(x).dtype != np.bool_ else np.bool_(False),
                  E.bitwise_xor, axes)


def _padding_pairs(padding, shape, window, strides, dilation):
    if not isinstance(padding, str):
        return [(int(lo), int(hi)) for lo, hi in padding]
    if padding.upper() == "VALID":
        return [(0, 0)] * len(shape)
    if padding.upper() in ("SAME", "SAME_LOWER"):
        pads = []
        for n, w, s, d in zip(shape, window, strides, dilation):
            eff = (w - 1) * d + 1
            out = -(-n // s)
            total = max((out - 1) * s + eff - n, 0)
            lo = total // 2 if padding.upper() == "SAME" else -(-total // 2)
            pads.append((lo, total - lo))
        return pads
    raise FuncadValueError(f"reduce_window: padding must be 'VALID', 'SAME', 'SAME_LOWER' or pairs, got {padding!r}")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of operand with computation (max pooling, sums over windows...):
    the operand is padded with init_value and the windows' strided slices are combined."""
    flat_ops, tree = tree_flatten(operand)
    flat_init, init_tree = tree_flatten(init_value)
    if init_tree != tree:
        raise FuncadValueError("reduce_window: operand and init_value must have the same structure")
    flat_ops = [_arr(x) for x in flat_ops]
    flat_init = [_arr(x) for x in flat_init]
    nd = len(_shape(flat_ops[0]))
    window = tuple(int(w) for w in window_dimensions)
    strides = tuple(window_strides) if window_strides is not None else (1,) * nd
    bdil = tuple(base_dilation) if base_dilation is not None else (1,) * nd
    wdil = tuple(window_dilation) if window_dilation is not None else (1,) * nd
    if not (len(window) == len(strides) == len(bdil) == len(wdil) == nd):
        raise FuncadValueError(f"reduce_window: window, strides and dilations need {nd} entries each")
    dil_shape = tuple((n - 1) * b + 1 if n else 0 for n, b in zip(_shape(flat_ops[0]), bdil))
    pads = _padding_pairs(padding, dil_shape, window, strides, wdil)
    padded = []
    for x, v in zip(flat_ops, flat_init):
        v = v if aval_of(v).dtype == aval_of(x).dtype else E.convert_element_type(v, aval_of(x).dtype)
        padded.append(S.pad(x, v, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, bdil)]))
    pshape = _shape(padded[0])
    out_shape = tuple(max((p - ((w - 1) * d + 1)) // s + 1, 0) for p, w, d, s in zip(pshape, window, wdil, strides))
    prim = _monoid(computation, flat_init[0]) if len(flat_ops) == 1 else None

    def comb(a, b):
        if prim is not None:
            op = {R.reduce_sum: E.add, R.reduce_prod: E.mul, R.reduce_max: E.max, R.reduce_min: E.min}[prim]
            if aval_of(a[0]).dtype == np.bool_ and op in (E.max, E.min):
                op = E.bitwise_or if op is E.max else E.bitwise_and
            return [op(a[0], b[0])]
        out = computation(tree_unflatten(tree, list(a)), tree_unflatten(tree, list(b)))
        return [_arr(o) for o in tree_flatten(out)[0]]
    if prim is None:
        from ..numpy._shape import ravel, reshape
        vc = vmap(lambda a, b: comb(a, b))
        combine = lambda a, b: [reshape(o, out_shape) for o in vc([ravel(x) for x in a], [ravel(x) for x in b])]  # noqa: E731
    else:
        combine = comb
    def pieces(x):
        """The strided slice of x under each window offset, in row-major offset order."""
        for offs in np.ndindex(*window):
            start = [o * d for o, d in zip(offs, wdil)]
            stop = [st + (n - 1) * s + 1 if n else st for st, n, s in zip(start, out_shape, strides)]
            yield S.slice(x, start, stop, strides)

    if prim in (R.reduce_max, R.reduce_min) and aval_of(padded[0]).dtype.kind == "f" and np.prod(window) > 1:
        return tree_unflatten(tree, [_window_choose(padded[0], pieces, comb)])
    # A monoid starts from the first window entry; any other reducer folds from init_value.
    acc = None if prim is not None else [S.broadcast_in_dim(
        v if aval_of(v).dtype == aval_of(x).dtype else E.convert_element_type(v, aval_of(x).dtype), out_shape, ())
        for v, x in zip(flat_init, flat_ops)]
    for piece in zip(*[pieces(p) for p in padded]):
        acc = list(piece) if acc is None else combine(acc, list(piece))
    if acc is None:
        acc = [S.broadcast_in_dim(v, out_shape, ()) for v in flat_init]
    return tree_unflatten(tree, acc)


def _window_choose(x, pieces, comb):
    """A max or min over windows whose tangent is that of the first chosen entry of
    each window (row-major), as JAX's reduce_window max/min: a tie passes the whole
    tangent to one entry, not shares of it."""

    def value(x):
        acc = None
        for piece in pieces(x):
            acc = piece if acc is None else comb([acc], [piece])[0]
        return [acc]

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        out = _window_choose(x, pieces, comb)  # itself, so that its derivative follows the same rule
        if t is None:
            return [out], [None]
        tan = taken = None
        for px, pt in zip(pieces(x), pieces(t)):
            hit = E.eq(px, out)
            if taken is not None:
                hit = E.bitwise_and(hit, E.bitwise_not(taken))
            tan = pt * 0 if tan is None else tan  # (a zero of the tangent's type, to select into)
            tan = E.select_n(hit, tan, pt)
            taken = hit if taken is None else E.bitwise_or(taken, hit)
        return [out], [tan]
    return bind_custom_jvp(value, jvp, [x])[0]


# ------------------------------------------------------------- construction ----

def full(shape, fill_value, dtype=None, *, sharding=None):
    """An array of shape filled with fill_value."""
    return _full(shape, fill_value, dtype)


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    return _full_like(x, fill_value, dtype, shape)


def empty(shape, dtype):
    """An array of shape and dtype (zero-filled)."""
    return np.zeros(tuple(shape) if np.ndim(shape) else (int(shape),), dtype)


def broadcast(operand, sizes):
    """operand with new leading dimensions of the given sizes."""
    x = _arr(operand)
    nd = len(_shape(x))
    sizes = tuple(int(s) for s in sizes)
    return S.broadcast_in_dim(x, sizes + _shape(x), tuple(range(len(sizes), len(sizes) + nd)))


def broadcast_to_rank(x, rank: int):
    """x with leading dimensions of size 1 added up to rank."""
    x = _arr(x)
    nd = len(_shape(x))
    if nd >= rank:
        return x
    return broadcast(x, (1,) * (rank - nd))


def broadcasted_iota(dtype, shape, dimension: int):
    """Integers counting along dimension, broadcast to shape."""
    return S.iota(np.dtype(dtype), tuple(shape), dimension)


def broadcast_shapes(*shapes):
    """The broadcast of shapes (as tuples)."""
    return tuple(np.broadcast_shapes(*[tuple(s) for s in shapes]))


def collapse(operand, start_dimension: int, stop_dimension: int | None = None):
    """operand with dimensions [start, stop) merged into one."""
    x = _arr(operand)
    sh = _shape(x)
    nd = len(sh)
    lo = canonical_axis(start_dimension, nd, "collapse", x)
    hi = nd if stop_dimension is None else (stop_dimension + nd if stop_dimension < 0 else stop_dimension)
    if not lo <= hi <= nd:
        raise FuncadValueError(f"collapse: invalid dimensions [{start_dimension}, {stop_dimension}) for rank {nd}")
    return S.reshape(x, sh[:lo] + (int(np.prod(sh[lo:hi], dtype=np.int64)),) + sh[hi:])


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """keys sorted along dimension, with values permuted alongside."""
    k, v = _arr(keys), _arr(values)
    nd = len(_shape(k))
    return tuple(I.sort([k, v], canonical_axis(dimension, nd, "sort_key_val", k), num_keys=1))


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None):
    """Vector/matrix products (lhs's last axis against rhs's first); with
    dimension_numbers it is dot_general. `precision` as in dot_general.

    >>> import numpy as np
    >>> from funcad.lax import dot
    >>> dot(np.ones((2, 3)), np.ones(3), precision="F64_F64_F64").tolist()
    [3.0, 3.0]
    """
    x, y = _arr(lhs), _arr(rhs)
    if aval_of(x).dtype != aval_of(y).dtype:
        from ..numpy._dtypes import promote
        x, y = promote(x, y)
    if dimension_numbers is None:
        if not 1 <= len(_shape(x)) <= 2 or not 1 <= len(_shape(y)) <= 2:
            raise FuncadValueError(f"dot: expected 1-d or 2-d operands, got {aval_of(x).str_short()} and "
                                   f"{aval_of(y).str_short()}; use dot_general for higher ranks")
        dimension_numbers = (((len(_shape(x)) - 1,), (0,)), ((), ()))
    return dot_general(x, y, dimension_numbers, precision, preferred_element_type)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product over matching leading dimensions."""
    x, y = _arr(lhs), _arr(rhs)
    nd = len(_shape(x))
    if nd < 2 or len(_shape(y)) != nd or _shape(x)[:-2] != _shape(y)[:-2]:
        raise FuncadValueError(f"batch_matmul: operands need equal rank >= 2 and equal batch dims, got "
                               f"{aval_of(x).str_short()} and {aval_of(y).str_short()}")
    b = tuple(range(nd - 2))
    return dot_general(x, y, (((nd - 1,), (nd - 2,)), (b, b)), precision)


def tile(operand, reps):
    return _tile(_arr(operand), tuple(reps))


def split(operand, sizes, axis: int = 0):
    """operand cut into consecutive pieces of the given sizes along axis."""
    x = _arr(operand)
    ax = canonical_axis(axis, len(_shape(x)), "split", x)
    sizes = [int(s) for s in sizes]
    if sum(sizes) != _shape(x)[ax]:
        raise FuncadValueError(f"split: sizes {sizes} must add up to the axis size {_shape(x)[ax]}")
    out, start = [], 0
    for s in sizes:
        out.append(slice_in_dim(x, start, start + s, 1, ax))
        start += s
    return out


def stack(operands, axis: int = 0):
    return _stack([_arr(o) for o in operands], axis)


def unstack(x, axis: int = 0):
    return _unstack(x, axis=axis)


def reciprocal(x):
    x = _arr(x)
    return E.div(np.ones((), aval_of(x).dtype), x)


def log2(x, *, accuracy=None):
    x = _arr(x)
    # log(x) · (1 / ln 2), as JAX writes it: the derivative then rounds as JAX's does
    return E.mul(E.log(x, accuracy), np.array(1 / np.log(2), aval_of(x).dtype))
