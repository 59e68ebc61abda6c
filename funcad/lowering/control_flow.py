"""StableHLO lowering of cond (stablehlo.case), while and scan (stablehlo.while).

Branch and body jaxprs are emitted inline into the regions. Regions may read
values defined outside them (the operands of a case, hoisted constants);
a while loop's constants travel in its carry, as its regions see only the carry.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..primitives.control_flow import cond_p, scan_p, while_p
from .stablehlo import LoweringContext, compare, convert, lower_closed_call, lowering_rules


def _cond(ctx: LoweringContext, index, *ops, branches):
    index = convert(ctx, index, np.int32)
    regions = [ctx.region([], lambda c, b=b: lower_closed_call(c, b, ops)) for b in branches]
    return ctx.op("stablehlo.case", [index], ctx.out_avals, regions=regions)


def _while(ctx: LoweringContext, *args, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts, max_steps):
    ncc, nbc = cond_nconsts, body_nconsts
    avals = [a.aval for a in args]

    def cond_region(c, *xs):
        return lower_closed_call(c, cond_jaxpr, list(xs[:ncc]) + list(xs[ncc + nbc:]))

    def body_region(c, *xs):
        return list(xs[:ncc + nbc]) + lower_closed_call(c, body_jaxpr, list(xs[ncc:]))

    outs = ctx.op("stablehlo.while", args, avals,
                  regions=[ctx.region(avals, cond_region), ctx.region(avals, body_region)])
    return outs[ncc + nbc:]


_I64 = ShapedArray((), np.int64)


def _scan(ctx: LoweringContext, *args, jaxpr, length, reverse, num_consts, num_carry, unroll):
    """A while loop over a step counter; each iteration runs `unroll` steps, reading
    xs with dynamic_slice and writing ys with dynamic_update_slice. The steps
    left over (length % unroll) follow the loop, unrolled."""
    nc, nk = num_consts, num_carry
    consts, init, xs = list(args[:nc]), list(args[nc:nc + nk]), list(args[nc + nk:])
    nx = len(xs)
    y_avals = ctx.out_avals[nk:]
    ys = [ctx.full(0, a.dtype, a.shape) for a in y_avals]
    u = max(1, min(int(unroll), length)) if length else 1
    trips, rest = divmod(length, u)

    def step(c, t, consts, carry, xs, ys):
        """One step at position t (an i64 Value): returns (carry, ys)."""
        if reverse:
            t = c.op1("stablehlo.subtract", [c.constant(length - 1, np.int64), t], _I64)
        zero = c.constant(0, np.int64)
        x_t = []
        for x in xs:
            shape = x.aval.shape
            sl = c.op1("stablehlo.dynamic_slice", [x, t] + [zero] * (len(shape) - 1),
                       ShapedArray((1,) + shape[1:], x.aval.dtype),
                       f"slice_sizes = array<i64: {', '.join(map(str, (1,) + shape[1:]))}>")
            x_t.append(c.op1("stablehlo.reshape", [sl], ShapedArray(shape[1:], x.aval.dtype)))
        outs = lower_closed_call(c, jaxpr, consts + carry + x_t)
        new_ys = []
        for y, o in zip(ys, outs[nk:]):
            shape = y.aval.shape
            o1 = c.op1("stablehlo.reshape", [o], ShapedArray((1,) + shape[1:], y.aval.dtype))
            new_ys.append(c.op1("stablehlo.dynamic_update_slice", [y, o1, t] + [zero] * (len(shape) - 1),
                                y.aval))
        return list(outs[:nk]), new_ys

    carry = init
    if trips:
        loop_args = [ctx.constant(0, np.int64)] + consts + carry + xs + ys
        avals = [a.aval for a in loop_args]

        def cond_region(c, i, *rest_):
            return [compare(c, i, c.constant(trips, np.int64), "LT")]

        def body_region(c, i, *vals):
            cs, k, x, y = (list(vals[:nc]), list(vals[nc:nc + nk]), list(vals[nc + nk:nc + nk + nx]),
                           list(vals[nc + nk + nx:]))
            base = c.op1("stablehlo.multiply", [i, c.constant(u, np.int64)], _I64)
            for j in range(u):
                t = base if j == 0 else c.op1("stablehlo.add", [base, c.constant(j, np.int64)], _I64)
                k, y = step(c, t, cs, k, x, y)
            i1 = c.op1("stablehlo.add", [i, c.constant(1, np.int64)], _I64)
            return [i1] + cs + k + x + y

        outs = ctx.op("stablehlo.while", loop_args, avals,
                      regions=[ctx.region(avals, cond_region), ctx.region(avals, body_region)])
        carry, ys = outs[1 + nc:1 + nc + nk], outs[1 + nc + nk + nx:]
    for j in range(rest):
        carry, ys = step(ctx, ctx.constant(trips * u + j, np.int64), consts, carry, xs, ys)
    return list(carry) + list(ys)


lowering_rules[cond_p] = _cond
lowering_rules[while_p] = _while
lowering_rules[scan_p] = _scan
