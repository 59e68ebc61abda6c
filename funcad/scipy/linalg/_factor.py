"""funcad.scipy.linalg: SciPy's factor-and-solve API (Cholesky, LU, triangular
solves), det, inv, solve, block_diag and expm, as JAX offers them.

All are compositions of funcad.lax.linalg's primitives and funcad.numpy, on
stacks of matrices where JAX allows them. The arguments SciPy has for memory
and input checks (`overwrite_a`, `overwrite_b`, `check_finite`, `debug`) are
accepted and have no effect, as in JAX.
"""
from __future__ import annotations

import numpy as np

from ...transforms.api import jvp as _jvp
from ...transforms.vmap import vmap as _vmap
from ... import numpy as fnp  # (bound while funcad imports; used at call time)
from ...core.avals import aval_of
from ...core.errors import FuncadValueError
from ...numpy.linalg._solve import _float, _square  # one check for both namespaces
from ...primitives import triangular as T
from ...arrays.dtypes import promote
from ...lax.linalg import lu_pivots_to_permutation
from ...lax import cond, scan, switch

__all__ = ["solve_triangular", "cholesky", "cho_factor", "cho_solve", "lu", "lu_factor", "lu_solve",
           "det", "inv", "solve", "block_diag", "expm", "expm_frechet"]


def _promote(a, b):
    return promote(a, b)


def _as_matrix_rhs(name, a, b):
    """b as (..., n, k) with a's batch (broadcast), and whether it was a vector."""
    b = _float(b)
    a, b = _promote(a, b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    vector = len(sb) == 1
    if vector:
        b = b[:, None]
    sb = aval_of(b).shape
    if len(sb) < 2 or sb[-2] != sa[-1]:
        raise FuncadValueError(f"{name}: a of shape {tuple(sa)} does not fit b of shape "
                               f"{tuple(aval_of(b).shape if not vector else sb[:-1])}: b needs "
                               f"{sa[-1]} rows (shape (n,) or (..., n, k))")
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    return fnp.broadcast_to(a, batch + sa[-2:]), fnp.broadcast_to(b, batch + sb[-2:]), vector


_TRANS = {0: (False, False), "N": (False, False), 1: (True, False), "T": (True, False),
          2: (True, True), "C": (True, True)}


def solve_triangular(a, b, trans=0, lower: bool = False, unit_diagonal: bool = False,
                     overwrite_b: bool = False, debug=None, check_finite: bool = True):
    """x with op(a) x = b for triangular a (its `lower` or upper triangle read);
    op is set by `trans`: 0 or 'N' (a), 1 or 'T' (aᵀ), 2 or 'C' (aᴴ).

    >>> import numpy as np
    >>> solve_triangular(np.array([[2.0, 1.0], [0.0, 1.0]]), np.array([3.0, 1.0])).tolist()
    [1.0, 1.0]
    """
    if trans not in _TRANS:
        raise FuncadValueError(f"solve_triangular: trans must be 0, 1, 2, 'N', 'T' or 'C', got {trans!r}")
    transpose_a, conjugate_a = _TRANS[trans]
    a, b, vector = _as_matrix_rhs("solve_triangular", _square("solve_triangular", a), b)
    x = T.triangular_solve(a, b, left_side=True, lower=bool(lower), transpose_a=transpose_a,
                           conjugate_a=conjugate_a, unit_diagonal=bool(unit_diagonal))
    return x[..., 0] if vector else x


def cholesky(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """The Cholesky factor of each matrix: upper U (a = Uᵀ U) by default, lower L
    with `lower`. As JAX's, only that triangle of `a` is read (no symmetrizing).

    >>> import numpy as np
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 1.0], [0.0, 2.0]]
    """
    a = _square("cholesky", a)
    if lower:
        return T.cholesky(a)
    # U = Lᴴ for the lower factor L of aᴴ (whose lower triangle is a's upper one).
    return fnp.conj(fnp.linalg.matrix_transpose(T.cholesky(fnp.conj(fnp.linalg.matrix_transpose(a)))))


def cho_factor(a, lower: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(c, lower): the Cholesky factor for `cho_solve` and which triangle holds it.

    >>> import numpy as np
    >>> c, low = cho_factor(np.array([[4.0, 2.0], [2.0, 5.0]]))
    >>> low
    False
    """
    return cholesky(a, lower=lower), lower


def cho_solve(c_and_lower, b, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b, from cho_factor(a) = (c, lower).

    >>> import numpy as np
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> cho_solve(cho_factor(a), a @ np.array([1.0, 2.0])).round(12).tolist()
    [1.0, 2.0]
    """
    c, lower = c_and_lower
    c, b, vector = _as_matrix_rhs("cho_solve", _square("cho_solve", c), b)
    lower = bool(lower)
    # a = L Lᴴ (or Uᴴ U): the transposed solve conjugates too.
    y = T.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower, conjugate_a=not lower)
    x = T.triangular_solve(c, y, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return x[..., 0] if vector else x


def lu(a, permute_l: bool = False, overwrite_a: bool = False, check_finite: bool = True):
    """(p, l, u) with a = p @ l @ u (or (p @ l, u) with `permute_l`): p a
    permutation matrix, l unit lower trapezoidal (m x k), u upper (k x n).

    >>> import numpy as np
    >>> p, l, u = lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> (p @ l @ u).tolist()
    [[1.0, 2.0], [3.0, 4.0]]
    """
    a = _float(a)
    s = aval_of(a).shape
    if len(s) < 2:
        raise FuncadValueError(f"lu: expected a matrix or a stack of them, got shape {tuple(s)}")
    m, n = s[-2:]
    k = min(m, n)
    dtype = aval_of(a).dtype
    packed, _, perm = T.lu(a)
    p = fnp.equal(perm[..., None, :], np.arange(m, dtype=np.int32)[:, None]).astype(np.finfo(dtype).dtype)  # real, as JAX
    l = fnp.tril(packed, -1)[..., :, :k] + np.eye(m, k, dtype=dtype)
    u = fnp.triu(packed)[..., :k, :]
    if permute_l:
        return fnp.matmul(p, l), u
    return p, l, u


def lu_factor(a, overwrite_a: bool = False, check_finite: bool = True):
    """(lu, piv): the packed LU factors and LAPACK's 0-based row swaps, for `lu_solve`.

    >>> import numpy as np
    >>> lu_factor(np.array([[1.0, 2.0], [3.0, 4.0]]))[1].tolist()
    [1, 1]
    """
    a = _float(a)
    if aval_of(a).ndim < 2:  # rectangular matrices too, as JAX's
        raise FuncadValueError(f"lu_factor: the argument must be a matrix or a stack of them (shape "
                               f"(..., m, n)), got shape {aval_of(a).shape}")
    packed, piv, _ = T.lu(a)
    return packed, piv


def lu_solve(lu_and_piv, b, trans: int = 0, overwrite_b: bool = False, check_finite: bool = True):
    """x with a x = b (trans 0), aᵀ x = b (1) or aᴴ x = b (2), from lu_factor(a).

    >>> import numpy as np
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0]])
    >>> lu_solve(lu_factor(a), a @ np.array([1.0, -1.0])).round(12).tolist()
    [1.0, -1.0]
    """
    packed, piv = lu_and_piv
    if trans not in (0, 1, 2):
        raise FuncadValueError(f"lu_solve: trans must be 0, 1 or 2, got {trans!r}")
    packed, b, vector = _as_matrix_rhs("lu_solve", _square("lu_solve", packed), b)
    m = aval_of(packed).shape[-1]
    perm = lu_pivots_to_permutation(piv, m)
    perm = fnp.broadcast_to(perm, aval_of(packed).shape[:-1])
    rows = fnp.broadcast_to(perm[..., None], aval_of(b).shape)
    if trans == 0:  # P a = L U:  x = U⁻¹ L⁻¹ P b
        y = T.triangular_solve(packed, fnp.take_along_axis(b, rows, axis=-2), left_side=True,
                               lower=True, unit_diagonal=True)
        x = T.triangular_solve(packed, y, left_side=True, lower=False)
    else:  # aᵀ = Uᵀ Lᵀ P:  x = Pᵀ L⁻ᵀ U⁻ᵀ b
        conj = trans == 2
        y = T.triangular_solve(packed, b, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        y = T.triangular_solve(packed, y, left_side=True, lower=True, transpose_a=True,
                               conjugate_a=conj, unit_diagonal=True)
        inverse = fnp.argsort(perm, axis=-1).astype(np.int32)
        x = fnp.take_along_axis(y, fnp.broadcast_to(inverse[..., None], aval_of(y).shape), axis=-2)
    return x[..., 0] if vector else x


def det(a, overwrite_a: bool = False, check_finite: bool = True):
    """The determinant of each matrix (funcad.numpy.linalg.det).

    >>> import numpy as np
    >>> float(det(np.diag([2.0, 3.0])))
    6.0
    """
    return fnp.linalg.det(a)


def inv(a, overwrite_a: bool = False, check_finite: bool = True):
    """The inverse of each matrix (funcad.numpy.linalg.inv).

    >>> import numpy as np
    >>> inv(np.diag([2.0, 4.0])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    return fnp.linalg.inv(a)


def solve(a, b, lower: bool = False, overwrite_a: bool = False, overwrite_b: bool = False,
          debug: bool = False, check_finite: bool = True, assume_a: str = "gen"):
    """x with a x = b. `assume_a` 'gen', 'sym' or 'her' solve by LU; 'pos' by
    Cholesky of a's `lower` (or upper) triangle, for positive definite a.

    >>> import numpy as np
    >>> a = np.array([[4.0, 2.0], [2.0, 5.0]])
    >>> solve(a, a @ np.array([1.0, 2.0]), assume_a="pos").round(12).tolist()
    [1.0, 2.0]
    """
    valid = ("gen", "sym", "her", "pos")
    if assume_a not in valid:
        raise FuncadValueError(f"solve: assume_a must be one of {list(valid)}, got {assume_a!r}")
    if assume_a != "pos":
        return fnp.linalg.solve(a, b)
    a = _square("solve", a)
    sb = aval_of(_float(b)).shape
    if len(sb) > 1 and len(sb) == len(aval_of(a).shape) - 1:
        return cho_solve(cho_factor(a, lower=lower), fnp.asarray(b)[..., None])[..., 0]
    return cho_solve(cho_factor(a, lower=lower), b)


def block_diag(*arrs):
    """The block-diagonal matrix of the given blocks (scalars and vectors count
    as 1 x 1 and 1 x n).

    >>> import numpy as np
    >>> block_diag(np.ones((1, 1)), 2 * np.ones((1, 2))).tolist()
    [[1.0, 0.0, 0.0], [0.0, 2.0, 2.0]]
    """
    if not arrs:
        return fnp.zeros((1, 0))
    arrs = [fnp.asarray(a) for a in arrs]
    for i, a in enumerate(arrs):
        if fnp.ndim(a) > 2:
            raise FuncadValueError(f"block_diag: blocks must have at most 2 dimensions, got shape "
                                   f"{tuple(fnp.shape(a))} at argument {i}")
    blocks = [fnp.atleast_2d(a) for a in promote(*arrs)]
    total = sum(fnp.shape(b)[1] for b in blocks)
    rows, col = [], 0
    for b in blocks:
        c = fnp.shape(b)[1]
        rows.append(fnp.pad(b, ((0, 0), (col, total - c - col))))
        col += c
    return fnp.concatenate(rows, axis=0)


# ------------------------------------------------------------------ expm ----
# Scaling and squaring with Padé approximants (Higham 2005, as JAX and SciPy):
# A is scaled by 2^-s until its 1-norm is small, exp(A / 2^s) is p(A)/q(A)
# with the lowest Padé degree accurate for that norm, then squared s times.

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960.,
        90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800.,
         129060195264000., 10559470521600., 670442572800., 33522128640., 1323241920., 40840800.,
         960960., 16380., 182., 1.),
}
# (largest 1-norm for which each degree is accurate, the norm scaled down to)
_THETA = {np.dtype(np.float64): ((1.495585217958292e-2, 2.539398330063230e-1, 9.504178996162932e-1,
                                  2.097847961257068e0), (3, 5, 7, 9, 13), 5.371920351148152),
          np.dtype(np.float32): ((4.258730016922831e-1, 1.880152677804762e0), (3, 5, 7),
                                 3.925724783138660)}


def _pade(m, A):
    """(U, V): the odd and even parts of the degree-m Padé numerator, p = V + U, q = V - U."""
    b = _PADE[m]
    eye = np.eye(fnp.shape(A)[0], dtype=aval_of(A).dtype)
    A2 = A @ A
    if m == 13:
        A4 = A2 @ A2
        A6 = A4 @ A2
        U = A @ (A6 @ (b[13] * A6 + b[11] * A4 + b[9] * A2) + b[7] * A6 + b[5] * A4 + b[3] * A2
                 + b[1] * eye)
        V = A6 @ (b[12] * A6 + b[10] * A4 + b[8] * A2) + b[6] * A6 + b[4] * A4 + b[2] * A2 + b[0] * eye
        return U, V
    powers = [eye, A2]
    for _ in range(m // 2 - 1):
        powers.append(powers[-1] @ A2)
    U = A @ sum(b[2 * i + 1] * p for i, p in enumerate(powers))
    V = sum(b[2 * i] * p for i, p in enumerate(powers))
    return U, V


def _expm_one(A, upper_triangular, max_squarings):
    dtype = aval_of(A).dtype
    # complex128 takes float64's degrees and thresholds, complex64 float32's (as JAX)
    wide = dtype in (np.float64, np.complex128)
    conds, degrees, maxnorm = _THETA[np.dtype(np.float64) if wide else np.dtype(np.float32)]
    norm1 = fnp.max(fnp.sum(fnp.abs(A), axis=0))
    # (the norm is floored at maxnorm first: log2 of zero would warn, and s is 0 then anyway)
    s = fnp.maximum(0, fnp.floor(fnp.log2(fnp.maximum(norm1 / maxnorm, 1.0))))
    A = A / (2 ** s).astype(dtype)
    idx = fnp.digitize(norm1, np.array(conds, aval_of(norm1).dtype))
    U, V = switch(idx, [lambda x, m=m: _pade(m, x) for m in degrees], A)
    P, Q = U + V, V - U

    def compute(_):
        R = solve_triangular(Q, P) if upper_triangular else fnp.linalg.solve(Q, P)
        steps = np.arange(max_squarings, dtype=aval_of(s).dtype)
        R, _ = scan(lambda r, i: (cond(i < s, lambda x: x @ x, lambda x: x, r), None), R, steps)
        return R

    return cond(s > max_squarings, lambda _: fnp.full_like(P, np.nan), compute, None)


def expm(A, *, upper_triangular: bool = False, max_squarings: int = 16):
    """The matrix exponential of each matrix of a stack, by scaling and squaring
    with Padé approximants (JAX's algorithm; degrees 3-13 for float64 and
    complex128, 3-7 for float32 and complex64). NaNs where more than `max_squarings` squarings would be needed.
    Its derivatives are those of the algorithm (every step is differentiable).

    >>> import numpy as np
    >>> expm(np.zeros((2, 2))).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    A = _square("expm", A)
    fun = lambda x: _expm_one(x, upper_triangular, int(max_squarings))  # noqa: E731
    for _ in range(fnp.ndim(A) - 2):
        fun = _vmap(fun)
    return fun(A)


def expm_frechet(A, E, *, method: str | None = None, compute_expm: bool = True):
    """The Fréchet derivative of the matrix exponential at A in the direction E:
    `(expm(A), L)` (or `L` alone with `compute_expm=False`), L the forward-mode
    derivative of `expm` (JAX's definition; `method` is accepted and unused, as
    in JAX). Stacks of matrices are allowed; A and E must have the same shape.

    >>> import numpy as np
    >>> expm_frechet(np.zeros((2, 2)), np.eye(2), compute_expm=False).tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    A, E = fnp.asarray(A), fnp.asarray(E)
    for name, x in (("A", A), ("E", E)):
        s = tuple(fnp.shape(x))
        if len(s) < 2 or s[-1] != s[-2]:
            raise FuncadValueError(f"expm_frechet: expected {name} to be a (batched) square matrix, "
                                   f"got {name}.shape={s}")
    if fnp.shape(A) != fnp.shape(E):
        raise FuncadValueError(f"expm_frechet: expected A and E to be the same shape, got "
                               f"A.shape={tuple(fnp.shape(A))} E.shape={tuple(fnp.shape(E))}")
    A, E = _promote(_square("expm_frechet", A), _float(E))
    expm_A, frechet = _jvp(lambda a: expm(a), (A,), (E,))
    return (expm_A, frechet) if compute_expm else frechet
