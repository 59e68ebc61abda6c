"""Samplers built on matrix decompositions: orthogonal (QR) and multivariate_normal
(Cholesky, eigh or SVD of the covariance), as JAX draws them."""
from __future__ import annotations

import operator

import numpy as np

from .. import numpy as fnp
from ..numpy import linalg as la
from ._keys import canonical_shape, check_key
from ._samplers import _check_shape, _float_dtype, _normal_real

__all__ = ["orthogonal", "multivariate_normal"]


def orthogonal(key, n: int, shape=(), dtype=None, m: int | None = None):
    """Matrices (n x m, m = n by default) with orthonormal columns (or rows), Haar-distributed:
    the Q of a QR decomposition of normals, its columns' signs fixed by R's diagonal.

    >>> import funcad.random as fr
    >>> q = fr.orthogonal(fr.PRNGKey(0), 3)
    >>> bool(abs(q @ q.T - np.eye(3)).max() < 1e-12)
    True
    """
    key = check_key("orthogonal", key)
    dtype = _float_dtype("orthogonal", dtype)
    shape = canonical_shape(shape)
    n = operator.index(n)
    m = n if m is None else operator.index(m)
    z = _normal_real(key, (*shape, max(n, m), min(n, m)), dtype)
    q, r = la.qr(z)
    d = fnp.diagonal(r, axis1=-2, axis2=-1)
    x = fnp.multiply(q, fnp.expand_dims(fnp.sign(d), -2))
    return fnp.swapaxes(x, -1, -2) if n < m else x


def multivariate_normal(key, mean, cov, shape=None, dtype=None, method: str = "cholesky"):
    """Samples of N(mean, cov): mean + factor @ normal, with factor from `method`
    ('cholesky', 'eigh' or 'svd' of cov).

    >>> import funcad.random as fr
    >>> fr.multivariate_normal(fr.PRNGKey(0), np.zeros(2), np.eye(2), (5,)).shape
    (5, 2)
    """
    key = check_key("multivariate_normal", key)
    if method not in ("svd", "eigh", "cholesky"):
        raise ValueError("method must be one of {'svd', 'eigh', 'cholesky'}")
    mean, cov = fnp.asarray(mean), fnp.asarray(cov)
    ft = np.result_type(*(a.dtype if a.dtype.kind == "f" else np.float64 for a in (mean, cov)))
    mean, cov = mean.astype(ft), cov.astype(ft)
    dtype = mean.dtype if dtype is None else _float_dtype("multivariate_normal", dtype)
    if mean.ndim < 1:
        raise ValueError(f"multivariate_normal requires mean.ndim >= 1, got mean.ndim == {mean.ndim}")
    if cov.ndim < 2:
        raise ValueError(f"multivariate_normal requires cov.ndim >= 2, got cov.ndim == {cov.ndim}")
    n = mean.shape[-1]
    if tuple(cov.shape[-2:]) != (n, n):
        raise ValueError(f"multivariate_normal requires cov.shape == (..., n, n) for n={n}, but got "
                         f"cov.shape == {tuple(cov.shape)}.")
    if shape is None:
        shape = tuple(np.broadcast_shapes(tuple(mean.shape[:-1]), tuple(cov.shape[:-2])))
    else:
        shape = canonical_shape(shape)
        _check_shape("normal", shape, tuple(mean.shape[:-1]), tuple(cov.shape[:-2]))
    if method == "svd":
        u, s, _ = la.svd(cov)
        factor = fnp.multiply(u, fnp.sqrt(s[..., None, :]))
    elif method == "eigh":
        w, v = la.eigh(cov)
        factor = fnp.multiply(v, fnp.sqrt(w[..., None, :]))
    else:
        factor = la.cholesky(cov)
    z = _normal_real(key, shape + (n,), dtype)
    return fnp.add(mean, fnp.einsum("...ij,...j->...i", factor, z))
