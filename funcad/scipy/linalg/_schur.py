"""funcad.scipy.linalg's Schur-based functions: schur, rsf2csf, sqrtm, funm.

All build on the schur primitive (LAPACK's gees, CPU only, as in JAX) and
funcad ops. The Schur form is not differentiable (JAX defines no derivative
for it), so neither are these, as in JAX: a jvp or grad through them raises.
Triangular recurrences (the square root of a triangular matrix, Parlett's
recurrence for funm) run one superdiagonal at a time: every entry of
superdiagonal d depends only on entries of lower superdiagonals, so each step
is a matrix product and an elementwise update over the whole matrix.
"""
from __future__ import annotations

from ...transforms.vmap import vmap as _vmap
from typing import Callable

import numpy as np

from ...core.avals import aval_of
from ...core.errors import FuncadValueError
from ...arrays.dtypes import asarray_or_tracer, promote, to_inexact
from ...lax import cond, dynamic_slice, dynamic_update_slice, fori_loop, linalg as lla
from ... import numpy as fnp

__all__ = ["schur", "rsf2csf", "sqrtm", "funm", "polar", "hessenberg", "solve_sylvester"]


def _square(name, x, batched=True):
    s = tuple(aval_of(x).shape)
    if (len(s) < 2 if batched else len(s) != 2) or s[-1] != s[-2]:
        want = "(..., N, N)" if batched else "(N, N)"
        raise FuncadValueError(f"{name}: expected a square matrix of shape {want}, got shape {s}")


def _complex_dtype(dtype):
    return np.dtype(np.complex64) if np.dtype(dtype) in (np.float32, np.complex64) else np.dtype(np.complex128)


def _per_matrix(fun, *xs):
    """fun of single matrices, mapped over the leading (batch) axes of xs."""
    for _ in range(len(aval_of(xs[0]).shape) - 2):
        fun = _vmap(fun)
    return fun(*xs)


def schur(a, output: str = "real"):
    """The Schur decomposition `(T, Z)` of each square matrix of a stack:
    `a == Z @ T @ Z^H`, Z unitary; T quasi upper triangular for `output='real'`
    (real input), upper triangular for `output='complex'` (a is made complex
    first). LAPACK's gees, CPU only; not differentiable (as in JAX).

    >>> import numpy as np
    >>> t, z = schur(np.array([[0.0, 1.0], [-1.0, 0.0]]), output="complex")
    >>> sorted(np.round(np.diag(t).imag, 12).tolist())
    [-1.0, 1.0]
    """
    if output not in ("real", "complex"):
        raise FuncadValueError(f"schur: output must be 'real' or 'complex', got {output!r}")
    a = to_inexact(asarray_or_tracer(a))
    _square("schur", a)
    if output == "complex":
        a = a.astype(_complex_dtype(aval_of(a).dtype))
    t, z = lla.schur(a)
    return t, z


def _rsf2csf_one(T, Z):
    n = aval_of(T).shape[0]
    if n == 1:
        return T, Z
    eps = np.finfo(aval_of(T).dtype).eps
    idx = fnp.arange(n)

    def rotate(m, T, Z):
        # A Givens rotation G that makes the 2x2 block at (m-1, m-1) upper
        # triangular: its first column is the eigenvector of the block's first
        # eigenvalue (LAPACK's order, as SciPy), built from mu and T[m, m-1].
        block = dynamic_slice(T, (m - 1, m - 1), (2, 2))
        mu = fnp.linalg.eigvals(block) - T[m, m]
        r = fnp.sqrt(fnp.abs(mu[0]) ** 2 + fnp.abs(T[m, m - 1]) ** 2).astype(T.dtype)
        c, s = mu[0] / r, T[m, m - 1] / r
        G = fnp.stack([fnp.stack([c.conj(), s]), fnp.stack([-s, c])])
        rows = dynamic_slice(T, (m - 1, 0), (2, n))
        cols_right = idx >= m - 1
        rows = fnp.where(cols_right, G @ fnp.where(cols_right, rows, 0), rows)
        T = dynamic_update_slice(T, rows, (m - 1, 0))
        cols = dynamic_slice(T, (0, m - 1), (n, 2))
        rows_top = (idx < m + 1)[:, None]
        GH = G.conj().T
        cols = fnp.where(rows_top, fnp.where(rows_top, cols, 0) @ GH, cols)
        T = dynamic_update_slice(T, cols, (0, m - 1))
        Z = dynamic_update_slice(Z, dynamic_slice(Z, (0, m - 1), (n, 2)) @ GH, (0, m - 1))
        return T, Z

    def step(i, TZ):
        T, Z = TZ
        m = n - i
        sub = fnp.abs(T[m, m - 1])
        T, Z = cond(sub > eps * (fnp.abs(T[m - 1, m - 1]) + fnp.abs(T[m, m])),
                    lambda T, Z: rotate(m, T, Z), lambda T, Z: (T, Z), T, Z)
        T = T.at[m, m - 1].set(0)
        return T, Z

    return fori_loop(1, n, step, (T, Z))


def rsf2csf(T, Z, check_finite: bool = True):
    """Convert a real Schur form `(T, Z)` (as from `schur(a)`) to the complex
    one: T upper triangular, Z unitary, `Z @ T @ Z^H` unchanged. SciPy's
    algorithm (a Givens rotation per 2x2 block); batch dimensions broadcast.

    >>> import numpy as np
    >>> a = np.array([[0.0, 2.0], [-2.0, 0.0]])
    >>> t, z = rsf2csf(*schur(a))
    >>> bool(abs(t[1, 0]) == 0), bool(np.allclose(z @ t @ z.conj().T, a))
    (True, True)
    """
    T, Z = to_inexact(asarray_or_tracer(T)), to_inexact(asarray_or_tracer(Z))
    for name, x in (("T", T), ("Z", Z)):
        s = tuple(aval_of(x).shape)
        if len(s) < 2 or s[-1] != s[-2]:
            raise FuncadValueError(f"rsf2csf: input {name!r} must be square, got shape {s}")
    st, sz = tuple(aval_of(T).shape), tuple(aval_of(Z).shape)
    if st[-1] != sz[-1]:
        raise FuncadValueError(f"rsf2csf: input array shapes must match: Z: {sz} vs. T: {st}")
    c = _complex_dtype(np.result_type(aval_of(T).dtype, aval_of(Z).dtype))
    batch = tuple(np.broadcast_shapes(st[:-2], sz[:-2]))
    T = fnp.broadcast_to(T.astype(c), batch + st[-2:])
    Z = fnp.broadcast_to(Z.astype(c), batch + sz[-2:])
    return _per_matrix(_rsf2csf_one, T, Z)


def _superdiagonal_sweep(n, update, init):
    """Fill an upper triangular matrix one superdiagonal d = 1..n-1 at a time:
    `update(d_mask, F) -> new F` sets the entries where the mask holds."""
    offset = fnp.arange(n)[None, :] - fnp.arange(n)[:, None]
    return fori_loop(1, n, lambda d, F: update(offset == d, F), init)


def _sqrtm_triu(T):
    """The upper triangular square root U of an upper triangular T (Björck and
    Hammarling): U[i, j] = (T[i, j] - s) / (U[i, i] + U[j, j]), s the sum over
    i < k < j of U[i, k] U[k, j]; 0 where T[i, j] == s (as JAX)."""
    n = aval_of(T).shape[0]
    d = fnp.sqrt(fnp.diagonal(T))
    denom = d[:, None] + d[None, :]

    def update(mask, U):
        s = U @ U  # on superdiagonal d: exactly the sum over the inner k (U[i, j] is still 0)
        tie = T == s
        val = fnp.where(tie, 0, (T - s) / fnp.where(tie | ~mask, 1, denom))
        return fnp.where(mask, val, U)
    return _superdiagonal_sweep(n, update, fnp.diag(d))


def sqrtm(A, blocksize: int = 1):
    """The principal square root of each square matrix of a stack, complex, by
    the complex Schur method (Björck and Hammarling, as JAX): A = Z T Z^H, then
    the triangular square root of T. `blocksize` (SciPy's blocking of the same
    recurrence, a speed knob) must be >= 1; the result is that of the point
    algorithm whatever its value. CPU only; not differentiable (as in JAX).

    >>> import numpy as np
    >>> np.round(sqrtm(np.array([[4.0, 0.0], [0.0, 9.0]])), 12).tolist()
    [[(2+0j), 0j], [0j, (3+0j)]]
    """
    if int(blocksize) < 1:
        raise FuncadValueError(f"sqrtm: the block size should be at least 1, got {blocksize}")
    A = to_inexact(asarray_or_tracer(A))
    _square("sqrtm", A)
    T, Z = schur(A, output="complex")
    U = _per_matrix(_sqrtm_triu, T)
    return Z @ U @ fnp.conj(fnp.swapaxes(Z, -1, -2))


def funm(A, func: Callable, disp: bool = True):
    """A matrix function: `func` (a scalar function, applied elementwise to a
    vector) evaluated on the square matrix A, by Schur-Parlett (as JAX and
    SciPy's `funm`): the complex Schur form T = Z^H A Z, f on T's diagonal,
    Parlett's recurrence above it. The result is complex. With `disp=False`,
    `(F, err)` with SciPy's estimate of the relative error. CPU only; not
    differentiable (as in JAX). Inaccurate where A has close eigenvalues.

    >>> import numpy as np, funcad.numpy as fnp
    >>> F = funm(np.array([[1.0, 2.0], [0.0, 3.0]]), fnp.exp)
    >>> bool(np.allclose(F, [[np.e, np.exp(3) - np.e], [0, np.exp(3)]]))
    True
    """
    A = to_inexact(asarray_or_tracer(A))
    _square("funm", A, batched=False)
    T, Z = rsf2csf(*schur(A))
    n = aval_of(T).shape[0]
    F = fnp.diag(func(fnp.diagonal(T))).astype(aval_of(T).dtype)
    den = fnp.diagonal(T)[None, :] - fnp.diagonal(T)[:, None]

    def update(mask, F):
        # On superdiagonal d, (T F - F T)[i, j] is the whole of Parlett's sum
        # T[i, j] (F[j, j] - F[i, i]) + sum over i < k < j (F[i, j] is still 0).
        s = T @ F - F @ T
        return fnp.where(mask, fnp.where(den != 0, s / fnp.where(den != 0, den, 1), s), F)
    F = _superdiagonal_sweep(n, update, F)
    F = Z @ F @ fnp.conj(Z.T)
    if disp:
        return F
    tol = np.finfo(aval_of(T).dtype).eps
    # the smallest |T[j, j] - T[i, i]| over i < j (and |T[0, 0]|), as SciPy
    above = fnp.arange(n)[None, :] > fnp.arange(n)[:, None]
    minden = fnp.minimum(fnp.abs(T[0, 0]), fnp.min(fnp.where(above, fnp.abs(den), fnp.inf)))
    minden = fnp.where(minden == 0, tol, minden)
    norm1 = fnp.max(fnp.sum(fnp.abs(fnp.triu(T, 1)), axis=0))
    err = fnp.where(fnp.any(fnp.isinf(F)), np.inf,
                    fnp.minimum(1, fnp.maximum(tol, (tol / minden) * norm1)))
    return F, err


def _polar_2d(a, side, method, eps, max_iterations):
    m, n = aval_of(a).shape
    H = lambda x: fnp.conj(x.T)  # noqa: E731
    if method == "qdwh":
        if m >= n and side == "right":
            u, p, _, _ = lla.qdwh(a, eps=eps, max_iterations=max_iterations)
        elif m < n and side == "left":
            u, p, _, _ = lla.qdwh(H(a), eps=eps, max_iterations=max_iterations)
            u, p = H(u), H(p)
        else:
            raise FuncadValueError(
                f"polar: method='qdwh' takes m x n matrices with m >= n for side='right' and m < n "
                f"for side='left' (as JAX), got shape {(m, n)} with side={side!r}; use method='svd'")
        return u, p
    u, s, vh = lla.svd(a, full_matrices=False)
    s = s.astype(aval_of(u).dtype)
    if side == "right":
        return u @ vh, (H(vh) * s[None, :]) @ vh
    return u @ vh, (u * s[None, :]) @ H(u)


def polar(a, side: str = "right", *, method: str = "qdwh", eps: float | None = None,
          max_iterations: int | None = None):
    """The polar decomposition `(u, p)` of each m x n matrix of a stack:
    a = u p (`side='right'`, p n x n) or a = p u (`side='left'`, p m x m), u
    with orthonormal columns (rows), p Hermitian positive semidefinite.
    `method='qdwh'` (JAX's default; m >= n for side='right', m < n for 'left')
    iterates with QR and Cholesky factorizations (funcad.lax.linalg.qdwh, with
    `eps` and `max_iterations`); `method='svd'` uses the SVD. Both are
    differentiable.

    >>> import numpy as np
    >>> u, p = polar(np.array([[0.0, 2.0], [-3.0, 0.0]]))
    >>> (np.round(u, 8) + 0.0).tolist(), (np.round(p, 8) + 0.0).tolist()
    ([[0.0, 1.0], [-1.0, 0.0]], [[3.0, 0.0], [0.0, 2.0]])
    """
    a = to_inexact(asarray_or_tracer(a))
    if len(aval_of(a).shape) < 2:
        raise FuncadValueError("polar: the input `a` must be at least a 2-D array, got shape "
                               f"{tuple(aval_of(a).shape)}")
    if side not in ("right", "left"):
        raise FuncadValueError(f"polar: the argument `side` must be either 'right' or 'left', got {side!r}")
    if method not in ("qdwh", "svd"):
        raise FuncadValueError(f"polar: unknown polar decomposition method {method!r}; use 'qdwh' or 'svd'")
    return _per_matrix(lambda x: _polar_2d(x, side, method, eps, max_iterations), a)


def hessenberg(a, *, calc_q: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The upper Hessenberg form H of each square matrix of a stack (zero below
    the first subdiagonal), and with `calc_q` the unitary Q with a = Q H Q^H:
    `H` or `(H, Q)`. LAPACK's gehrd, CPU only; not differentiable (as in JAX).
    `overwrite_a` and `check_finite` have no effect.

    >>> import numpy as np
    >>> h, q = hessenberg(np.arange(9.0).reshape(3, 3) + np.eye(3), calc_q=True)
    >>> bool(h[2, 0] == 0), bool(np.allclose(q @ h @ q.T, np.arange(9.0).reshape(3, 3) + np.eye(3)))
    (True, True)
    """
    a = to_inexact(asarray_or_tracer(a))
    _square("hessenberg", a)
    shape = tuple(aval_of(a).shape)
    n = shape[-1]
    if n == 0:
        return (fnp.zeros_like(a), fnp.zeros_like(a)) if calc_q else fnp.zeros_like(a)
    h, taus = lla.hessenberg(a)
    hess = fnp.triu(h, -1)
    if not calc_q:
        return hess
    q = lla.householder_product(h[..., 1:, :-1], taus)
    # Q = diag(1, q): the first basis vector is left alone by every reflector.
    q = fnp.pad(q, [(0, 0)] * (len(shape) - 2) + [(1, 0), (1, 0)])
    first = (fnp.arange(n)[:, None] == 0) & (fnp.arange(n)[None, :] == 0)
    return hess, fnp.where(first, fnp.ones((), aval_of(q).dtype), q)


def _sylvester_triangular(R, S, F):
    """Y with R Y + Y S = F, R upper and S lower triangular: column by column
    from the last, (R + S[j, j] I) y_j = f_j - Y S[:, j] (columns not yet
    solved are zero, so the product sums over k > j only)."""
    m, n = aval_of(F).shape
    eye = np.eye(m, dtype=aval_of(F).dtype)
    cols = fnp.arange(n)

    def step(t, Y):
        j = n - 1 - t
        s_j = fnp.take(S, j, axis=1, mode="clip")  # (take: F and S are NumPy arrays when eager)
        rhs = fnp.take(F, j, axis=1, mode="clip") - Y @ s_j
        y = lla.triangular_solve(R + fnp.take(s_j, j) * eye, rhs[:, None], left_side=True, lower=False)
        return fnp.where(cols[None, :] == j, y, Y)
    return fori_loop(0, n, step, fnp.zeros_like(F))


def _sylvester_2d(A, B, C, method, tol):
    H = lambda x: fnp.conj(x.T)  # noqa: E731
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(H(B), output="complex")
        F = H(U) @ C.astype(aval_of(R).dtype) @ V
        X = U @ _sylvester_triangular(R, H(S), F) @ H(V)
    else:
        wa, ua = fnp.linalg.eig(A)
        wb, ub = fnp.linalg.eig(B)
        F = fnp.linalg.solve(ua, C.astype(aval_of(wa).dtype) @ ub)
        X = ua @ (F / (wa[:, None] + wb[None, :])) @ fnp.linalg.inv(ub)
    if aval_of(C).dtype.kind != "c":
        X = fnp.real(X)
    near = fnp.abs(fnp.linalg.eigvals(A)[:, None] + fnp.linalg.eigvals(B)[None, :]) < tol
    return fnp.where(fnp.any(near), np.nan, X).astype(aval_of(X).dtype)


def solve_sylvester(A, B, C, *, method: str = "schur", tol: float = 1e-8):
    """X with A X + X B = C, for stacks of square A (m x m), B (n x n) and C
    (m x n): by the Bartels-Stewart method on the complex Schur forms of A and
    B^H (`method='schur'`, the default) or by eigendecompositions ('eigen').
    NaNs where some eigenvalues of A and -B are closer than `tol` (no unique
    solution), as JAX. CPU only; not differentiable (as in JAX).

    >>> import numpy as np
    >>> A, B = np.array([[2.0, 1.0], [0.0, 3.0]]), np.array([[1.0]])
    >>> np.round(solve_sylvester(A, B, np.array([[5.0], [8.0]])), 12).tolist()
    [[1.0], [2.0]]
    """
    if method not in ("schur", "eigen"):
        raise FuncadValueError(f'solve_sylvester: unrecognized method {method!r}. The two valid methods '
                               'are either "schur" or "eigen".')
    A, B, C = promote(*(to_inexact(asarray_or_tracer(x)) for x in (A, B, C)))
    sa, sb, sc = (tuple(aval_of(x).shape) for x in (A, B, C))
    if len(sc) < 2 or sa[-2:] != (sc[-2], sc[-2]) or sb[-2:] != (sc[-1], sc[-1]):
        raise FuncadValueError(f"Incompatible shapes for Sylvester equation:\nA: {sa}\nB: {sb}\nC: {sc}")
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2], sc[:-2]))
    A, B, C = (fnp.broadcast_to(x, batch + s[-2:]) for x, s in ((A, sa), (B, sb), (C, sc)))
    return _per_matrix(lambda a, b, c: _sylvester_2d(a, b, c, method, tol), A, B, C)
