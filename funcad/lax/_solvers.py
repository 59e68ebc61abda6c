"""custom_linear_solve and custom_root: solvers whose derivatives are implicit, as in
JAX. The solver itself (iterative, a while_loop, a call into anything) is never
differentiated; its derivatives come from the operator (implicit function theorem)."""
from __future__ import annotations

from typing import Any, Callable

from ..core.pytree import tree_flatten, tree_map, tree_unflatten
from ..primitives import elementwise as E
from ..transforms.closure import closure_convert
from ..primitives.elementwise import stop_gradient
from ..core.trace import bind_custom_jvp
from ..transforms.jvp import jvp_flat
from ..transforms.api import linear_transpose
from ..transforms.linear_solve import SolveRule, linear_solve

__all__ = ["custom_linear_solve", "custom_root"]


def _flat(tree):
    return tree_flatten(tree)[0]


def custom_linear_solve(matvec: Callable, b: Any, solve: Callable, transpose_solve: Callable | None = None,
                        symmetric: bool = False, has_aux: bool = False):
    """x with matvec(x) = b, computed as `solve(matvec, b)`, differentiated implicitly:
    the tangent is solve(matvec, db - dmatvec(x)) and the cotangent is
    transpose_solve(vecmat, ct) (or solve, if `symmetric`). With `has_aux`, solve returns
    (x, aux) and so does this function (aux is not differentiated).

    >>> import funcad, numpy as np
    >>> def f(a):
    ...     A = np.array([[2.0, 0.0], [0.0, 4.0]]) * a
    ...     mv = lambda x: A @ x
    ...     return custom_linear_solve(mv, np.ones(2), lambda mv, b: b / np.diag(A), symmetric=True)
    >>> f(1.0).tolist(), funcad.jacfwd(f)(1.0).tolist()
    ([0.5, 0.25], [-0.5, -0.25])
    """
    b_leaves, b_tree = tree_flatten(b)
    matvec_c, mc = closure_convert(matvec, b)
    nm = len(mc)

    def solve_fn(bb, *m):
        out = solve(lambda x: matvec_c(x, *m), bb)
        return out[0] if has_aux else out
    solve_c, sc = closure_convert(solve_fn, b, *mc)
    ns = len(sc)
    tsolve_user = solve if (transpose_solve is None and symmetric) else transpose_solve
    tc: list = []
    tsolve_c = None
    if tsolve_user is not None:
        def tsolve_fn(bb, *m):
            vt = linear_transpose(lambda x: matvec_c(x, *m), bb)

            def vecmat(y):
                return vt(y)[0]
            out = tsolve_user(vecmat, bb)
            return out[0] if has_aux and tsolve_user is solve else out
        tsolve_c, tc = closure_convert(tsolve_fn, b, *mc)

    unf = lambda leaves: tree_unflatten(b_tree, list(leaves))  # noqa: E731
    rule = SolveRule(
        lambda x, c: _flat(matvec_c(unf(x), *c[:nm])),
        lambda v, c: _flat(solve_c(unf(v), *c[:nm], *c[nm:nm + ns])),
        None if tsolve_c is None else (lambda v, c: _flat(tsolve_c(unf(v), *c[:nm], *c[nm + ns:]))),
        getattr(solve, "__name__", "solve"))
    x = unf(linear_solve(rule, list(mc) + list(sc) + list(tc), b_leaves))
    if not has_aux:
        return x
    aux = solve(lambda v: matvec_c(v, *[stop_gradient(c) for c in mc]), tree_map(stop_gradient, b))[1]
    return x, tree_map(stop_gradient, aux)


def custom_root(f: Callable, initial_guess: Any, solve: Callable, tangent_solve: Callable,
                has_aux: bool = False):
    """A root x of f(x) = 0 found by `solve(f, initial_guess)`, differentiated implicitly:
    dx = -tangent_solve(g, df) with g the linearization of f at x and df f's tangent in
    the values it closes over. `tangent_solve(g, y)` solves g(x) = y (for a scalar,
    `lambda g, y: y / g(1.0)`). With `has_aux`, solve returns (x, aux).

    >>> import funcad
    >>> def newton(f, x):
    ...     for _ in range(30):
    ...         x = x - f(x) / funcad.grad(f)(x)
    ...     return x
    >>> sqrt = lambda a: custom_root(lambda x: x ** 2 - a, 1.0, newton, lambda g, y: y / g(1.0))
    >>> round(float(sqrt(2.0)), 6), round(float(funcad.grad(sqrt)(2.0)), 6)
    (1.414214, 0.353553)
    """
    g_leaves, g_tree = tree_flatten(initial_guess)
    f_c, fc = closure_convert(f, initial_guess)
    nf = len(fc)

    def solve_fn(guess, *c):
        return solve(lambda x: f_c(x, *c), guess)
    solve_c, sc = closure_convert(solve_fn, initial_guess, *fc)
    ns = len(sc)

    def tangent_fn(x, rhs, *c):
        x_leaves, x_tree = tree_flatten(x)

        def lin(t):
            t_leaves = tree_flatten(t)[0]
            _, out = jvp_flat(lambda *xs: _flat(f_c(tree_unflatten(x_tree, list(xs)), *c)), x_leaves, t_leaves)
            return tree_unflatten(tree_flatten(rhs)[1], out)
        return tangent_solve(lin, rhs)
    rhs_example = f_c(initial_guess, *fc)
    tangent_c, tc = closure_convert(tangent_fn, initial_guess, rhs_example, *fc)
    n_out = []

    def fun(*args):
        c, s, t, g = args[:nf], args[nf:nf + ns], args[nf + ns:nf + ns + len(tc)], args[nf + ns + len(tc):]
        out = solve_c(tree_unflatten(g_tree, list(g)), *c, *s)
        sol, aux = (out if has_aux else (out, None))
        sol_leaves = _flat(sol)
        n_out[:] = [len(sol_leaves), tree_flatten(sol)[1], tree_flatten(aux)[1]]
        return sol_leaves + _flat(aux)

    def jvp(primals, tangents):
        outs = fun(*primals)
        k, sol_tree = n_out[0], n_out[1]
        c, t = list(primals[:nf]), list(primals[nf + ns:nf + ns + len(tc)])
        tcs = list(tangents[:nf])
        if all(x is None for x in tcs):
            return outs, [None] * len(outs)
        sol = tree_unflatten(sol_tree, outs[:k])
        _, df = jvp_flat(lambda *cc: _flat(f_c(sol, *cc)), c, tcs)
        dx = _flat(tangent_c(sol, tree_unflatten(tree_flatten(rhs_example)[1], df), *c, *t))
        return outs, [E.neg(d) for d in dx] + [None] * (len(outs) - k)

    outs = bind_custom_jvp(fun, jvp, list(fc) + list(sc) + list(tc) + list(g_leaves))
    if not n_out:  # a staged custom function: the tree is recorded while tracing
        fun(*(list(fc) + list(sc) + list(tc) + list(g_leaves)))
    k, sol_tree, aux_tree = n_out
    sol = tree_unflatten(sol_tree, outs[:k])
    return (sol, tree_unflatten(aux_tree, outs[k:])) if has_aux else sol
