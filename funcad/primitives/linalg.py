"""dot_general: batched tensor contraction, the one matrix-product primitive."""
from __future__ import annotations

import math

import numpy as np

from ..core.avals import ShapedArray, aval_of
from ..core.narrow import KINDS as NARROW_KINDS
from ..core.errors import ShardingTypeError
from ..core.sharding import NamedSharding, PartitionSpec
from ..core.trace import batch_rules, lowering_rules, sharding_rules, transpose_rules
from ..core.typed_sharding import axes_of, explicit_out_sharding, out_spec, spec_of
from ..lowering.stablehlo import compare, convert, ints
from . import dot_algorithm as algo
from ._base import defjvp, defpython, is_undefined, new_primitive, shape_of, type_error
from .elementwise import convert_element_type
from .structural import moveaxis0, transpose
from .sharding import out_sharded


def _free(nd, contract, batch):
    return [i for i in range(nd) if i not in contract and i not in batch]


def _dot_aval(x, y, *, dimension_numbers, precision=None, out_sharding=None, preferred_element_type=None):
    (xc, yc), (xb, yb) = dimension_numbers
    ok = (x.dtype == y.dtype and len(xc) == len(yc) and len(xb) == len(yb)
          and all(0 <= i < x.ndim for i in xc + xb) and all(0 <= i < y.ndim for i in yc + yb)
          and all(x.shape[i] == y.shape[j] for i, j in zip(xc + xb, yc + yb)))
    if not ok:
        raise type_error("dot_general", f"dimension_numbers {dimension_numbers} do not fit: "
                         "contracted and batch dimensions must match in size and dtypes must agree", x, y)
    shape = ([x.shape[i] for i in xb] + [x.shape[i] for i in _free(x.ndim, xc, xb)]
             + [y.shape[i] for i in _free(y.ndim, yc, yb)])
    if preferred_element_type is not None:
        return ShapedArray(shape, preferred_element_type)
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


def _dot_impl(x, y, *, dimension_numbers, precision=None, out_sharding=None, preferred_element_type=None):
    if preferred_element_type is not None:  # computed in the operands' type, then rounded (XLA's CPU)
        out = _dot_impl(x, y, dimension_numbers=dimension_numbers, precision=precision)
        return np.asarray(out).astype(preferred_element_type)
    (xc, yc), (xb, yb) = dimension_numbers
    if type(x) is not np.ndarray or type(y) is not np.ndarray:
        x, y = np.asarray(x), np.asarray(y)
    if precision is not None and algo.is_algorithm(precision):  # NumPy computes as XLA's CPU does: by the casts
        algo.check_cpu(precision)
        lt, rt, acc = algo.compute_types(precision, x.dtype, y.dtype, x.dtype)
        out = _dot_impl(x.astype(lt).astype(acc), y.astype(rt).astype(acc),
                        dimension_numbers=dimension_numbers)
        return out.astype(x.dtype)
    if x.dtype in NARROW_KINDS:  # as XLA on CPU: accumulate in float32 (int64), round once
        wide = np.float32 if NARROW_KINDS[x.dtype] == "f" else np.int64
        return _dot_impl(x.astype(wide), y.astype(wide),
                         dimension_numbers=dimension_numbers).astype(x.dtype)
    if not xb and len(xc) == 1 and x.ndim <= 2 and y.ndim <= 2:
        # matrix products (the derivatives' transposed ones too): BLAS directly, which
        # reads a transposed operand in place
        if xc[0] == x.ndim - 1 and yc[0] == 0:
            return np.dot(x, y)
        if x.ndim == 2 and y.ndim == 2:
            return np.dot(x if xc[0] == 1 else x.T, y if yc[0] == 0 else y.T)
    xf, yf = _free(x.ndim, xc, xb), _free(y.ndim, yc, yb)
    b = [x.shape[i] for i in xb]
    m = [x.shape[i] for i in xf]
    n = [y.shape[i] for i in yf]
    k = math.prod([x.shape[i] for i in xc])
    xt = np.transpose(x, list(xb) + xf + list(xc)).reshape(b + [math.prod(m), k])
    yt = np.transpose(y, list(yb) + list(yc) + yf).reshape(b + [k, math.prod(n)])
    return np.matmul(xt, yt).reshape(b + m + n)


dot_general_p = new_primitive("dot_general", _dot_impl, _dot_aval)


def dot_general(x, y, dimension_numbers, precision=None, out_sharding=None, preferred_element_type=None):
    """`precision`: None, a (lhs, rhs) pair of 'DEFAULT'/'HIGH'/'HIGHEST', a
    DotAlgorithmPreset or a DotAlgorithm; `out_sharding`: the result's sharding (a
    NamedSharding, or a PartitionSpec over the context mesh), needed where the
    contracted dimensions are split over Explicit mesh axes; `preferred_element_type`:
    a result type lower than the operands' one in XLA's order (the product is
    computed in the operands' type and rounded to it; a higher one is reached by
    converting the operands, see lax.dot_general). Each is a param only when not None."""
    (xc, yc), (xb, yb) = dimension_numbers
    dn = ((tuple(map(int, xc)), tuple(map(int, yc))), (tuple(map(int, xb)), tuple(map(int, yb))))
    params = {"dimension_numbers": dn}
    if precision is not None:
        params["precision"] = precision
    if preferred_element_type is not None:
        params["preferred_element_type"] = np.dtype(preferred_element_type)
    typed = explicit_out_sharding(out_sharding, "dot_general")
    if typed is not None:
        params["out_sharding"] = typed
    out = dot_general_p.bind(x, y, **params)
    if out_sharding is not None and typed is None:
        return out_sharded(out, out_sharding)
    return out


# As in JAX, the derivatives keep the precision (an algorithm rounds the tangents too).
# The tangents are typed as the result (its out_sharding, on Explicit axes).
defjvp(dot_general_p,
       lambda t, ans, x, y, *, dimension_numbers, precision=None, out_sharding=None, preferred_element_type=None:
           dot_general(t, y, dimension_numbers, precision, out_sharding, preferred_element_type),
       lambda t, ans, x, y, *, dimension_numbers, precision=None, out_sharding=None, preferred_element_type=None:
           dot_general(x, t, dimension_numbers, precision, out_sharding, preferred_element_type))


def _transpose_operand(ct, other, dims, nd, other_nd, ct_first, precision=None, primal=None,
                       preferred=None):
    """Cotangent of one operand of dot_general; `ct_first` says it is the lhs. With a
    `preferred` result type, as JAX's: the product of the cotangent and the other
    operand in that type, converted to the operand's type."""
    if preferred is not None:
        ct, other = convert_element_type(ct, preferred), convert_element_type(other, preferred)
    (xc, yc), (xb, yb) = dims
    if not ct_first:  # view the rhs as the lhs of the swapped product
        xc, yc, xb, yb = yc, xc, yb, xb
    x_free = _free(nd, xc, xb)
    y_free = _free(other_nd, yc, yb)
    nb = len(xb)
    if ct_first:
        ct_yfree = list(range(nb + len(x_free), nb + len(x_free) + len(y_free)))
    else:
        ct_yfree = list(range(nb, nb + len(y_free)))
    layout = list(xb) + x_free + [xc[list(yc).index(j)] for j in sorted(yc)]
    out_sharding = None
    typed = [a._sharding for a in (primal, aval_of(ct), aval_of(other)) if a is not None]
    typed = [s for s in typed if s is not None]
    if typed:  # the cotangent is split as its primal is (not split where it has no type)
        spec = tuple(primal._sharding.spec) if primal._sharding is not None else (None,) * nd
        out_sharding = NamedSharding(typed[0].mesh, PartitionSpec(*[spec[k] for k in layout]))
    res = dot_general(ct, other, ((ct_yfree, y_free), (list(range(nb)), list(yb))), precision,
                      out_sharding)
    perm = [layout.index(k) for k in range(nd)]
    res = res if perm == list(range(nd)) else transpose(res, perm)
    return res if preferred is None else convert_element_type(res, primal.dtype)


def _dot_transpose(ct, x, y, *, dimension_numbers, precision=None, out_sharding=None,
                   preferred_element_type=None):
    cx = cy = None
    if is_undefined(x):
        cx = _transpose_operand(ct, y, dimension_numbers, len(shape_of(x)), len(shape_of(y)), True,
                                precision, x.aval, preferred_element_type)
    if is_undefined(y):
        cy = _transpose_operand(ct, x, dimension_numbers, len(shape_of(y)), len(shape_of(x)), False,
                                precision, y.aval, preferred_element_type)
    return [cx, cy]


transpose_rules[dot_general_p] = _dot_transpose


def _shift0(axes):
    return tuple(a + 1 for a in axes)


def _dot_batch(vals, dims, *, axis_size, dimension_numbers, precision=None, out_sharding=None,
               preferred_element_type=None):
    pref = preferred_element_type
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = vals
    dx, dy = dims

    def out(d):  # out_sharding with the batch dimension (not split) at d
        if out_sharding is None:
            return None
        spec = list(out_sharding.spec)
        spec += [None] * max(0, d - len(spec))
        return NamedSharding(out_sharding.mesh, PartitionSpec(*spec[:d], None, *spec[d:]))
    if dx is not None and dy is not None:
        x, y = moveaxis0(x, dx, axis_size), moveaxis0(y, dy, axis_size)
        dn = ((_shift0(xc), _shift0(yc)), ((0,) + _shift0(xb), (0,) + _shift0(yb)))
        return dot_general(x, y, dn, precision, out(0), pref), 0
    if dx is not None:
        x = moveaxis0(x, dx, axis_size)
        return dot_general(x, y, ((_shift0(xc), yc), (_shift0(xb), yb)), precision, out(len(xb)), pref), len(xb)
    y = moveaxis0(y, dy, axis_size)
    x_free = len(shape_of(x)) - len(xc) - len(xb)
    d = len(xb) + x_free
    return dot_general(x, y, ((xc, _shift0(yc)), (xb, _shift0(yb))), precision, out(d), pref), d


def _dot_lowering(ctx, x, y, *, dimension_numbers, precision=None, out_sharding=None,
                  preferred_element_type=None):  # the result type is the output's, as JAX emits it
    (xc, yc), (xb, yb) = dimension_numbers
    dn = (f"#stablehlo.dot<lhs_batching_dimensions = {ints(xb)}, rhs_batching_dimensions = {ints(yb)}, "
          f"lhs_contracting_dimensions = {ints(xc)}, rhs_contracting_dimensions = {ints(yc)}>")
    if precision is not None and x.aval.dtype != np.bool_:
        return _dot_lowering_precise(ctx, x, y, dn, precision)
    if x.aval.dtype == np.bool_:  # XLA has no boolean dot: count in int32, then test != 0
        x8, y8 = convert(ctx, x, np.int32), convert(ctx, y, np.int32)
        out = ctx.op1("stablehlo.dot_general", [x8, y8], ShapedArray(ctx.out_aval.shape, np.int32),
                      f"dot_dimension_numbers = {dn}")
        return compare(ctx, out, ctx.full(0, np.int32, out.aval.shape), "NE")
    return ctx.op1("stablehlo.dot_general", [x, y], ctx.out_aval, f"dot_dimension_numbers = {dn}")


def _dot_lowering_precise(ctx, x, y, dn, precision):
    """JAX's lowering of a precision: a Precision pair is only an attribute; an
    algorithm casts the operands, accumulates in its type and converts back."""
    out = ctx.out_aval
    acc_aval, attrs = out, ""
    pair = ("DEFAULT", "DEFAULT") if algo.is_algorithm(precision) else precision
    if algo.is_algorithm(precision):
        if ctx.module.platform == "cpu":
            algo.check_cpu(precision)
        lt, rt, acc = algo.compute_types(precision, x.aval.dtype, y.aval.dtype, out.dtype)
        x = x if lt == x.aval.dtype else convert(ctx, x, lt)
        y = y if rt == y.aval.dtype else convert(ctx, y, rt)
        acc_aval = ShapedArray(out.shape, acc)
        attr = precision._attr(lt, rt)
        if attr is not None:
            attrs = f", algorithm = {attr}"
    prec = ", ".join(f"#stablehlo<precision {p}>" for p in pair)
    res = ctx.op1("stablehlo.dot_general", [x, y], acc_aval,
                  f"dot_dimension_numbers = {dn}, precision_config = [{prec}]{attrs}")
    return res if acc_aval.dtype == out.dtype else convert(ctx, res, out.dtype)


def _dot_source(eqn, a):
    pref = eqn.params.get("preferred_element_type")
    if pref is not None:
        plain = dict(eqn.params)
        del plain["preferred_element_type"]
        return f"{_dot_source(eqn._replace(params=plain), a)}.astype('{pref}')"
    (xc, yc), (xb, yb) = eqn.params["dimension_numbers"]
    nx, ny = eqn.inputs[0].aval.ndim, eqn.inputs[1].aval.ndim
    prec = eqn.params.get("precision")
    if algo.is_algorithm(prec):  # the casts of the algorithm, as the impl makes them
        dt = eqn.inputs[0].aval.dtype
        lt, rt, acc = algo.compute_types(prec, dt, eqn.inputs[1].aval.dtype, dt)
        a = [f"{a[0]}.astype('{lt}').astype('{acc}')", f"{a[1]}.astype('{rt}').astype('{acc}')"]
        inner = _dot_source_plain(eqn, a, nx, ny, xc, yc, xb, yb)
        return f"{inner}.astype('{dt}')"
    return _dot_source_plain(eqn, a, nx, ny, xc, yc, xb, yb)


def _dot_source_plain(eqn, a, nx, ny, xc, yc, xb, yb):
    if not xb and xc == (nx - 1,) and yc == (0,) and nx <= 2 and ny <= 2:
        return f"np.dot({a[0]}, {a[1]})"
    letters = iter("abcdefghijklmnopqrstuvwxyz")
    xs = [next(letters) for _ in range(nx)]
    ys = [None] * ny
    for i, j in zip(xc + xb, yc + yb):
        ys[j] = xs[i]
    ys = [c or next(letters) for c in ys]
    out = ([xs[i] for i in xb] + [xs[i] for i in range(nx) if i not in xc and i not in xb]
           + [ys[j] for j in range(ny) if j not in yc and j not in yb])
    return f"np.einsum('{''.join(xs)},{''.join(ys)}->{''.join(out)}', {a[0]}, {a[1]})"


batch_rules[dot_general_p] = _dot_batch


def _dot_sharding(x, y, *, dimension_numbers, precision=None, out_sharding=None, preferred_element_type=None):
    """JAX's rule: out_sharding if given; else batch dimensions split alike, contracted
    ones not split on both sides, and the result split as the free dimensions are."""
    (xc, yc), (xb, yb) = dimension_numbers
    sx, sy = spec_of(x), spec_of(y)
    if out_sharding is not None:
        spec = out_spec(out_sharding, len(xb) + x.ndim - len(xc) - len(xb) + y.ndim - len(yc) - len(yb))
        unreduced = getattr(spec, "unreduced", frozenset())
        if unreduced:  # the partial sums over the contracted axes, left unreduced (JAX's rule)
            contracting = tuple(sx[i] for i in xc)
            split = {a for p in contracting + tuple(sy[i] for i in yc) for a in axes_of(p)}
            if unreduced != split:
                raise ShardingTypeError(
                    f"out_sharding's unreduced axes should be equal to the contracting specs. Got "
                    f"unreduced axes={unreduced} and contracting spec={contracting}")
        return spec
    bx, by = tuple(sx[i] for i in xb), tuple(sy[i] for i in yb)
    if bx != by:
        raise ShardingTypeError("dot_general requires lhs batch dimensions and rhs batch dimensions "
                                f"to have the same sharding, got {bx} and {by}.")
    cx, cy = tuple(sx[i] for i in xc), tuple(sy[i] for i in yc)
    if any(a is not None and b is not None for a, b in zip(cx, cy)):
        raise ShardingTypeError(
            "Contracting dimensions are sharded and it is ambiguous how the output should be "
            "sharded. Please specify the output sharding via the `out_sharding` parameter. "
            f"Got lhs_contracting_spec={cx} and rhs_contracting_spec={cy}")
    return bx + tuple(sx[i] for i in _free(x.ndim, xc, xb)) + tuple(sy[i] for i in _free(y.ndim, yc, yb))


sharding_rules[dot_general_p] = _dot_sharding
lowering_rules[dot_general_p] = _dot_lowering
defpython(dot_general_p, _dot_source)
