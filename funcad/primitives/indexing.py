"""Indexing primitives: dynamic_slice, dynamic_update_slice, gather, scatter_add, sort.

`gather(x, idx)` takes index vectors in the last axis of `idx` that address the
leading `idx.shape[-1]` axes of `x`; that is enough for all of NumPy's
indexing once `funcad.numpy` moves the indexed axes to the front. As in XLA,
gather clamps out-of-range indices and scatter drops them.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray, aval_of
from ..core.sharding import NamedSharding, PartitionSpec
from ..core.errors import ShardingTypeError
from ..core.trace import Tracer, batch_rules, jvp_rules, lowering_rules, sharding_rules, transpose_rules, some_weak, weak_type_from_some
from ..core.typed_sharding import broadcasting_rule, same_as_operand, spec_of, varying_shape_rule
from ..lowering.stablehlo import (binary, compare, convert, i64_array, ints, reducer_region,
                                  scalar_aval, select)
from ._base import (check_eagerly, defpython, dtype_of, full, is_undefined, new_primitive, shape_of,
                    type_error, zeros_like)
from . import elementwise as E
from .sharding import on_auto_axes, typed_as
from .reductions import reduce_min
from .structural import broadcast_in_dim, concatenate, iota, moveaxis0, reshape

# ----------------------------------------------------------- dynamic_slice ----


def _clamped_starts(shape, starts, sizes):
    return tuple(int(np.clip(int(s), 0, n - k)) for s, n, k in zip(starts, shape, sizes))


def _dynamic_slice_aval(x, *idx, slice_sizes):
    if len(idx) != x.ndim or len(slice_sizes) != x.ndim or any(
            i.shape != () or i.dtype.kind not in "iu" for i in idx) or any(
            not 0 <= k <= n for k, n in zip(slice_sizes, x.shape)):
        raise type_error("dynamic_slice", f"needs one scalar integer start per dimension and "
                         f"slice_sizes {slice_sizes} within the shape", x, *idx)
    return ShapedArray(slice_sizes, x.dtype, x.weak_type)


def _dynamic_slice_impl(x, *idx, slice_sizes):
    x = np.asarray(x)
    starts = _clamped_starts(x.shape, idx, slice_sizes)
    return x[tuple(np.s_[s:s + k] for s, k in zip(starts, slice_sizes))]


dynamic_slice_p = new_primitive("dynamic_slice", _dynamic_slice_impl, _dynamic_slice_aval)
weak_type_from_some[dynamic_slice_p] = some_weak


def dynamic_slice(x, start_indices, slice_sizes):
    return dynamic_slice_p.bind(x, *start_indices, slice_sizes=tuple(map(int, slice_sizes)))


def _dynamic_slice_jvp(primals, tangents, *, slice_sizes):
    x, *idx = primals
    ans = dynamic_slice_p.bind(x, *idx, slice_sizes=slice_sizes)
    t = tangents[0]
    return ans, None if t is None else dynamic_slice_p.bind(t, *idx, slice_sizes=slice_sizes)


def _dynamic_slice_transpose(ct, x, *idx, slice_sizes):
    zeros = full(x.aval.shape, 0, x.aval.dtype)
    return [dynamic_update_slice(zeros, ct, idx)] + [None] * len(idx)


def _window_indices(starts, sizes, shape, axis_size):
    """Index vectors (n, *sizes, 1 + rank) of each lane's window, starts clamped as XLA does."""
    cols = [iota(np.int64, (axis_size,) + tuple(sizes), 0)]
    for k, (s, size, n) in enumerate(zip(starts, sizes, shape)):
        s = E.convert_element_type(s, np.int64)
        s = E.clamp(np.int64(0), s, np.int64(n - size))
        s = broadcast_in_dim(s, (axis_size,) + tuple(sizes), (0,))
        cols.append(E.add(s, iota(np.int64, (axis_size,) + tuple(sizes), k + 1)))
    whole = (axis_size,) + tuple(sizes) + (1,)
    return concatenate([reshape(c, whole) for c in cols], len(whole) - 1)


def _dynamic_slice_batch(vals, dims, *, axis_size, slice_sizes):
    x, *starts = vals
    dx, *ds = dims
    if all(d is None for d in ds):
        return dynamic_slice(x, starts[:dx] + [np.int64(0)] + starts[dx:],
                             tuple(slice_sizes[:dx]) + (axis_size,) + tuple(slice_sizes[dx:])), dx
    x = moveaxis0(x, dx, axis_size)
    starts = [moveaxis0(s, d, axis_size) for s, d in zip(starts, ds)]
    return gather(x, _window_indices(starts, slice_sizes, shape_of(x)[1:], axis_size)), 0


def _same_index_type(ctx, idx):
    dts = {i.aval.dtype for i in idx}
    if len(dts) <= 1:
        return list(idx)
    return [convert(ctx, i, np.int64) for i in idx]


_SLICE_HELPER = '''def _start(s, n, k):
    return int(np.clip(int(s), 0, n - k))
'''


def _dynamic_slice_source(eqn, a):
    shape = eqn.inputs[0].aval.shape
    parts = [f"_start({s}, {n}, {k}):_start({s}, {n}, {k}) + {k}"
             for s, n, k in zip(a[1:], shape, eqn.params["slice_sizes"])]
    return f"{a[0]}[{', '.join(parts)}]"


jvp_rules[dynamic_slice_p] = _dynamic_slice_jvp
transpose_rules[dynamic_slice_p] = _dynamic_slice_transpose
batch_rules[dynamic_slice_p] = _dynamic_slice_batch
lowering_rules[dynamic_slice_p] = lambda ctx, x, *idx, slice_sizes: ctx.op1(
    "stablehlo.dynamic_slice", [x, *_same_index_type(ctx, idx)], ctx.out_aval,
    f"slice_sizes = {i64_array(slice_sizes)}")
defpython(dynamic_slice_p, _dynamic_slice_source, _SLICE_HELPER)

# ---------------------------------------------------- dynamic_update_slice ----


def _dus_aval(x, u, *idx):
    if (u.dtype != x.dtype or u.ndim != x.ndim or len(idx) != x.ndim
            or any(a > b for a, b in zip(u.shape, x.shape))
            or any(i.shape != () or i.dtype.kind not in "iu" for i in idx)):
        raise type_error("dynamic_update_slice", "the update must fit inside the operand, with one "
                         "scalar integer start per dimension", x, u, *idx)
    return ShapedArray(x.shape, x.dtype, all(a.weak_type for a in (x, u, *idx)))


def _dus_impl(x, u, *idx):
    out = np.array(x, copy=True)
    u = np.asarray(u)
    starts = _clamped_starts(out.shape, idx, u.shape)
    out[tuple(np.s_[s:s + k] for s, k in zip(starts, u.shape))] = u
    return out


dynamic_update_slice_p = new_primitive("dynamic_update_slice", _dus_impl, _dus_aval)


def dynamic_update_slice(x, update, start_indices):
    return dynamic_update_slice_p.bind(x, update, *start_indices)


def _dus_jvp(primals, tangents):
    x, u, *idx = primals
    tx, tu = tangents[:2]
    ans = dynamic_update_slice_p.bind(x, u, *idx)
    if tx is None and tu is None:
        return ans, None
    tx = zeros_like(x) if tx is None else tx
    tu = zeros_like(u) if tu is None else tu
    return ans, dynamic_update_slice_p.bind(tx, tu, *idx)


def _dus_transpose(ct, x, u, *idx):
    u_shape = shape_of(u)
    cx = dynamic_update_slice(ct, full(u_shape, 0, dtype_of(ct)), idx) if is_undefined(x) else None
    cu = dynamic_slice(ct, idx, u_shape) if is_undefined(u) else None
    return [cx, cu] + [None] * len(idx)


def _dus_batch(vals, dims, *, axis_size):
    x, u, *starts = vals
    dx, du, *ds = dims
    x, u = moveaxis0(x, dx, axis_size), moveaxis0(u, du, axis_size)
    if all(d is None for d in ds):
        return dynamic_update_slice(x, u, [np.int64(0)] + list(starts)), 0
    starts = [moveaxis0(s, d, axis_size) for s, d in zip(starts, ds)]
    idx = _window_indices(starts, shape_of(u)[1:], shape_of(x)[1:], axis_size)
    hit = scatter_add(np.zeros(shape_of(x), np.int32), idx, np.ones(shape_of(u), np.int32))
    placed = scatter_add(broadcast_in_dim(np.zeros((), dtype_of(x)), shape_of(x), ()), idx, u)
    return E.select_n(E.gt(hit, np.int32(0)), x, placed), 0


_UPDATE_SLICE_HELPER = '''def _update_slice(x, u, starts):
    out = np.array(x, copy=True)
    out[tuple(slice(int(np.clip(int(s), 0, n - k)), int(np.clip(int(s), 0, n - k)) + k)
              for s, n, k in zip(starts, out.shape, np.shape(u)))] = u
    return out
'''

jvp_rules[dynamic_update_slice_p] = _dus_jvp
transpose_rules[dynamic_update_slice_p] = _dus_transpose
batch_rules[dynamic_update_slice_p] = _dus_batch
lowering_rules[dynamic_update_slice_p] = lambda ctx, x, u, *idx: ctx.op1(
    "stablehlo.dynamic_update_slice", [x, u, *_same_index_type(ctx, idx)], ctx.out_aval)
defpython(dynamic_update_slice_p, lambda eqn, a: f"_update_slice({a[0]}, {a[1]}, ({', '.join(a[2:])},))",
          _UPDATE_SLICE_HELPER)

# ------------------------------------------------------ gather, scatter_add ----


def _gather_aval(x, idx):
    k = idx.shape[-1] if idx.ndim else -1
    if idx.dtype.kind not in "iu" or idx.ndim < 1 or k > x.ndim:
        raise type_error("gather", "indices must be an integer array whose last axis "
                         "(of length at most the operand's rank) holds index vectors", x, idx)
    return ShapedArray(idx.shape[:-1] + x.shape[k:], x.dtype, x.weak_type)


def _index_tuple(x, idx, clip):
    idx = np.asarray(idx)
    k = idx.shape[-1]
    cols = [idx[..., j] for j in range(k)]
    if clip:
        cols = [np.clip(c, 0, n - 1) for c, n in zip(cols, np.shape(x))]
    return tuple(cols)


def _gather_impl(x, idx):
    x = np.asarray(x)
    return x[_index_tuple(x, idx, True)]


gather_p = new_primitive("gather", _gather_impl, _gather_aval)
weak_type_from_some[gather_p] = some_weak


def gather(x, indices):
    """x[indices[..., 0], ..., indices[..., k-1]] with out-of-range indices clamped."""
    return gather_p.bind(x, indices)


def _scatter_aval(x, idx, u):
    g = _gather_aval(x, idx)
    if u.shape != g.shape or u.dtype != x.dtype:
        raise type_error("scatter_add", f"updates must have shape {g.shape} and the operand's dtype", x, idx, u)
    return ShapedArray(x.shape, x.dtype, x.weak_type)


def _scatter_add_impl(x, idx, u):
    out = np.array(x, copy=True)
    idx, u = np.asarray(idx), np.asarray(u)
    k = idx.shape[-1]
    inside = np.all((idx >= 0) & (idx < np.array(out.shape[:k], dtype=idx.dtype)), axis=-1)
    np.add.at(out, tuple(idx[..., j][inside] for j in range(k)), u[inside])
    return out


scatter_add_p = new_primitive("scatter_add", _scatter_add_impl, _scatter_aval)
weak_type_from_some[scatter_add_p] = some_weak


def scatter_add(x, indices, updates):
    """x with updates added at index vectors `indices`; out-of-range ones are dropped."""
    return scatter_add_p.bind(x, indices, updates)


def _gather_jvp(primals, tangents):
    x, idx = primals
    t = tangents[0]
    return gather(x, idx), None if t is None else gather(t, idx)


def _all_in_range(idx, shape) -> bool:
    """Whether concrete index vectors all address `shape` (then no clamping or masking is needed)."""
    if isinstance(idx, Tracer):
        return False
    idx = np.asarray(idx)
    return bool(np.all((idx >= 0) & (idx < np.array(shape[:idx.shape[-1]], idx.dtype))))


def _gather_transpose(ct, x, idx):
    # gather reads clamped positions, so its cotangent goes to the clamped positions.
    shape = x.aval.shape
    if not _all_in_range(idx, shape):
        dt = dtype_of(idx)
        hi = np.array([n - 1 for n in shape[:shape_of(idx)[-1]]], dt)
        idx = E.max(E.min(idx, broadcast_in_dim(hi, shape_of(idx), (len(shape_of(idx)) - 1,))),
                    full(shape_of(idx), 0, dt))
    return [scatter_add(full(shape, 0, x.aval.dtype), idx, ct), None]


def _scatter_add_jvp(primals, tangents):
    x, idx, u = primals
    tx, _, tu = tangents
    ans = scatter_add(x, idx, u)
    if tx is None and tu is None:
        return ans, None
    return ans, scatter_add(zeros_like(x) if tx is None else tx, idx, zeros_like(u) if tu is None else tu)


def _scatter_add_transpose(ct, x, idx, u):
    cu = None
    if is_undefined(u):
        shape = shape_of(ct)
        cu = gather(ct, idx)
        if not _all_in_range(idx, shape):
            # Updates at out-of-range indices were dropped: their cotangent is zero.
            dt, nd = dtype_of(idx), len(shape_of(idx))
            hi = broadcast_in_dim(np.array(shape[:shape_of(idx)[-1]], dt), shape_of(idx), (nd - 1,))
            ok = reduce_min(E.bitwise_and(E.ge(idx, full(shape_of(idx), 0, dt)), E.lt(idx, hi)), (nd - 1,))
            ok = broadcast_in_dim(ok, shape_of(cu), tuple(range(nd - 1)))
            cu = E.select_n(ok, zeros_like(cu), cu)
    return [ct if is_undefined(x) else None, None, cu]


def _with_lane_index(idx, axis_size):
    """Prepend each index vector with its lane number: (n, ..., k) -> (n, ..., k+1)."""
    s = shape_of(idx)
    lane = iota(dtype_of(idx), s[:-1] + (1,), 0)
    return concatenate([lane, idx], len(s) - 1)


def _gather_batch(vals, dims, *, axis_size):
    x, idx = vals
    dx, di = dims
    idx = moveaxis0(idx, di, axis_size)
    if dx is None:
        return gather(x, idx), 0
    return gather(moveaxis0(x, dx, axis_size), _with_lane_index(idx, axis_size)), 0


def _scatter_add_batch(vals, dims, *, axis_size):
    x, idx, u = [moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    return scatter_add(x, _with_lane_index(idx, axis_size), u), 0


def _gather_lowering(ctx, x, idx):
    if 0 in ctx.out_aval.shape:  # empty (XLA refuses a slice of size 1 from an empty axis)
        return ctx.full(0, ctx.out_aval.dtype, ctx.out_aval.shape)
    k = idx.aval.shape[-1]
    nb = len(idx.aval.shape) - 1
    offset = list(range(nb, nb + len(x.aval.shape) - k))
    dn = (f"#stablehlo.gather<offset_dims = {ints(offset)}, collapsed_slice_dims = {ints(range(k))}, "
          f"start_index_map = {ints(range(k))}, index_vector_dim = {nb}>")
    sizes = [1] * k + list(x.aval.shape[k:])
    return ctx.op1("stablehlo.gather", [x, idx], ctx.out_aval,
                   f"dimension_numbers = {dn}, indices_are_sorted = false, slice_sizes = {i64_array(sizes)}")


def _scatter_add_lowering(ctx, x, idx, u):
    if 0 in x.aval.shape or 0 in u.aval.shape:  # nothing to add
        return x
    k = idx.aval.shape[-1]
    nb = len(idx.aval.shape) - 1
    window = list(range(nb, nb + len(x.aval.shape) - k))
    dn = (f"#stablehlo.scatter<update_window_dims = {ints(window)}, "
          f"inserted_window_dims = {ints(range(k))}, "
          f"scatter_dims_to_operand_dims = {ints(range(k))}, index_vector_dim = {nb}>")
    return ctx.op1("stablehlo.scatter", [x, idx, u], ctx.out_aval,
                   f"indices_are_sorted = false, scatter_dimension_numbers = {dn}, unique_indices = false",
                   [reducer_region(ctx, "add", x.aval)])


_GATHER_HELPER = '''def _gather(x, idx):
    x, idx = np.asarray(x), np.asarray(idx)
    return x[tuple(np.clip(idx[..., j], 0, x.shape[j] - 1) for j in range(idx.shape[-1]))]
'''
_SCATTER_ADD_HELPER = '''def _scatter_add(x, idx, u):
    out, idx, u = np.array(x, copy=True), np.asarray(idx), np.asarray(u)
    k = idx.shape[-1]
    inside = np.all((idx >= 0) & (idx < np.array(out.shape[:k])), axis=-1)
    np.add.at(out, tuple(idx[..., j][inside] for j in range(k)), u[inside])
    return out
'''

jvp_rules[gather_p] = _gather_jvp
transpose_rules[gather_p] = _gather_transpose
batch_rules[gather_p] = _gather_batch
lowering_rules[gather_p] = _gather_lowering
defpython(gather_p, "_gather({0}, {1})", _GATHER_HELPER)
jvp_rules[scatter_add_p] = _scatter_add_jvp
transpose_rules[scatter_add_p] = _scatter_add_transpose
batch_rules[scatter_add_p] = _scatter_add_batch
lowering_rules[scatter_add_p] = _scatter_add_lowering
defpython(scatter_add_p, "_scatter_add({0}, {1}, {2})", _SCATTER_ADD_HELPER)

# ------------------------------------------------------------------- sort ----


def _sort_aval(*xs, dimension, num_keys):
    if any(x.shape != xs[0].shape for x in xs) or not 0 <= dimension < xs[0].ndim or not 1 <= num_keys <= len(xs):
        raise type_error("sort", f"operands must share one shape; dimension={dimension}, num_keys={num_keys}", *xs)
    return list(xs)


def _sort_impl(*xs, dimension, num_keys):
    xs = [np.asarray(x) for x in xs]
    perm = None
    keys = []
    for key in xs[:num_keys]:  # complex keys sort as (real, imag), NaNs last in each, as XLA does
        keys += [key.real, key.imag] if key.dtype.kind == "c" else [key]
    for key in reversed(keys):  # least significant key first, each sort stable
        k = key if perm is None else np.take_along_axis(key, perm, dimension)
        p = np.argsort(k, axis=dimension, kind="stable")
        perm = p if perm is None else np.take_along_axis(perm, p, dimension)
    return [np.take_along_axis(x, perm, dimension) for x in xs]


sort_p = new_primitive("sort", _sort_impl, _sort_aval, multiple_results=True)


def sort(operands, dimension=-1, num_keys=1):
    """Sort operands along `dimension` by the first `num_keys` of them (stable)."""
    operands = list(operands)
    nd = len(shape_of(operands[0]))
    return sort_p.bind(*operands, dimension=int(dimension) % nd, num_keys=int(num_keys))


def take_along_axis(x, perm, axis):
    """x permuted along `axis` by the integer array `perm` of x's shape. On Explicit
    axes the result is typed as JAX's take_along_axis (its gather's batch dimensions)."""
    typed = take_along_sharding(x, perm, axis)
    if typed is not None:  # the gather runs on Auto axes, its result typed so
        return typed_as(take_along_axis(on_auto_axes(x), on_auto_axes(perm), axis), typed)
    shape = shape_of(x)
    cols = [perm if d == axis else iota(dtype_of(perm), shape, d) for d in range(len(shape))]
    idx = concatenate([reshape(c, tuple(shape) + (1,)) for c in cols], len(shape))
    return gather(x, idx)


def take_along_sharding(x, perm, axis):
    """The type's sharding of take_along_axis(x, perm, axis) (None: untyped), by JAX's
    rule: the other dimensions split as x or perm are (alike where both are), `axis`
    split in neither."""
    xa, pa = aval_of(x), aval_of(perm)
    if xa._sharding is None and pa._sharding is None:
        return None
    sx, sp = spec_of(xa), spec_of(pa)
    agree = all(a is None or b is None or a == b for a, b in zip(sx, sp))
    if sx[axis] is not None or sp[axis] is not None or not agree:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={xa!r}, indices={pa!r}")
    mesh = (xa._sharding or pa._sharding).mesh
    return NamedSharding(mesh, PartitionSpec(*[a if a is not None else b for a, b in zip(sx, sp)]))


def _sort_jvp(primals, tangents, *, dimension, num_keys):
    shape = shape_of(primals[0])
    outs = sort_p.bind(*primals, iota(np.int64, shape, dimension), dimension=dimension, num_keys=num_keys)
    *sorted_xs, perm = outs
    t_out = [None if t is None else take_along_axis(t, perm, dimension) for t in tangents]
    return sorted_xs, t_out


def _sort_batch(vals, dims, *, axis_size, dimension, num_keys):
    xs = [moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)]
    return sort_p.bind(*xs, dimension=dimension + 1, num_keys=num_keys), [0] * len(xs)


def _sort_key(c, a):
    """Make float keys sort like NumPy under a total order: -0.0 equals 0.0, NaNs last."""
    if a.aval.dtype.kind != "f":
        return a
    zero = c.constant(0, a.aval.dtype)
    a = select(c, compare(c, a, zero, "EQ"), zero, a)
    return select(c, compare(c, a, a, "NE"), c.constant(np.nan, a.aval.dtype), a)


def _sort_lowering(ctx, *xs, dimension, num_keys):
    scalars = []
    for x in xs:
        scalars += [scalar_aval(x.aval), scalar_aval(x.aval)]

    def parts(c, x):
        """A complex key compares as (real, imag), the order NumPy sorts complex numbers in."""
        if x.aval.dtype.kind != "c":
            return [x]
        part = ShapedArray((), np.finfo(x.aval.dtype).dtype)
        return [c.op1("stablehlo.real", [x], part), c.op1("stablehlo.imag", [x], part)]

    def body(c, *args):
        # Lexicographic less-than over the keys: lt0 or (eq0 and (lt1 or ...)).
        pairs = []
        for k in range(num_keys):
            pairs += zip(parts(c, args[2 * k]), parts(c, args[2 * k + 1]))
        result = None
        for a, b in reversed(pairs):
            a, b = _sort_key(c, a), _sort_key(c, b)
            ctype = "TOTALORDER" if a.aval.dtype.kind == "f" else None
            lt = compare(c, a, b, "LT", ctype)
            if result is not None:
                eq = compare(c, a, b, "EQ", ctype)
                lt = binary(c, "stablehlo.or", lt, binary(c, "stablehlo.and", eq, result))
            result = lt
        return [result]

    region = ctx.region(scalars, body)
    return ctx.op("stablehlo.sort", xs, [x.aval for x in xs],
                  f"dimension = {dimension} : i64, is_stable = true", [region])


_SORT_HELPER = '''def _sort(xs, axis, num_keys):
    xs = [np.asarray(x) for x in xs]
    perm = None
    keys = []
    for key in xs[:num_keys]:
        keys += [key.real, key.imag] if key.dtype.kind == "c" else [key]
    for key in reversed(keys):
        k = key if perm is None else np.take_along_axis(key, perm, axis)
        p = np.argsort(k, axis=axis, kind="stable")
        perm = p if perm is None else np.take_along_axis(perm, p, axis)
    return [np.take_along_axis(x, perm, axis) for x in xs]
'''

jvp_rules[sort_p] = _sort_jvp
batch_rules[sort_p] = _sort_batch
lowering_rules[sort_p] = _sort_lowering
defpython(sort_p, lambda eqn, a: f"_sort([{', '.join(a)}], {eqn.params['dimension']}, {eqn.params['num_keys']})",
          _SORT_HELPER)

# NumPy would clamp or broadcast some bad index calls: check them eagerly too.
check_eagerly(dynamic_slice_p, dynamic_update_slice_p, gather_p, scatter_add_p, sort_p)


# ----------------------------------------------------------- sharding rules ----
# How each result's sharding in its type follows from the operands' (Explicit mesh
# axes; core/typed_sharding.py).

def _gather_sharding(x, idx):
    k = idx.shape[-1]
    sx, si = spec_of(x), spec_of(idx)
    if any(p is not None for p in sx[:k]) or si[-1] is not None:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the gather "
            "indexing as out sharding could not be resolved unambiguously (or would require "
            f"collectives on inputs). Got operand={x!r}, indices={idx!r}")
    return si[:-1] + sx[k:]


def _sort_sharding(*xs, dimension, num_keys):
    for x in xs:
        if spec_of(x)[dimension] is not None:
            raise ShardingTypeError(
                f"Arguments to sort must be unsharded over the sorting dimension. Got arg "
                f"sharding={x.sharding} and sorting dimension={dimension}")
    return [broadcasting_rule("sort")(*xs)] * len(xs)


sharding_rules[dynamic_slice_p] = varying_shape_rule(
    "dynamic_slice", lambda x, *idx, slice_sizes: slice_sizes)
sharding_rules[dynamic_update_slice_p] = same_as_operand
sharding_rules[gather_p] = _gather_sharding
sharding_rules[scatter_add_p] = same_as_operand
sharding_rules[sort_p] = _sort_sharding
