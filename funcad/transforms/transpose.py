"""Transposition of linear jaxprs: the backward pass of reverse mode."""
from __future__ import annotations

from ..core.avals import aval_of, float0
from ..core.ir import Literal, Var
from ..core.trace import TRANSPOSED_ON_ZERO, rule_for, transpose_rules
from ..core.typed_sharding import concrete
from ..primitives._base import UndefinedPrimal
from ..primitives.elementwise import add
from ..primitives.sharding import sharding_constraint_p


def backward_pass(jaxpr, consts, cts_out) -> list:
    """Cotangents of a linear jaxpr's inputs, given cotangents of its outputs.

    `None` is a symbolic zero cotangent (in and out). Equations that do not
    depend on the linear inputs are evaluated forward first.
    """
    # The hot loop of reverse mode, kept to plain dict and set operations.
    env = {id(v): c for v, c in zip(jaxpr.constvars, consts)}
    linear = {id(v) for v in jaxpr.invars}
    linear_eqns = []
    for eqn in jaxpr.eqns:
        for a in eqn.inputs:
            if type(a) is Var and id(a) in linear:
                linear_eqns.append(eqn)
                for v in eqn.outvars:
                    linear.add(id(v))
                break
        else:  # a non-linear equation on constants only
            out = eqn.prim.bind(*[a.val if type(a) is Literal else env[id(a)] for a in eqn.inputs], **eqn.params)
            if eqn.prim.multiple_results:
                for v, x in zip(eqn.outvars, out):
                    env[id(v)] = x
            else:
                env[id(eqn.outvars[0])] = out

    ct_env: dict = {}

    def add_ct(v, ct):
        if ct is None or type(v) is not Var:
            return
        k = id(v)
        if k not in linear or v.aval.dtype == float0:
            return
        prev = ct_env.get(k)
        ct_env[k] = ct if prev is None else add(prev, ct)

    for v, ct in zip(jaxpr.outvars, cts_out):
        add_ct(v, ct)

    pop = ct_env.pop
    live = None
    for eqn in reversed(linear_eqns):
        if eqn.prim.multiple_results:
            cts = [pop(id(v), None) for v in eqn.outvars]
            if all(c is None for c in cts):
                if eqn.prim not in TRANSPOSED_ON_ZERO:
                    continue
                if live is None:
                    live = live_ids(jaxpr.outvars, cts_out, [(e.inputs, e.outvars) for e in linear_eqns])
                if not any(id(v) in live for v in eqn.outvars):
                    continue  # dead code (JAX removes it before transposing)
        else:
            cts = pop(id(eqn.outvars[0]), None)
            if cts is None:
                continue
        args = []
        for a in eqn.inputs:
            if type(a) is Literal:
                args.append(a.val)
            elif id(a) in linear:
                args.append(UndefinedPrimal(a.aval))
            else:
                args.append(env[id(a)])
        rule = transpose_rules.get(eqn.prim) or rule_for(transpose_rules, eqn.prim,
                                                          "transpose (reverse-mode differentiation)")
        for a, ct in zip(eqn.inputs, rule(cts, *args, **eqn.params)):
            add_ct(a, ct)
    return [typed_as(v.aval, ct_env.get(id(v))) for v in jaxpr.invars]


def live_ids(outs, cts_out, steps) -> set:
    """Ids of what the outputs with a cotangent depend on through `steps`, (inputs,
    outputs) pairs in program order: what JAX's dead-code removal keeps before it
    transposes (an output without a cotangent, has_aux's say, is not differentiated)."""
    live = {id(v) for v, ct in zip(outs, cts_out) if ct is not None}
    for ins, step_outs in reversed(steps):
        if any(id(v) in live for v in step_outs):
            live.update(map(id, ins))
    return live


def typed_as(aval, ct):
    """A cotangent split as its primal is (sharding in types, JAX's rule): a sum's
    broadcast cotangent, say, is resharded to its operand's sharding."""
    s = aval._sharding
    if ct is None or s is None or getattr(aval_of(ct), "_sharding", None) == s:
        return ct
    return sharding_constraint_p.bind(ct, sharding=concrete(s))
