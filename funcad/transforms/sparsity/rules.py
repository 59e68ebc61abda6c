"""The dependency rules: how each primitive's output entries depend on its input entries.

One table (`_interp.dep_rules`), grouped under banners as the other rule tables
are. A rule is `rule(eqn, ins, n) -> [deps per output]` (see _interp.py). Most
primitives share one of a few rules:

- `zero`: no derivative (comparisons, rounding, integer ops, stop_gradient);
- `elementwise`: output entry i depends on entry i of each (broadcast) operand;
- `movement`: each output entry is a copy of at most one input entry; the rule
  runs the primitive's own impl on entry labels to find which (exact for every
  reshape, slice, pad, gather at known indices...);
- `reduction`, `cumulative`, `dot_general`, `scatter_add`, `sort`;
- control flow and calls analyse their bodies (a fixed point for loops).
"""
from __future__ import annotations

import numpy as np
import scipy.sparse as sp

from ...core.trace import call_rules, impl_rules
from ...primitives import convolution as _conv, decompositions as _dec, eig as _eig, fft as _fft  # noqa: F401
from ...primitives import schur as _schur, tridiagonal as _tridiagonal  # noqa: F401
from ...primitives import sharding as _sh, special as _special, triangular as _tri  # noqa: F401
from ...primitives import collectives as _collectives, rng as _rng  # noqa: F401
from ...primitives import callback as _callback  # noqa: F401
from ...primitives.key_reuse import random_clone_p, random_consume_p
from ...primitives import bits as _bits, elementwise as _E, indexing as _indexing, linalg as _linalg
from ...primitives import reductions as _R, structural as _S
from .. import shard_map as _shard_map  # noqa: F401
from .. import checkpoint as _checkpoint, control_flow as _cf, custom as _custom  # noqa: F401
from .. import closed_call as _closed_call  # noqa: F401  (a call: its body is what it computes)
from .. import custom_calls as _custom_calls, debugging as _debugging, jit as _jit  # noqa: F401
from .. import inspect_sharding as _inspect_sharding  # noqa: F401
from .. import linear_solve as _linear_solve  # noqa: F401  (a call: its body is the solve)
from ..custom_vmap import custom_vmap_p as _custom_vmap_p
from ...primitives import effects as _effects  # noqa: F401  (debug_callback, io_callback)
from ...primitives import host_local as _host_local  # noqa: F401  (multihost_utils' conversions)
from ...primitives import tokens as _tokens  # noqa: F401  (create_token, after_all, dce_sink)
from ._interp import (BODY_PRIMS, NO_FOLD, Val, apply, dep_rules, empty, group, pick, propagate,
                      stack, union)


def _register(rule, *prims) -> None:
    for p in prims:
        dep_rules[p] = rule


def _ids(shape):
    return np.arange(int(np.prod(shape, dtype=np.int64)), dtype=np.int64).reshape(shape)


def _bcast_src(shape, out_shape):
    """For each entry of out_shape, the entry of a `shape` operand broadcast to it."""
    return np.broadcast_to(_ids(shape), out_shape).ravel()


def _reduce_dst(shape, axes):
    """For each entry of `shape`, its entry after summing over `axes` (kept as size 1)."""
    kept = tuple(1 if d in axes else s for d, s in enumerate(shape))
    return np.broadcast_to(_ids(kept), shape).ravel(), kept


def _union_over(deps, shape, axes, out_shape):
    """Union of `deps` (a `shape` value) over `axes`, broadcast to `out_shape`."""
    dst, kept = _reduce_dst(shape, axes)
    size = int(np.prod(kept, dtype=np.int64))
    return apply(pick(_bcast_src(kept, out_shape), size), apply(group(dst, size), deps))


# -------------------------------------------------------------------- zero ----


def zero(eqn, ins, n):
    return [None] * len(eqn.outvars)


_register(zero, _E.sign_p, _E.floor_p, _E.ceil_p, _E.round_p, _E.stop_gradient_p, _E.is_finite_p,
          _E.not_p, _E.and_p, _E.or_p, _E.xor_p, _E.eq_p, _E.ne_p, _E.lt_p, _E.le_p, _E.gt_p, _E.ge_p,
          _R.argmax_p, _R.argmin_p, _S.iota_p, _bits.threefry2x32_p, _bits.bitcast_convert_type_p,
          _bits.clz_p, _bits.population_count_p, _bits.shift_left_p, _bits.shift_right_arithmetic_p,
          _bits.shift_right_logical_p, _rng.rng_bit_generator_p, _rng.rng_uniform_p)

# ------------------------------------------------------------- elementwise ----


def elementwise(eqn, ins, n):
    out = eqn.outvars[0].aval
    return [union(*[apply(pick(_bcast_src(a.aval.shape, out.shape), a.aval.size), x.deps)
                    for a, x in zip(eqn.inputs, ins) if x.deps is not None])]


# Every primitive made by unop/binop is elementwise unless a rule above or below
# says more (the zero-derivative ones, mul); the rest are listed.
for _p in _E.ELEMENTWISE:
    dep_rules.setdefault(_p, elementwise)
_register(elementwise, _E.clamp_p, _E.convert_element_type_p, _E.complex_p,
          _special.regularized_incomplete_beta_p, _bits.reduce_precision_p)


def mul(eqn, ins, n):
    """A product with a known factor has no dependency where that factor is zero."""
    out = eqn.outvars[0].aval
    terms = []
    for k, (a, x) in enumerate(zip(eqn.inputs, ins)):
        if x.deps is None:
            continue
        src = _bcast_src(a.aval.shape, out.shape)
        other = ins[1 - k].value
        if other is not None:
            src = np.where(np.broadcast_to(other, out.shape).ravel() == 0, -1, src)
        terms.append(apply(pick(src, a.aval.size), x.deps))
    return [union(*terms)]


_register(mul, _E.mul_p)

# ---------------------------------------------------------------- movement ----


def _labels(eqn, ins, n, index_pos):
    """Run the primitive on entry labels: operands at `index_pos` must be known and are
    passed as they are; the others are numbered 1, 2, ... across operands. Returns the
    labels of each output (0 where no operand entry was copied) and the stacked
    dependencies of the numbered operands, or None when an index is unknown."""
    args, deps, sizes, offset = [], [], [], 0
    for i, (a, x) in enumerate(zip(eqn.inputs, ins)):
        if i in index_pos:
            if x.value is None:
                return None
            args.append(x.value)
            continue
        size = a.aval.size
        args.append((np.arange(size, dtype=np.float64) + offset + 1).reshape(a.aval.shape))
        deps.append(x.deps)
        sizes.append(size)
        offset += size
    out = impl_rules[eqn.prim](*args, **eqn.params)
    outs = list(out) if eqn.prim.multiple_results else [out]
    return [np.asarray(o).astype(np.int64).ravel() for o in outs], stack(deps, sizes, n), offset


def movement(*index_pos, fallback=None):
    """The rule of a primitive that copies entries (operands at `index_pos` are indices;
    `fallback` is the rule used when an index is not a known constant)."""
    def rule(eqn, ins, n):
        got = _labels(eqn, ins, n, index_pos)
        if got is None:
            return fallback(eqn, ins, n)
        labels, deps, total = got
        return [apply(pick(lab - 1, total), deps) for lab in labels]
    return rule


_register(movement(), _S.broadcast_in_dim_p, _S.reshape_p, _S.transpose_p, _S.squeeze_p, _S.rev_p,
          _S.slice_p, _S.pad_p, _S.concatenate_p)


def _dynamic_slice_unknown(eqn, ins, n):
    x = eqn.inputs[0].aval
    sizes = eqn.params["slice_sizes"]
    axes = {d for d, (k, s) in enumerate(zip(sizes, x.shape)) if k < s}
    return [_union_over(ins[0].deps, x.shape, axes, tuple(sizes))]


def _dus_unknown(eqn, ins, n):
    x, u = eqn.inputs[0].aval, eqn.inputs[1].aval
    axes = {d for d, (k, s) in enumerate(zip(u.shape, x.shape)) if k < s}
    return [union(ins[0].deps, _union_over(ins[1].deps, u.shape, axes, x.shape))]


def _gather_unknown(eqn, ins, n):
    x, idx = eqn.inputs[0].aval, eqn.inputs[1].aval
    k = idx.shape[-1]
    # any entry of the indexed axes may be read: the union over them, for each index vector
    rest = x.shape[k:]
    u = _union_over(ins[0].deps, x.shape, set(range(k)), (1,) * k + rest)
    return [apply(pick(_bcast_src(rest, idx.shape[:-1] + rest), int(np.prod(rest, dtype=np.int64))), u)]


def _indexed_from(first_index, fallback):
    """A movement rule whose operands from `first_index` on are indices."""
    def rule(eqn, ins, n):
        return movement(*range(first_index, len(ins)), fallback=fallback)(eqn, ins, n)
    return rule


_register(_indexed_from(1, _dynamic_slice_unknown), _indexing.dynamic_slice_p)
_register(_indexed_from(2, _dus_unknown), _indexing.dynamic_update_slice_p)
_register(movement(1, fallback=_gather_unknown), _indexing.gather_p)
_register(movement(0, fallback=elementwise), _E.select_n_p)

# -------------------------------------------------------- scatter_add, sort ----


def scatter_add(eqn, ins, n):
    x, idx, u = (a.aval for a in eqn.inputs)
    k = idx.shape[-1]
    batch = idx.ndim - 1
    if ins[1].value is None:
        # the updates may land on any index: their union over the index vectors, everywhere
        rest = x.shape[k:]
        u_rest = _union_over(ins[2].deps, u.shape, set(range(batch)), (1,) * batch + rest)
        return [union(ins[0].deps, apply(pick(_bcast_src(rest, x.shape), int(np.prod(rest, dtype=np.int64))),
                                         u_rest))]
    index = np.asarray(ins[1].value)
    inside = np.all((index >= 0) & (index < np.array(x.shape[:k], dtype=index.dtype)), axis=-1)
    cols = tuple(np.clip(index[..., j], 0, x.shape[j] - 1) for j in range(k))
    target = _ids(x.shape)[cols]                                  # shape u.shape
    inside = inside.reshape(inside.shape + (1,) * (u.ndim - batch))
    dst = np.where(np.broadcast_to(inside, u.shape), target, -1)
    return [union(ins[0].deps, apply(group(dst, x.size), ins[2].deps))]


_register(scatter_add, _indexing.scatter_add_p)


def sort(eqn, ins, n):
    """Sorted outputs are permutations along the axis: exact for known keys, else each
    entry depends on its whole line."""
    keys = range(eqn.params["num_keys"])
    got = _labels(eqn, ins, n, set(keys))
    if got is not None:
        labels, deps, total = got
        return [None if i in keys else apply(pick(lab - 1, total), deps) for i, lab in enumerate(labels)]
    shape = eqn.inputs[0].aval.shape
    return [_union_over(x.deps, shape, {eqn.params["dimension"]}, shape) for x in ins]


_register(sort, _indexing.sort_p)

# -------------------------------------------------------------- reductions ----


def reduction(eqn, ins, n):
    x = eqn.inputs[0].aval
    dst, kept = _reduce_dst(x.shape, set(eqn.params["axes"]))
    return [apply(group(dst, int(np.prod(kept, dtype=np.int64))), ins[0].deps)]


_register(reduction, _R.reduce_sum_p, _R.reduce_max_p, _R.reduce_min_p, _R.reduce_prod_p)


def cumulative(eqn, ins, n):
    """Entry p along the axis depends on entries 0..p (p..end when reversed)."""
    shape, axis = eqn.inputs[0].aval.shape, eqn.params["axis"]
    lines = np.moveaxis(_ids(shape), axis, -1).reshape(-1, shape[axis])
    later, earlier = (np.triu_indices if eqn.params["reverse"] else np.tril_indices)(shape[axis])
    rows, cols = lines[:, later].ravel(), lines[:, earlier].ravel()
    m = sp.csr_array((np.ones(rows.size, bool), (rows, cols)), shape=(lines.size, lines.size))
    return [apply(m, ins[0].deps)]


_register(cumulative, _R.cumsum_p, _R.cumprod_p, _R.cummax_p, _R.cummin_p)

# ------------------------------------------------------------- dot_general ----


def _dot_operand(shape, contract, batch, free_last):
    """Entry ids of an operand laid out as (batch, free, contract) or (batch, contract, free)."""
    free = [d for d in range(len(shape)) if d not in contract and d not in batch]
    order = list(batch) + (list(contract) + free if free_last else free + list(contract))
    ids = np.transpose(_ids(shape), order)
    b = int(np.prod([shape[d] for d in batch], dtype=np.int64))
    c = int(np.prod([shape[d] for d in contract], dtype=np.int64))
    f = int(np.prod([shape[d] for d in free], dtype=np.int64))
    return ids.reshape((b, c, f) if free_last else (b, f, c))


DOT_LIMIT = 1 << 25   # entries of a known operand's local pattern worth listing one by one


def dot_general(eqn, ins, n):
    """out[b, i, j] depends on lhs[b, i, k] and rhs[b, k, j] for every k, except where
    the other operand is a known constant with a zero there."""
    (lc, rc), (lb, rb) = eqn.params["dimension_numbers"]
    lhs, rhs = eqn.inputs[0].aval, eqn.inputs[1].aval
    L = _dot_operand(lhs.shape, lc, lb, False)        # (B, I, K)
    R = _dot_operand(rhs.shape, rc, rb, True)         # (B, K, J)
    B, I, K = L.shape
    J = R.shape[2]
    out = _ids((B, I, J))
    terms = []
    for side, (x, other) in enumerate(((ins[0], ins[1]), (ins[1], ins[0]))):
        if x.deps is None:
            continue
        ids, size = (L, lhs.size) if side == 0 else (R, rhs.size)
        other_ids = R if side == 0 else L
        nz = None if other.value is None else (np.asarray(other.value).ravel()[other_ids] != 0)
        if nz is not None and nz.sum() * (I if side == 0 else J) > DOT_LIMIT:
            nz = None   # too many entries to list: the union over k, still sound
        if nz is None or nz.all():   # every k: the union over k, spread over the other free axis
            if side == 0:
                rows, to = np.arange(B * I).reshape(B, I, 1), (B, I, J)
            else:
                rows, to = np.arange(B * J).reshape(B, 1, J), (B, I, J)
            dst = np.empty(size, np.int64)
            dst[ids.ravel()] = np.broadcast_to(rows, ids.shape).ravel()
            terms.append(apply(pick(np.broadcast_to(rows, to).ravel(), rows.size),
                               apply(group(dst, rows.size), x.deps)))
            continue
        if side == 0:   # nz: rhs (B, K, J) -> out[b, :, j] <- lhs[b, :, k]
            b, k, j = np.nonzero(nz)
            rows = out[b[:, None], np.arange(I)[None, :], j[:, None]]
            cols = ids[b[:, None], np.arange(I)[None, :], k[:, None]]
        else:           # nz: lhs (B, I, K) -> out[b, i, :] <- rhs[b, k, :]
            b, i, k = np.nonzero(nz)
            rows = out[b[:, None], i[:, None], np.arange(J)[None, :]]
            cols = ids[b[:, None], k[:, None], np.arange(J)[None, :]]
        m = sp.csr_array((np.ones(rows.size, bool), (rows.ravel(), cols.ravel())), shape=(out.size, size))
        terms.append(apply(m, x.deps))
    return [union(*terms)]


_register(dot_general, _linalg.dot_general_p)

# ------------------------------------------------------------ conservative ----


def dense(eqn, ins, n):
    """Every output entry depends on every input entry (for primitives whose structure
    is not visible: a custom_vjp's linear part, effects)."""
    total = union(*[apply(group(np.zeros(a.aval.size, np.int64), 1), x.deps)
                    for a, x in zip(eqn.inputs, ins)])
    return [apply(pick(np.zeros(v.aval.size, np.int64), 1), total) for v in eqn.outvars]


_register(dense, _custom.custom_lin_p, _debugging.debug_print_p, _inspect_sharding.inspect_sharding_p)
# The callbacks: the user's Python function is opaque (and never run by the analysis).
_register(dense, _callback.pure_callback_p, _effects.debug_callback_p, _effects.io_callback_p)
# Tokens carry no data; dce_sink has no outputs (and, as an effect, is never folded).
_register(zero, _tokens.create_token_p, _tokens.after_all_p, _tokens.dce_sink_p)
# conv_general_dilated: sound but dense for now; a window-exact rule is future work.
_register(dense, _conv.conv_general_dilated_p)
NO_FOLD.update((_custom.custom_lin_p, _debugging.debug_print_p, _rng.rng_uniform_p, _effects.debug_callback_p,
                _effects.io_callback_p, _inspect_sharding.inspect_sharding_p, _tokens.dce_sink_p))


def identity(eqn, ins, n):
    return list(ins)


_register(identity, _checkpoint.optimization_barrier_p, _sh.sharding_constraint_p,
          _checkpoint.name_p)  # name_p: checkpoint_name
# Collectives and shard_map: each output entry may depend on every device's input.
_register(dense, _shard_map.shard_map_p, _collectives.psum_p, _collectives.psum_invariant_p,
          _collectives.pmax_p, _collectives.pmin_p, _collectives.all_gather_p, _collectives.psum_scatter_p,
          _collectives.ppermute_p, _collectives.all_to_all_p, _collectives.axis_index_p)
_register(identity, _collectives.pvary_p)
dep_rules[random_consume_p] = dep_rules[random_clone_p] = identity  # debug_key_reuse's markers


def _host_local_rule(eqn, ins, n):
    # one process: the identity; across processes a part and the whole mix entries
    same = tuple(eqn.inputs[0].aval.shape) == tuple(eqn.outvars[0].aval.shape)
    return identity(eqn, ins, n) if same else dense(eqn, ins, n)


_register(_host_local_rule, _host_local.local_to_global_p, _host_local.global_to_local_p)


def blockwise(trailing):
    """Each output block depends on the whole same-index block of every input: the
    transforms over trailing axes (fft) and the matrix factorizations and solves, whose
    leading axes are a batch. `trailing(eqn)` is the number of mixed input axes."""
    def rule(eqn, ins, n):
        a0 = eqn.inputs[0].aval
        batch = a0.shape[:a0.ndim - trailing(eqn)]
        nb = int(np.prod(batch, dtype=np.int64))

        def block_of(aval):  # the batch index of each entry of a value
            return np.repeat(np.arange(nb, dtype=np.int64), aval.size // max(nb, 1))
        total = union(*[apply(group(block_of(a.aval), nb), x.deps) for a, x in zip(eqn.inputs, ins)])
        return [apply(pick(block_of(v.aval), nb), total) for v in eqn.outvars]
    return rule


_register(blockwise(lambda eqn: len(eqn.params["fft_lengths"])), _fft.fft_p)
_register(blockwise(lambda eqn: 2), _tri.cholesky_p, _tri.triangular_solve_p, _tri.lu_p, _dec.qr_p,
          _dec.eigh_p, _eig.eig_p, _dec.svd_p, _dec.geqrf_p, _dec.householder_product_p, _schur.schur_p,
          _schur.geqp3_p, _schur.hessenberg_p, _tridiagonal.tridiagonal_p)
# (tridiagonal_solve's first operand is a diagonal, [..., m])
_register(blockwise(lambda eqn: 1), _tridiagonal.tridiagonal_solve_p)

# ------------------------------------------------------------------- calls ----


def call(eqn, ins, n):
    body = eqn.params[call_rules[eqn.prim].param]
    return propagate(body.jaxpr, body.consts, ins, n)


for _p in call_rules:
    dep_rules[_p] = call
    BODY_PRIMS.add(_p)
    NO_FOLD.add(_p)

# custom_vmap_call: its body is what it computes (the rule only batches it)
dep_rules[_custom_vmap_p] = lambda eqn, ins, n: _run(eqn.params["call"], ins, n)
NO_FOLD.add(_custom_vmap_p)

# ------------------------------------------------------------ control flow ----

UNROLL_BUDGET = 5000   # loops up to this many body equations in all are followed step by step


def _run(closed, ins, n):
    return propagate(closed.jaxpr, closed.consts, ins, n)


def _join(a: Val, b: Val) -> Val:
    same = a.value is not None and b.value is not None and a.value.shape == b.value.shape \
        and np.array_equal(a.value, b.value)
    return Val(union(a.deps, b.deps), a.value if same else None)


def _grew(old, new) -> bool:
    return any((0 if b.deps is None else b.deps.nnz) != (0 if a.deps is None else a.deps.nnz)
               for a, b in zip(old, new))


def _fixed_point(body_fn, carry):
    """The union of every state reachable from `carry` (values forgotten)."""
    carry = [Val(c.deps) for c in carry]
    while True:
        new = [Val(_join(c, o).deps) for c, o in zip(carry, body_fn(carry))]
        if not _grew(carry, new):
            return carry
        carry = new


def cond(eqn, ins, n):
    branches = eqn.params["branches"]
    index, ops = ins[0], ins[1:]
    if index.value is not None:
        i = int(np.clip(int(index.value), 0, len(branches) - 1))
        return _run(branches[i], ops, n)
    outs = [_run(b, ops, n) for b in branches]
    joined = outs[0]
    for o in outs[1:]:
        joined = [_join(a, b) for a, b in zip(joined, o)]
    return joined


def _row_block(x: Val, t, rows):
    d = None if x.deps is None else x.deps[t * rows:(t + 1) * rows]
    return Val(d if d is not None and d.nnz else None, None if x.value is None else x.value[t])


def scan(eqn, ins, n):
    p = eqn.params
    body, length = p["jaxpr"], p["length"]
    nc, nk = p["num_consts"], p["num_carry"]
    consts, carry, xs = ins[:nc], ins[nc:nc + nk], ins[nc + nk:]
    x_rows = [a.aval.size // max(length, 1) for a in eqn.inputs[nc + nk:]]
    y_avals = [v.aval for v in eqn.outvars[nk:]]
    y_rows = [a.size // max(length, 1) for a in y_avals]
    if length * max(len(body.eqns), 1) <= UNROLL_BUDGET:
        ys = [[None] * length for _ in y_avals]
        order = range(length - 1, -1, -1) if p["reverse"] else range(length)
        for t in order:
            out = _run(body, consts + carry + [_row_block(x, t, r) for x, r in zip(xs, x_rows)], n)
            carry = out[:nk]
            for k, y in enumerate(out[nk:]):
                ys[k][t] = y.deps
        return carry + [stack(blocks, [r] * length, n) for blocks, r in zip(ys, y_rows)]
    # too long to follow: one iteration sees the union of every slice of xs
    x_all = [Val(_union_over(x.deps, a.aval.shape, {0}, (1,) + a.aval.shape[1:]))
             for x, a in zip(xs, eqn.inputs[nc + nk:])]
    carry = _fixed_point(lambda c: _run(body, consts + c + x_all, n)[:nk], carry)
    ys = _run(body, consts + carry + x_all, n)[nk:]
    return carry + [None if y.deps is None else stack([y.deps] * length, [r] * length, n)
                    for y, r in zip(ys, y_rows)]


def while_loop(eqn, ins, n):
    p = eqn.params
    cn, bn = p["cond_nconsts"], p["body_nconsts"]
    cond_consts, body_consts, carry = ins[:cn], ins[cn:cn + bn], ins[cn + bn:]
    cost = max(len(p["body_jaxpr"].eqns) + len(p["cond_jaxpr"].eqns), 1)
    for _ in range(UNROLL_BUDGET // cost):   # follow the loop while its test is known
        test = _run(p["cond_jaxpr"], cond_consts + carry, n)[0].value
        if test is None:
            break
        if not bool(test):
            return carry
        carry = _run(p["body_jaxpr"], body_consts + carry, n)
    return _fixed_point(lambda c: _run(p["body_jaxpr"], body_consts + c, n), carry)


_register(cond, _cf.cond_p)
_register(scan, _cf.scan_p)
_register(while_loop, _cf.while_p)
BODY_PRIMS.update((_cf.cond_p, _cf.scan_p, _cf.while_p))
NO_FOLD.update((_cf.cond_p, _cf.scan_p, _cf.while_p))
