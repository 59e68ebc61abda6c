"""funcad.scipy.sparse.linalg: the Krylov solvers cg, gmres and bicgstab, as JAX's
scipy.sparse.linalg namespace has them. The operator A is a matrix or a function (a matvec) on arrays
or pytrees of arrays; the solution is differentiated implicitly through
funcad.lax.custom_linear_solve (one more solve with the transposed operator), never
through the iterations.

>>> import numpy as np
>>> x, info = cg(np.array([[4.0, 1.0], [1.0, 3.0]]), np.array([1.0, 2.0]))
>>> np.round(np.asarray(x), 6).tolist()
[0.090909, 0.636364]
"""
import operator as _operator
from functools import partial as _partial
from typing import Callable as _Callable

import numpy as _np

from ... import lax as _lax
from ... import numpy as _fnp
from ...core.avals import aval_of as _aval_of
from ...core.eager import EagerArray as _EagerArray
from ...core.errors import FuncadValueError as _FuncadValueError
from ...core.pytree import tree_leaves as _leaves, tree_map as _tree_map, tree_structure as _structure
from ...core.trace import Tracer as _Tracer
from ...numpy._jax_dtypes import result_type as _result_type
from ...lax import custom_linear_solve as _custom_linear_solve
from ...arrays.dtypes import asarray_or_tracer as _asarray_or_tracer
from ..linalg import solve as _solve, solve_triangular as _solve_triangular

__all__ = ["bicgstab", "cg", "gmres"]


# ----------------------------------------------------- pytree vector algebra ----

def _vdot_real(x, y):
    """Re <x, y> of two arrays."""
    out = _fnp.vdot(_fnp.real(x), _fnp.real(y))
    if _fnp.iscomplexobj(x) or _fnp.iscomplexobj(y):
        out = out + _fnp.vdot(_fnp.imag(x), _fnp.imag(y))
    return out


def _vdot_real_tree(x, y):
    return sum(_leaves(_tree_map(_vdot_real, x, y)))


def _vdot_tree(x, y):
    return sum(_leaves(_tree_map(_fnp.vdot, x, y)))


def _norm(x):
    return _fnp.sqrt(sum(_vdot_real(v, v) for v in _leaves(x)))


def _mul(scalar, tree):
    return _tree_map(lambda v: scalar * v, tree)


def _add(x, y):
    return _tree_map(_operator.add, x, y)


def _sub(x, y):
    return _tree_map(_operator.sub, x, y)


def _dtype_of(tree):
    return _result_type(*_leaves(tree))


def _identity(x):
    return x


def _as_matvec(A, what: str) -> _Callable:
    """A function x -> A x from a function, a square matrix or a matmul-able object."""
    if callable(A) and not isinstance(A, (_np.ndarray, _EagerArray, _Tracer)):
        return A
    if isinstance(A, (_np.ndarray, _EagerArray, _Tracer)) or hasattr(A, "__matmul__"):
        shape = tuple(_aval_of(A).shape) if not hasattr(A, "__matmul__") or hasattr(A, "dtype") else \
            tuple(getattr(A, "shape", ()))
        if len(shape) != 2 or shape[0] != shape[1]:
            raise _FuncadValueError(f"{what} must be a square matrix, but has shape: {shape}; "
                                    "pass an n x n matrix or a function computing the product")
        if isinstance(A, (_np.ndarray, _EagerArray, _Tracer)):
            return _partial(_fnp.dot, A)
        return _partial(_operator.matmul, A)
    raise TypeError(f"{what} must be either a function or ndarray: {A!r:.80}")


def _check_x0(x0, b):
    if _structure(x0) != _structure(b):
        raise _FuncadValueError(f"x0 and b must have matching tree structure: {_structure(x0)} vs {_structure(b)}")


def _shapes(tree):
    return [tuple(_np.shape(v)) if not hasattr(v, "shape") else tuple(v.shape) for v in _leaves(tree)]


# ----------------------------------------------------------------- cg, bicgstab ----

def _cg_solve(A, b, *, x0, maxiter, tol, atol, M):
    atol2 = _fnp.maximum(tol ** 2 * _vdot_real_tree(b, b), atol ** 2)
    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = _dtype_of(p0)
    gamma0 = _fnp.asarray(_vdot_real_tree(r0, z0)).astype(dtype)

    def cond(state):
        _, r, gamma, _, k = state
        rs = _fnp.real(gamma) if M is _identity else _vdot_real_tree(r, r)  # gamma = |r|^2 unpreconditioned
        return (rs > atol2) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _fnp.asarray(_vdot_real_tree(p, Ap)).astype(dtype)
        x = _add(x, _mul(alpha, p))
        r = _sub(r, _mul(alpha, Ap))
        z = M(r)
        gamma_new = _fnp.asarray(_vdot_real_tree(r, z)).astype(dtype)
        p = _add(z, _mul(gamma_new / gamma, p))
        return x, r, gamma_new, p, k + 1

    return _lax.while_loop(cond, body, (x0, r0, gamma0, p0, 0))[0]


def _bicgstab_solve(A, b, *, x0, maxiter, tol, atol, M):
    atol2 = _fnp.maximum(tol ** 2 * _vdot_real_tree(b, b), atol ** 2)
    r0 = _sub(b, A(x0))
    one = _np.ones((), _dtype_of(b))

    def cond(state):
        _, r, *_, k = state
        # k < 0 flags a breakdown (rho, alpha or omega zero), as SciPy's info codes
        return (_vdot_real_tree(r, r) > atol2) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_new = _vdot_tree(rhat, r)
        beta = rho_new / rho * alpha / omega
        p = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p)
        q = A(phat)
        alpha = rho_new / _vdot_tree(rhat, q)
        s = _sub(r, _mul(alpha, q))
        done = _vdot_real_tree(s, s) < atol2  # converged half-way: skip the stabilising step
        shat = M(s)
        t = A(shat)
        omega = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_half = _add(x, _mul(alpha, phat))
        x = _tree_map(_partial(_fnp.where, done), x_half, _add(x_half, _mul(omega, shat)))
        r = _tree_map(_partial(_fnp.where, done), s, _sub(s, _mul(omega, t)))
        k = _fnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = _fnp.where(rho_new == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_new, p, q, k

    return _lax.while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))[0]


def _isolve(name, solver, A, b, x0, tol, atol, maxiter, M, symmetric_if_real):
    b = _tree_map(_asarray_or_tracer, b)
    x0 = _tree_map(_fnp.zeros_like, b) if x0 is None else _tree_map(_asarray_or_tracer, x0)
    if maxiter is None:
        maxiter = 10 * sum(int(_np.prod(_aval_of(v).shape, dtype=int)) for v in _leaves(b))
    A = _as_matvec(A, "linear operator")
    M = _identity if M is None else _as_matvec(M, "preconditioner M")
    _check_x0(x0, b)
    if _shapes(x0) != _shapes(b):
        raise _FuncadValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    solve = _partial(solver, x0=x0, maxiter=maxiter, tol=tol, atol=atol, M=M)
    symmetric = symmetric_if_real and not any(_fnp.iscomplexobj(v) for v in _leaves(b))
    x = _custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None, M=None):
    """Solve A x = b by conjugate gradients, for a Hermitian positive definite A, as JAX's
    cg: (x, None). Stops when |r| <= max(tol |b|, atol) or after maxiter steps
    (10 n by default). b, x0 and A's argument may be pytrees; M is a preconditioner
    (an approximate inverse of A). Derivatives solve with A again (A is symmetric).

    >>> import numpy as np
    >>> x, _ = cg(lambda v: {"a": 2.0 * v["a"]}, {"a": np.ones(2)})
    >>> x["a"].tolist()
    [0.5, 0.5]
    """
    return _isolve("cg", _cg_solve, A, b, x0, tol, atol, maxiter, M, True)


def bicgstab(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, maxiter: int | None = None, M=None):
    """Solve A x = b by the biconjugate gradient stabilized method, for any nonsingular A,
    as JAX's bicgstab: (x, None). Arguments as for `cg`; derivatives solve with the
    transposed operator by bicgstab again.

    >>> import numpy as np
    >>> x, _ = bicgstab(np.array([[2.0, 1.0], [0.0, 1.0]]), np.array([3.0, 1.0]))
    >>> np.round(np.asarray(x), 6).tolist()
    [1.0, 1.0]
    """
    return _isolve("bicgstab", _bicgstab_solve, A, b, x0, tol, atol, maxiter, M, False)


# ------------------------------------------------------------------------ gmres ----

def _safe_normalize(x, thresh=None):
    """x / |x| and |x|, or zeros and 0 where |x| <= thresh (the dtype's eps by default)."""
    norm = _norm(x)
    dtype = _dtype_of(x)
    if thresh is None:
        thresh = _fnp.finfo(_aval_of(norm).dtype).eps
    big = norm > _fnp.real(_fnp.asarray(thresh).astype(dtype))
    scale = _fnp.where(big, _fnp.asarray(norm).astype(dtype), _np.ones((), dtype))  # no 0/0 in the unused branch
    unit = _tree_map(lambda v: _fnp.where(big, v / scale, _np.zeros((), _aval_of(v).dtype)), x)
    return unit, _fnp.where(big, norm, _np.zeros((), _aval_of(norm).dtype))


def _project(V, v):
    """V^H v for the columns of V (a pytree of (..., m) arrays) against v (a pytree of (...) arrays)."""
    return sum(_fnp.tensordot(_fnp.conj(X), y, axes=(tuple(range(y.ndim)), tuple(range(y.ndim))))
               for X, y in zip(_leaves(V), _leaves(v)))


def _combine(V, h):
    """V h: the columns of V weighted by h."""
    return _tree_map(lambda X: _fnp.dot(X, h), V)


def _arnoldi_step(k, A, M, V, H):
    """Extend the Krylov basis V by the orthonormalized M A V[:, k] (Gram-Schmidt twice,
    which keeps it orthogonal to working precision) and put its overlaps in row k of H."""
    dtype = _dtype_of(V)
    v = M(A(_tree_map(lambda X: X[..., k], V)))
    _, norm0 = _safe_normalize(v)
    h = _project(V, v)
    v = _sub(v, _combine(V, h))
    h2 = _project(V, v)
    v = _sub(v, _combine(V, h2))
    h = h + h2
    # below eps |v| the new direction is rounding noise: an invariant subspace was found
    unit, norm1 = _safe_normalize(v, thresh=_fnp.finfo(dtype).eps * norm0)
    V = _tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit)
    h = h.at[k + 1].set(_fnp.asarray(norm1).astype(dtype))
    return V, H.at[k, :].set(h), norm1 == 0


def _rotate(H, i, c, s):
    """Apply the Givens rotation (c, s) to entries i and i + 1 of H."""
    a, b = H[i], H[i + 1]
    return H.at[i].set(_fnp.conj(c) * a - _fnp.conj(s) * b).at[i + 1].set(s * a + c * b)


def _givens(a, b):
    """(c, s) with s a + c b = 0 and |c|^2 + |s|^2 = 1, dividing by the larger of |a|, |b|."""
    swap = _fnp.abs(a) < _fnp.abs(b)
    zero = _fnp.abs(b) == 0
    den = _fnp.where(swap, b, a)
    t = -_fnp.where(swap, a, b) / _fnp.where(zero & ~swap & (den == 0), _fnp.ones_like(den), den)
    r = _lax.rsqrt(1 + _fnp.abs(t) ** 2).astype(_aval_of(t).dtype)
    c = _fnp.where(zero, 1, _fnp.where(swap, r * t, r))
    s = _fnp.where(zero, 0, _fnp.where(swap, r, r * t))
    return c, s


def _basis(unit_residual, restart):
    return _tree_map(lambda v: _fnp.concatenate(
        [v[..., None], _fnp.zeros(tuple(_aval_of(v).shape) + (restart,), _aval_of(v).dtype)], axis=-1),
        unit_residual)


def _finish(A, M, b, x0, V, y):
    x = _add(x0, _tree_map(lambda X: _fnp.dot(X[..., :-1], y), V))
    unit, norm = _safe_normalize(M(_sub(b, A(x))))
    return x, unit, norm


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart, QR-factorizing the Hessenberg matrix by Givens rotations as it grows:
    the rotated right-hand side gives the residual for free, so it stops early."""
    dtype = _dtype_of(b)
    V = _basis(unit_residual, restart)
    R = _fnp.eye(restart, restart + 1, dtype=dtype)  # unused rows stay trivial equations
    givens = _fnp.zeros((restart, 2), dtype)
    beta = _fnp.zeros(restart + 1, dtype).at[0].set(_fnp.asarray(residual_norm).astype(dtype))

    def cond(state):
        k, err, *_ = state
        return (k < restart) & (err > ptol)

    def body(state):
        k, _, V, R, beta, givens = state
        V, H, _ = _arnoldi_step(k, A, M, V, R)
        row = _lax.fori_loop(0, k, lambda i, row: _rotate(row, i, givens[i, 0], givens[i, 1]), H[k, :])
        c, s = _givens(row[k], row[k + 1])
        givens = givens.at[k, 0].set(c).at[k, 1].set(s)
        R = R.at[k, :].set(_rotate(row, k, c, s))
        beta = _rotate(beta, k, c, s)
        return k + 1, _fnp.abs(beta[k + 1]), V, R, beta, givens

    _, _, V, R, beta, _ = _lax.while_loop(cond, body, (0, residual_norm, V, R, beta, givens))
    y = _solve_triangular(R[:, :-1].T, beta[:-1])
    return _finish(A, M, b, x0, V, y)


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart: the whole Arnoldi basis first, then one least-squares solve."""
    del ptol
    dtype = _dtype_of(b)
    V = _basis(unit_residual, restart)
    H = _fnp.eye(restart, restart + 1, dtype=dtype)

    def cond(state):
        _, _, breakdown, k = state
        return (k < restart) & ~breakdown

    def body(state):
        V, H, _, k = state
        V, H, breakdown = _arnoldi_step(k, A, M, V, H)
        return V, H, breakdown, k + 1

    V, H, _, _ = _lax.while_loop(cond, body, (V, H, _np.bool_(False), 0))
    beta = _fnp.zeros(restart + 1, dtype).at[0].set(_fnp.asarray(residual_norm).astype(dtype))
    Ht = H.T  # min |Ht y - beta|, by the normal equations (Ht has full column rank)
    y = _solve(_fnp.dot(_fnp.conj(H), Ht), _fnp.dot(_fnp.conj(H), beta), assume_a="pos")
    return _finish(A, M, b, x0, V, y)


def _gmres_solve(A, b, *, x0, atol, ptol, restart, maxiter, M, step):
    unit, norm = _safe_normalize(M(_sub(b, A(x0))))

    def cond(state):
        _, k, _, norm = state
        return (k < maxiter) & (norm > atol)

    def body(state):
        x, k, unit, norm = state
        x, unit, norm = step(A, b, x, unit, norm, ptol, restart, M)
        return x, k + 1, unit, norm

    return _lax.while_loop(cond, body, (x0, 0, unit, norm))[0]


def gmres(A, b, x0=None, *, tol: float = 1e-5, atol: float = 0.0, restart: int = 20,
          maxiter: int | None = None, M=None, solve_method: str = "batched"):
    """Solve A x = b by restarted GMRES, for any nonsingular A, as JAX's gmres: (x, info),
    info 0, or -1 where the solution came out NaN. Each restart builds a Krylov space of
    dimension `restart` (at most n); at most `maxiter` restarts (10 n by default).
    solve_method 'batched' solves the least-squares problem once per restart;
    'incremental' keeps a Givens QR factorization and stops a restart early.
    b, x0 and A's argument may be pytrees; M is a left preconditioner.

    >>> import numpy as np
    >>> x, info = gmres(np.array([[2.0, 1.0], [0.0, 1.0]]), np.array([3.0, 1.0]), solve_method="incremental")
    >>> np.round(np.asarray(x), 6).tolist(), int(info)
    ([1.0, 1.0], 0)
    """
    steps = {"incremental": _gmres_incremental, "batched": _gmres_batched}
    if solve_method not in steps:
        raise _FuncadValueError(f"invalid solve_method {solve_method!r}, must be either 'incremental' or 'batched'")
    b = _tree_map(_asarray_or_tracer, b)
    x0 = _tree_map(_fnp.zeros_like, b) if x0 is None else _tree_map(_asarray_or_tracer, x0)
    A = _as_matvec(A, "linear operator")
    M = _identity if M is None else _as_matvec(M, "preconditioner M")
    size = sum(int(_np.prod(_aval_of(v).shape, dtype=int)) for v in _leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(_operator.index(restart), size)
    _check_x0(x0, b)
    b_norm = _norm(b)
    atol = _fnp.maximum(tol * b_norm, atol)
    ptol = _norm(M(b)) * _fnp.minimum(1.0, atol / b_norm)  # the preconditioned tolerance in a restart
    solve = _partial(_gmres_solve, x0=x0, atol=atol, ptol=ptol, restart=restart, maxiter=maxiter, M=M,
                    step=steps[solve_method])
    x = _custom_linear_solve(A, b, solve=solve, transpose_solve=solve)
    return x, _fnp.where(_fnp.isnan(_norm(x)), -1, 0)
