"""QDWH: the QR-based dynamically weighted Halley iteration for the polar
decomposition (Nakatsukasa, Bai and Gygi 2010; Nakatsukasa and Higham 2013),
as funcad.lax.linalg.qdwh with JAX's signature and iteration schedule.

x (scaled to norm <= 1) is driven to its unitary polar factor by rational
iterations u <- e u + (a - e) u (I + c u^H u)^-1 whose weights (a, b, c) are
fixed ahead from the lower bound l of the smallest singular value, l growing
to 1. While c is large (the first steps) the inverse is taken through a QR
factorization of [sqrt(c) u; I], which is stable there; then through a
Cholesky factorization of I + c u^H u, cheaper; finally plain Halley steps
(a, b, c) = (3, 1, 3) until the update is below (10 eps / 2)^(1/3) or
`max_iterations` is reached. Everything is funcad ops, so it differentiates
(through the loops), batches and jits.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..arrays import complex as Cx
from ..arrays.creation import public as _creation
from ..arrays import manip as Mp
from ..arrays import reductions as R
from ..arrays import ufuncs as U
from ._decompositions import qr
from ._triangular import cholesky, triangular_solve
from ._slicing import dynamic_slice_in_dim, dynamic_update_slice_in_dim
from ..arrays.dtypes import asarray_or_tracer, to_inexact
from ..transforms.control_flow_api import scan, while_loop

__all__ = ["qdwh"]

def _frobenius(x):
    """funcad.numpy.linalg.norm(x) of an inexact matrix."""
    return U.sqrt(R.sum(U.abs2(x)))


_CHOLESKY_CUTOFF = 100  # c above this: the QR-based step


def _weights(eps, max_iterations):
    """The (a, b, c) of each scheduled step, while l + tol < 1."""
    l, tol, out = eps, 10.0 * eps / 2.0, []
    while l + tol < 1 and len(out) < max_iterations:
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** 0.5
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** 0.5
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        out.append((a, b, c))
    return out


def _mask(x, m, n, fill):
    """x where row < m and column < n, `fill` elsewhere (the padding of a
    matrix whose true shape is (m, n))."""
    M, N = aval_of(x).shape
    keep = (_creation.arange(M)[:, None] < m) & (_creation.arange(N)[None, :] < n)
    return U.where(keep, x, fill)


def _qr_step(u, m, n, w):
    a_minus_e_by_sqrt_c, sqrt_c, e = w
    M, N = aval_of(u).shape
    eye = _creation.eye(N, dtype=aval_of(u).dtype)
    y = dynamic_update_slice_in_dim(Mp.pad(sqrt_c * u, ((0, N), (0, 0))), eye, m, 0)
    q, _ = qr(y, full_matrices=False)
    q1 = _mask(q[:M], m, n, 0)
    q2 = Cx.conj(_mask(dynamic_slice_in_dim(q, m, N, 0), n, n, 0).T)
    return e * u + a_minus_e_by_sqrt_c * (q1 @ q2)


def _cholesky_step(u, m, n, w):
    a_minus_e, c, e = w
    N = aval_of(u).shape[1]
    eye = _creation.eye(N, dtype=aval_of(u).dtype)
    x = _mask(c * (Cx.conj(u.T) @ u) + eye, n, n, eye)
    y = cholesky(x, symmetrize_input=False)
    # z = u (I + c u^H u)^-1 = u (y y^H)^-1, by two triangular solves
    z = Cx.conj(triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True))
    z = Cx.conj(triangular_solve(y, z, left_side=True, lower=True, transpose_a=True,
                                      conjugate_a=True).T)
    return e * u + a_minus_e * z


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None,
         eps: float | None = None, dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition x = u h of a full-rank M x N matrix (M >= N) by
    QDWH: `(u, h, num_iters, is_converged)`, u with orthonormal columns, h
    Hermitian positive semidefinite, the number of iterations taken and whether
    the last update was below (10 eps / 2)^(1/3) within `max_iterations`
    (default 10). `eps` defaults to the dtype's machine epsilon. With
    `dynamic_shape=(m, n)` only x's leading m x n block is decomposed (the rest
    is padding; the results are padded likewise). `is_hermitian` is unused (as
    in JAX).

    >>> import numpy as np
    >>> u, h, k, ok = qdwh(np.array([[2.0, 0.0], [0.0, -3.0]]))
    >>> np.round(u, 8).tolist(), np.round(h, 8).tolist(), bool(ok)
    ([[1.0, 0.0], [0.0, -1.0]], [[2.0, 0.0], [0.0, 3.0]], True)
    """
    del is_hermitian
    x = to_inexact(asarray_or_tracer(x))
    shape = tuple(aval_of(x).shape)
    if len(shape) != 2 or shape[0] < shape[1]:
        raise FuncadValueError(f"qdwh: the input matrix of shape M x N must have M >= N, got shape "
                               f"{shape}; decompose the conjugate transpose of a wide matrix")
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    dtype = aval_of(x).dtype
    real = np.finfo(dtype).dtype
    eps = float(np.finfo(dtype).eps) if eps is None else float(eps)
    M, N = shape
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, m, n, 0)
    else:
        m, n = M, N

    one_norm = R.max(R.sum(U.abs(x), axis=0))
    inf_norm = R.max(R.sum(U.abs(x), axis=1))
    scale = U.where(one_norm == 0, 1, 1 / U.sqrt(one_norm * U.where(inf_norm == 0, 1, inf_norm)))
    u = x * scale.astype(dtype)
    tol_norm = np.cbrt(10.0 * eps / 2.0).astype(real)

    qr_w, chol_w = [], []
    for a, b, c in _weights(eps, max_iterations):
        e = b / c
        if c > _CHOLESKY_CUTOFF:
            qr_w.append(((a - e) / c ** 0.5, c ** 0.5, e))
        else:
            chol_w.append((a - e, c, e))

    def scheduled(u, ws, step, test):
        if not ws:
            return u, _creation.array(True)

        def body(state, w):
            u, _ = state
            new = step(u, m, n, (w[0], w[1], w[2]))
            return (new, (_frobenius(new - u) > tol_norm) if test else _creation.array(True)), None
        return scan(body, (u, _creation.array(True)), np.array(ws, dtype=real))[0]

    u, _ = scheduled(u, qr_w, _qr_step, False)
    u, not_converged = scheduled(u, chol_w, _cholesky_step, True)

    halley = (real.type(2.0), real.type(3.0), real.type(1.0))  # (a - e, c, e) for (3, 1, 3)

    def cond(state):
        k, _, go = state
        return go & (k < max_iterations)

    def body(state):
        k, u, _ = state
        new = _cholesky_step(u, m, n, halley)
        return k + 1, new, _frobenius(new - u) > tol_norm

    k0 = len(qr_w) + len(chol_w)
    num_iters, u, not_converged = while_loop(
        cond, body, (_creation.array(k0), u, not_converged), max_steps=max(max_iterations - k0, 1))
    u = 1.5 * u - 0.5 * u @ (Cx.conj(u.T) @ u)
    h = Cx.conj(u.T) @ x
    h = (h + Cx.conj(h.T)) / 2
    return u, h, num_iters, ~not_converged
