"""funcad.scipy.linalg's eigh (standard and generalized), svd and qr, built on
the eigh, svd and qr primitives (and cholesky/triangular_solve for the
generalized problem), so they differentiate, batch and jit.

As in JAX, `overwrite_a`, `overwrite_b` and `check_finite` are accepted and
have no effect: funcad never writes into its inputs, and does not scan them
for non-finite values.
"""
from __future__ import annotations

import numpy as _np

from ...core.avals import aval_of as _aval_of
from ...core.errors import FuncadValueError as _FuncadValueError
from ...lax import _decompositions as _L, linalg as lla
from ...arrays.dtypes import (asarray_or_tracer as _asarray_or_tracer, promote as _promote,
                              to_inexact as _to_inexact)
from ... import numpy as fnp
from ...primitives.schur import geqp3 as _geqp3

__all__ = ["eigh", "svd", "qr", "eigh_tridiagonal", "qr_multiply"]


def _inexact(x):
    return _to_inexact(_asarray_or_tracer(x))


def _square(name, x):
    s = tuple(_aval_of(x).shape)
    if len(s) < 2 or s[-1] != s[-2]:
        raise _FuncadValueError(f"Argument {name} to linalg.eigh must have shape [..., n, n], got {s}.")


def eigh(a, b=None, lower: bool = True, eigvals_only: bool = False, overwrite_a: bool = False,
         overwrite_b: bool = False, turbo: bool = True, eigvals=None, type: int = 1,
         check_finite: bool = True, subset_by_index=None):
    """Eigenvalues (ascending) and eigenvectors of a symmetric `a`, or of the
    generalized problem with symmetric positive definite `b`: type 1 solves
    a v = w b v, type 2 a b v = w v, type 3 b a v = w v; eigenvectors are then
    b-orthonormal (v^T b v = I), as SciPy's. As in JAX, `a` is symmetrized,
    (a + a^T)/2, rather than one triangle read (the same for symmetric input);
    `subset_by_index=(lo, hi)` keeps eigenpairs lo..hi-1. `turbo`, like `overwrite_a`,
    `overwrite_b` and `check_finite`, is accepted and unused, as in JAX.

    >>> import numpy as np
    >>> w = eigh(np.diag([2.0, 6.0]), np.diag([1.0, 2.0]), eigvals_only=True)
    >>> np.round(w, 12).tolist()
    [2.0, 3.0]
    """
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented. Use "
                                  "subset_by_index=(lo, hi) to keep eigenpairs lo..hi-1.")
    if type not in (1, 2, 3):
        raise _FuncadValueError(f"eigh: type must be 1, 2, or 3, got {type!r}")
    a = _inexact(a)
    _square("a", a)
    if b is None:
        v, w = _L.eigh(a, lower=lower, subset_by_index=subset_by_index)
        return w if eigvals_only else (w, v)
    a, b = _promote(a, _inexact(b))
    _square("b", b)
    # b = l l^T reduces the problem to a standard one in c.
    l = lla.cholesky(b)
    a = (a + fnp.matrix_transpose(a)) / 2
    if type == 1:
        c = lla.triangular_solve(l, a, left_side=True, lower=True)
        c = lla.triangular_solve(l, c, left_side=False, lower=True, transpose_a=True)
    else:
        c = fnp.matrix_transpose(l) @ a @ l
    v, w = _L.eigh(c, lower=lower, subset_by_index=subset_by_index)
    if eigvals_only:
        return w
    if type == 3:
        return w, l @ v
    return w, lla.triangular_solve(l, v, left_side=True, lower=True, transpose_a=True)


def svd(a, full_matrices: bool = True, compute_uv: bool = True, overwrite_a: bool = False,
        check_finite: bool = True, lapack_driver: str = "gesdd"):
    """Singular value decomposition as `scipy.linalg.svd`: `(u, s, vh)`, or `s`.
    `lapack_driver` is unused, as in JAX: the SVD is LAPACK's gesdd (for gesvd, use
    `funcad.lax.linalg.svd(algorithm=SvdAlgorithm.QR)`).

    >>> import numpy as np
    >>> svd(np.diag([1.0, -3.0]), compute_uv=False).tolist()
    [3.0, 1.0]
    """
    return _L.svd(_inexact(a), full_matrices=full_matrices, compute_uv=compute_uv)


def qr(a, overwrite_a: bool = False, lwork=None, mode: str = "full", pivoting: bool = False,
       check_finite: bool = True):
    """QR decomposition as `scipy.linalg.qr`: mode 'full' gives `(q, r)` with a
    square q, 'economic' the reduced pair, 'r' the tuple `(r,)` of the full
    decomposition, 'raw' `((h, tau), r)` with LAPACK's Householder form.
    With `pivoting=True` (LAPACK's geqp3) the permutation p (int32) comes last:
    `(q, r, p)`, `(r, p)`, `((h, tau), r, p)`, with `a[:, p] == q @ r`; it is
    differentiable except in mode 'raw' (p held fixed, as in JAX).

    >>> import numpy as np
    >>> q, r = qr(np.array([[3.0, 1.0], [4.0, 2.0], [0.0, 1.0]]))
    >>> q.shape, r.shape
    ((3, 3), (3, 2))
    >>> qr(np.array([[1.0, 3.0], [0.0, 4.0]]), pivoting=True)[2].tolist()
    [1, 0]
    """
    a = _inexact(a)
    if mode == "raw":
        m, n = _aval_of(a).shape[-2:]
        if pivoting:
            h, p, taus = _geqp3(a)
            return (h, taus), fnp.triu(h[..., :min(m, n), :]), p
        h, taus = _L.geqrf(a)
        return (h, taus), fnp.triu(h[..., :min(m, n), :])
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise _FuncadValueError(f"Unsupported QR decomposition mode {mode!r}; use 'full', 'economic', "
                                "'r' or 'raw'")
    q, r, *p = _L.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    return (r, *p) if mode == "r" else (q, r, *p)


def eigh_tridiagonal(d, e, *, eigvals_only: bool = False, select: str = "a",
                     select_range: tuple[float, float] | None = None, tol: float | None = None,
                     key=None):
    """Eigenvalues (ascending) and, unless `eigvals_only`, eigenvectors of the
    Hermitian tridiagonal matrix with diagonal d (real part read) and
    subdiagonal e (superdiagonal conj(e)). `select='a'` keeps all of them,
    `'i'` those with indices select_range[0]..select_range[1] (inclusive);
    `'v'` (a value range, so a data-dependent count) is not available, as in
    JAX.

    Computed by the symmetric eigensolver (LAPACK's syevd/heevd) on the
    assembled matrix, so the eigenvalues are accurate to working precision
    whatever `tol` (JAX's bisection stops at `tol`), eigenvectors carry
    LAPACK's signs (JAX's inverse iteration starts from `key`'s random
    vectors, whose signs are arbitrary), and both are differentiable.

    >>> import numpy as np
    >>> w = eigh_tridiagonal(np.array([2.0, 2.0]), np.array([1.0]), eigvals_only=True)
    >>> np.round(w, 12).tolist()
    [1.0, 3.0]
    """
    alpha, beta = _asarray_or_tracer(d), _asarray_or_tracer(e)
    da, db = _aval_of(alpha).dtype, _aval_of(beta).dtype
    if da != db:
        raise TypeError(f"eigh_tridiagonal: diagonal and off-diagonal values must have same dtype, "
                        f"got {da} and {db}")
    if da.name not in ("float32", "float64", "complex64", "complex128"):
        raise TypeError(f"eigh_tridiagonal: only float32, float64, complex64 and complex128 inputs "
                        f"are supported, got {da} and {db}")
    n = _aval_of(alpha).shape[0]
    if tuple(_aval_of(beta).shape) != (max(n - 1, 0),):
        raise _FuncadValueError(f"eigh_tridiagonal: e must have shape ({max(n - 1, 0)},) for d of shape "
                                f"({n},), got {tuple(_aval_of(beta).shape)}")
    if select == "a":
        lo, hi = 0, n
    elif select == "i":
        if select_range is None:
            raise _FuncadValueError("eigh_tridiagonal: for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise _FuncadValueError("eigh_tridiagonal: got empty index range in select_range.")
        lo, hi = int(select_range[0]), int(select_range[1]) + 1
        if not 0 <= lo < hi <= n:
            raise _FuncadValueError(f"eigh_tridiagonal: select_range {tuple(select_range)} is out of "
                                    f"range for {n} eigenvalues")
    elif select == "v":
        raise _FuncadValueError("eigh_tridiagonal(..., select='v') is not available: the number of "
                                "eigenvalues in a value range is data-dependent (JAX does not "
                                "implement it either); use select='a' or 'i'")
    else:
        raise _FuncadValueError(f"eigh_tridiagonal: select must be one of 'a', 'i', 'v', got {select!r}")
    del tol, key
    if n <= 1:
        w = fnp.real(alpha)
        return w if eigvals_only else (w, fnp.eye(n, dtype=da))
    real = fnp.real(alpha).astype(da)
    t = fnp.diag(real) + fnp.diag(beta, -1) + fnp.diag(fnp.conj(beta), 1)
    v, w = _L.eigh(t, symmetrize_input=False)
    w, v = w[lo:hi], v[:, lo:hi]
    return w if eigvals_only else (w, v)


def qr_multiply(a, c, mode: str = "right", pivoting: bool = False, conjugate: bool = False,
                overwrite_a: bool = False, overwrite_c: bool = False):
    """Q c (`mode='left'`, c with min(m, n) rows) or c Q (`'right'`, c with m
    columns; the result keeps min(m, n) columns) for the QR decomposition of
    a, without forming Q, and r: `(cq, r)`, or `(cq, r, p)` with `pivoting`.
    `conjugate` multiplies by conj(Q). A vector c is a column ('left') or a
    row ('right'). Batch dimensions broadcast (as JAX).

    >>> import numpy as np
    >>> a = np.array([[3.0, 1.0], [4.0, 2.0]])
    >>> cq, r = qr_multiply(a, np.eye(2))
    >>> bool(np.allclose(cq @ r, a))
    True
    """
    a, c = _promote(_inexact(a), _inexact(c))
    if mode not in ("right", "left"):
        raise _FuncadValueError(f"qr_multiply: mode must be 'right' or 'left', got {mode!r}")
    onedim = len(_aval_of(c).shape) == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    sa, sc = tuple(_aval_of(a).shape), tuple(_aval_of(c).shape)
    m, n = sa[-2:]
    k = min(m, n)
    if mode == "left" and sc[-2] != k:
        raise _FuncadValueError(f"qr_multiply: array shapes are not compatible for Q @ c: a has shape "
                                f"{sa} so Q has {k} columns, but c has {sc[-2]} rows (expected {k}).")
    if mode == "right" and sc[-1] != m:
        raise _FuncadValueError(f"qr_multiply: array shapes are not compatible for c @ Q: a has shape "
                                f"{sa} so Q has {m} rows, but c has {sc[-1]} columns (expected {m}).")
    batch = tuple(_np.broadcast_shapes(sa[:-2], sc[:-2]))
    a, c = fnp.broadcast_to(a, batch + sa[-2:]), fnp.broadcast_to(c, batch + sc[-2:])
    p = None
    if pivoting:
        h, p, taus = _geqp3(a)
    else:
        h, taus = _L.geqrf(a)
    if mode == "left" and m > n:
        c = fnp.concatenate([c, fnp.zeros(batch + (m - k, sc[-1]), _aval_of(c).dtype)], axis=-2)
    if conjugate:  # conj(Q) c = (c^T Q^H)^T: the sides swap
        c = fnp.swapaxes(c, -1, -2)
    cq = lla.ormqr(h, taus, c, left=(mode == "left") != conjugate, transpose=conjugate)
    if conjugate:
        cq = fnp.swapaxes(cq, -1, -2)
    if mode == "right":
        cq = cq[..., :k]
    if onedim:
        cq = fnp.ravel(cq)
    r = fnp.triu(h[..., :k, :])
    return (cq, r, p) if pivoting else (cq, r)
