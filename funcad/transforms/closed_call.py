"""closed_call: a call of a ClosedJaxpr (param `call_jaxpr`) with no other meaning,
the primitive JAX's `extend.core.primitives.closed_call_p` names. Transformations
see through it: its jvp and batching are those of the callee; reverse mode splits
and transposes it as it does a jit call (and stages the parts as jit calls)."""
from __future__ import annotations

from ..core.trace import Primitive, eval_jaxpr
from ..primitives._base import jvp_of_composition
from .calls import define_call
from .jit_primitive import _jit_partial_eval, _jit_transpose
from .vmap import vmap_flat


def _callee(call_jaxpr):
    return lambda *xs: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *xs)


def _jvp(primals, tangents, *, call_jaxpr):
    return jvp_of_composition(_callee(call_jaxpr), list(primals), list(tangents))


def _batch(args, dims, *, axis_size, call_jaxpr):
    return vmap_flat(_callee(call_jaxpr), list(args), list(dims), axis_size), [0] * len(call_jaxpr.out_avals)


def _as_jit(call_jaxpr) -> dict:
    return dict(jaxpr=call_jaxpr, name="closed_call", backend=None)


def _partial_eval(trace, args, params):
    return _jit_partial_eval(trace, args, _as_jit(params["call_jaxpr"]))


def _transpose(cts, *args, call_jaxpr):
    return _jit_transpose(cts, *args, **_as_jit(call_jaxpr))


closed_call_p = define_call(Primitive("closed_call", multiple_results=True), "call_jaxpr",
                            jvp=_jvp, batch=_batch, partial_eval=_partial_eval, transpose=_transpose)
