"""Shape primitives: broadcast, reshape, transpose, squeeze, rev, slice, pad,
concatenate, iota. All are linear; their transposes are shape ops too."""
from __future__ import annotations

import builtins

import numpy as np

from ..core.avals import ShapedArray
from ..core.trace import jvp_rules, transpose_rules
from ._base import canonical_axis, check_eagerly
from ._base import (deflinear, defzero, full, is_undefined, new_primitive, shape_of, type_error,
                    zeros_like, dtype_of)

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
    from .reductions import reduce_sum
    in_shape = x.aval.shape
    unit = tuple(d for i, d in enumerate(broadcast_dimensions) if in_shape[i] == 1 and shape[d] != 1)
    new = tuple(d for d in range(len(shape)) if d not in broadcast_dimensions)
    summed = reduce_sum(ct, tuple(sorted(unit + new))) if unit or new else ct
    return [reshape(summed, in_shape) if unit else summed]


deflinear(broadcast_in_dim_p, _broadcast_in_dim_transpose)

# ---------------------------------------------------------------- reshape ----


def _reshape_aval(x, *, new_sizes):
    if int(np.prod(new_sizes, dtype=np.int64)) != x.size:
        raise type_error("reshape", f"cannot reshape {x.size} elements to shape {new_sizes}", x)
    return ShapedArray(new_sizes, x.dtype, x.weak_type)


reshape_p = new_primitive("reshape", lambda x, *, new_sizes: np.reshape(x, new_sizes), _reshape_aval)


def reshape(x, new_sizes):
    return reshape_p.bind(x, new_sizes=tuple(int(s) for s in new_sizes))


deflinear(reshape_p, lambda ct, x, *, new_sizes: [reshape(ct, x.aval.shape)])

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

# ---------------------------------------------------------------- squeeze ----


def _squeeze_aval(x, *, dimensions):
    if any(not 0 <= d < x.ndim or x.shape[d] != 1 for d in dimensions):
        raise type_error("squeeze", f"cannot squeeze dimensions {dimensions}: they must have size 1", x)
    return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in dimensions), x.dtype, x.weak_type)


squeeze_p = new_primitive("squeeze", lambda x, *, dimensions: np.squeeze(x, dimensions), _squeeze_aval)


def squeeze(x, dimensions):
    return squeeze_p.bind(x, dimensions=tuple(int(d) for d in dimensions))


deflinear(squeeze_p, lambda ct, x, *, dimensions: [reshape(ct, x.aval.shape)])


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
    return ShapedArray(shape, x.dtype, x.weak_type)


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
    from .reductions import reduce_sum
    from .elementwise import sub
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
        from ..core.errors import FuncadValueError
        raise FuncadValueError(f"iota: shape {tuple(shape)} must be non-negative and dimension "
                               f"{dimension} must be one of its axes")
    return iota_p.bind(dtype=np.dtype(dtype), shape=tuple(map(int, shape)), dimension=int(dimension))


defzero(iota_p)

# NumPy clips bad slices and broadcasts short pad configs: check them eagerly too.
check_eagerly(slice_p, pad_p)
