"""What the passes share: registries of call and effectful primitives, walking
into nested jaxprs, counting equations, and reading known constant values."""
from __future__ import annotations

from typing import Callable

import numpy as np

from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ...core.trace import call_rules, register_call  # noqa: F401  (register_call: exported by passes)
from ...core.trace import Primitive
from ...primitives import elementwise as E

# Primitives that must run even when their outputs are unused, and must not be
# merged or evaluated at optimisation time (I/O, randomness with state, ...).
effectful: set = set()


def _elementwise():
    return frozenset(v for k, v in vars(E).items() if k.endswith("_p") and isinstance(v, Primitive))


# Primitives that act on each element alone (operands broadcast NumPy-style).
ELEMENTWISE = _elementwise()


def optimizable_call(prim):
    """The CallRule of a call the passes may inline and prune (see register_call), or None."""
    rule = call_rules.get(prim)
    return rule if rule is not None and rule.optimizable else None


def register_effect(prim) -> None:
    """Declare `prim` effectful: never removed, merged or folded."""
    effectful.add(prim)


def is_jaxpr(x) -> bool:
    return isinstance(x, (ClosedJaxpr, Jaxpr))


_JAXPR_TYPES = (ClosedJaxpr, Jaxpr)


def has_subjaxprs(params: dict) -> bool:
    for v in params.values():  # hot: called for every equation by every pass
        t = type(v)
        if t in _JAXPR_TYPES or (t is tuple or t is list) and any(type(x) in _JAXPR_TYPES for x in v):
            return True
    return False


def subjaxprs(params: dict):
    """Every Jaxpr (open or inside a ClosedJaxpr) among params, one level deep."""
    for v in params.values():
        for x in (v if isinstance(v, (tuple, list)) else (v,)):
            if isinstance(x, ClosedJaxpr):
                yield x.jaxpr
            elif isinstance(x, Jaxpr):
                yield x


def map_subjaxprs(params: dict, fn: Callable) -> dict:
    """params with `fn(closed, open_) -> ClosedJaxpr` applied to each nested jaxpr.

    An open Jaxpr (one whose constvars are passed in by its primitive) is
    handed over as a ClosedJaxpr whose constvars are leading invars, with
    `open_=True`: the pass must then keep it free of new constants.
    Params come back as the same dict when there is nothing to map.
    """
    if not has_subjaxprs(params):
        return params

    def go(v):
        if isinstance(v, ClosedJaxpr):
            return fn(v, False)
        if isinstance(v, Jaxpr):
            n = len(v.constvars)
            c = fn(ClosedJaxpr(Jaxpr([], v.constvars + v.invars, v.eqns, v.outvars), []), True)
            assert not c.consts, "a pass added constants to an open jaxpr"
            j = c.jaxpr
            return Jaxpr(j.invars[:n], j.invars[n:], j.eqns, j.outvars)
        if isinstance(v, (tuple, list)) and any(is_jaxpr(x) for x in v):
            return type(v)(go(x) for x in v)
        return v

    return {k: go(v) for k, v in params.items()}


def is_effectful(eqn: Eqn) -> bool:
    if not effectful:
        return False
    return eqn.prim in effectful or any(
        is_effectful(e) for j in subjaxprs(eqn.params) for e in j.eqns)


def count_eqns(jaxpr) -> int:
    """Equations of a jaxpr, counting into nested jaxprs. A call equation
    counts as its body only, so inlining a call does not change the count.

    >>> import funcad
    >>> count_eqns(funcad.make_jaxpr(lambda x: x * 2.0 + 1.0)(1.0))
    2
    """
    if isinstance(jaxpr, ClosedJaxpr):
        jaxpr = jaxpr.jaxpr
    n = 0
    for eqn in jaxpr.eqns:
        n += 0 if optimizable_call(eqn.prim) else 1
        n += sum(count_eqns(j) for j in subjaxprs(eqn.params))
    return n


class Env:
    """Substitution of atoms for variables while a pass rewrites a jaxpr."""

    __slots__ = ("map",)

    def __init__(self):
        self.map: dict[int, object] = {}

    def read(self, a):
        return self.map.get(id(a), a) if type(a) is Var else a

    def set(self, v: Var, a) -> None:
        self.map[id(v)] = a


def concrete(x):
    """x if it is a NumPy value the passes may compute with now, else None
    (tracers of outer transformations and device arrays are not)."""
    return x if isinstance(x, (np.ndarray, np.generic, bool, int, float, complex)) else None


def literal(value, aval) -> Literal:
    """A Literal holding a NumPy value of exactly the aval's dtype, so that the
    NumPy interpreter sees the same dtype as the equation it replaces."""
    return Literal(np.asarray(value, aval.dtype).reshape(()), aval)


def uniform_scalar(value) -> np.ndarray | None:
    """The single value every element of a concrete array has, or None.

    Broadcast views (zero strides) are checked on their distinct part only.
    """
    v = np.asarray(value)
    if v.size == 0:
        return None
    if v.ndim:
        v = v[tuple(0 if s == 0 else slice(None) for s in v.strides)]
    flat = v.reshape(-1)
    first = flat[0]
    if v.size > 1:
        if flat[-1] != first or flat[v.size // 2] != first:  # most arrays: rejected at once
            return None
        if not np.all(v == first):  # NaNs never compare equal: not uniform
            return None
        if v.dtype.kind == "f" and first == 0 and len(set(np.signbit(v).reshape(-1).tolist())) > 1:
            return None  # +0.0 and -0.0 mixed
    return np.asarray(first)
