"""funcad.lax.linalg's triangular and tridiagonal functions: cholesky, triangular_solve,
lu, lu_pivots_to_permutation, tridiagonal_solve, tridiagonal (each a primitive, checked)."""
from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadTypeError as _FuncadTypeError, FuncadValueError as _FuncadValueError
from ..primitives import triangular as _T, tridiagonal as _tri
from ..primitives.decompositions import H as _H
from ..arrays import reductions as _R, shape as _Sh, ufuncs as _U
from ..arrays.creation import public as _creation
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer
from ..transforms.control_flow_api import fori_loop as _fori_loop
from ._checked import checked as _checked
from ._slicing import dynamic_index_in_dim as _dynamic_index_in_dim

__all__ = ["cholesky", "triangular_solve", "lu", "lu_pivots_to_permutation", "tridiagonal_solve",
           "tridiagonal"]


def _arr(x):
    return _asarray_or_tracer(x)


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor L (x = L Lᵀ) of each matrix of a stack.

    With `symmetrize_input` the factor is that of (x + xᴴ)/2, so the function
    (and its derivative) is defined for any square input; otherwise only the
    lower triangle is read. A matrix that is not positive definite gives NaNs.

    >>> import numpy as np
    >>> cholesky(np.array([[1.0, 0.0], [0.0, 9.0]])).tolist()
    [[1.0, 0.0], [0.0, 3.0]]
    """
    x = _arr(x)
    if symmetrize_input:
        # (x + xᴴ)/2: Hermitian for complex input, as JAX.
        x = _T.mul(_T.add(x, _H(x)), _T.const(x, 0.5)) if _aval_of(x).ndim >= 2 else x
    return _checked(_T.cholesky)(x)


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False,
                     transpose_a: bool = False, conjugate_a: bool = False,
                     unit_diagonal: bool = False):
    """Solve op(a) @ x = b (left_side) or x @ op(a) = b for x, with a triangular
    (its `lower` or upper triangle read) and op(a) = aᵀ when `transpose_a`.

    >>> import numpy as np
    >>> triangular_solve(np.array([[2.0, 0.0], [1.0, 1.0]]), np.array([[2.0], [3.0]]),
    ...                  left_side=True, lower=True).tolist()
    [[1.0], [2.0]]
    """
    return _checked(_T.triangular_solve)(_arr(a), _arr(b), left_side, lower, transpose_a,
                                         conjugate_a, unit_diagonal)


def lu(x):
    """LU decomposition with partial pivoting: (lu, pivots, permutation).

    L is unit lower triangular (below lu's diagonal), U upper triangular (on and
    above it), `pivots[i]` the row swapped with row i (0-based, int32), and
    x[..., permutation, :] = L @ U.

    >>> import numpy as np
    >>> lu_, piv, perm = lu(np.array([[1.0, 2.0], [3.0, 4.0]]))
    >>> piv.tolist(), perm.tolist()
    ([1, 1], [1, 0])
    """
    return tuple(_checked(_T.lu)(_arr(x)))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation that the successive row swaps `pivots` (as from `lu`) make
    of range(permutation_size); batch dimensions lead.

    >>> import numpy as np
    >>> lu_pivots_to_permutation(np.array([2, 2], np.int32), 3).tolist()
    [2, 0, 1]
    """
    pivots = _arr(pivots)
    aval = _aval_of(pivots)
    if aval.dtype.kind not in "iu" or aval.ndim < 1:
        raise _FuncadTypeError(f"lu_pivots_to_permutation needs integer pivots of shape (..., k), "
                               f"got {aval.str_short()}")
    m = int(permutation_size)
    k = aval.shape[-1]
    if k > m:
        raise _FuncadTypeError(f"lu_pivots_to_permutation: {k} pivots do not fit a permutation "
                               f"of size {m}; permutation_size must be at least {k}")
    batch = aval.shape[:-1]
    idx = _creation.arange(m, dtype=aval.dtype)
    perm0 = _Sh.broadcast_to(idx, batch + (m,))

    def swap(i, perm):
        at_j = idx == _dynamic_index_in_dim(pivots, i, -1)
        pi = _dynamic_index_in_dim(perm, i, -1)
        pj = _R.sum(_U.where(at_j, perm, 0), axis=-1, keepdims=True, dtype=aval.dtype)
        return _U.where(idx == i, pj, _U.where(at_j, pi, perm))

    return _fori_loop(0, k, swap, perm0) if k else perm0


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """Solve A X = b for tridiagonal A given by its diagonals, each `[..., m]`:
    dl[i] = A[i, i-1] (dl[0] unused), d[i] = A[i, i], du[i] = A[i, i+1]
    (du[m-1] unused); b is `[..., m, n]`. LAPACK's gtsv (partial pivoting),
    CPU only; NaNs for a singular A. Differentiable in all four arguments.

    With `perturb_singular=True` a (numerically) singular A gives a finite
    result instead: pivots smaller than about eps * max|U| are perturbed, as
    LAPACK's lagts does for inverse iteration (jaxlib's kernel under jit; on
    jaxlib < 0.7, which lacks it, XLA calls back into funcad's NumPy solve).

    >>> import numpy as np
    >>> tridiagonal_solve(np.array([0.0, 1.0]), np.array([2.0, 2.0]), np.array([1.0, 0.0]),
    ...                   np.array([[3.0], [3.0]])).tolist()
    [[1.0], [1.0]]
    >>> x = tridiagonal_solve(np.array([0.0, 1.0]), np.array([1.0, 1.0]), np.array([1.0, 0.0]),
    ...                       np.array([[1.0], [1.0]]), perturb_singular=True)
    >>> bool(np.isfinite(x).all())
    True
    """
    return _checked(_tri.tridiagonal_solve)(_arr(dl), _arr(d), _arr(du), _arr(b),
                                             bool(perturb_singular))


def tridiagonal(a, *, lower: bool = True):
    """Reduce Hermitian matrices `[..., n, n]` to tridiagonal form (LAPACK's
    sytrd/hetrd, CPU only), reading only the `lower` (or upper) triangle:
    `(a, d, e, taus)` with the diagonal d and off-diagonal e (real), the
    Householder reflectors of Q below (above) a's first sub- (super-)diagonal
    and their factors taus. Not differentiable (as in JAX).

    >>> import numpy as np
    >>> _, d, e, _ = tridiagonal(np.array([[2.0, 1.0], [1.0, 3.0]]))
    >>> d.tolist(), e.tolist()
    ([2.0, 3.0], [1.0])
    """
    return tuple(_checked(_tri.tridiagonal)(_arr(a), lower))


