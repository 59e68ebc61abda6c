"""Testing helpers behind funcad.test_util: `check_grads` compares funcad's derivatives with finite differences.

>>> import funcad.numpy as fnp
>>> from funcad.test_util import check_grads
>>> check_grads(lambda x: fnp.sin(x) * x, (0.7,), order=2)
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from ..core.narrow import kind as _kind
from ..core.avals import float0
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.trace import Tracer
from .api import jvp, vjp

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp", "default_tolerance"]

EPS = 1e-4

# Agreement expected between an AD derivative and a central difference, by dtype.
_GRAD_TOL = {np.dtype(np.float16): 5e-2, np.dtype(np.float32): 2e-3, np.dtype(np.float64): 1e-5,
             np.dtype(np.complex64): 2e-3, np.dtype(np.complex128): 1e-5}
# Step of the central difference by dtype: big enough that rounding stays small.
_EPS = {np.dtype(np.float16): 1e-1, np.dtype(np.float32): 1e-3, np.dtype(np.complex64): 1e-3}


def default_tolerance(dtype) -> float:
    """The default atol and rtol of `check_grads` for arrays of `dtype`."""
    return _GRAD_TOL.get(np.dtype(dtype), 1e-5)


def _dtype(x) -> np.dtype:
    return np.asarray(x).dtype


def _is_diff(x) -> bool:
    return _kind(_dtype(x)) in "fc"


def _rand_like(rng, x):
    """A random tangent/cotangent for x: normal floats, float0 for integer/bool values."""
    x = np.asarray(x)
    if x.dtype.kind == "f":
        return rng.standard_normal(x.shape).astype(x.dtype)
    if x.dtype.kind == "c":
        return (rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape)).astype(x.dtype)
    return np.zeros(x.shape, float0)


def _tree_rand(rng, tree):
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [_rand_like(rng, x) for x in leaves])


def _step_for(leaves) -> float:
    dts = [_dtype(x) for x in leaves if _is_diff(x)]
    return max([_EPS.get(d, EPS) for d in dts], default=EPS)


def numerical_jvp(f: Callable, primals: Sequence, tangents: Sequence, eps: float | None = None):
    """The central difference (f(x + eps·t) - f(x - eps·t)) / (2·eps), leaf by leaf.

    Integer inputs are not perturbed; integer outputs get float0 tangents.
    """
    p_leaves, p_tree = tree_flatten(tuple(primals))
    t_leaves = tree_flatten(tuple(tangents))[0]
    eps = eps or _step_for(p_leaves)

    def shifted(sign):
        xs = []
        for p, t in zip(p_leaves, t_leaves):
            if _is_diff(p) and _dtype(t) != float0:
                p = np.asarray(p)
                xs.append((p + sign * eps * np.asarray(t)).astype(p.dtype))
            else:
                xs.append(p)
        return f(*tree_unflatten(p_tree, xs))

    hi_leaves, out_tree = tree_flatten(shifted(1))
    lo_leaves = tree_flatten(shifted(-1))[0]
    out = []
    for hi, lo in zip(hi_leaves, lo_leaves):
        hi, lo = np.asarray(hi), np.asarray(lo)
        if hi.dtype.kind not in "fc":
            out.append(np.zeros(hi.shape, float0))
        else:
            out.append(((hi - lo) * (0.5 / eps)).astype(hi.dtype))
    return tree_unflatten(out_tree, out)


def _check_close(actual, expected, atol, rtol, what, floor=0.0):
    """Leafwise allclose; default tolerances by dtype, at least `floor`."""
    a_leaves, a_tree = tree_flatten(actual)
    e_leaves, e_tree = tree_flatten(expected)
    if a_tree != e_tree:
        raise AssertionError(f"{what}: tree structures differ: {a_tree} vs {e_tree}")
    for a, e in zip(a_leaves, e_leaves):
        a, e = np.asarray(a), np.asarray(e)
        if a.dtype == float0 or e.dtype == float0:
            continue
        if a.shape != e.shape:
            raise AssertionError(f"{what}: shapes differ: {a.shape} vs {e.shape}")
        tol = max(default_tolerance(a.dtype), default_tolerance(e.dtype), floor)
        np.testing.assert_allclose(a, e, atol=tol if atol is None else atol,
                                   rtol=tol if rtol is None else rtol, err_msg=what)


def _inner(xs, ys):
    """Re(Σ conj(x)·y) over the leaves of two pytrees, skipping float0 leaves."""
    total = 0.0
    for x, y in zip(tree_flatten(xs)[0], tree_flatten(ys)[0]):
        x, y = np.asarray(x), np.asarray(y)
        if x.dtype == float0 or y.dtype == float0:
            continue
        total += float(np.real(np.vdot(x.astype(np.complex128).ravel(), y.astype(np.complex128).ravel())))
    return total


def _ip_dtype(tree):
    dts = [_dtype(x) for x in tree_flatten(tree)[0] if _is_diff(x)]
    return max(dts, key=default_tolerance) if dts else np.dtype(np.float64)


def check_jvp(f: Callable, args: Sequence, *, atol=None, rtol=None, eps=None, rng=None,
              err_msg: str = "") -> None:
    """Check funcad.jvp of f at args against a central difference along a random tangent."""
    rng = np.random.default_rng(0) if rng is None else rng
    args = tuple(args)
    tangent = _tree_rand(rng, args)
    y, ty = jvp(f, args, tangent)
    # A difference quotient is no more precise than the inputs it perturbs.
    floor = default_tolerance(_ip_dtype(args))
    _check_close(y, f(*args), atol, rtol, f"{err_msg or 'JVP'}: primal output")
    _check_close(ty, numerical_jvp(f, args, tangent, eps), atol, rtol,
                 f"{err_msg or 'JVP'}: tangent vs finite differences", floor)


def check_vjp(f: Callable, args: Sequence, *, atol=None, rtol=None, eps=None, rng=None,
              err_msg: str = "", against_jvp: bool = False) -> None:
    """Check funcad.vjp through the identity <J·t, c> = <t, Jᵀ·c>.

    J·t comes from central differences, and also from funcad.jvp when
    `against_jvp` (which a custom_vjp function cannot do).
    """
    rng = np.random.default_rng(1) if rng is None else rng
    args = tuple(args)
    y, pullback = vjp(f, *args)
    _check_close(y, f(*args), atol, rtol, f"{err_msg or 'VJP'}: primal output")
    tangent = _tree_rand(rng, args)
    cotangent = _tree_rand(rng, y)
    # Conjugates make the identity hold for holomorphic complex functions too.
    ct_in = tree_map_np(np.conj, pullback(tree_map_np(np.conj, cotangent)))
    lhs = _inner(tangent, ct_in)
    tol_dt = _ip_dtype((args, y))
    tol = default_tolerance(tol_dt)
    at, rt = (tol if atol is None else atol), (tol if rtol is None else rtol)
    num = _inner(numerical_jvp(f, args, tangent, eps), cotangent)
    np.testing.assert_allclose(lhs, num, atol=at, rtol=rt,
                               err_msg=f"{err_msg or 'VJP'}: <t, J^T c> vs finite differences")
    if against_jvp:
        _, ty = jvp(f, args, tangent)
        np.testing.assert_allclose(lhs, _inner(ty, cotangent), atol=at, rtol=rt,
                                   err_msg=f"{err_msg or 'VJP'}: <t, J^T c> vs <J t, c> from jvp")


def tree_map_np(fn, tree):
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [x if _dtype(x) == float0 else fn(np.asarray(x)) for x in leaves])


def check_grads(f: Callable, args: Sequence, order: int, modes: Sequence[str] = ("fwd", "rev"),
                atol: float | None = None, rtol: float | None = None, eps: float | None = None) -> None:
    """Check derivatives of f at args up to `order`, as `jax.test_util.check_grads`.

    "fwd" checks jvp against central differences; "rev" checks vjp through
    <J·t, c> = <t, Jᵀ·c>. For order > 1 the same checks run on the jvp and
    vjp of f, recursively. Tolerances default by dtype (1e-5 for float64,
    2e-3 for float32); the difference step `eps` defaults to 1e-4 (1e-3 for
    float32). Raises AssertionError on a mismatch.

    >>> import funcad.numpy as fnp
    >>> check_grads(fnp.tanh, (np.array([0.1, -0.4]),), order=3)
    """
    modes = tuple(modes)
    for m in modes:
        if m not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'")
    rng = np.random.default_rng(0)
    kw = dict(atol=atol, rtol=rtol, eps=eps, rng=rng)

    def go(f, args, order, msg):
        if "fwd" in modes:
            fwd_msg = f"JVP of {msg}" if msg else "JVP"
            check_jvp(f, args, err_msg=fwd_msg, **kw)
            if order > 1:
                tangent = _tree_rand(rng, args)
                go(lambda p, t: jvp(f, p, t), (args, tangent), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {msg}" if msg else "VJP"
            check_vjp(f, args, err_msg=rev_msg, against_jvp="fwd" in modes, **kw)
            if order > 1:
                def f_vjp(*xs):
                    # The output itself is the cotangent: the pullback then
                    # depends on the inputs through both J and the cotangent.
                    y, pullback = vjp(f, *xs)
                    return pullback(_ct_from_output(y))
                go(f_vjp, args, order - 1, rev_msg)

    go(f, tuple(args), order, "")


def _ct_from_output(y):
    leaves, td = tree_flatten(y)
    out = []
    for x in leaves:
        dt = x.aval.dtype if isinstance(x, Tracer) else _dtype(x)
        out.append(x if _kind(dt) in "fc" else np.zeros(np.shape(x), float0))
    return tree_unflatten(td, out)
