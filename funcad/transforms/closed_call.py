"""closed_call: a call of a ClosedJaxpr (param `call_jaxpr`) with no other meaning,
the primitive JAX's `extend.core.primitives.closed_call_p` names. Transformations
see through it: its jvp and batching are those of the callee."""
from __future__ import annotations

from ..core.trace import Primitive, eval_jaxpr
from ..primitives._base import jvp_of_composition
from .calls import define_call
from .vmap import vmap_flat


def _callee(call_jaxpr):
    return lambda *xs: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)


def _jvp(primals, tangents, *, call_jaxpr):
    return jvp_of_composition(_callee(call_jaxpr), list(primals), list(tangents))


def _batch(args, dims, *, axis_size, call_jaxpr):
    return vmap_flat(_callee(call_jaxpr), list(args), list(dims), axis_size), [0] * len(call_jaxpr.out_avals)


closed_call_p = define_call(Primitive("closed_call", multiple_results=True), "call_jaxpr",
                            jvp=_jvp, batch=_batch)
