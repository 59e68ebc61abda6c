"""funcad.lax.linalg's compositions: symmetric_product, cholesky_update, ormqr.

Each is a plain function of funcad ops (matrix products, Givens rotations,
Householder reflections), so it differentiates, batches and jits with no rule
of its own.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..arrays import complex as Cx
from ..arrays.creation import public as _creation
from ..arrays import indexing as X
from ..arrays import reductions as R
from ..arrays import shape as Sh
from ..arrays import ufuncs as U
from ..arrays.dtypes import asarray_or_tracer, promote, to_inexact
from ..transforms.control_flow_api import cond, fori_loop

__all__ = ["symmetric_product", "cholesky_update", "ormqr"]


def _arr(x):
    return asarray_or_tracer(x)


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1.0, beta: float = 0.0,
                      symmetrize_output: bool = False):
    """alpha A A^T + beta C for stacks of A `[..., m, n]` and symmetric C
    `[..., m, m]`. The whole product is computed (JAX guarantees only the
    lower triangle on some platforms); `symmetrize_output` copies the lower
    triangle's transpose into the upper one, as JAX.

    >>> import numpy as np
    >>> symmetric_product(np.array([[1.0, 2.0]]), np.array([[1.0]]), alpha=2.0, beta=3.0).tolist()
    [[13.0]]
    """
    a, c = _arr(a_matrix), _arr(c_matrix)
    sa, sc = tuple(aval_of(a).shape), tuple(aval_of(c).shape)
    if len(sa) < 2 or sc[-2:] != (sa[-2], sa[-2]):
        raise FuncadValueError(f"symmetric_product: a [..., m, n] needs c [..., m, m], got shapes {sa} "
                               f"and {sc}")
    dt = aval_of(a).dtype
    out = _creation.asarray(alpha, dt) * (a @ Sh.swapaxes(a, -1, -2)) + _creation.asarray(beta, dt) * c
    if symmetrize_output:
        out = Sh.tril(out) + Sh.swapaxes(Sh.tril(out, -1), -1, -2)
    return out


def _givens(x, y):
    """(c, s) with c x - s y = r, s x + c y = 0 (BLAS drotg's rotation, as JAX);
    (1, 0) where y == 0."""

    def nonzero(x, y):
        scale = U.maximum(U.abs(x), U.abs(y))
        x, y = x / scale, y / scale
        rh = 1 / U.sqrt(x * x + y * y)
        return x * rh, -y * rh
    one, zero = np.ones((), aval_of(x).dtype), np.zeros((), aval_of(x).dtype)
    return cond(y == 0, lambda x, y: (_creation.asarray(one), _creation.asarray(zero)), nonzero, x, y)


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of R^T R + w w^T, from the upper factor R of
    R^T R and a vector w, in O(n^2) by n Givens rotations (as JAX; one
    matrix, float input).

    >>> import numpy as np
    >>> r = cholesky_update(np.array([[1.0, 0.0], [0.0, 1.0]]), np.array([0.0, 0.0]))
    >>> r.tolist()
    [[1.0, 0.0], [0.0, 1.0]]
    """
    r, z = to_inexact(_arr(r_matrix)), to_inexact(_arr(w_vector))
    sr, sz = tuple(aval_of(r).shape), tuple(aval_of(z).shape)
    if len(sr) != 2 or sr[0] != sr[1] or sz != (sr[1],):
        raise FuncadValueError("cholesky_update: a rank-1 update to a Cholesky decomposition takes a "
                               f"square matrix and a vector of the same size, got shapes {sr} and {sz}")
    if aval_of(r).dtype.kind == "c" or aval_of(z).dtype.kind == "c":
        raise FuncadValueError("cholesky_update takes real matrices (Givens rotations of the real "
                               "factorization R^T R), as JAX")
    r, z = promote(r, z)
    rows = [r[k, :] for k in range(sr[0])]
    for k in range(sr[0]):
        c, s = _givens(rows[k][k], z[k])
        rows[k], z = c * rows[k] - s * z, c * z + s * rows[k]
    return Sh.stack(rows) if rows else r


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """Q c, Q^T c, c Q or c Q^T (`left`, `transpose`; Q^H for complex) with
    Q = H_0 H_1 ... H_{k-1} the m x m product of the Householder reflectors
    H_i = I - taus[i] v_i v_i^H stored below a's diagonal (as `geqrf` returns
    them), applied one at a time without forming Q.

    >>> import numpy as np, funcad.lax as lax
    >>> a = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    >>> h, taus = lax.linalg.geqrf(a)
    >>> q = ormqr(h, taus, np.eye(3))
    >>> bool(np.allclose(q[:, :2] @ np.triu(h[:2]), a))
    True
    """
    a, taus, c = promote(_arr(a), _arr(taus), _arr(c))
    sa, st, sc = (tuple(aval_of(x).shape) for x in (a, taus, c))
    if len(sa) < 2 or len(sc) < 2 or len(st) < 1:
        raise FuncadValueError(f"ormqr takes a [..., m, n], taus [..., k] and c [..., p, q], got shapes "
                               f"{sa}, {st} and {sc}")
    m, k = sa[-2], st[-1]
    if left and sc[-2] != m:
        raise FuncadValueError(f"ormqr with left=True expects c to have the same number of rows as the "
                               f"Householder matrix a. Got a shape {sa} and c shape {sc}.")
    if not left and sc[-1] != m:
        raise FuncadValueError(f"ormqr with left=False expects c to have the same number of columns as "
                               f"the Householder matrix a has rows. Got a shape {sa} and c shape {sc}.")
    if k > min(sa[-2:]):
        raise FuncadValueError(f"ormqr: {k} reflectors do not fit a of shape {sa}")
    complex_ = aval_of(a).dtype.kind == "c"
    v = Sh.tril(a[..., :, :k], -1) + np.eye(m, k, dtype=aval_of(a).dtype)
    t = Cx.conj(taus) if transpose and complex_ else taus
    backwards = left != transpose  # Q c and c Q^H meet H_{k-1} first

    def reflect(i, c):
        j = (k - 1 - i) if backwards else i
        vj = X.take(v, j, axis=-1, mode="clip")
        tj = X.take(t, j, axis=-1, mode="clip")[..., None, None]
        vh = Cx.conj(vj) if complex_ else vj
        if left:  # c - tau v (v^H c)
            return c - tj * (vj[..., :, None] * R.sum(vh[..., :, None] * c, axis=-2, keepdims=True))
        return c - tj * (R.sum(c * vj[..., None, :], axis=-1, keepdims=True) * vh[..., None, :])
    return fori_loop(0, k, reflect, c)
