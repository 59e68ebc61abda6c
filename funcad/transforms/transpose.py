"""Transposition of linear jaxprs: the backward pass of reverse mode."""
from __future__ import annotations

from ..core.avals import float0
from ..core.ir import Literal, Var
from ..core.trace import rule_for, transpose_rules
from ..primitives._base import UndefinedPrimal
from ..primitives.elementwise import add


def backward_pass(jaxpr, consts, cts_out) -> list:
    """Cotangents of a linear jaxpr's inputs, given cotangents of its outputs.

    `None` is a symbolic zero cotangent (in and out). Equations that do not
    depend on the linear inputs are evaluated forward first.
    """
    env = {}
    for v, c in zip(jaxpr.constvars, consts):
        env[id(v)] = c
    linear = {id(v) for v in jaxpr.invars}
    linear_eqns = []
    for eqn in jaxpr.eqns:
        if any(type(a) is Var and id(a) in linear for a in eqn.inputs):
            linear_eqns.append(eqn)
            linear.update(id(v) for v in eqn.outvars)
        else:  # a non-linear equation on constants only
            out = eqn.prim.bind(*[a.val if type(a) is Literal else env[id(a)] for a in eqn.inputs], **eqn.params)
            for v, x in zip(eqn.outvars, out if eqn.prim.multiple_results else [out]):
                env[id(v)] = x

    ct_env: dict = {}

    def add_ct(v, ct):
        if ct is None or type(v) is not Var or id(v) not in linear or v.aval.dtype == float0:
            return
        prev = ct_env.get(id(v))
        ct_env[id(v)] = ct if prev is None else add(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        add_ct(v, ct)

    for eqn in reversed(linear_eqns):
        cts = [ct_env.pop(id(v), None) for v in eqn.outvars]
        if all(c is None for c in cts):
            continue
        args = []
        for a in eqn.inputs:
            if type(a) is Literal:
                args.append(a.val)
            elif id(a) in linear:
                args.append(UndefinedPrimal(a.aval))
            else:
                args.append(env[id(a)])
        rule = rule_for(transpose_rules, eqn.prim, "transpose (reverse-mode differentiation)")
        if eqn.prim.multiple_results:
            cts_in = rule(cts, *args, **eqn.params)
        else:
            cts_in = rule(cts[0], *args, **eqn.params)
        for a, ct in zip(eqn.inputs, cts_in):
            add_ct(a, ct)
    return [ct_env.get(id(v)) for v in jaxpr.invars]
