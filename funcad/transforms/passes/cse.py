"""Common-subexpression elimination: one equation per (primitive, params, inputs).

A forward sweep keys each equation on its primitive, its params and its
(already merged) inputs; a repeat is replaced by the first occurrence.
Inputs of add/mul and the other commutative primitives are keyed in a
canonical order, since IEEE addition and multiplication commute exactly.
"""
from __future__ import annotations

import numpy as np

from ...core.ir import ClosedJaxpr, Jaxpr, Literal, Var
from ._util import Env, is_effectful, is_jaxpr, map_subjaxprs

_COMMUTATIVE = {"add", "mul", "and", "or", "xor", "eq", "ne"}


def cse(closed: ClosedJaxpr, open_: bool = False) -> ClosedJaxpr:
    """Merge equations that compute the same thing.

    >>> import funcad, funcad.numpy as fnp
    >>> j = funcad.make_jaxpr(lambda x: fnp.sin(x) + fnp.sin(x))(1.0)
    >>> len(cse(j).eqns)
    2
    """
    j = closed.jaxpr
    env = Env()
    seen: dict = {}
    eqns = []
    for eqn in j.eqns:
        inputs = [env.read(a) for a in eqn.inputs]
        key = None if is_effectful(eqn) else _key(eqn, inputs)
        prev = seen.get(key) if key is not None else None
        if prev is not None:
            for v, p in zip(eqn.outvars, prev):
                env.set(v, p)
            continue
        eqn = eqn._replace(inputs=inputs, params=map_subjaxprs(eqn.params, cse))
        if key is not None:
            seen[key] = eqn.outvars
        eqns.append(eqn)
    outvars = [env.read(a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(j.constvars, j.invars, eqns, outvars), closed.consts)


def _key(eqn, inputs):
    """A hashable key, or None when some param cannot be compared safely."""
    try:
        params = tuple(sorted((k, _freeze(v)) for k, v in eqn.params.items()))
        ins = [_atom_key(a) for a in inputs]
        if eqn.prim.name in _COMMUTATIVE and len(ins) == 2:
            ins.sort(key=repr)
        # results typed with other shardings (Explicit mesh axes) are other values
        typed = tuple(getattr(v.aval, "_sharding", None) for v in eqn.outvars)
        key = (eqn.prim, params, tuple(ins), typed)
        hash(key)
    except TypeError:
        return None
    return key


def _atom_key(a):
    if type(a) is Var:
        return ("var", id(a))
    v = np.asarray(a.val, a.aval.dtype)
    # Bytes tell -0.0 from 0.0; the aval tells 1.0 (weak) from float64(1.0).
    return ("lit", v.dtype.str, a.aval.weak_type, v.tobytes())


def _freeze(x):
    # Keyed on type as well as value, since 1 == 1.0 == True in Python.
    if is_jaxpr(x):
        return ("jaxpr", id(x))  # the same callee object: the same computation
    if isinstance(x, (tuple, list)):
        return (type(x).__name__, tuple(_freeze(e) for e in x))
    if isinstance(x, dict):
        return ("dict", tuple(sorted((k, _freeze(v)) for k, v in x.items())))
    if isinstance(x, np.ndarray):
        return ("array", x.dtype.str, x.shape, x.tobytes())
    if isinstance(x, np.dtype):
        return ("dtype", x.str)
    if isinstance(x, Literal):
        return _atom_key(x)
    if isinstance(x, (bool, int, float, complex, str, type(None), np.generic)):
        return (type(x).__name__, x)
    hash(x)  # anything else must be hashable (raises TypeError if not)
    return (type(x).__name__, x)
