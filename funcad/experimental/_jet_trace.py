"""Taylor mode: the jet trace, its rule table and the flat entry points.

A jet tracer carries a primal x0 and its Taylor coefficients [x1, ..., xK] in
the unscaled convention (x(t) = x0 + x1 t + x2 t^2 + ...), `None` when they
are all zero. A primitive's jet rule runs with the parent trace current and
maps (primals, series) to (primal_out, series_out); rules live in
`_jet_rules.py`.
"""
from __future__ import annotations

from typing import Callable

from ..core.avals import aval_of
from ..core.errors import MissingRuleError
from ..core.trace import Trace, Tracer, check_alive, ctx, set_trace
from .. import numpy as fnp

__all__ = ["JetTrace", "JetTracer", "MissingJetRuleError", "jet_flat", "jet_rules", "jet_terms",
           "zero_terms"]

# prim -> rule(primals, series, **params) -> (primal_out, series_out); series_out is a
# list of K terms (a list of such lists for several results), or None when zero.
jet_rules: dict = {}


class MissingJetRuleError(MissingRuleError, KeyError):
    """A primitive with no jet rule. A KeyError too, as JAX's jet raises (a missing
    entry of its rule table), so code catching that still works."""

    __str__ = Exception.__str__  # KeyError would print the message quoted


class JetTracer(Tracer):
    __slots__ = ("primal", "terms")

    def __init__(self, trace, primal, terms):
        self._trace = trace
        self.primal = primal
        self.terms = terms

    @property
    def aval(self):
        return aval_of(self.primal)

    def concrete(self):
        p = self.primal
        return p.concrete() if isinstance(p, Tracer) else p


def zero_terms(x, order: int) -> list:
    """K materialised zero coefficients for a value like `x`."""
    a = aval_of(x)
    z = fnp.zeros(a.shape, a.dtype)
    return [z] * order


class JetTrace(Trace):
    name = "jet"

    def __init__(self, parent, order: int):
        super().__init__(parent)
        self.order = order

    def unpack(self, x):
        if type(x) is JetTracer and x._trace is self:
            return x.primal, x.terms
        check_alive(x)
        return x, None

    def process_primitive(self, prim, args, params):
        primals, series = zip(*[self.unpack(x) for x in args]) if args else ((), ())
        with set_trace(self.parent):
            if all(s is None for s in series):
                return prim.bind(*primals, **params)
            rule = jet_rules.get(prim)
            if rule is None:
                raise MissingJetRuleError(
                    f"Jet rule for '{prim.name}' not implemented: funcad.experimental.jet has no "
                    f"Taylor-mode rule for the primitive `{prim.name}` (JAX's jet has none either "
                    "unless it is listed in its jet_rules). Compute the series another way (repeated "
                    "funcad.jvp gives the same derivatives), or keep the primitive's inputs free "
                    "of the series.")
            series = [zero_terms(p, self.order) if s is None else s for p, s in zip(primals, series)]
            out, terms = rule(list(primals), series, **params)
        if prim.multiple_results:
            terms = [None] * len(out) if terms is None else terms
            return [o if t is None else JetTracer(self, o, list(t)) for o, t in zip(out, terms)]
        return out if terms is None else JetTracer(self, out, list(terms))


def jet_flat(fun: Callable, primals, series, order: int):
    """Push truncated Taylor series through `fun` (flat lists in and out).

    `series[i]` is the list of `order` unscaled coefficients of `primals[i]`, or
    None (zero). Returns (primals_out, series_out) with every output series
    materialised (zeros where the output does not depend on the inputs' series).
    """
    trace = JetTrace(ctx.trace, order)
    ins = [p if s is None else JetTracer(trace, p, list(s)) for p, s in zip(primals, series)]
    try:
        with set_trace(trace):
            outs = fun(*ins)
        pairs = [trace.unpack(o) for o in outs]
    finally:
        trace.finish()
    p_out = [p for p, _ in pairs]
    s_out = [zero_terms(p, order) if s is None else list(s) for p, s in pairs]
    return p_out, s_out


def jet_terms(fun: Callable, primals, series):
    """JAX's `jet2` for rules: the unscaled series of the single result of `fun`."""
    order = len(series[0])
    (p,), (s,) = jet_flat(lambda *xs: [fun(*xs)], list(primals), list(series), order)
    return p, s

