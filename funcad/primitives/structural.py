"""Shape primitives: broadcast, reshape, transpose, squeeze, rev, slice, pad,
concatenate, iota. All are linear; their transposes are shape ops too."""
from __future__ import annotations

import builtins

import numpy as np

from ..core.avals import ShapedArray, aval_of
from ..core.errors import FuncadValueError, ShardingTypeError
from ..core.typed_sharding import concrete
from ..core.trace import batch_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import explicit_out_sharding, reshape_rule, same_as_operand, spec_of, varying_shape_rule
from ..lowering.python_source import np_dtype
from ..lowering.stablehlo import i64_array
from ._base import (canonical_axis, check_eagerly, deflinear, defpython, defzero, dtype_of, full,
                    is_undefined, new_primitive, shape_of, type_error)


def _shift(axes, d):
    """Map axes of the unbatched value to axes of the value batched at d."""
    return tuple(a + (a >= d) for a in axes)

# ------------------------------------------------------- broadcast_in_dim ----


def _broadcast_in_dim_aval(x, *, shape, broadcast_dimensions):
    ok = (len(broadcast_dimensions) == x.ndim
          and all(0 <= d < len(shape) for d in broadcast_dimensions)
          and list(broadcast_dimensions) == sorted(set(broadcast_dimensions))
          and all(x.shape[i] in (1, shape[d]) for i, d in enumerate(broadcast_dimensions)))
    if not ok:
        raise type_error("broadcast_in_dim", f"cannot broadcast to shape {shape} with "
                         f"broadcast_dimensions={broadcast_dimensions}", x)
    return ShapedArray(shape, x.dtype, x.weak_type)


def _broadcast_in_dim_impl(x, *, shape, broadcast_dimensions):
    x = np.asarray(x)
    expanded = [1] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        expanded[d] = x.shape[i]
    return np.broadcast_to(x.reshape(expanded), shape)


broadcast_in_dim_p = new_primitive("broadcast_in_dim", _broadcast_in_dim_impl, _broadcast_in_dim_aval)


def broadcast_in_dim(x, shape, broadcast_dimensions):
    return broadcast_in_dim_p.bind(x, shape=tuple(int(s) for s in shape),
                                   broadcast_dimensions=tuple(int(d) for d in broadcast_dimensions))


def _broadcast_in_dim_transpose(ct, x, *, shape, broadcast_dimensions):
    from .reductions import reduce_sum  # rules are mutually recursive: see test_layers
    in_shape = x.aval.shape
    unit = tuple(d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1)
    new = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    summed = reduce_sum(ct, tuple(sorted(unit + new))) if unit or new else ct
    return [reshape(summed, in_shape) if unit else summed]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)


def _broadcast_in_dim_batch(vals, dims, *, axis_size, shape, broadcast_dimensions):
    x = moveaxis0(vals[0], dims[0], axis_size)
    return broadcast_in_dim(x, (axis_size,) + tuple(shape),
                            (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


def _broadcast_in_dim_source(eqn, a):
    shape, dims = eqn.params["shape"], eqn.params["broadcast_dimensions"]
    in_shape = eqn.inputs[0].aval.shape
    expanded = [1] * len(shape)
    for i, d in enumerate(dims):
        expanded[d] = in_shape[i]
    src = a[0] if list(expanded) == list(in_shape) else f"np.reshape({a[0]}, {tuple(expanded)})"
    return f"np.broadcast_to({src}, {tuple(shape)})"


batch_rules[broadcast_in_dim_p] = _broadcast_in_dim_batch
lowering_rules[broadcast_in_dim_p] = lambda ctx, x, *, shape, broadcast_dimensions: ctx.op1(
    "stablehlo.broadcast_in_dim", [x], ctx.out_aval,
    f"broadcast_dimensions = {i64_array(broadcast_dimensions)}")
defpython(broadcast_in_dim_p, _broadcast_in_dim_source)

# ---------------------------------------------------------------- reshape ----


def _reshape_aval(x, *, new_sizes, out_sharding=None):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise type_error("reshape", f"cannot reshape {x.size} elements to shape {new_sizes}", x)
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = new_primitive("reshape", lambda x, *, new_sizes, out_sharding=None: np.reshape(x, new_sizes),
                          _reshape_aval)


def reshape(x, new_sizes, out_sharding=None):
    """`out_sharding`: the result's sharding where the operand's type has one the
    reshape cannot carry over (a param only when given)."""
    new_sizes = tuple(int(s) for s in new_sizes)
    typed = explicit_out_sharding(out_sharding, "reshape")
    if typed is None:
        out = reshape_p.bind(x, new_sizes=new_sizes)
        if out_sharding is None:
            return out
        from .sharding import out_sharded  # rules are mutually recursive: see test_layers
        return out_sharded(out, out_sharding)
    return reshape_p.bind(x, new_sizes=new_sizes, out_sharding=typed)


def _reshape_transpose(ct, x, *, new_sizes, out_sharding=None):
    # the cotangent is typed as its primal is
    return [reshape(ct, x.aval.shape, None if x.aval._sharding is None or aval_of(ct)._sharding is None
                    else _on_concrete_mesh(x.aval._sharding))]


def _on_concrete_mesh(type_sharding):
    return concrete(type_sharding)


deflinear(reshape_p, _reshape_transpose)


def _reshape_batch(vals, dims, *, axis_size, new_sizes, out_sharding=None):
    x = moveaxis0(vals[0], dims[0], axis_size)
    if out_sharding is not None:  # the batch dimension, not split
        out_sharding = type(out_sharding)(out_sharding.mesh, type(out_sharding.spec)(None, *out_sharding.spec))
    return reshape(x, (axis_size,) + tuple(new_sizes), out_sharding), 0


batch_rules[reshape_p] = _reshape_batch
lowering_rules[reshape_p] = lambda ctx, x, *, new_sizes, out_sharding=None: ctx.op1(
    "stablehlo.reshape", [x], ctx.out_aval)
defpython(reshape_p, "np.reshape({0}, {new_sizes})")

# -------------------------------------------------------------- transpose ----


def _transpose_aval(x, *, permutation):
    if sorted(permutation) != list(range(x.ndim)):
        raise type_error("transpose", f"permutation {permutation} does not fit the rank", x)
    return ShapedArray(tuple(x.shape[p] for p in permutation), x.dtype, x.weak_type)


transpose_p = new_primitive("transpose", lambda x, *, permutation: np.transpose(x, permutation),
                            _transpose_aval)


def transpose(x, permutation):
    return transpose_p.bind(x, permutation=tuple(int(p) for p in permutation))


deflinear(transpose_p, lambda ct, x, *, permutation: [transpose(ct, tuple(np.argsort(permutation)))])


def _transpose_batch(vals, dims, *, axis_size, permutation):
    x = moveaxis0(vals[0], dims[0], axis_size)
    return transpose(x, (0,) + tuple(p + 1 for p in permutation)), 0


batch_rules[transpose_p] = _transpose_batch
lowering_rules[transpose_p] = lambda ctx, x, *, permutation: ctx.op1(
    "stablehlo.transpose", [x], ctx.out_aval, f"permutation = {i64_array(permutation)}")
defpython(transpose_p, "np.transpose({0}, {permutation})")


def moveaxis0(x, bdim, axis_size):
    """Put the batch axis `bdim` first; an unbatched value (bdim None) is broadcast to the batch."""
    if bdim is None:
        shape = aval_of(x).shape
        return broadcast_in_dim(x, (axis_size,) + tuple(shape), tuple(range(1, len(shape) + 1)))
    if bdim == 0:
        return x
    nd = aval_of(x).ndim
    return transpose(x, [bdim] + [i for i in range(nd) if i != bdim])


def moveaxis(x, src, dst):
    """x with axis `src` moved to position `dst`."""
    if src == dst:
        return x
    nd = aval_of(x).ndim
    perm = [i for i in range(nd) if i != src]
    perm.insert(dst, src)
    return transpose(x, perm)

# ---------------------------------------------------------------- squeeze ----


def _squeeze_aval(x, *, dimensions):
    if any(not 0 <= d < x.ndim or x.shape[d] != 1 for d in dimensions):
        raise type_error("squeeze", f"cannot squeeze dimensions {dimensions}: they must have size 1", x)
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype, x.weak_type)


squeeze_p = new_primitive("squeeze", lambda x, *, dimensions: np.squeeze(x, dimensions), _squeeze_aval)


def squeeze(x, dimensions):
    return squeeze_p.bind(x, dimensions=tuple(int(d) for d in dimensions))


deflinear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])


def _squeeze_batch(vals, dims, *, axis_size, dimensions):
    x = moveaxis0(vals[0], dims[0], axis_size)
    return squeeze(x, tuple(d + 1 for d in dimensions)), 0


batch_rules[squeeze_p] = _squeeze_batch
lowering_rules[squeeze_p] = lambda ctx, x, *, dimensions: ctx.op1("stablehlo.reshape", [x], ctx.out_aval)
defpython(squeeze_p, "np.squeeze({0}, {dimensions})")


def expand_dims(x, dimensions):
    shape = list(shape_of(x))
    out_nd = len(shape) + len(dimensions)
    dimensions = [canonical_axis(d, out_nd, "expand_dims") for d in dimensions]
    for d in sorted(dimensions):
        shape.insert(d, 1)
    return reshape(x, shape)

# -------------------------------------------------------------------- rev ----


def _rev_aval(x, *, dimensions):
    if any(not 0 <= d < x.ndim for d in dimensions):
        raise type_error("rev", f"dimensions {dimensions} out of range", x)
    return x


rev_p = new_primitive("rev", lambda x, *, dimensions: np.flip(x, dimensions) if dimensions else x, _rev_aval)


def rev(x, dimensions):
    return rev_p.bind(x, dimensions=tuple(int(d) for d in dimensions))


deflinear(rev_p, lambda ct, x, *, dimensions: [rev(ct, dimensions)])


def _rev_batch(vals, dims, *, axis_size, dimensions):
    (x,), (d,) = vals, dims
    return rev(x, _shift(dimensions, d)), d


batch_rules[rev_p] = _rev_batch
lowering_rules[rev_p] = lambda ctx, x, *, dimensions: ctx.op1(
    "stablehlo.reverse", [x], ctx.out_aval, f"dimensions = {i64_array(dimensions)}")
defpython(rev_p, "np.flip({0}, {dimensions})")

# ------------------------------------------------------------------ slice ----


def _slice_aval(x, *, start_indices, limit_indices, strides):
    if not (len(start_indices) == len(limit_indices) == len(strides) == x.ndim) or any(
            not 0 <= s <= l <= n or st < 1 for s, l, n, st in zip(start_indices, limit_indices, x.shape, strides)):
        raise type_error("slice", f"start {start_indices}, limit {limit_indices}, strides {strides} "
                         "do not fit the operand", x)
    shape = tuple((l - s + st - 1) // st for s, l, st in zip(start_indices, limit_indices, strides))
    return ShapedArray(shape, x.dtype, x.weak_type)


def _slice_impl(x, *, start_indices, limit_indices, strides):
    return np.asarray(x)[tuple(builtins.slice(s, l, st) for s, l, st in zip(start_indices, limit_indices, strides))]


slice_p = new_primitive("slice", _slice_impl, _slice_aval)


def slice(x, start_indices, limit_indices, strides=None):
    strides = (1,) * len(start_indices) if strides is None else strides
    return slice_p.bind(x, start_indices=tuple(map(int, start_indices)),
                        limit_indices=tuple(map(int, limit_indices)), strides=tuple(map(int, strides)))


def _slice_transpose(ct, x, *, start_indices, limit_indices, strides):
    shape = x.aval.shape
    cfg = []
    for s, l, st, n, m in zip(start_indices, limit_indices, strides, shape, shape_of(ct)):
        real_end = s + (m - 1) * st + 1 if m else s
        cfg.append((s, n - real_end, st - 1) if m else (0, n, 0))
    zero = np.array(0, ct.dtype if hasattr(ct, "dtype") else dtype_of(ct))
    if any(m == 0 for m in shape_of(ct)):
        return [full(shape, 0, zero.dtype)]
    return [pad(ct, zero, tuple(cfg))]


deflinear(slice_p, _slice_transpose)


def _slice_batch(vals, dims, *, axis_size, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    ins = lambda t, v: t[:d] + (v,) + t[d:]  # noqa: E731
    return slice(x, ins(start_indices, 0), ins(limit_indices, axis_size), ins(strides, 1)), d


def _slice_source(eqn, a):
    p = eqn.params
    parts = [f"{s}:{l}" + (f":{st}" if st != 1 else "")
             for s, l, st in zip(p["start_indices"], p["limit_indices"], p["strides"])]
    return f"{a[0]}[{', '.join(parts)}]"


batch_rules[slice_p] = _slice_batch
lowering_rules[slice_p] = lambda ctx, x, *, start_indices, limit_indices, strides: ctx.op1(
    "stablehlo.slice", [x], ctx.out_aval,
    f"start_indices = {i64_array(start_indices)}, limit_indices = {i64_array(limit_indices)}, "
    f"strides = {i64_array(strides)}")
defpython(slice_p, _slice_source)

# -------------------------------------------------------------------- pad ----


def _pad_shape(shape, config):
    out = []
    for n, (lo, hi, interior) in zip(shape, config):
        out.append(lo + hi + n + max(n - 1, 0) * interior)
    return tuple(out)


def _pad_aval(x, v, *, padding_config):
    if v.shape != () or v.dtype != x.dtype or len(padding_config) != x.ndim:
        raise type_error("pad", "needs a scalar padding value of the operand's dtype and one "
                         "(low, high, interior) triple per dimension", x, v)
    shape = _pad_shape(x.shape, padding_config)
    if any(s < 0 for s in shape) or any(i < 0 for _, _, i in padding_config):
        raise type_error("pad", f"padding {padding_config} gives a negative size", x)
    return ShapedArray(shape, x.dtype, x.weak_type and v.weak_type)


def _pad_impl(x, v, *, padding_config):
    x = np.asarray(x)
    shape = _pad_shape(x.shape, padding_config)
    # Pad with the non-negative parts, then cut negative low/high padding away.
    big = tuple(max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * i
                for n, (lo, hi, i) in zip(x.shape, padding_config))
    out = np.full(big, v, dtype=x.dtype)
    out[tuple(np.s_[max(lo, 0):max(lo, 0) + (n - 1) * (i + 1) + 1:i + 1] if n else np.s_[0:0]
              for n, (lo, hi, i) in zip(x.shape, padding_config))] = x
    cut = tuple(np.s_[-min(lo, 0):-min(lo, 0) + s] for s, (lo, hi, i) in zip(shape, padding_config))
    return out[cut]


pad_p = new_primitive("pad", _pad_impl, _pad_aval)


def pad(x, padding_value, padding_config):
    return pad_p.bind(x, padding_value,
                      padding_config=tuple((int(a), int(b), int(c)) for a, b, c in padding_config))


def _pad_transpose(ct, x, v, *, padding_config):
    from .reductions import reduce_sum  # rules are mutually recursive: see test_layers
    from .elementwise import sub  # rules are mutually recursive: see test_layers
    out = [None, None]
    # Undo the negative low/high padding first, then take the strided interior.
    unpad_cfg = tuple((-lo, -hi, 0) for lo, hi, _ in padding_config)
    zero = np.array(0, dtype_of(ct))
    t = pad(ct, zero, unpad_cfg)
    t = slice(t, (0,) * len(padding_config), shape_of(t), tuple(i + 1 for _, _, i in padding_config))
    if is_undefined(x):
        out[0] = t
    if is_undefined(v):
        all_axes = tuple(range(len(shape_of(ct))))
        out[1] = sub(reduce_sum(ct, all_axes), reduce_sum(t, all_axes))
    return out


deflinear(pad_p, _pad_transpose)


def _pad_batch(vals, dims, *, axis_size, padding_config):
    from .elementwise import select_n  # rules are mutually recursive: see test_layers
    x, v = vals
    dx, dv = dims
    x = moveaxis0(x, dx, axis_size)
    cfg = ((0, 0, 0),) + tuple(padding_config)
    if dv is None:
        return pad(x, v, cfg), 0
    # A batched padding value: pad with zeros, then fill the padding per lane.
    padded = pad(x, np.zeros((), dtype_of(x)), cfg)
    inside = pad(np.ones(shape_of(x)[1:], bool), np.array(False), padding_config)
    fill = broadcast_in_dim(moveaxis0(v, dv, axis_size), shape_of(padded), (0,))
    return select_n(inside, fill, padded), 0


_PAD_HELPER = '''def _pad(x, v, config):
    x = np.asarray(x)
    shape = [lo + hi + n + max(n - 1, 0) * i for n, (lo, hi, i) in zip(x.shape, config)]
    big = [max(lo, 0) + max(hi, 0) + n + max(n - 1, 0) * i for n, (lo, hi, i) in zip(x.shape, config)]
    out = np.full(big, v, x.dtype)
    out[tuple(slice(max(lo, 0), max(lo, 0) + (n - 1) * (i + 1) + 1, i + 1)
              for n, (lo, hi, i) in zip(x.shape, config))] = x
    return out[tuple(slice(-min(lo, 0), -min(lo, 0) + s) for s, (lo, hi, i) in zip(shape, config))]
'''

batch_rules[pad_p] = _pad_batch
lowering_rules[pad_p] = lambda ctx, x, v, *, padding_config: ctx.op1(
    "stablehlo.pad", [x, v], ctx.out_aval,
    f"edge_padding_low = {i64_array(c[0] for c in padding_config)}, "
    f"edge_padding_high = {i64_array(c[1] for c in padding_config)}, "
    f"interior_padding = {i64_array(c[2] for c in padding_config)}")
defpython(pad_p, "_pad({0}, {1}, {padding_config})", _PAD_HELPER)

# ------------------------------------------------------------ concatenate ----


def _concatenate_aval(*xs, dimension):
    x0 = xs[0]
    if not 0 <= dimension < x0.ndim or any(
            x.ndim != x0.ndim or x.dtype != x0.dtype or
            any(a != b for i, (a, b) in enumerate(zip(x.shape, x0.shape)) if i != dimension) for x in xs):
        raise type_error("concatenate", f"operands must agree in dtype and in every dimension but {dimension}", *xs)
    shape = list(x0.shape)
    shape[dimension] = sum(x.shape[dimension] for x in xs)
    return ShapedArray(shape, x0.dtype, all(x.weak_type for x in xs))


concatenate_p = new_primitive("concatenate", lambda *xs, dimension: np.concatenate(xs, dimension),
                              _concatenate_aval)


def concatenate(xs, dimension):
    return concatenate_p.bind(*xs, dimension=int(dimension))


def _concatenate_transpose(ct, *xs, dimension):
    out, start = [], 0
    shape = shape_of(ct)
    for x in xs:
        n = shape_of(x)[dimension]
        if is_undefined(x):
            lo = [0] * len(shape)
            hi = list(shape)
            lo[dimension], hi[dimension] = start, start + n
            out.append(slice(ct, lo, hi))
        else:
            out.append(None)
        start += n
    return out


deflinear(concatenate_p, _concatenate_transpose)


def _concatenate_batch(vals, dims, *, axis_size, dimension):
    return concatenate([moveaxis0(v, d, axis_size) for v, d in zip(vals, dims)], dimension + 1), 0


batch_rules[concatenate_p] = _concatenate_batch
lowering_rules[concatenate_p] = lambda ctx, *xs, dimension: ctx.op1(
    "stablehlo.concatenate", xs, ctx.out_aval, f"dimension = {dimension} : i64")
defpython(concatenate_p, lambda eqn, a: f"np.concatenate([{', '.join(a)}], axis={eqn.params['dimension']})")

# ------------------------------------------------------------------- iota ----


def _iota_impl(*, dtype, shape, dimension):
    r = np.arange(shape[dimension], dtype=dtype)
    return np.broadcast_to(r.reshape([-1 if i == dimension else 1 for i in range(len(shape))]), shape)


iota_p = new_primitive("iota", _iota_impl, lambda *, dtype, shape, dimension: ShapedArray(shape, dtype))


def iota(dtype, shape, dimension=0):
    """Integers 0, 1, ... counting along `dimension` of an array of `shape`."""
    if isinstance(shape, int):
        shape = (shape,)
    if any(int(s) < 0 for s in shape) or not 0 <= int(dimension) < max(len(shape), 1):
        raise FuncadValueError(f"iota: shape {tuple(shape)} must be non-negative and dimension "
                               f"{dimension} must be one of its axes")
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(map(int, shape)), dimension=int(dimension))


defzero(iota_p)


def _iota_source(eqn, a):
    shape, dim = eqn.params["shape"], eqn.params["dimension"]
    view = tuple(-1 if i == dim else 1 for i in range(len(shape)))
    return (f"np.broadcast_to(np.arange({shape[dim]}, dtype={np_dtype(eqn.params['dtype'])})"
            f".reshape({view}), {shape})")


# iota has no operands, so vmap never sees it batched: it is bound under the parent trace.
lowering_rules[iota_p] = lambda ctx, *, dtype, shape, dimension: ctx.op1(
    "stablehlo.iota", [], ctx.out_aval, f"iota_dimension = {dimension} : i64")
defpython(iota_p, _iota_source)

# NumPy clips bad slices and broadcasts short pad configs: check them eagerly too.
check_eagerly(slice_p, pad_p)


# ----------------------------------------------------------- sharding rules ----
# How each result's sharding in its type follows from the operands' (Explicit mesh
# axes; core/typed_sharding.py).

def _broadcast_in_dim_sharding(x, *, shape, broadcast_dimensions):
    spec, out = spec_of(x), [None] * len(shape)
    for i, d in enumerate(broadcast_dimensions):
        out[d] = spec[i] if x.shape[i] == shape[d] else None
    return tuple(out)


def _concatenate_sharding(*xs, dimension):
    typed = [x for x in xs if x._sharding is not None]
    if any(x._sharding != typed[0]._sharding for x in typed):
        raise ShardingTypeError("All operands should have the same sharding. Got shardings "
                                + ", ".join(str(x.sharding) for x in xs))
    return spec_of(typed[0])


def _squeeze_sharding(x, *, dimensions):
    return tuple(p for i, p in enumerate(spec_of(x)) if i not in dimensions)


sharding_rules[broadcast_in_dim_p] = _broadcast_in_dim_sharding
sharding_rules[reshape_p] = reshape_rule
sharding_rules[transpose_p] = lambda x, *, permutation: tuple(spec_of(x)[i] for i in permutation)
sharding_rules[squeeze_p] = _squeeze_sharding
sharding_rules[rev_p] = same_as_operand
sharding_rules[slice_p] = varying_shape_rule("slicing", lambda x, **p: _slice_aval(x, **p).shape)
sharding_rules[pad_p] = varying_shape_rule("padding", lambda x, v, **p: _pad_aval(x, v, **p).shape)
sharding_rules[concatenate_p] = _concatenate_sharding
sharding_rules[iota_p] = lambda **params: ()  # no operands: typed only through out_sharding
