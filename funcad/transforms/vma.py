"""Device-varying types of shard_map bodies (JAX's vma, "varying manual axes").

Inside `shard_map(check_vma=True)` every value is invariant over the mesh or
varies over a set of its axes (its *vma*): inputs vary over the axes their
spec names, psum/pmax/pmin remove their axes, all_gather, ppermute,
psum_scatter and all_to_all keep them, axis_index varies over its own, every
other operation takes the union of its inputs'. Where a value meets one that
varies over more axes, the implicit broadcast is made explicit as `pvary`,
the identity per device whose transpose is a psum; so the cotangent of a
replicated value is summed over the devices, as in JAX.

Two passes share one rule (`typed_bind`):

- `with_vma` re-stages a traced body, inferring the vmas from the inputs'
  (used on every body shard_map binds, and on the bodies its rules derive);
- `live_typing` types values *while* a body is traced: `Primitive.bind`
  hands every operation to `_LiveTyping.bind`, which reads the vmas of the
  operands whatever their trace (a jvp tracer's is its primal's), inserts
  the pvarys at that trace and records the outputs' vmas. So a `grad` taken
  inside the body sees the pvary and transposes it into a psum, as JAX's.
"""
from __future__ import annotations

from contextlib import contextmanager

from ..core.ir import ClosedJaxpr, Jaxpr, Literal
from ..core.staging import trace_to_jaxpr
from ..core.trace import Tracer, call_rules, ctx
from ..primitives import collectives as C
from .jvp import JVPTracer
from .vmap import BatchTracer

__all__ = ["with_vma", "live_typing"]

_REDUCING = {C.psum_p, C.psum_invariant_p, C.pmax_p, C.pmin_p}
_KEEPING = {C.all_gather_p, C.psum_scatter_p, C.ppermute_p, C.all_to_all_p}
_NONE = frozenset()


def _plain_bind(prim, args, params):
    return prim.bind(*args, **params)


def vary(x, vma, target, bind=_plain_bind):
    """`x` (varying over `vma`) made to vary over `target` too."""
    missing = tuple(sorted(set(target) - set(vma)))
    return bind(C.pvary_p, [x], {"axes": missing}) if missing else x


def with_vma(closed: ClosedJaxpr, in_vmas, check_vma: bool, target=None):
    """`closed` with its implicit broadcasts made explicit, and the vma of each output.
    With `target`, every output is made to vary over it."""
    out_vmas: list = []

    def fun(*xs):
        outs, vmas = interpret(closed.jaxpr, closed.consts, list(zip(xs, in_vmas)), check_vma)
        if target is not None:
            outs = [vary(o, v, target) for o, v in zip(outs, vmas)]
            vmas = [frozenset(target)] * len(outs)
        out_vmas[:] = vmas
        return outs

    new = trace_to_jaxpr(fun, list(closed.in_avals), name="shard_map")
    return new, list(out_vmas)


def interpret(jaxpr: Jaxpr, consts, args, check_vma):
    """Evaluate `jaxpr` on (value, vma) pairs with the current trace, typing each equation."""
    live = ctx.vma
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[id(v)] = (c, _NONE)
    for v, a in zip(jaxpr.invars, args):
        env[id(v)] = a
        if live is not None:  # the live typing must agree with the explicit one
            live.set(*a)

    def read(a):
        return (a.val, _NONE) if type(a) is Literal else env[id(a)]

    for eqn in jaxpr.eqns:
        outs, vmas = typed_bind(eqn.prim, eqn.params, [read(a) for a in eqn.inputs], check_vma)
        for v, o, m in zip(eqn.outvars, outs, vmas):
            env[id(v)] = (o, m)
    res = [read(a) for a in jaxpr.outvars]
    return [r[0] for r in res], [r[1] for r in res]


def typed_bind(prim, params, ins, check_vma, bind=_plain_bind):
    """Bind `prim` on `ins`, (value, vma) pairs, with the pvarys its typing needs;
    return (outputs, their vmas)."""
    vals, vmas = [x for x, _ in ins], [m for _, m in ins]
    one = lambda out, m: ([out], [m])  # noqa: E731
    if not check_vma:  # JAX's older convention: no pvary, psum transposes into psum
        if prim is C.pvary_p:
            return one(vals[0], vmas[0])
        if prim is C.psum_invariant_p:
            prim = C.psum_p
    union = frozenset().union(*vmas) if vmas else _NONE
    if prim is C.pvary_p:
        return one(vary(vals[0], vmas[0], params["axes"], bind), vmas[0] | set(params["axes"]))
    if prim in _REDUCING and check_vma:
        x = vary(vals[0], vmas[0], params["axes"], bind)
        p = C.psum_invariant_p if prim is C.psum_p else prim
        return one(bind(p, [x], params), vmas[0] - set(params["axes"]))
    if prim in _KEEPING and check_vma:
        x = vary(vals[0], vmas[0], params["axes"], bind)
        return one(bind(prim, [x], params), vmas[0] | set(params["axes"]))
    if prim is C.axis_index_p:
        return one(bind(prim, [], params), frozenset(params["axes"]))
    rule = call_rules.get(prim)
    if rule is not None and rule.optimizable:  # a jit call: look inside it
        body = params[rule.param]
        return interpret(body.jaxpr, body.consts, list(zip(vals, vmas)), check_vma)
    vals = [vary(x, m, union, bind) for x, m in zip(vals, vmas)] if check_vma else vals
    if _has_jaxprs(params):  # control flow and other calls: every value varies over the union
        params = {k: _retype(v, union, check_vma) for k, v in params.items()}
    out = bind(prim, vals, params)
    outs = list(out) if prim.multiple_results else [out]
    return outs, [union] * len(outs)


def _has_jaxprs(params) -> bool:
    return any(isinstance(v, ClosedJaxpr) or isinstance(v, (tuple, list)) and
               any(isinstance(x, ClosedJaxpr) for x in v) for v in params.values())


def _retype(v, union, check_vma):
    if isinstance(v, ClosedJaxpr):
        return with_vma(v, [union] * len(v.in_avals), check_vma, union)[0]
    if isinstance(v, (tuple, list)) and any(isinstance(x, ClosedJaxpr) for x in v):
        return type(v)(_retype(x, union, check_vma) for x in v)
    return v


# ---------------------------------------------------------- live typing ----

class _LiveTyping:
    """The vmas of the values of a shard_map body being traced, at every trace."""

    def __init__(self, axes):
        self.axes = frozenset(axes)
        self.vmas: dict = {}
        self.keep: list = []  # the typed tracers stay alive, so their ids are not reused

    def set(self, x, vma) -> None:
        if isinstance(x, Tracer):
            self.vmas[id(x)] = frozenset(vma)
            self.keep.append(x)

    def of(self, x) -> frozenset:
        if not isinstance(x, Tracer):
            return _NONE
        vma = self.vmas.get(id(x))
        if vma is not None:
            return vma
        if type(x) is JVPTracer:  # a tangent varies as its primal
            vma = self.of(x.primal)
            if isinstance(x.tangent, Tracer) and id(x.tangent) not in self.vmas:
                self.set(x.tangent, vma)
            return vma
        if type(x) is BatchTracer:
            return self.of(x.val)
        return _NONE

    def bind(self, prim, trace, args, params):
        axes = params.get("axes") if prim in C.COLLECTIVES else None
        if axes is not None and not set(axes) <= self.axes:  # a vmap's axis inside the body
            return trace.process_primitive(prim, args, params)

        def bind_here(p, xs, kw):  # at this trace: the operations beneath are typed by bind
            return trace.process_primitive(p, xs, kw)

        outs, vmas = typed_bind(prim, params, [(x, self.of(x)) for x in args], True, bind_here)
        for o, m in zip(outs, vmas):
            self.set(o, m)
        return outs if prim.multiple_results else outs[0]


@contextmanager
def live_typing(axes, inputs, in_vmas):
    """Type the values of a shard_map body over the manual `axes` while it is traced;
    `inputs` (its arguments' tracers) vary over `in_vmas`."""
    typing = _LiveTyping(axes)
    for x, m in zip(inputs, in_vmas):
        typing.set(x, m)
    prev, ctx.vma = ctx.vma, typing
    try:
        yield typing
    finally:
        ctx.vma = prev


@contextmanager
def no_live_typing():
    """Stage without live typing (the rules of a shard_map nested in a body)."""
    prev, ctx.vma = ctx.vma, None
    try:
        yield
    finally:
        ctx.vma = prev
