"""Constant folding: run equations whose inputs are all known at optimisation time.

Known values are literals, the jaxpr's constants and the results of folded
equations. An equation on known values runs once, now, with its NumPy impl
(the same code the interpreter would run, so the numbers are the same), and
its results replace it:
  - a 0-d result becomes a Literal;
  - an array whose elements are all one value becomes `broadcast_in_dim` of a
    literal (cheap, and simplify.py can see through it);
  - another array of at most `max_const_size` elements becomes a new constant;
  - bigger results are not materialised: the equation stays, and its value is
    remembered only so that equations after it can fold (a broadcast view
    costs no memory).
Equations that produce more than MAX_EVAL_SIZE elements or read more than
four times that (but broadcasts, which are views), that are effectful, or
that hold nested jaxprs are never run. Nor is `iota`, nor a broadcast that spreads
a non-uniform array over a bigger shape: XLA keeps them out of its own constant
folding, so its simplifier turns a float iota's `i / n` into `i * (1/n)` and computes
gamma's `alpha - 1/3` of a constant alpha array at run time; folded here exactly,
`jnp.linspace` and `random.gamma` would differ from JAX's in the last bit. With
eager_backend="xla" (transforms/eager_xla.py) neither are the primitives NumPy rounds
otherwise than XLA: XLA folds them itself, as it does JAX's.
"""
from __future__ import annotations

import numpy as np

from ...core.avals import float0
from ...core.ir import ClosedJaxpr, Eqn, Jaxpr, Literal, Var
from ...core.trace import impl_rules, set_trace
from ...primitives.structural import broadcast_in_dim_p, iota_p
from ._util import (Env, concrete, has_subjaxprs, is_effectful, literal, map_subjaxprs,
                    uniform_scalar)

MAX_CONST_SIZE = 64        # elements a folded, non-uniform array may have as a new constant
MAX_EVAL_SIZE = 1 << 20    # elements an equation may produce to be run at all


def fold(closed: ClosedJaxpr, open_: bool = False, max_const_size: int = MAX_CONST_SIZE) -> ClosedJaxpr:
    """Fold equations whose inputs are all known constants.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> from funcad.transforms.passes import dce
    >>> j = funcad.make_jaxpr(lambda x: x * fnp.exp(fnp.zeros_like(x)))(np.ones(2))
    >>> print(dce(fold(j)))
    { lambda ; a:f64[2]. let
        b:f64[2] = broadcast_in_dim[broadcast_dimensions=(), shape=(2,)] 1.0:f64[]
        c:f64[2] = mul a b
      in (c,) }
    """
    j = closed.jaxpr
    known = {id(v): c for v, c in zip(j.constvars, closed.consts) if concrete(c) is not None}
    constvars, consts = list(j.constvars), list(closed.consts)
    env = Env()
    eqns = []
    for eqn in j.eqns:
        inputs = [env.read(a) for a in eqn.inputs]
        eqn = eqn._replace(inputs=inputs, params=map_subjaxprs(
            eqn.params, lambda c, o: fold(c, o, max_const_size)))
        outs = _evaluate(eqn, known)
        if outs is None:
            eqns.append(eqn)
            continue
        for v, x in zip(eqn.outvars, outs):
            known[id(v)] = x
        keep, replaced = False, []
        for v, x in zip(eqn.outvars, outs):
            a = v.aval
            if a.ndim == 0:
                env.set(v, literal(x, a))
                continue
            u = uniform_scalar(x)
            if u is not None:
                if eqn.prim is broadcast_in_dim_p and type(inputs[0]) is Literal:
                    keep = True  # already in the canonical form
                    continue
                w = Var(a)
                known[id(w)] = x
                replaced.append(Eqn(broadcast_in_dim_p, [literal(u, a.update(shape=()))], [w],
                                    {"shape": a.shape, "broadcast_dimensions": ()}, eqn.source))
                env.set(v, w)
            elif a.size <= max_const_size and not open_:
                w = Var(a)
                known[id(w)] = x
                constvars.append(w)
                consts.append(x)
                env.set(v, w)
            else:
                keep = True  # too big to store: keep the equation
        if keep:
            eqns.append(eqn)
        eqns.extend(replaced)
    outvars = [env.read(a) for a in j.outvars]
    return ClosedJaxpr(Jaxpr(constvars, j.invars, eqns, outvars), consts)


def _spreads_an_array(x, out_aval) -> bool:
    """Whether a broadcast repeats a non-uniform array (not a scalar, not a reshape).
    XLA folds elementwise operations through a broadcast of a scalar, but not through
    one of an array: what JAX's program computes from a small constant array spread
    over a bigger shape (gamma's `alpha - 1/3` per element) runs at run time, and
    folded here it would differ from JAX's in the last bit."""
    return np.size(x) not in (1, out_aval.size) and uniform_scalar(x) is None


def _evaluate(eqn: Eqn, known: dict):
    """The equation's outputs as a list of arrays, or None if it cannot be folded."""
    vals = []
    for a in eqn.inputs:
        if type(a) is Literal:
            vals.append(a.val)
        elif id(a) in known:
            vals.append(known[id(a)])
        else:
            return None
    rule = impl_rules.get(eqn.prim)
    if (rule is None or has_subjaxprs(eqn.params) or is_effectful(eqn) or eqn.prim is iota_p
            or getattr(rule, "leave_to_xla", False)
            or any(v.aval.dtype == float0 for v in eqn.outvars)
            or eqn.prim is broadcast_in_dim_p and _spreads_an_array(vals[0], eqn.outvars[0].aval)):
        return None
    if eqn.prim is not broadcast_in_dim_p and (  # a broadcast is a view: free whatever its size
            sum(v.aval.size for v in eqn.outvars) > MAX_EVAL_SIZE
            or sum(np.size(x) for x in vals) > 4 * MAX_EVAL_SIZE):
        return None
    try:
        with set_trace(None), np.errstate(all="ignore"):
            out = eqn.prim.bind(*vals, **eqn.params)
    except Exception:  # e.g. an integer to a negative power: leave it to run time
        return None
    outs = list(out) if eqn.prim.multiple_results else [out]
    if len(outs) != len(eqn.outvars):
        return None
    for v, x in zip(eqn.outvars, outs):
        x = np.asarray(x)
        if x.shape != v.aval.shape or x.dtype != v.aval.dtype:
            return None  # an impl quirk: rather keep the equation than change a type
    return outs
