"""Dead-code elimination: drop equations whose results nothing uses.

One backward sweep from the outputs. Unused constants go too; the inputs
stay, so the jaxpr's signature never changes. Calls (see register_call)
lose the outputs nobody reads and then the inputs their body no longer
reads. Effectful equations always stay.
"""
from __future__ import annotations

from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Var
from ._util import is_effectful, map_subjaxprs, optimizable_call


def dce(closed: ClosedJaxpr, open_: bool = False) -> ClosedJaxpr:
    """Remove dead equations and unused constants.

    >>> import funcad, funcad.numpy as fnp
    >>> j = funcad.make_jaxpr(lambda x: (fnp.sin(x), x)[1])(1.0)
    >>> len(dce(j).eqns)
    0
    """
    j = closed.jaxpr
    live = {id(v) for v in j.outvars if type(v) is Var}
    kept = []
    for eqn in reversed(j.eqns):
        used = [id(v) in live for v in eqn.outvars]
        if not any(used) and not is_effectful(eqn):
            continue
        if optimizable_call(eqn.prim):
            eqn = _prune_call(eqn, used)
        else:
            eqn = eqn._replace(params=map_subjaxprs(eqn.params, dce))
        live.update(id(a) for a in eqn.inputs if type(a) is Var)
        kept.append(eqn)
    kept.reverse()
    consts = [(v, c) for v, c in zip(j.constvars, closed.consts) if id(v) in live]
    jaxpr = Jaxpr([v for v, _ in consts], j.invars, kept, j.outvars)
    return ClosedJaxpr(jaxpr, [c for _, c in consts])


def _prune_call(eqn: Eqn, used: list) -> Eqn:
    """A call without the outputs not in `used` and the inputs its body then ignores."""
    name, _, prune_params = optimizable_call(eqn.prim)
    body: ClosedJaxpr = eqn.params[name]
    if is_effectful(eqn):
        used = [True] * len(used)
    bj = body.jaxpr
    body = dce(ClosedJaxpr(Jaxpr(bj.constvars, bj.invars, bj.eqns,
                                 [a for a, u in zip(bj.outvars, used) if u]), body.consts))
    bj = body.jaxpr
    read = {id(a) for e in bj.eqns for a in e.inputs if type(a) is Var}
    read.update(id(a) for a in bj.outvars if type(a) is Var)
    keep_in = [id(v) in read for v in bj.invars]
    body = ClosedJaxpr(Jaxpr(bj.constvars, [v for v, k in zip(bj.invars, keep_in) if k],
                             bj.eqns, bj.outvars), body.consts)
    params = dict(eqn.params, **{name: body})
    if prune_params is not None:
        params = prune_params(params, keep_in, used)
    return eqn._replace(inputs=[a for a, k in zip(eqn.inputs, keep_in) if k],
                        outvars=[v for v, u in zip(eqn.outvars, used) if u], params=params)
