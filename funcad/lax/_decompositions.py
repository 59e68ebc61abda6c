"""funcad.lax.linalg's decompositions: eigh, svd, qr, geqrf, householder_product.

Thin wrappers over the primitives of funcad/primitives/decompositions.py with
JAX's signatures and output order (`eigh` returns `(v, w)`, `svd` returns
`(u, s, vh)`). See that module for the derivative conventions.
"""
from __future__ import annotations

import enum
import warnings

from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadValueError as _FuncadValueError
from ..primitives import decompositions as _D
from ..primitives import eig as _eig
from ..primitives import schur as _S
from ..primitives import elementwise as _E
from ..primitives.structural import broadcast_in_dim, slice as _slice
from ..primitives.indexing import take_along_axis
from ..primitives.elementwise import stop_gradient

__all__ = ["eig", "eigh", "svd", "qr", "geqrf", "householder_product", "schur", "hessenberg",
           "EigImplementation", "EighImplementation", "SvdAlgorithm"]


class EigImplementation(enum.Enum):
    """JAX's choice of kernel for `eig`: LAPACK on the CPU; the GPU ones (MAGMA, cuSOLVER)
    are refused, as JAX refuses them on the CPU."""
    CUSOLVER = "cusolver"
    MAGMA = "magma"
    LAPACK = "lapack"


class EighImplementation(enum.Enum):
    """JAX's choice of algorithm for `eigh`: QR (LAPACK's syevd, the CPU's); Jacobi and
    QDWH are refused on the CPU, as JAX refuses them."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


class SvdAlgorithm(enum.Enum):
    """JAX's choice of algorithm for `svd`: DEFAULT and DIVIDE_AND_CONQUER are LAPACK's
    gesdd, QR its gesvd; Jacobi and polar are refused on the CPU, as JAX refuses them."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def _symmetrize(x):
    return _E.div(_E.add(x, _D.H(x)), _E.convert_element_type(2, _aval_of(x).dtype))


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index: tuple[int, int] | None = None,
         implementation: EighImplementation | None = None):
    """Eigendecomposition of symmetric matrices `[..., n, n]`: `(v, w)` with
    `x @ v == v * w`, eigenvalues ascending, eigenvectors in the columns of v.

    With `symmetrize_input` (the default) x is replaced by (x + x^T)/2 first;
    otherwise only the `lower` (or upper) triangle is read. `subset_by_index=
    (lo, hi)` keeps eigenpairs lo..hi-1 (in ascending order).

    >>> import numpy as np, funcad.lax as lax
    >>> v, w = lax.linalg.eigh(np.array([[2.0, 1.0], [1.0, 2.0]]))
    >>> w.tolist()
    [1.0, 3.0]
    """
    if implementation == EighImplementation.QDWH:
        raise NotImplementedError("QDWH implementation is only supported on TPU")
    if implementation == EighImplementation.JACOBI:
        raise NotImplementedError("Jacobi implementation is not supported on CPU")
    sh = _aval_of(x).shape
    if len(sh) < 2 or sh[-1] != sh[-2]:
        raise _FuncadValueError(f"eigh takes square matrices [..., n, n], got shape {tuple(sh)}; "
                                "pass a symmetric matrix (or a stack of them)")
    if symmetrize_input:
        x = _symmetrize(x)
    v, w = _D.eigh(x, lower=lower, sort_eigenvalues=sort_eigenvalues)
    n = sh[-1]
    if subset_by_index is not None and tuple(subset_by_index) != (0, n):
        lo, hi = (int(i) for i in subset_by_index)
        if not 0 <= lo < hi <= n:
            raise _FuncadValueError(f"eigh: subset_by_index={subset_by_index} must satisfy "
                                    f"0 <= lo < hi <= n = {n}")
        b = len(sh) - 2
        v = _slice(v, (0,) * (b + 1) + (lo,), tuple(sh[:-1]) + (hi,))
        w = _slice(w, (0,) * b + (lo,), tuple(sh[:-2]) + (hi,))
    return v, w


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True,
        subset_by_index: tuple[int, int] | None = None, algorithm: SvdAlgorithm | None = None):
    """Singular value decomposition of matrices `[..., m, n]`: `(u, s, vh)` with
    `x == u[..., :, :k] * s @ vh[..., :k, :]`, or `s` alone with
    `compute_uv=False`; singular values descending. `algorithm` picks LAPACK's
    kernel as JAX does on the CPU (gesdd, or gesvd for `SvdAlgorithm.QR`);
    `subset_by_index` may only name all singular values there (as in JAX).

    >>> import numpy as np, funcad.lax as lax
    >>> lax.linalg.svd(np.diag([1.0, 3.0]), compute_uv=False).tolist()
    [3.0, 1.0]
    """
    if algorithm in (SvdAlgorithm.JACOBI, SvdAlgorithm.POLAR):
        raise NotImplementedError("The SVD Jacobi and Polar algorithms are not implemented on CPU.")
    if algorithm is not None and not isinstance(algorithm, SvdAlgorithm):
        raise TypeError(f"svd: algorithm must be None or a funcad.lax.linalg.SvdAlgorithm, got {algorithm!r}")
    m, n = _aval_of(x).shape[-2:]
    if subset_by_index is not None and full_matrices and tuple(subset_by_index) != (0, min(m, n)):
        raise ValueError("full_matrices and subset_by_index cannot both be set")
    if not (subset_by_index is None or tuple(subset_by_index) == (0, min(m, n))):
        raise NotImplementedError("subset_by_index not implemented for CPU and GPU")
    driver = "gesvd" if algorithm == SvdAlgorithm.QR else "gesdd"
    outs = _D.svd(x, full_matrices=full_matrices, compute_uv=compute_uv, driver=driver)
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None):
    """QR decomposition of matrices `[..., m, n]`: `(q, r)` with `x == q @ r`;
    q is `[..., m, m]` (or `[..., m, min(m, n)]` with `full_matrices=False`).

    With `pivoting=True`, `(q, r, p)` with `x[..., :, p] == q @ r` and |diag(r)|
    non-increasing (LAPACK's geqp3 picks p; int32). Its derivative is that of
    the QR of the permuted columns, p held fixed (as in JAX). `use_magma`
    selects a GPU kernel in JAX and has no effect on the CPU.

    >>> import numpy as np, funcad.lax as lax
    >>> q, r = lax.linalg.qr(np.array([[3.0, 1.0], [4.0, 2.0]]))
    >>> bool(np.allclose(q @ r, [[3.0, 1.0], [4.0, 2.0]]))
    True
    >>> lax.linalg.qr(np.array([[1.0, 3.0], [0.0, 4.0]]), pivoting=True)[2].tolist()
    [1, 0]
    """
    if not pivoting:
        q, r = _D.qr(x, full_matrices=full_matrices)
        return q, r
    sh = tuple(_aval_of(x).shape)
    # geqp3 picks the pivots; the factors are the (differentiable) QR of the
    # permuted columns, the same numbers as geqp3's own Householder vectors give.
    _, p, _ = _S.geqp3(stop_gradient(x))
    if 0 not in sh[-2:]:  # (an empty matrix is its own permutation)
        idx = broadcast_in_dim(p, sh, tuple(range(len(sh) - 2)) + (len(sh) - 1,))
        x = take_along_axis(x, idx, len(sh) - 1)
    q, r = _D.qr(x, full_matrices=full_matrices)
    return q, r, p


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False,
          select_callable=None):
    """Schur decomposition of square matrices `[..., n, n]`: the list `[t, q]`
    with `x == q @ t @ q^H`, q unitary and t upper triangular (quasi upper
    triangular, with 2x2 blocks for complex-conjugate eigenvalue pairs, for real
    x); `[t]` with `compute_schur_vectors=False` (JAX's lists). LAPACK's gees, CPU only (as JAX).

    Not differentiable (as in JAX). Sorting the eigenvalues is not implemented
    in JAX either: `sort_eig_vals=True` raises; `select_callable` only matters
    when sorting, so it is unused.

    >>> import numpy as np, funcad.lax as lax
    >>> t, q = lax.linalg.schur(np.array([[1.0, 2.0], [0.0, 3.0]]))
    >>> np.round(t, 12).tolist()
    [[1.0, 2.0], [0.0, 3.0]]
    """
    if sort_eig_vals:
        raise _FuncadValueError("schur: sort_eig_vals=True is not available: sorting needs LAPACK's "
                                "select callback, which JAX does not implement either; sort the "
                                "eigenvalues of the result yourself (funcad.numpy.linalg.eigvals)")
    return list(_S.schur(x, compute_schur_vectors=compute_schur_vectors))


def geqrf(a):
    """LAPACK's geqrf: `(a, taus)` with R in the upper triangle of `a` and the
    Householder vectors below it (not differentiable, as in JAX).

    >>> import numpy as np, funcad.lax as lax
    >>> a, taus = lax.linalg.geqrf(np.array([[3.0], [4.0]]))
    >>> round(float(abs(a[0, 0])), 6)
    5.0
    """
    a, taus = _D.geqrf(a)
    return a, taus


def householder_product(a, taus):
    """The orthonormal `[..., m, n]` product of the Householder reflectors stored
    in `a` and `taus` (LAPACK's orgqr), as returned by `geqrf`.

    >>> import numpy as np, funcad.lax as lax
    >>> x = np.array([[3.0, 1.0], [4.0, 2.0], [0.0, 1.0]])
    >>> q = lax.linalg.householder_product(*lax.linalg.geqrf(x))
    >>> bool(np.allclose(q.T @ q, np.eye(2)))
    True
    """
    return _D.householder_product(a, taus)


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None,
        use_magma: bool | None = None):
    """Eigendecomposition of general square matrices `[..., n, n]`: the list
    `[w, vl, vr]` (the eigenvectors only where asked for), all complex, with
    `x @ vr == vr * w` and `vl^H @ x == w[:, None] * vl^H`. Each eigenvector has
    unit norm and its largest component real (LAPACK's geev); eigenvalues come
    in geev's order (not sorted).

    Eigenvalues are differentiable; eigenvectors only with
    `enable_eigvec_derivs=True`, valid where eigenvalues are distinct (as JAX).

    >>> import numpy as np, funcad.lax as lax
    >>> w, vr = lax.linalg.eig(np.array([[0.0, 1.0], [-1.0, 0.0]]), compute_left_eigenvectors=False)
    >>> w.tolist()
    [1j, -1j]
    """
    if use_magma is not None:
        warnings.warn("use_magma is deprecated, please use implementation=EigImplementation.MAGMA "
                      "instead.", DeprecationWarning, stacklevel=2)
    if implementation and implementation != EigImplementation.LAPACK:
        raise ValueError("Only the lapack implementation is supported on CPU.")
    return list(_eig.eig(x, compute_left_eigenvectors, compute_right_eigenvectors,
                         enable_eigvec_derivs))


def hessenberg(a):
    """Hessenberg reduction of square matrices `[..., n, n]` (LAPACK's gehrd,
    CPU only, as JAX): `(a, taus)`, the upper Hessenberg form in a's upper
    triangle and first subdiagonal, the Householder reflectors of Q below it
    (Q = householder_product(a[..., 1:, :-1], taus), bordered by a 1). Not
    differentiable (as in JAX).

    >>> import numpy as np, funcad.lax as lax
    >>> a, taus = lax.linalg.hessenberg(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> a.tolist(), taus.tolist()
    ([[1.0, 2.0], [3.0, 4.0]], [0.0])
    """
    a, taus = _S.hessenberg(a)
    return a, taus
