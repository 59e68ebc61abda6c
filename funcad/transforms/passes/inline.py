"""Inlining of trivial calls, and the simplification of calls across their boundary.

A call (see register_call) whose body has at most `max_eqns` equations is
replaced by a copy of its body with fresh variables; its constants join the
caller's. A call of a body that only forwards its inputs costs nothing
after inlining, and a one-equation call is cheaper inline than as a call.

Other calls are kept, but literal arguments move into the body (where
simplify.py can use them), and outputs that are literals, forwarded
arguments or repeats of another output are read outside the call instead
(dce.py then drops them from the call).
"""
from __future__ import annotations

from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var, inline_jaxpr
from ._util import Env, is_effectful, map_subjaxprs, optimizable_call

MAX_EQNS = 1


def inline(closed: ClosedJaxpr, open_: bool = False, max_eqns: int = MAX_EQNS) -> ClosedJaxpr:
    """Inline calls whose bodies have at most `max_eqns` equations (recursively).

    `max_eqns=None` inlines every call.

    >>> import funcad
    >>> f = funcad.jit(lambda x: x * 2.0)
    >>> j = funcad.make_jaxpr(lambda x: f(x) + 1.0)(1.0)
    >>> [e.prim.name for e in j.eqns], [e.prim.name for e in inline(j).eqns]
    (['jit', 'add'], ['mul', 'add'])
    """
    j = closed.jaxpr
    constvars, consts = list(j.constvars), list(closed.consts)
    env = Env()
    eqns = []
    for eqn in j.eqns:
        eqn = eqn._replace(inputs=[env.read(a) for a in eqn.inputs],
                           params=map_subjaxprs(eqn.params, lambda c, o: inline(c, o, max_eqns)))
        if optimizable_call(eqn.prim) and not is_effectful(eqn):
            eqn = _simplify_call(eqn, env)
        body = _inlinable(eqn, max_eqns, open_)
        if body is None:
            eqns.append(eqn)
            continue
        # The body's constants join the caller's.
        new_consts = [Var(v.aval) for v in body.jaxpr.constvars]
        constvars += new_consts
        consts += body.consts
        body_eqns, outs = inline_jaxpr(body.jaxpr, new_consts, eqn.inputs)
        eqns += body_eqns
        for v, a in zip(eqn.outvars, outs):
            env.set(v, a)
    outvars = [env.read(a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(constvars, j.invars, eqns, outvars), consts)


def _inlinable(eqn: Eqn, max_eqns, open_: bool) -> ClosedJaxpr | None:
    rule = optimizable_call(eqn.prim)
    if rule is None or is_effectful(eqn):
        return None
    body = eqn.params[rule.param]
    if isinstance(body, Jaxpr):
        body = ClosedJaxpr(body, []) if not body.constvars else None
    if body is None or (open_ and body.consts):
        return None
    if max_eqns is not None and len(body.jaxpr.eqns) > max_eqns:
        return None
    # An output aval must not change: a forwarded input may differ in weak type.
    given = {id(v): a for v, a in zip(body.jaxpr.invars, eqn.inputs)}
    for o, v in zip(body.jaxpr.outvars, eqn.outvars):
        if type(o) is Var and id(o) in given and given[id(o)].aval != v.aval:
            return None
    return body


def _simplify_call(eqn: Eqn, env: Env) -> Eqn:
    name, _, prune_params = optimizable_call(eqn.prim)
    body = eqn.params[name]
    if not isinstance(body, ClosedJaxpr):
        return eqn
    bj = body.jaxpr
    # Literal arguments become literals of the body; a repeated argument is passed once.
    inner = Env()
    keep_in = []
    seen: dict = {}
    for v, a in zip(bj.invars, eqn.inputs):
        lit = type(a) is Literal and (a.aval.shape, a.aval.dtype) == (v.aval.shape, v.aval.dtype)
        dup = type(a) is Var and id(a) in seen and seen[id(a)].aval == v.aval
        if lit:
            inner.set(v, Literal(a.val, v.aval))
        elif dup:
            inner.set(v, seen[id(a)])
        elif type(a) is Var:
            seen[id(a)] = v
        keep_in.append(not (lit or dup))
    if not all(keep_in):
        bj = Jaxpr(bj.constvars, [v for v, k in zip(bj.invars, keep_in) if k],
                   [e._replace(inputs=[inner.read(a) for a in e.inputs]) for e in bj.eqns],
                   [inner.read(a) for a in bj.outvars])
        params = dict(eqn.params, **{name: ClosedJaxpr(bj, body.consts)})
        if prune_params is not None:
            params = prune_params(params, keep_in, [True] * len(eqn.outvars))
        eqn = eqn._replace(inputs=[a for a, k in zip(eqn.inputs, keep_in) if k], params=params)
    # Outputs known outside the call are read there.
    arg = {id(v): a for v, a in zip(bj.invars, eqn.inputs)}
    first: dict = {}
    for o, v in zip(bj.outvars, eqn.outvars):
        if type(o) is Literal:
            env.set(v, Literal(o.val, v.aval))
        elif id(o) in arg and arg[id(o)].aval == v.aval:
            env.set(v, arg[id(o)])
        elif id(o) in first:
            env.set(v, first[id(o)])
        else:
            first[id(o)] = v
    return eqn
