"""Batching rules for every primitive, grouped by family.

A rule takes (values, batch_dims, axis_size=n, **params), where a batch dim is
an int or None (unbatched), and returns (out, out_dim). Rules are written with
primitives' bind functions, so batched programs can be differentiated and jitted.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.trace import batch_rules
from . import elementwise as E
from . import indexing as I
from . import linalg as L
from . import reductions as R
from . import structural as S
from ._base import shape_of, dtype_of


def _to0(x, d, n):
    from ..transforms.vmap import moveaxis0
    return moveaxis0(x, d, n)


def _shift(axes, d):
    """Map axes of the unbatched value to axes of the value batched at d."""
    return tuple(a + (a >= d) for a in axes)


# ------------------------------------------------------------ elementwise ----

def _vectorized(prim):
    def rule(vals, dims, *, axis_size, **params):
        return prim.bind(*vals, **params), dims[0]
    batch_rules[prim] = rule


for _p in (E.neg_p, E.sin_p, E.cos_p, E.asin_p, E.acos_p, E.atan_p, E.sinh_p, E.cosh_p, E.tanh_p,
           E.asinh_p, E.acosh_p, E.atanh_p, E.exp_p, E.exp2_p, E.log_p, E.log1p_p, E.expm1_p,
           E.logistic_p, E.sqrt_p, E.rsqrt_p, E.cbrt_p, E.abs_p, E.sign_p, E.floor_p, E.ceil_p,
           E.round_p, E.erf_p, E.erfc_p, E.erf_inv_p, E.lgamma_p, E.digamma_p, E.is_finite_p, E.not_p,
           E.polygamma_p, E.integer_pow_p, E.convert_element_type_p, E.stop_gradient_p):
    _vectorized(_p)


def _broadcasting(prim):
    """n-ary NumPy-broadcasting primitives: batch axes first, ranks padded."""
    def rule(vals, dims, *, axis_size, **params):
        rank = max(len(shape_of(v)) - (d is not None) for v, d in zip(vals, dims))
        out = []
        for v, d in zip(vals, dims):
            if d is None:
                out.append(v)
                continue
            v = _to0(v, d, axis_size)
            s = shape_of(v)
            pad = rank - (len(s) - 1)
            out.append(S.reshape(v, (s[0],) + (1,) * pad + tuple(s[1:])) if pad else v)
        return prim.bind(*out, **params), 0
    batch_rules[prim] = rule


for _p in (E.add_p, E.sub_p, E.mul_p, E.div_p, E.rem_p, E.pow_p, E.max_p, E.min_p, E.atan2_p,
           E.and_p, E.or_p, E.xor_p, E.eq_p, E.ne_p, E.lt_p, E.le_p, E.gt_p, E.ge_p, E.select_n_p):
    _broadcasting(_p)


def _clamp_rule(vals, dims, *, axis_size):
    lo, x, hi = vals
    if dims[0] is None and dims[2] is None and not shape_of(lo) and not shape_of(hi):
        return E.clamp(lo, x, hi), dims[1]
    # Batched bounds: clamp is max then min, which broadcast.
    m, d = batch_rules[E.max_p]([x, lo], [dims[1], dims[0]], axis_size=axis_size)
    return batch_rules[E.min_p]([m, hi], [d, dims[2]], axis_size=axis_size)


batch_rules[E.clamp_p] = _clamp_rule

# ---------------------------------------------------------------- shapes ----


def _broadcast_in_dim_rule(vals, dims, *, axis_size, shape, broadcast_dimensions):
    x = _to0(vals[0], dims[0], axis_size)
    return S.broadcast_in_dim(x, (axis_size,) + tuple(shape),
                              (0,) + tuple(b + 1 for b in broadcast_dimensions)), 0


def _reshape_rule(vals, dims, *, axis_size, new_sizes):
    x = _to0(vals[0], dims[0], axis_size)
    return S.reshape(x, (axis_size,) + tuple(new_sizes)), 0


def _transpose_rule(vals, dims, *, axis_size, permutation):
    x = _to0(vals[0], dims[0], axis_size)
    return S.transpose(x, (0,) + tuple(p + 1 for p in permutation)), 0


def _squeeze_rule(vals, dims, *, axis_size, dimensions):
    x = _to0(vals[0], dims[0], axis_size)
    return S.squeeze(x, tuple(d + 1 for d in dimensions)), 0


def _rev_rule(vals, dims, *, axis_size, dimensions):
    (x,), (d,) = vals, dims
    return S.rev(x, _shift(dimensions, d)), d


def _slice_rule(vals, dims, *, axis_size, start_indices, limit_indices, strides):
    (x,), (d,) = vals, dims
    ins = lambda t, v: t[:d] + (v,) + t[d:]
    return S.slice(x, ins(start_indices, 0), ins(limit_indices, axis_size), ins(strides, 1)), d


def _pad_rule(vals, dims, *, axis_size, padding_config):
    x, v = vals
    dx, dv = dims
    x = _to0(x, dx, axis_size)
    cfg = ((0, 0, 0),) + tuple(padding_config)
    if dv is None:
        return S.pad(x, v, cfg), 0
    # A batched padding value: pad with zeros, then fill the padding per lane.
    zero = np.zeros((), dtype_of(x))
    padded = S.pad(x, zero, cfg)
    inside = S.pad(np.ones(shape_of(x)[1:], bool), np.array(False), padding_config)
    fill = S.broadcast_in_dim(_to0(v, dv, axis_size), shape_of(padded), (0,))
    return E.select_n(inside, fill, padded), 0


def _concatenate_rule(vals, dims, *, axis_size, dimension):
    xs = [_to0(v, d, axis_size) for v, d in zip(vals, dims)]
    return S.concatenate(xs, dimension + 1), 0


batch_rules[S.broadcast_in_dim_p] = _broadcast_in_dim_rule
batch_rules[S.reshape_p] = _reshape_rule
batch_rules[S.transpose_p] = _transpose_rule
batch_rules[S.squeeze_p] = _squeeze_rule
batch_rules[S.rev_p] = _rev_rule
batch_rules[S.slice_p] = _slice_rule
batch_rules[S.pad_p] = _pad_rule
batch_rules[S.concatenate_p] = _concatenate_rule

# ------------------------------------------------------------ reductions ----


def _reduce_rule(prim):
    def rule(vals, dims, *, axis_size, axes):
        (x,), (d,) = vals, dims
        out_d = d - sum(a < d for a in axes)
        return prim.bind(x, axes=_shift(axes, d)), out_d
    batch_rules[prim] = rule


for _p in (R.reduce_sum_p, R.reduce_max_p, R.reduce_min_p, R.reduce_prod_p):
    _reduce_rule(_p)


def _arg_rule(prim):
    def rule(vals, dims, *, axis_size, axis, index_dtype):
        x = _to0(vals[0], dims[0], axis_size)
        return prim.bind(x, axis=axis + 1, index_dtype=index_dtype), 0
    batch_rules[prim] = rule


def _cum_rule(prim):
    def rule(vals, dims, *, axis_size, axis, reverse):
        x = _to0(vals[0], dims[0], axis_size)
        return prim.bind(x, axis=axis + 1, reverse=reverse), 0
    batch_rules[prim] = rule


_arg_rule(R.argmax_p)
_arg_rule(R.argmin_p)
for _p in (R.cumsum_p, R.cumprod_p, R.cummax_p, R.cummin_p):
    _cum_rule(_p)

# ------------------------------------------------------------ dot_general ----


def _dot_rule(vals, dims, *, axis_size, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = vals
    dx, dy = dims
    if dx is not None and dy is not None:
        x, y = _to0(x, dx, axis_size), _to0(y, dy, axis_size)
        dn = ((_shift(xc, 0), _shift(yc, 0)), ((0,) + _shift(xb, 0), (0,) + _shift(yb, 0)))
        return L.dot_general(x, y, dn), 0
    if dx is not None:
        x = _to0(x, dx, axis_size)
        dn = ((_shift(xc, 0), yc), (_shift(xb, 0), yb))
        return L.dot_general(x, y, dn), len(xb)
    y = _to0(y, dy, axis_size)
    dn = ((xc, _shift(yc, 0)), (xb, _shift(yb, 0)))
    x_free = len(shape_of(x)) - len(xc) - len(xb)
    return L.dot_general(x, y, dn), len(xb) + x_free


batch_rules[L.dot_general_p] = _dot_rule

# --------------------------------------------------------------- indexing ----


def _with_lane_index(idx, axis_size):
    """Prepend each index vector with its lane number: (n, ..., k) -> (n, ..., k+1)."""
    s = shape_of(idx)
    lane = S.iota(dtype_of(idx), s[:-1] + (1,), 0)
    return S.concatenate([lane, idx], len(s) - 1)


def _gather_rule(vals, dims, *, axis_size):
    x, idx = vals
    dx, di = dims
    if dx is None:
        idx = _to0(idx, di, axis_size)
        return I.gather(x, idx), 0
    x = _to0(x, dx, axis_size)
    idx = _to0(idx, di, axis_size)
    return I.gather(x, _with_lane_index(idx, axis_size)), 0


def _scatter_add_rule(vals, dims, *, axis_size):
    x, idx, u = [_to0(v, d, axis_size) for v, d in zip(vals, dims)]
    return I.scatter_add(x, _with_lane_index(idx, axis_size), u), 0


def _window_indices(starts, sizes, shape, axis_size):
    """Index vectors (n, *sizes, 1 + rank) of each lane's window, starts clamped as XLA does."""
    cols = [S.iota(np.int64, (axis_size,) + tuple(sizes), 0)]
    for k, (s, size, n) in enumerate(zip(starts, sizes, shape)):
        s = E.convert_element_type(s, np.int64)
        s = E.clamp(np.int64(0), s, np.int64(n - size))
        s = S.broadcast_in_dim(s, (axis_size,) + tuple(sizes), (0,))
        cols.append(E.add(s, S.iota(np.int64, (axis_size,) + tuple(sizes), k + 1)))
    full = (axis_size,) + tuple(sizes) + (1,)
    return S.concatenate([S.reshape(c, full) for c in cols], len(full) - 1)


def _dynamic_slice_rule(vals, dims, *, axis_size, slice_sizes):
    x, *starts = vals
    dx, *ds = dims
    if all(d is None for d in ds):
        return I.dynamic_slice(x, starts[:dx] + [np.int64(0)] + starts[dx:],
                               tuple(slice_sizes[:dx]) + (axis_size,) + tuple(slice_sizes[dx:])), dx
    x = _to0(x, dx, axis_size)
    starts = [_to0(s, d, axis_size) for s, d in zip(starts, ds)]
    idx = _window_indices(starts, slice_sizes, shape_of(x)[1:], axis_size)
    return I.gather(x, idx), 0


def _dus_rule(vals, dims, *, axis_size):
    x, u, *starts = vals
    dx, du, *ds = dims
    if all(d is None for d in ds):
        x, u = _to0(x, dx, axis_size), _to0(u, du, axis_size)
        return I.dynamic_update_slice(x, u, [np.int64(0)] + list(starts)), 0
    x, u = _to0(x, dx, axis_size), _to0(u, du, axis_size)
    starts = [_to0(s, d, axis_size) for s, d in zip(starts, ds)]
    idx = _window_indices(starts, shape_of(u)[1:], shape_of(x)[1:], axis_size)
    hit = I.scatter_add(np.zeros(shape_of(x), np.int32), idx, np.ones(shape_of(u), np.int32))
    placed = I.scatter_add(S.broadcast_in_dim(np.zeros((), dtype_of(x)), shape_of(x), ()), idx, u)
    return E.select_n(E.gt(hit, np.int32(0)), x, placed), 0


def _sort_rule(vals, dims, *, axis_size, dimension, num_keys):
    xs = [_to0(v, d, axis_size) for v, d in zip(vals, dims)]
    return I.sort_p.bind(*xs, dimension=dimension + 1, num_keys=num_keys), [0] * len(xs)


batch_rules[I.gather_p] = _gather_rule
batch_rules[I.scatter_add_p] = _scatter_add_rule
batch_rules[I.dynamic_slice_p] = _dynamic_slice_rule
batch_rules[I.dynamic_update_slice_p] = _dus_rule
batch_rules[I.sort_p] = _sort_rule
