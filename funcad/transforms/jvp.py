"""Forward mode: the JVP trace. Tangents are `None` when symbolically zero."""
from __future__ import annotations

from ..core import x64 as _x64
from ..core.avals import aval_of, float0
from ..core.trace import (Trace, Tracer, bind_below, bind_custom_jvp, bind_custom_vjp, check_alive, ctx,
                          jvp_rules, rule_for, set_trace)
from ..primitives._base import zeros_tangent  # noqa: F401  (also used from here by other transforms)
from .custom import custom_vjp_jvp


class JVPTracer(Tracer):
    __slots__ = ("primal", "tangent", "_aval")

    def __init__(self, trace, primal, tangent):
        self._trace = trace
        self.primal = primal
        self.tangent = tangent
        self._aval = None

    @property
    def aval(self):
        # the primal never changes: its type is found once (rules ask for shapes often)
        a = self._aval
        if a is None:
            a = self._aval = aval_of(self.primal)
        return a

    def canonical32(self):
        # jvp takes a NumPy input as given (as JAX's); with x64 off it may be 64-bit
        p, t = _x64.canonicalize_held(self.primal), _x64.canonicalize_held(self.tangent)
        return self if p is self.primal and t is self.tangent else JVPTracer(self._trace, p, t)

    def concrete(self):
        # Under eager differentiation the primal is a real value: `if x > 0` works.
        p = self.primal
        return p.concrete() if isinstance(p, Tracer) else p


def with_tangent(trace, primal, tangent):
    """`primal` carrying `tangent`; a zero (None) or float0 tangent carries nothing, as
    in JAX, so no rule ever sees an integer value's float0 tangent as a nonzero one."""
    if tangent is None or getattr(tangent, "dtype", None) == float0:
        return primal
    return JVPTracer(trace, primal, tangent)


class JVPTrace(Trace):
    name = "jvp"

    def unpack(self, x):
        if type(x) is JVPTracer and x._trace is self:
            return x.primal, x.tangent
        check_alive(x)
        return x, None

    def process_primitive(self, prim, args, params):
        # The hot path of all differentiation: unpack inlined, no context object.
        primals, tangents = [], []
        any_tangent = False
        for x in args:
            if type(x) is JVPTracer and x._trace is self:
                primals.append(x.primal)
                tangents.append(x.tangent)
                any_tangent = True
            else:
                check_alive(x)
                primals.append(x)
                tangents.append(None)
        if not any_tangent:
            return bind_below(self.parent, prim, tuple(primals), params)
        prev = ctx.trace
        ctx.trace = self.parent
        try:
            rule = jvp_rules.get(prim) or rule_for(jvp_rules, prim, "jvp (differentiation)")
            if not _x64.enabled:  # bind takes the primals to 32 bits; a rule may pass a tangent on
                tangents = _x64.canonicalize_all(tangents)
            out, t_out = rule(primals, tangents, **params)
        finally:
            ctx.trace = prev
        if prim.multiple_results:
            return [with_tangent(self, o, t) for o, t in zip(out, t_out)]
        return with_tangent(self, out, t_out)

    def process_custom_jvp(self, fun, jvp, args, symbolic_zeros):
        primals, tangents = zip(*[self.unpack(x) for x in args]) if args else ((), ())
        with set_trace(self.parent):
            if all(t is None for t in tangents):
                # Not ours to differentiate: hand the custom function (not its body)
                # to the trace beneath, so an outer differentiation still uses the rule.
                return bind_custom_jvp(fun, jvp, list(primals), symbolic_zeros)
            if not symbolic_zeros:
                tangents = [zeros_tangent(p) if t is None else t for p, t in zip(primals, tangents)]
            outs, t_outs = jvp(list(primals), list(tangents))
        return [with_tangent(self, o, t) for o, t in zip(outs, t_outs)]

    def process_custom_vjp(self, fun, fwd, bwd, args):
        primals, tangents = zip(*[self.unpack(x) for x in args]) if args else ((), ())
        with set_trace(self.parent):
            if all(t is None for t in tangents):
                return bind_custom_vjp(fun, fwd, bwd, list(primals))
            outs, t_outs = custom_vjp_jvp(fun, fwd, bwd, list(primals), list(tangents))
        return [with_tangent(self, o, t) for o, t in zip(outs, t_outs)]


def jvp_flat(fun, primals, tangents, instantiate: bool = True):
    """Push tangents through `fun` (flat lists in and out).

    Tangents may be None (symbolic zero). Returns (primals_out, tangents_out);
    with `instantiate`, zero output tangents are materialised.
    """
    trace = JVPTrace(ctx.trace)
    ins = [with_tangent(trace, p, t) for p, t in zip(primals, tangents)]
    try:
        with set_trace(trace):
            outs = fun(*ins)
        pairs = [trace.unpack(o) for o in outs]
    finally:
        trace.finish()
    p_out = [p for p, _ in pairs]
    t_out = [t for _, t in pairs]
    if instantiate:
        t_out = [zeros_tangent(p) if t is None else t for p, t in zip(p_out, t_out)]
    return p_out, t_out
