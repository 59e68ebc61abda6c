"""The IR: Var, Literal, Eqn, Jaxpr, ClosedJaxpr, and a type checker."""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

from .avals import ShapedArray, aval_of


class Var:
    """A variable of a jaxpr; its name is chosen only when printed."""

    __slots__ = ("aval",)

    def __init__(self, aval: ShapedArray):
        self.aval = aval

    def __repr__(self):
        return f"Var({self.aval.str_short()})"


class Literal:
    """A scalar constant written inline in a jaxpr."""

    __slots__ = ("val", "aval")

    def __init__(self, val, aval: ShapedArray | None = None):
        self.val = val
        self.aval = aval_of(val) if aval is None else aval

    def __repr__(self):
        return f"Literal({self.val})"


Atom = Var | Literal


class Eqn(NamedTuple):
    prim: Any           # a Primitive
    inputs: list        # list of Atom
    outvars: list       # list of Var
    params: dict
    source: str | None = None   # the user's line that produced it, for errors

    # JAX's names for two fields, for code that inspects jaxprs as JAX's
    # (`eqn.primitive is lax.sin_p`, `eqn.invars`).
    primitive = property(lambda self: self.prim)
    invars = property(lambda self: self.inputs)


class Jaxpr:
    """A typed program: constants, inputs, equations and outputs.

    It prints as `{ lambda consts ; args . let eqns in (outs) }`.
    """

    __slots__ = ("constvars", "invars", "eqns", "outvars")

    def __init__(self, constvars, invars, eqns, outvars):
        self.constvars = list(constvars)
        self.invars = list(invars)
        self.eqns = list(eqns)
        self.outvars = list(outvars)

    @property
    def in_avals(self):
        return [v.aval for v in self.invars]

    @property
    def out_avals(self):
        return [v.aval for v in self.outvars]

    def __repr__(self):  # printed by core/pretty.py, which installs __str__ and _repr_html_
        return str(self)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


class ClosedJaxpr:
    """A jaxpr together with the values of its constvars."""

    __slots__ = ("jaxpr", "consts", "__weakref__")

    def __init__(self, jaxpr: Jaxpr, consts):
        assert len(consts) == len(jaxpr.constvars)
        self.jaxpr = jaxpr
        self.consts = list(consts)

    in_avals = property(lambda self: self.jaxpr.in_avals)
    out_avals = property(lambda self: self.jaxpr.out_avals)
    eqns = property(lambda self: self.jaxpr.eqns)

    # -- surgery: the same program with other inputs, outputs or equations ----
    def replace(self, *, constvars=None, invars=None, eqns=None, outvars=None,
                consts=None) -> "ClosedJaxpr":
        """A copy with the given parts replaced (the Vars are shared, not renamed)."""
        j = self.jaxpr
        return ClosedJaxpr(Jaxpr(j.constvars if constvars is None else constvars,
                                 j.invars if invars is None else invars,
                                 j.eqns if eqns is None else eqns,
                                 j.outvars if outvars is None else outvars),
                           self.consts if consts is None else consts)

    def with_outputs(self, outvars) -> "ClosedJaxpr":
        """The program returning `outvars` (variables of this jaxpr) instead; equations
        no output needs stay until a DCE (funcad.transforms.passes.dce) drops them."""
        return self.replace(outvars=list(outvars))

    def permute(self, in_order, out_order) -> "ClosedJaxpr":
        """The program with its inputs and outputs listed in another order:
        new input k is old input in_order[k], likewise for outputs."""
        j = self.jaxpr
        return self.replace(invars=[j.invars[i] for i in in_order],
                            outvars=[j.outvars[i] for i in out_order])

    def with_extra_inputs(self, avals, position: int | None = None) -> "ClosedJaxpr":
        """The program taking unused inputs of types `avals` too, inserted before input
        `position` (at the end by default)."""
        invars = list(self.jaxpr.invars)
        k = len(invars) if position is None else position
        return self.replace(invars=invars[:k] + [Var(a) for a in avals] + invars[k:])


    def __repr__(self):  # printed by core/pretty.py, which installs __str__ and _repr_html_
        return str(self)

    def _repr_pretty_(self, p, cycle):
        p.text(str(self))


def inline_jaxpr(jaxpr: Jaxpr, consts, args) -> tuple[list, list]:
    """The equations of `jaxpr` with fresh variables, for writing its body into another
    jaxpr: its constvars read the atoms `consts`, its invars the atoms `args`.
    Returns (equations, output atoms). Fresh variables let one body be inlined at
    several call sites. The one inliner: the passes and funcad.to_python use it.
    """
    sub = {id(v): a for v, a in zip(jaxpr.constvars, consts)}
    sub.update((id(v), a) for v, a in zip(jaxpr.invars, args))

    def read(a):
        return sub.get(id(a), a) if type(a) is Var else a

    eqns = []
    for e in jaxpr.eqns:
        outs = [Var(v.aval) for v in e.outvars]
        eqns.append(e._replace(inputs=[read(a) for a in e.inputs], outvars=outs))
        sub.update((id(v), w) for v, w in zip(e.outvars, outs))
    return eqns, [read(a) for a in jaxpr.outvars]


def literal_value(x) -> bool:
    """Whether a concrete value is small enough to print inline as a Literal."""
    return isinstance(x, (np.ndarray, np.generic)) and x.ndim == 0 or type(x) in (int, float, bool, complex)
