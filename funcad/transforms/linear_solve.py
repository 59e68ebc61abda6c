"""The linear_solve primitive behind funcad.lax.custom_linear_solve: x = A^-1 b
computed by a user's solver, differentiated implicitly, as in JAX.

Operands are the operator's and solvers' (closure-converted) constants, then b's
leaves. `jaxpr` is the solve itself (the body that impl, lowering and to_python
run, as a call); `rule` holds the three operations as flat functions of (vector
leaves, constants): matvec (A x), solve (A^-1 b) and tsolve (A^-T b). Its rules:

- jvp: dx = solve(db - dA x), where dA x is matvec's jvp in the constants;
- transpose (the solve is linear in b): A^-T ct, the same primitive with the
  rule transposed (matvec -> its linear transpose, solve <-> tsolve);
- vmap: the same primitive with the three operations vmapped.

So the user's solver (an iterative one, a while_loop) is never differentiated.
"""
from __future__ import annotations

from typing import Callable, Sequence

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError
from ..core.ir import ClosedJaxpr
from ..core.staging import trace_to_jaxpr
from ..core.trace import Primitive, eval_jaxpr, ctx
from ..primitives._base import is_undefined, zeros_tangent
from ..primitives import elementwise as E
from ..primitives.structural import moveaxis0, broadcast_in_dim
from .calls import define_call
from .jvp import jvp_flat
from .api import linear_transpose
from .vmap import vmap_flat

__all__ = ["SolveRule", "linear_solve"]


class SolveRule:
    """matvec/solve/tsolve as flat functions f(vector_leaves, consts) -> leaves."""

    def __init__(self, matvec: Callable, solve: Callable, tsolve: Callable | None, name: str):
        self.matvec, self.solve, self.tsolve, self.name = matvec, solve, tsolve, name

    def __repr__(self) -> str:
        return self.name

    def transposed(self) -> "SolveRule":
        if self.tsolve is None:
            raise FuncadTypeError(
                "custom_linear_solve: reverse-mode differentiation needs the transposed solve; pass "
                "transpose_solve= (or symmetric=True if the operator is symmetric)")
        matvec = self.matvec

        def vecmat(y, consts):
            t = linear_transpose(lambda *x: matvec(list(x), consts), *[zeros_tangent(v) for v in y])
            return list(t(list(y)))
        return SolveRule(vecmat, self.tsolve, self.solve, self.name + ".T")

    def batched(self, const_dims, axis_size) -> "SolveRule":

        def lift(f):
            if f is None:
                return None

            def run(v, consts):
                n = len(v)
                return vmap_flat(lambda *a: f(list(a[:n]), list(a[n:])), list(v) + list(consts),
                                 [0] * n + list(const_dims), axis_size)
            return run
        return SolveRule(lift(self.matvec), lift(self.solve), lift(self.tsolve), self.name)


linear_solve_p = Primitive("linear_solve", multiple_results=True)


def linear_solve(rule: SolveRule, consts: Sequence, b: Sequence) -> list:
    """A^-1 b by `rule.solve`, with implicit derivatives (flat lists in and out)."""
    consts, b = list(consts), list(b)
    n = len(consts)
    closed = trace_to_jaxpr(lambda *a: rule.solve(list(a[n:]), list(a[:n])),
                            [aval_of(x) for x in consts + b], name="linear_solve", parent=ctx.trace)
    for o, x in zip(closed.jaxpr.outvars, b):
        if o.aval.shape != aval_of(x).shape or o.aval.dtype != aval_of(x).dtype:
            raise FuncadTypeError(f"custom_linear_solve: solve returned {o.aval.str_short()} for a right-hand "
                                  f"side of type {aval_of(x).str_short()}; it must return the same types")
    return linear_solve_p.bind(*consts, *b, jaxpr=closed, rule=rule, num_consts=n)


def _impl(*args, jaxpr: ClosedJaxpr, rule, num_consts):
    return eval_jaxpr(jaxpr.jaxpr, jaxpr.consts, *args)


def _aval(*avals, jaxpr: ClosedJaxpr, rule, num_consts):
    return [v.aval for v in jaxpr.jaxpr.outvars]


def _jvp(primals, tangents, *, jaxpr, rule, num_consts):
    c, b = list(primals[:num_consts]), list(primals[num_consts:])
    tc, tb = tangents[:num_consts], tangents[num_consts:]
    x = linear_solve_p.bind(*primals, jaxpr=jaxpr, rule=rule, num_consts=num_consts)
    if all(t is None for t in tangents):
        return x, [None] * len(x)
    rhs = [zeros_tangent(v) if t is None else t for v, t in zip(b, tb)]
    if any(t is not None for t in tc):
        _, dax = jvp_flat(lambda *cc: rule.matvec(list(x), list(cc)), c, list(tc))
        rhs = [E.sub(r, d) for r, d in zip(rhs, dax)]
    return x, linear_solve(rule, c, rhs)


def _transpose(cts, *args, jaxpr, rule, num_consts):
    c = args[:num_consts]
    if any(is_undefined(v) for v in c):
        raise FuncadTypeError("custom_linear_solve is linear in b only; the operator's constants cannot "
                              "be transposed")
    b = args[num_consts:]
    cts = [zeros_tangent(v.aval) if ct is None else ct for v, ct in zip(b, cts)]
    return [None] * num_consts + linear_solve(rule.transposed(), list(c), cts)


def _batch(vals, dims, *, axis_size, jaxpr, rule, num_consts):
    c = [v if d is None else moveaxis0(v, d, axis_size) for v, d in zip(vals[:num_consts], dims[:num_consts])]
    b = [moveaxis0(v, d, axis_size) if d is not None else
         broadcast_in_dim(v, (axis_size,) + aval_of(v).shape, tuple(range(1, aval_of(v).ndim + 1)))
         for v, d in zip(vals[num_consts:], dims[num_consts:])]
    cdims = [None if d is None else 0 for d in dims[:num_consts]]
    out = linear_solve(rule.batched(cdims, axis_size), c, b)
    return out, [0] * len(out)


# the passes keep it whole: its meaning is in being a solve
define_call(linear_solve_p, optimizable=False, impl=_impl, abstract_eval=_aval, jvp=_jvp,
            transpose=_transpose, batch=_batch)
