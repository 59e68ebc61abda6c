"""Program optimisation on jaxprs: small passes and the pipeline that runs them.

Each pass maps a ClosedJaxpr to a new one computing the same values (the
input is never modified) and recurses into nested jaxprs (calls, control
flow: any param that is a Jaxpr or ClosedJaxpr):

  inline.py    calls of trivial bodies replaced by their body
  fold.py      equations on known constants computed now
  simplify.py  exact algebraic identities (x*1, neg(neg x), transpose chains, ...)
  cse.py       one equation per (primitive, params, inputs)
  dce.py       equations nobody reads removed

`optimize` runs them in that order until a round removes no equation.
"""
from __future__ import annotations

from ...core.ir import ClosedJaxpr, Jaxpr
from ._util import count_eqns, map_subjaxprs, register_call, register_effect
from .cse import cse
from .dce import dce
from .fold import fold
from .inline import inline
from .simplify import simplify

__all__ = ["optimize", "count_eqns", "register_call", "register_effect",
           "cse", "dce", "fold", "inline", "simplify"]

PIPELINE = (inline, fold, simplify, cse, dce)

# A stateful draw: each equation is its own draw, never folded into a constant or merged.
from ...primitives.rng import rng_uniform_p as _rng_uniform_p  # noqa: E402

register_effect(_rng_uniform_p)
# Host callbacks with side effects (debug.callback, io_callback): each call must happen.
from ...primitives.effects import debug_callback_p as _debug_callback_p  # noqa: E402
from ...primitives.effects import io_callback_p as _io_callback_p  # noqa: E402

register_effect(_debug_callback_p)
register_effect(_io_callback_p)
# lax.dce_sink: its only meaning is to keep the value it sinks (and what computes it).
from ...primitives.tokens import dce_sink_p as _dce_sink_p  # noqa: E402

register_effect(_dce_sink_p)


def optimize(closed: ClosedJaxpr, max_rounds: int = 4) -> ClosedJaxpr:
    """A jaxpr computing the same values with fewer equations.

    Rewrites are exact: on the NumPy interpreter the results are bitwise the
    same, NaN, inf and signed zeros included. Inputs, outputs and their types
    are unchanged. An open `Jaxpr` gives an open `Jaxpr` (with no new constants).

    >>> import funcad, funcad.numpy as fnp
    >>> j = funcad.make_jaxpr(funcad.grad(lambda x: fnp.sum(fnp.sin(x) ** 2)))(fnp.ones(3))
    >>> count_eqns(j) > count_eqns(funcad.optimize(j))
    True
    """
    if isinstance(closed, Jaxpr):  # open: handled like a jaxpr nested in params
        return map_subjaxprs({"jaxpr": closed}, lambda c, o: _run(c, o, max_rounds))["jaxpr"]
    if not isinstance(closed, ClosedJaxpr):
        raise TypeError("optimize takes a ClosedJaxpr (from funcad.make_jaxpr), "
                        f"got {type(closed).__name__}")
    return _run(closed, False, max_rounds)


def _run(closed: ClosedJaxpr, open_: bool, max_rounds: int) -> ClosedJaxpr:
    n = count_eqns(closed)
    for _ in range(max_rounds):
        for p in PIPELINE:
            closed = p(closed, open_)
        m = count_eqns(closed)
        if m >= n:
            break
        n = m
    return closed
