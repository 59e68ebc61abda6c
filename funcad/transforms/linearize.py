"""linearize: jvp under partial evaluation.

Primal values are known and computed at once by the trace beneath; tangent
operations are staged into a linear jaxpr whose constants are the residuals.
"""
from __future__ import annotations

from ..core.avals import ShapedArray, aval_of, tangent_dtype, float0
from ..core.ir import ClosedJaxpr
from ..core.staging import StagingTrace
from ..core.trace import ctx, set_trace
from .jvp import jvp_flat, zeros_tangent


def linearize_flat(fun, primals):
    """Returns (primals_out, linear ClosedJaxpr mapping input tangents to output tangents).

    Tangent inputs of integer primals are float0 and never used.
    """
    pe = StagingTrace(ctx.trace, known_passthrough=True, name="linearize")
    tangent_in = []
    for p in primals:
        a = aval_of(p)
        arg = pe.new_arg(ShapedArray(a.shape, tangent_dtype(a.dtype)))
        tangent_in.append(arg if tangent_dtype(a.dtype) != float0 else None)
    try:
        with set_trace(pe):
            p_out, t_out = jvp_flat(fun, primals, tangent_in, instantiate=False)
            t_out = [_zero_out(p) if t is None else t for p, t in zip(p_out, t_out)]
            linear = pe.to_jaxpr(t_out)
    finally:
        pe.finish()
    return p_out, linear


def _zero_out(primal):
    return zeros_tangent(primal)
