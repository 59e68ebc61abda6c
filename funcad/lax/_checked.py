"""funcad.lax functions check their operand types even in eager code.

Rules inside funcad call the primitives' bind functions directly, with no
check; these user-facing wrappers add a checking trace on top of whatever
trace is current, so `lax.add(f32, f64)` raises the shape rule's error
eagerly, as it does when staged, instead of letting NumPy promote.
"""
from __future__ import annotations

from functools import wraps

from ..core.avals import aval_of
from ..core.trace import Trace, abstract_eval_rules, ctx, rule_for, set_trace


class _CheckTrace(Trace):
    name = "lax type check"

    def process_primitive(self, prim, args, params):
        rule_for(abstract_eval_rules, prim, "shape inference")(*[aval_of(a) for a in args], **params)
        with set_trace(self.parent):
            return prim.bind(*args, **params)


def checked(fun):
    """`fun` with every primitive it binds type-checked against its shape rule."""
    @wraps(fun)
    def run(*args, **kwargs):
        trace = _CheckTrace(ctx.trace)
        try:
            with set_trace(trace):
                return fun(*args, **kwargs)
        finally:
            trace.finish()
    return run
