"""linearize: jvp under partial evaluation.

Primal values are known and computed at once by the trace beneath; tangent
operations are staged into a linear jaxpr whose constants are the residuals.
"""
from __future__ import annotations

from ..core.avals import ShapedArray, aval_of, tangent_dtype, float0, tangent_aval
from ..core.ir import ClosedJaxpr
from ..core.staging import StagingTrace
from ..core.trace import ctx, set_trace
from .jvp import jvp_flat, zeros_tangent


def linearize_flat(fun, primals, in_nzs=None, out_nzs=None):
    """Returns (primals_out, linear ClosedJaxpr mapping input tangents to output tangents).

    Tangent inputs of integer primals are float0 and never used, nor are those
    `in_nzs` marks False (their tangents are symbolic zeros); `out_nzs`, a list if
    given, receives whether each output's tangent may be nonzero.
    """
    pe = StagingTrace(ctx.trace, known_passthrough=True, name="linearize")
    tangent_in = []
    for i, p in enumerate(primals):
        a = aval_of(p)
        arg = pe.new_arg(tangent_aval(a))
        nz = tangent_dtype(a.dtype) != float0 and (in_nzs is None or in_nzs[i])
        tangent_in.append(arg if nz else None)
    try:
        with set_trace(pe):
            p_out, t_out = jvp_flat(fun, primals, tangent_in, instantiate=False)
            if out_nzs is not None:
                out_nzs.extend(t is not None for t in t_out)
            t_out = [_zero_out(p) if t is None else t for p, t in zip(p_out, t_out)]
            linear = pe.to_jaxpr(t_out)
    finally:
        pe.finish()
    return p_out, linear


def _zero_out(primal):
    return zeros_tangent(primal)
