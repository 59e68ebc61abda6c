"""Reductions (sum, max, min, prod, argmax, argmin) and cumulative reductions."""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.trace import batch_rules, jvp_rules, lowering_rules, sharding_rules
from ..core.typed_sharding import dropping, unsplit_along
from ..lowering.python_source import np_dtype
from ..lowering.stablehlo import (binary, compare, i64_array, ints, reducer_region, reduction_identity,
                                  scalar_aval, select)
from ._base import (canonical_axis, const, deflinear, defpython, defzero, dtype_of, jvp_of_composition,
                    new_primitive, shape_of, type_error)
from .elementwise import div, eq, max, min, mul, select_n, convert_element_type
from .structural import broadcast_in_dim, moveaxis0, pad, reshape, slice, transpose


def _shift(axes, d):
    """Map axes of the unbatched value to axes of the value batched at d."""
    return tuple(a + (a >= d) for a in axes)


def _reduce_aval(name):
    def rule(x, *, axes):
        if any(not 0 <= a < x.ndim for a in axes) or len(set(axes)) != len(axes):
            raise type_error(name, f"axes {axes} are out of range or repeated", x)
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i not in axes), x.dtype, x.weak_type)
    return rule


def _np_reduce(f, bool_f=None, kind=None):
    def impl(x, *, axes):
        x = np.asarray(x)
        if kind is not None and x.size == 0 and axes:  # XLA's identity (NumPy raises)
            shape = tuple(n for i, n in enumerate(x.shape) if i not in axes)
            return np.full(shape, reduction_identity(kind, x.dtype), x.dtype)
        g = bool_f if bool_f is not None and x.dtype == np.bool_ else f
        return np.asarray(g(x, axis=axes), dtype=x.dtype) if axes else x
    return impl


def _reduce_batch(prim):
    def rule(vals, dims, *, axis_size, axes):
        (x,), (d,) = vals, dims
        return prim.bind(x, axes=_shift(axes, d)), d - sum(a < d for a in axes)
    return rule


def _reduce_lowering(kind):
    def rule(ctx, x, *, axes):
        if not axes:
            return x
        init = ctx.constant(reduction_identity(kind, x.aval.dtype), x.aval.dtype)
        return ctx.op1("stablehlo.reduce", [x, init], ctx.out_aval,
                       f"dimensions = {i64_array(axes)}", [reducer_region(ctx, kind, x.aval)])
    return rule


def reducer(name, impl, kind, np_name):
    """A reduction over `axes` with its shape, batching and StableHLO rules (a
    `stablehlo.reduce` combining with `kind`: add, mul, max, min) and to_python
    template (`np.<np_name>`). Add its jvp."""
    p = new_primitive(name, impl, _reduce_aval(name))
    batch_rules[p] = _reduce_batch(p)
    sharding_rules[p] = dropping("axes")  # the reduced dimensions leave the spec
    lowering_rules[p] = _reduce_lowering(kind)
    defpython(p, lambda eqn, a: f"np.asarray(np.{np_name}({a[0]}, axis={eqn.params['axes']}), "
                                f"{np_dtype(eqn.outvars[0].aval.dtype)})")
    return p


# ufunc.reduce is what np.sum/np.max call, minus their Python wrapper.
reduce_sum_p = reducer("reduce_sum", _np_reduce(np.add.reduce), "add", "sum")
# On booleans (all/any) max and min are or/and, whose identities make empty inputs work.
reduce_max_p = reducer("reduce_max", _np_reduce(np.maximum.reduce, np.logical_or.reduce, "max"), "max", "max")
reduce_min_p = reducer("reduce_min", _np_reduce(np.minimum.reduce, np.logical_and.reduce, "min"), "min", "min")
reduce_prod_p = reducer("reduce_prod", _np_reduce(np.multiply.reduce), "mul", "prod")


def _axes(x, axes):
    nd = len(shape_of(x))
    if axes is None:
        return tuple(range(nd))
    if isinstance(axes, int):
        axes = (axes,)
    return tuple(sorted(canonical_axis(a, nd, "reduce", x) if nd else int(a) for a in axes))


def reduce_sum(x, axes=None):
    return reduce_sum_p.bind(x, axes=_axes(x, axes))


def reduce_max(x, axes=None):
    return reduce_max_p.bind(x, axes=_axes(x, axes))


def reduce_min(x, axes=None):
    return reduce_min_p.bind(x, axes=_axes(x, axes))


def reduce_prod(x, axes=None):
    return reduce_prod_p.bind(x, axes=_axes(x, axes))


def _keep_broadcast(y, x_shape, axes):
    """Broadcast a reduced value back over the reduced axes of x."""
    kept = tuple(i for i in range(len(x_shape)) if i not in axes)
    return broadcast_in_dim(y, x_shape, kept)


deflinear(reduce_sum_p, lambda ct, x, *, axes: [_keep_broadcast(ct, x.aval.shape, axes)])


def _minmax_jvp(prim):
    def rule(primals, tangents, *, axes):
        (x,), (t,) = primals, tangents
        ans = prim.bind(x, axes=axes)
        if t is None:
            return ans, None
        # Split the tangent evenly among the positions that attain the extremum.
        loc = convert_element_type(eq(x, _keep_broadcast(ans, shape_of(x), axes)), dtype_of(x))
        counts = reduce_sum(loc, axes)
        return ans, div(reduce_sum(mul(t, loc), axes), counts)
    return rule


jvp_rules[reduce_max_p] = _minmax_jvp(reduce_max_p)
jvp_rules[reduce_min_p] = _minmax_jvp(reduce_min_p)


def _move_axes_last(x, axes):
    """Transpose the reduced axes to the end and merge them: shape (..., n)."""
    shape = shape_of(x)
    keep = [i for i in range(len(shape)) if i not in axes]
    xt = transpose(x, keep + list(axes))
    n = int(np.prod([shape[a] for a in axes], dtype=np.int64))
    return reshape(xt, [shape[i] for i in keep] + [n])


def _prod_tree(x):
    """Product along the last axis by pairwise halving; differentiable everywhere."""
    while shape_of(x)[-1] > 1:
        n = shape_of(x)[-1]
        if n % 2:
            x = pad(x, const(x, 1), [(0, 0, 0)] * (len(shape_of(x)) - 1) + [(0, 1, 0)])
            n += 1
        nd = len(shape_of(x))
        even = slice(x, [0] * nd, shape_of(x), [1] * (nd - 1) + [2])
        odd = slice(x, [0] * (nd - 1) + [1], shape_of(x), [1] * (nd - 1) + [2])
        x = mul(even, odd)
    return reshape(x, shape_of(x)[:-1])


def _reduce_prod_jvp(primals, tangents, *, axes):
    (x,), (t,) = primals, tangents
    if t is None:
        return reduce_prod(x, axes), None
    if shape_of(x) and any(shape_of(x)[a] == 0 for a in axes):
        return reduce_prod(x, axes), None
    (ans,), (tan,) = jvp_of_composition(lambda v: [_prod_tree(_move_axes_last(v, axes))], [x], [t])
    return ans, tan


jvp_rules[reduce_prod_p] = _reduce_prod_jvp


def _arg_aval(name):
    def rule(x, *, axis, index_dtype):
        if not 0 <= axis < x.ndim:
            raise type_error(name, f"axis {axis} is out of range", x)
        if x.shape[axis] == 0:
            raise type_error(name, "attempt to get the arg-extremum of an empty sequence", x)
        return ShapedArray(tuple(s for i, s in enumerate(x.shape) if i != axis), index_dtype)
    return rule


def _arg_lowering(direction):
    kind = "max" if direction == "GT" else "min"

    def rule(ctx, x, *, axis, index_dtype):
        dtype = x.aval.dtype
        idx = ctx.op1("stablehlo.iota", [], ShapedArray(x.aval.shape, index_dtype),
                      f"iota_dimension = {axis} : i64")
        inits = [ctx.constant(reduction_identity(kind, dtype), dtype), ctx.constant(0, index_dtype)]
        s, si = scalar_aval(x.aval), ShapedArray((), index_dtype)

        def parts(c, v):  # complex numbers order as (real, imag), as in NumPy
            if dtype.kind != "c":
                return [v]
            part = ShapedArray((), np.finfo(dtype).dtype)
            return [c.op1("stablehlo.real", [v], part), c.op1("stablehlo.imag", [v], part)]

        def any_nan(c, vs):
            out = compare(c, vs[0], vs[0], "NE")
            for v in vs[1:]:
                out = binary(c, "stablehlo.or", out, compare(c, v, v, "NE"))
            return out

        def body(c, a, ia, b, ib):
            pa, pb = parts(c, a), parts(c, b)
            better, tie = compare(c, pa[-1], pb[-1], direction), compare(c, pa[-1], pb[-1], "EQ")
            for u, v in zip(pa[-2::-1], pb[-2::-1]):  # lexicographic, most significant last
                eq = compare(c, u, v, "EQ")
                better = binary(c, "stablehlo.or", compare(c, u, v, direction),
                                binary(c, "stablehlo.and", eq, better))
                tie = binary(c, "stablehlo.and", eq, tie)
            if dtype.kind in "fc":  # NaN wins (first NaN), as in NumPy
                a_nan, b_nan = any_nan(c, pa), any_nan(c, pb)
                not_b_nan = c.op1("stablehlo.not", [b_nan], b_nan.aval)
                better = binary(c, "stablehlo.or", better, binary(c, "stablehlo.and", a_nan, not_b_nan))
                tie = binary(c, "stablehlo.or", tie, binary(c, "stablehlo.and", a_nan, b_nan))
            first = binary(c, "stablehlo.and", tie, compare(c, ia, ib, "LT"))
            pick_a = binary(c, "stablehlo.or", better, first)
            return [select(c, pick_a, a, b), select(c, pick_a, ia, ib)]

        region = ctx.region([s, si, s, si], body)
        outs = ctx.op("stablehlo.reduce", [x, idx, *inits],
                      [ShapedArray(ctx.out_aval.shape, dtype), ctx.out_aval],
                      f"dimensions = {i64_array([axis])}", [region])
        return outs[1]
    return rule


def _arg_primitive(name, impl, direction):
    p = new_primitive(name, lambda x, *, axis, index_dtype: impl(x, axis).astype(index_dtype),
                      _arg_aval(name))

    def batch(vals, dims, *, axis_size, axis, index_dtype):
        x = moveaxis0(vals[0], dims[0], axis_size)
        return p.bind(x, axis=axis + 1, index_dtype=index_dtype), 0
    batch_rules[p] = batch
    sharding_rules[p] = dropping("axis")
    lowering_rules[p] = _arg_lowering(direction)
    defpython(p, lambda eqn, a: f"np.{name}({a[0]}, axis={eqn.params['axis']})"
                                f".astype({np_dtype(eqn.params['index_dtype'])})")
    defzero(p)
    return p


argmax_p = _arg_primitive("argmax", np.argmax, "GT")
argmin_p = _arg_primitive("argmin", np.argmin, "LT")


def argmax(x, axis, index_dtype=np.int64):
    return argmax_p.bind(x, axis=int(axis), index_dtype=np.dtype(index_dtype))


def argmin(x, axis, index_dtype=np.int64):
    return argmin_p.bind(x, axis=int(axis), index_dtype=np.dtype(index_dtype))

# ------------------------------------------------------------ cumulative ----


def _cum_aval(name):
    def rule(x, *, axis, reverse):
        if not 0 <= axis < x.ndim:
            raise type_error(name, f"axis {axis} is out of range", x)
        return x
    return rule


def _cum_impl(f):
    def impl(x, *, axis, reverse):
        x = np.asarray(x)
        # np.cumsum warns from NumPy's own module (inf - inf): XLA's nans come quietly
        with np.errstate(invalid="ignore", over="ignore"):
            if reverse:
                return np.flip(f(np.flip(x, axis), axis=axis), axis).astype(x.dtype)
            return f(x, axis=axis).astype(x.dtype, copy=False)
    return impl


def _cum_lowering(kind):
    def rule(ctx, x, *, axis, reverse):
        shape, nd = x.aval.shape, len(x.aval.shape)
        if 0 in shape:  # an empty result (XLA refuses a window of size 0)
            return x
        n = shape[axis]
        window = [n if d == axis else 1 for d in range(nd)]
        pad_cfg = [[0, 0] for _ in range(nd)]
        pad_cfg[axis] = [0, n - 1] if reverse else [n - 1, 0]
        init = ctx.constant(reduction_identity(kind, x.aval.dtype), x.aval.dtype)
        attrs = (f"padding = dense<{ints(ints(p) for p in pad_cfg)}> : tensor<{nd}x2xi64>, "
                 f"window_dimensions = {i64_array(window)}, window_strides = {i64_array([1] * nd)}")
        return ctx.op1("stablehlo.reduce_window", [x, init], x.aval, attrs,
                       [reducer_region(ctx, kind, x.aval)])
    return rule


def _cum_source(fn):
    def source(eqn, a):
        ax = eqn.params["axis"]
        if eqn.params["reverse"]:
            return f"np.flip({fn}(np.flip({a[0]}, {ax}), axis={ax}), {ax})"
        return f"{fn}({a[0]}, axis={ax})"
    return source


def _cumulative(name, impl, kind, np_fn):
    """A cumulative reduction along `axis` (optionally from the end) with its
    shape, batching and StableHLO rules (a `stablehlo.reduce_window` combining
    with `kind`) and to_python template (`np_fn`). Add its jvp."""
    p = new_primitive(name, _cum_impl(impl), _cum_aval(name))

    def batch(vals, dims, *, axis_size, axis, reverse):
        x = moveaxis0(vals[0], dims[0], axis_size)
        return p.bind(x, axis=axis + 1, reverse=reverse), 0
    batch_rules[p] = batch
    sharding_rules[p] = unsplit_along("axis", "Input should be unsharded over the axis being reduced")
    lowering_rules[p] = _cum_lowering(kind)
    defpython(p, _cum_source(np_fn))
    return p


cumsum_p = _cumulative("cumsum", np.cumsum, "add", "np.cumsum")
cumprod_p = _cumulative("cumprod", np.cumprod, "mul", "np.cumprod")
cummax_p = _cumulative("cummax", np.maximum.accumulate, "max", "np.maximum.accumulate")
cummin_p = _cumulative("cummin", np.minimum.accumulate, "min", "np.minimum.accumulate")


def _cum(p):
    def f(x, axis=0, reverse=False):
        nd = len(shape_of(x))
        axis = canonical_axis(axis, nd, p.name, x) if nd else int(axis)
        return p.bind(x, axis=axis, reverse=bool(reverse))
    f.__name__ = p.name
    return f


cumsum, cumprod, cummax, cummin = map(_cum, (cumsum_p, cumprod_p, cummax_p, cummin_p))

deflinear(cumsum_p, lambda ct, x, *, axis, reverse: [cumsum(ct, axis, not reverse)])


def _prefix_scan(op, x, axis, reverse):
    """Inclusive scan by doubling (Hillis-Steele), written with slices and pads
    so that it can be differentiated; used only for the jvp of cumprod/cummax/cummin."""
    nd = len(shape_of(x))
    n = shape_of(x)[axis]
    shift = 1
    while shift < n:
        if reverse:
            lo, hi, cfg = [0] * nd, list(shape_of(x)), [(0, 0, 0)] * nd
            lo[axis] = shift
            cfg[axis] = (0, shift, 0)
        else:
            lo, hi, cfg = [0] * nd, list(shape_of(x)), [(0, 0, 0)] * nd
            hi[axis] = n - shift
            cfg[axis] = (shift, 0, 0)
        moved = slice(x, lo, hi)
        # Positions with nothing to combine take the identity of `op`: x itself.
        own = slice(x, [0] * nd, shape_of(x))
        combined = op(pad(moved, const(x, 0), cfg), own)
        idx = _positions(x, axis)
        valid = (idx >= shift) if not reverse else (idx < n - shift)
        x = select_n(broadcast_in_dim(valid, shape_of(x), (axis,)), own, combined)
        shift *= 2
    return x


def _positions(x, axis):
    return np.arange(shape_of(x)[axis])


def _cum_jvp(prim, op):
    def rule(primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        if t is None:
            return prim.bind(x, axis=axis, reverse=reverse), None
        (ans,), (tan,) = jvp_of_composition(lambda v: [_prefix_scan(op, v, axis, reverse)], [x], [t])
        return ans, tan
    return rule


jvp_rules[cumprod_p] = _cum_jvp(cumprod_p, mul)
jvp_rules[cummax_p] = _cum_jvp(cummax_p, max)
jvp_rules[cummin_p] = _cum_jvp(cummin_p, min)
