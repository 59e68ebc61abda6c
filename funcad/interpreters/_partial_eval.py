"""Staging functions into jaxprs (JAX's `interpreters.partial_eval`, the parts a
library uses on closed programs).

>>> import numpy as np, funcad.numpy as jnp
>>> from funcad.core.avals import ShapedArray
>>> from funcad.extend import linear_util as lu
>>> f = lu.wrap_init(lambda x: [jnp.sin(x)], debug_info=None)
>>> jaxpr, out_avals, consts = trace_to_jaxpr_dynamic(f, [ShapedArray((2,), np.float32)])
>>> [a.str_short() for a in out_avals]
['f32[2]']
"""
from __future__ import annotations

from typing import Sequence

from ..core.ir import ClosedJaxpr, Jaxpr, Var
from ..core.staging import trace_to_jaxpr
from ..transforms.passes.dce import dce as _dce

__all__ = ["close_jaxpr", "convert_constvars_jaxpr", "dce_jaxpr", "trace_to_jaxpr_dynamic"]


def trace_to_jaxpr_dynamic(fun, in_avals: Sequence, *, keep_inputs=None) -> tuple[Jaxpr, list, list]:
    """Stage the wrapped function `fun` (flat list in, flat list out) at `in_avals`:
    returns the open jaxpr, its output avals and the values of its constvars."""
    if keep_inputs is not None and not all(keep_inputs):
        raise ValueError("trace_to_jaxpr_dynamic: keep_inputs= must keep every input; funcad's "
                         "staging has no unused-input pruning at trace time (use dce_jaxpr after)")
    closed = trace_to_jaxpr(lambda *xs: list(fun.call_wrapped(*xs)), list(in_avals))
    return closed.jaxpr, closed.out_avals, closed.consts


def convert_constvars_jaxpr(jaxpr: Jaxpr) -> Jaxpr:
    """`jaxpr` with its constvars made leading inputs."""
    return Jaxpr([], list(jaxpr.constvars) + list(jaxpr.invars), jaxpr.eqns, jaxpr.outvars)


def close_jaxpr(jaxpr: Jaxpr) -> ClosedJaxpr:
    """A jaxpr with no constvars as a ClosedJaxpr."""
    if jaxpr.constvars:
        raise ValueError(f"close_jaxpr: the jaxpr has {len(jaxpr.constvars)} constvars; make them "
                         "inputs with convert_constvars_jaxpr first")
    return ClosedJaxpr(jaxpr, [])


def dce_jaxpr(jaxpr: Jaxpr, used_outputs: Sequence[bool], instantiate: bool | Sequence[bool] = False
              ) -> tuple[Jaxpr, list[bool]]:
    """`jaxpr` keeping only the outputs marked in `used_outputs` and the equations they
    need, and only the inputs those read (and those marked in `instantiate`); returns it
    and which inputs it kept."""
    if jaxpr.constvars:
        raise ValueError("dce_jaxpr: the jaxpr has constvars; make them inputs with "
                         "convert_constvars_jaxpr first")
    outs = [v for v, used in zip(jaxpr.outvars, used_outputs) if used]
    pruned = _dce(ClosedJaxpr(Jaxpr([], jaxpr.invars, jaxpr.eqns, outs), [])).jaxpr
    read = {id(a) for e in pruned.eqns for a in e.inputs if type(a) is Var}
    read.update(id(v) for v in outs if type(v) is Var)
    inst = [instantiate] * len(jaxpr.invars) if isinstance(instantiate, bool) else list(instantiate)
    used_inputs = [i or id(v) in read for v, i in zip(jaxpr.invars, inst)]
    invars = [v for v, u in zip(jaxpr.invars, used_inputs) if u]
    return Jaxpr([], invars, pruned.eqns, outs), used_inputs
