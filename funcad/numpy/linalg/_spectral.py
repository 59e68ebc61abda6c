"""funcad.numpy.linalg: eigen and singular value decompositions, QR, and what is
built on them (pinv, lstsq, matrix_rank, cond), and every norm.

All are compositions of the primitives in funcad/primitives/decompositions.py
(through funcad.lax.linalg's wrappers), so their derivatives, batching and
lowering come from those. Stacked matrices `[..., m, n]` work as in NumPy.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as _np

from ... import numpy as _fnp
from ...core.avals import aval_of as _aval_of
from ...core.errors import FuncadValueError as _FuncadValueError
from ...core.trace import bind_custom_jvp as _bind_custom_jvp
from ...lax import _decompositions as _L
from ...arrays.ufuncs import abs2 as _abs2
from ...arrays.dtypes import asarray_or_tracer as _asarray_or_tracer, promote, to_inexact as _to_inexact
from ...primitives._base import canonical_axis

__all__ = ["EigResult", "EighResult", "eig", "eigvals", "QRResult", "SVDResult", "cond", "eigh", "eigvalsh", "lstsq", "matrix_norm", "matrix_rank", "norm", "pinv", "qr",
    "svd", "svdvals", "vector_norm"]


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class QRResult(NamedTuple):
    Q: object
    R: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


def _inexact(x):
    return _to_inexact(_asarray_or_tracer(x))


def _shape(x):
    return tuple(_aval_of(x).shape)


def _H(x):
    """The conjugate transpose of a stack of matrices (the transpose where real)."""
    return _fnp.conj(_fnp.matrix_transpose(x))


def _real_dtype(dt):
    return _np.finfo(dt).dtype


def _need_matrix(fn, x, square=False):
    s = _shape(x)
    if len(s) < 2 or (square and s[-1] != s[-2]):
        kind = "square matrices [..., n, n]" if square else "matrices [..., m, n]"
        raise _FuncadValueError(f"{fn} takes {kind} (at least 2 dimensions), got shape {s}")


# ---------------------------------------------------------- decompositions ----

def eig(a) -> EigResult:
    """Eigenvalues and right eigenvectors of general square matrices, as
    `numpy.linalg.eig` but always complex (as JAX: the dtype must not depend on
    the values). Eigenvectors have unit norm, largest component real; only the
    eigenvalues are differentiable (see funcad.lax.linalg.eig).

    >>> import numpy as np, funcad.numpy as fnp
    >>> w, v = fnp.linalg.eig(np.array([[2.0, 0.0], [0.0, 3.0]]))
    >>> w.tolist()
    [(2+0j), (3+0j)]
    """
    a = _inexact(a)
    _need_matrix("eig", a, square=True)
    w, v = _L.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


def eigvals(a):
    """The eigenvalues of general square matrices, complex (as JAX), in LAPACK's
    order (not sorted).

    >>> import numpy as np, funcad.numpy as fnp
    >>> fnp.linalg.eigvals(np.array([[0.0, -1.0], [1.0, 0.0]])).tolist()
    [1j, -1j]
    """
    a = _inexact(a)
    _need_matrix("eigvals", a, square=True)
    return _L.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


def eigh(a, UPLO: str | None = None, symmetrize_input: bool = True) -> EighResult:
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices, as
    `numpy.linalg.eigh`; by default the input is symmetrized first, as in JAX.

    >>> import numpy as np, funcad.numpy as fnp
    >>> w, v = fnp.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist()
    [1.0, 3.0]
    """
    a = _inexact(a)
    _need_matrix("eigh", a, square=True)
    if UPLO not in (None, "L", "U"):
        raise _FuncadValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO!r}")
    v, w = _L.eigh(a, lower=UPLO != "U", symmetrize_input=symmetrize_input)
    return EighResult(w, v)


def eigvalsh(a, UPLO: str | None = "L", *, symmetrize_input: bool = True):
    """The eigenvalues (ascending) of symmetric matrices.

    >>> import numpy as np, funcad.numpy as fnp
    >>> fnp.linalg.eigvalsh(np.diag([3.0, 1.0])).tolist()
    [1.0, 3.0]
    """
    return eigh(a, UPLO, symmetrize_input=symmetrize_input).eigenvalues


def svd(a, full_matrices: bool = True, compute_uv: bool = True, hermitian: bool = False,
        subset_by_index: tuple[int, int] | None = None):
    """Singular value decomposition as `numpy.linalg.svd`: `(U, S, Vh)` with
    `a == U[..., :k] * S @ Vh[..., :k, :]`, or `S` alone. Derivatives of
    `U`/`Vh` need `full_matrices=False` for non-square input (as in JAX).
    With `hermitian=True` it is computed from `eigh` of the (symmetrized) input.

    >>> import numpy as np, funcad.numpy as fnp
    >>> fnp.linalg.svd(np.diag([1.0, -3.0]), compute_uv=False).tolist()
    [3.0, 1.0]

    `subset_by_index` (a range of singular values) is refused as JAX refuses it on
    CPUs and GPUs.
    """
    if subset_by_index is not None:
        if full_matrices:
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    a = _inexact(a)
    _need_matrix("svd", a)
    if hermitian:
        return _hermitian_svd(a, compute_uv)
    if compute_uv:
        u, s, vh = _L.svd(a, full_matrices=full_matrices, compute_uv=True)
        return SVDResult(u, s, vh)
    return _L.svd(a, full_matrices=full_matrices, compute_uv=False)


def _hermitian_svd(a, compute_uv):
    """Singular values |w| of eigh, descending; u the eigenvectors in that order and
    vh = (u * sign(w))^T (JAX's convention, ties between |w| kept in ascending w order)."""
    v, w = _L.eigh(a)
    s = _fnp.abs(w)
    if not compute_uv:
        return _fnp.flip(_fnp.sort(s, axis=-1), axis=-1)
    # A stable ascending sort reversed: among equal |w| the later eigenvalue comes first.
    order = _fnp.flip(_fnp.argsort(s, axis=-1), axis=-1)
    s = _fnp.take_along_axis(s, order, axis=-1, mode="clip")
    sign = _fnp.take_along_axis(_fnp.where(w < 0, -1.0, 1.0).astype(s.dtype), order, axis=-1, mode="clip")
    u = _fnp.take_along_axis(v, order[..., None, :], axis=-1, mode="clip")
    vh = _H(u * sign[..., None, :])
    return SVDResult(u, s, vh)


def svdvals(x, /):
    """The singular values of matrices, descending.

    >>> import numpy as np, funcad.numpy as fnp
    >>> fnp.linalg.svdvals(np.array([[0.0, 2.0], [1.0, 0.0]])).tolist()
    [2.0, 1.0]
    """
    return svd(x, compute_uv=False)


def qr(a, mode: str = "reduced"):
    """QR decomposition as `numpy.linalg.qr`, modes "reduced" (also "full", as in
    JAX), "complete", "r" and "raw" (LAPACK's `(h, tau)`, h transposed as NumPy's).

    >>> import numpy as np, funcad.numpy as fnp
    >>> q, r = fnp.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0], [0.0, 1.0]]))
    >>> q.shape, r.shape
    ((3, 2), (2, 2))
    """
    a = _inexact(a)
    _need_matrix("qr", a)
    if mode == "raw":
        h, taus = _L.geqrf(a)
        return QRResult(_fnp.matrix_transpose(h), taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise _FuncadValueError(f"Unsupported QR decomposition mode {mode!r}; use 'reduced', "
                                "'complete', 'r' or 'raw'")
    q, r = _L.qr(a, full_matrices=full_matrices)
    return r if mode == "r" else QRResult(q, r)


# ----------------------------------------------------- derived functions ----

def pinv(a, rtol=None, hermitian: bool = False, *, rcond=None):
    """Moore-Penrose pseudo-inverse from the SVD, singular values at most
    `rtol * largest` dropped (default rtol 10 * max(m, n) * eps). Its derivative
    is the Golub-Pereyra rule (as JAX's), not the derivative of the SVD.

    >>> import numpy as np, funcad.numpy as fnp
    >>> fnp.linalg.pinv(np.array([[2.0, 0.0], [0.0, 0.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.0]]
    """
    if rcond is not None:
        if rtol is not None:
            raise _FuncadValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    a = _inexact(a)
    _need_matrix("pinv", a)
    dt = _aval_of(a).dtype
    if rtol is None:
        rtol = 10.0 * max(_shape(a)[-2:]) * _np.finfo(dt).eps
    rtol = _fnp.asarray(rtol).astype(_real_dtype(dt))
    return _bind_custom_jvp(lambda a, r: [_pinv(a, r, hermitian)],
                            lambda p, t: _pinv_jvp(p, t, hermitian), [a, rtol])[0]


def _pinv(a, rtol, hermitian):
    *_, m, n = _shape(a)
    if m == 0 or n == 0:
        return _fnp.zeros(_shape(a)[:-2] + (n, m), _aval_of(a).dtype)
    u, s, vh = svd(a, full_matrices=False, hermitian=hermitian)
    cutoff = _fnp.expand_dims(rtol, -1) * s[..., 0:1]
    s = _fnp.where(s > cutoff, s, _np.inf)
    return _fnp.matmul(_H(vh), _H(u) / s[..., :, None])


def _pinv_jvp(primals, tangents, hermitian):
    a, rtol = primals
    a_dot = tangents[0]
    p = pinv(a, rtol, hermitian)
    if a_dot is None:
        return [p], [_fnp.zeros_like(p)]
    if hermitian:  # svd(hermitian=True) symmetrizes its input; so does the derivative
        a, a_dot = (a + _H(a)) / 2, (a_dot + _H(a_dot)) / 2
    T = _H
    m, n = _shape(a)[-2:]
    if m >= n:
        s = (p @ T(p)) @ T(a_dot)
        t = (T(a_dot) @ T(p)) @ p
        p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (T(p) @ T(a_dot))
        t = T(a_dot) @ (T(p) @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return [p], [p_dot]


def lstsq(a, b, rcond=None, *, numpy_resid: bool = False):
    """Least squares `min |a @ x - b|` from the SVD, as `numpy.linalg.lstsq`:
    `(x, residuals, rank, s)` for a 2-d `a` and 1-d or 2-d `b`. Residuals are
    always returned (JAX's default); `numpy_resid=True` gives NumPy's empty
    array when rank < n or m <= n (needs a concrete rank).

    >>> import numpy as np, funcad.numpy as fnp
    >>> x, res, rank, s = fnp.linalg.lstsq(np.array([[1.0, 0.0], [0.0, 2.0], [0.0, 0.0]]),
    ...                                    np.array([1.0, 2.0, 3.0]))
    >>> x.tolist(), int(rank)
    ([1.0, 1.0], 2)
    """
    a, b = _promote(_inexact(a), _inexact(b))
    if _shape(a)[0] != _shape(b)[0]:
        raise _FuncadValueError(f"lstsq: leading dimensions of a {_shape(a)} and b {_shape(b)} must match")
    if len(_shape(a)) != 2:
        raise _FuncadValueError(f"lstsq: {len(_shape(a))}-dimensional array given; a must be two-dimensional")
    if len(_shape(b)) not in (1, 2):
        raise _FuncadValueError(f"lstsq: {len(_shape(b))}-dimensional array given; b must be one- or "
                                "two-dimensional")
    b1 = len(_shape(b)) == 1
    if b1:
        b = b[:, None]
    m, n = _shape(a)
    dt = _aval_of(a).dtype
    if m == 0 or n == 0:
        s = _fnp.zeros((0,), _real_dtype(dt))
        rank = _fnp.asarray(0)
        x = _fnp.zeros((n,) + _shape(b)[1:], dt)
    else:
        if rcond is None:
            rcond = float(_np.finfo(dt).eps) * max(n, m)
        else:
            rcond = _fnp.where(_fnp.asarray(rcond) < 0, _np.finfo(dt).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= _fnp.asarray(rcond).astype(_real_dtype(dt)) * s[0])
        rank = _fnp.sum(mask)
        safe_s = _fnp.where(mask, s, 1.0)
        s_inv = _fnp.where(mask, 1.0 / safe_s, 0.0)[:, None]
        x = _H(vt) @ (s_inv * (_H(u) @ b))
    if numpy_resid and (int(rank) < n or m <= n):
        resid = _fnp.zeros((0,), _real_dtype(dt))
    else:
        resid = _fnp.sum(_fnp.abs(b - a @ x) ** 2 if _np.dtype(dt).kind == "c" else (b - a @ x) ** 2, axis=0)
    if b1:
        x = _fnp.ravel(x)
    return x, resid, rank, s


def _promote(a, b):
    return promote(a, b)


def matrix_rank(M, rtol=None, *, hermitian: bool = False, tol=None):
    """The number of singular values above `rtol * largest` (default
    max(m, n) * eps), as `numpy.linalg.matrix_rank`; a vector has rank 1 unless zero.

    >>> import numpy as np, funcad.numpy as fnp
    >>> int(fnp.linalg.matrix_rank(np.array([[1.0, 2.0], [2.0, 4.0]])))
    1
    """
    if tol is not None:
        if rtol is not None:
            raise _FuncadValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M = _inexact(M)
    if len(_shape(M)) < 2:
        return _fnp.any(M != 0).astype(_np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    dt = _aval_of(S).dtype
    if rtol is None:
        rtol = S.max(-1) * _np.asarray(max(_shape(M)[-2:]), dt) * _np.finfo(dt).eps
    rtol = _fnp.expand_dims(_fnp.asarray(rtol), _np.ndim(rtol))
    return _fnp.sum(S > rtol, axis=-1)


def cond(x, p=None):
    """The condition number in norm `p` (None/2/-2 from singular values; 1, -1,
    inf, -inf, 'fro', 'nuc' as norm(x) * norm(inv(x))); inf for singular x.

    >>> import numpy as np, funcad.numpy as fnp
    >>> float(fnp.linalg.cond(np.diag([4.0, 1.0])))
    4.0
    """
    x = _inexact(x)
    s_ = _shape(x)
    if len(s_) < 2:
        raise _FuncadValueError(f"cond: input array must be at least 2D; got shape {s_}")
    if s_[-1] == 0 or s_[-2] == 0:
        raise _FuncadValueError(f"cond: input array must not be empty; got shape {s_}")
    if p is None or p == 2:
        s = svdvals(x)
        r = s[..., 0] / s[..., -1]
    elif p == -2:
        s = svdvals(x)
        r = s[..., -1] / s[..., 0]
    else:
        if s_[-2] != s_[-1]:
            raise _FuncadValueError(f"cond: for p={p!r}, the matrix must be square; got shape {s_}")
        r = norm(x, ord=p, axis=(-2, -1)) * norm(_fnp.linalg.inv(x), ord=p, axis=(-2, -1))
    # A singular matrix (NaN from inf * 0) has condition number inf, unless x has NaNs.
    return _fnp.where(_fnp.isnan(r) & ~_fnp.any(_fnp.isnan(x), axis=(-2, -1)), _np.inf, r)


# ------------------------------------------------------------------- norms ----

def _axes(x, axis):
    nd = len(_shape(x))
    axis = (axis,) if _np.ndim(axis) == 0 else tuple(axis)
    return tuple(canonical_axis(a, nd, "norm", x) for a in axis)


def vector_norm(x, /, *, axis=None, keepdims: bool = False, ord=2):
    """The vector `ord`-norm over `axis` (all axes when None): 2, 1, 0 (count of
    non-zeros), inf, -inf or any real p.

    >>> import funcad.numpy as fnp
    >>> float(fnp.linalg.vector_norm(fnp.array([3.0, -4.0]), ord=1))
    7.0
    """
    x = _inexact(x)
    if axis is not None:
        axis = _axes(x, axis)
    if isinstance(ord, str):
        hint = {"inf": " Use numpy.inf instead.", "-inf": " Use -numpy.inf instead."}.get(ord, "")
        raise _FuncadValueError(f"Invalid order {ord!r} for vector norm.{hint}")
    if ord is None or ord == 2:
        return _fnp.sqrt(_fnp.sum(_abs2(x), axis=axis, keepdims=keepdims))
    a = _fnp.abs(x)
    if ord == _np.inf:
        return _fnp.max(a, axis=axis, keepdims=keepdims)
    if ord == -_np.inf:
        return _fnp.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return _fnp.sum((x != 0).astype(_aval_of(x).dtype), axis=axis, keepdims=keepdims)
    if ord == 1:
        return _fnp.sum(a, axis=axis, keepdims=keepdims)
    dt = _aval_of(a).dtype
    return _fnp.power(_fnp.sum(a ** _np.asarray(ord, dt), axis=axis, keepdims=keepdims),
                      _np.asarray(1.0 / ord, dt))


def matrix_norm(x, /, *, keepdims: bool = False, ord="fro"):
    """The matrix `ord`-norm of the last two axes: 'fro', 'nuc', 1, -1, 2, -2, inf, -inf.

    >>> import numpy as np, funcad.numpy as fnp
    >>> float(fnp.linalg.matrix_norm(np.diag([3.0, -4.0]), ord=2))
    4.0
    """
    return norm(x, ord=ord, axis=(-2, -1), keepdims=keepdims)


def norm(x, ord=None, axis=None, keepdims: bool = False):
    """Vector and matrix norms as `numpy.linalg.norm`: every `ord` (the
    matrix 2, -2 and 'nuc' norms from singular values), `axis` one axis
    (vector) or two (matrix), `keepdims`.

    >>> import funcad.numpy as fnp
    >>> float(fnp.linalg.norm(fnp.array([3.0, 4.0])))
    5.0
    """
    x = _inexact(x)
    nd = len(_shape(x))
    if axis is None:
        if ord is None:  # any rank, as NumPy
            return _fnp.sqrt(_fnp.sum(_abs2(x), keepdims=keepdims))
        axis = tuple(range(nd))
    else:
        axis = _axes(x, axis)
    if len(axis) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axis, keepdims=keepdims)
    if len(axis) != 2:
        raise _FuncadValueError(f"Improper number of axes for norm: axis={axis}. Pass one axis for a "
                                "vector norm, or two axes for a matrix norm.")
    row, col = axis
    if row == col:
        raise _FuncadValueError(f"norm: duplicate axes given: {axis}")
    if ord is None or ord in ("f", "fro"):
        return _fnp.sqrt(_fnp.sum(_abs2(x), axis=axis, keepdims=keepdims))
    if ord in (1, -1, _np.inf, -_np.inf):
        red, other = (row, col) if ord in (1, -1) else (col, row)
        sums = _fnp.sum(_fnp.abs(x), axis=red, keepdims=True)
        if ord > 0:
            return _fnp.max(sums, axis=(row, col), keepdims=keepdims)
        return _fnp.min(sums, axis=(row, col), keepdims=keepdims)
    if ord in ("nuc", 2, -2):
        s = svd(_fnp.moveaxis(x, axis, (-2, -1)), compute_uv=False)
        if ord == 2:
            y = _fnp.max(s, axis=-1)
        elif ord == -2:
            y = _fnp.min(s, axis=-1)
        else:
            y = _fnp.sum(s, axis=-1)
        return _fnp.expand_dims(y, tuple(sorted(axis))) if keepdims else y
    raise _FuncadValueError(f"Invalid order {ord!r} for matrix norm; use None, 'fro', 'nuc', 1, -1, "
                            "2, -2, inf or -inf")
