"""funcad.numpy.linalg: norms (built from primitives, so differentiable)."""
from __future__ import annotations

import numpy as np

from ...core.avals import aval_of
from .. import _reductions as R
from .. import _ufuncs as U
from .._dtypes import asarray_or_tracer, to_inexact


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector and matrix norms as numpy.linalg.norm (no 'nuc' or 2-norm of matrices).

    >>> import funcad.numpy as fnp
    >>> float(fnp.linalg.norm(fnp.array([3.0, 4.0])))
    5.0
    """
    x = to_inexact(asarray_or_tracer(x))
    nd = aval_of(x).ndim
    if axis is None and (ord is None or nd == 1):
        if ord is None or ord == 2:
            return U.sqrt(R.sum(U.multiply(x, x), axis=None, keepdims=keepdims))
        axis = tuple(range(nd))
    if axis is None:
        axis = tuple(range(nd))
    axes = R._norm_axes(nd, axis)
    if len(axes) == 1:
        a = U.absolute(x)
        if ord is None or ord == 2:
            return U.sqrt(R.sum(U.multiply(x, x), axes, keepdims=keepdims))
        if ord == np.inf:
            return R.max(a, axes, keepdims=keepdims)
        if ord == -np.inf:
            return R.min(a, axes, keepdims=keepdims)
        if ord == 0:
            return R.sum(U.not_equal(x, 0).astype(aval_of(x).dtype), axes, keepdims=keepdims)
        if ord == 1:
            return R.sum(a, axes, keepdims=keepdims)
        p = float(ord)
        return U.power(R.sum(U.power(a, p), axes, keepdims=keepdims), 1.0 / p)
    if len(axes) == 2:
        r, c = axes
        if ord is None or ord == "fro":
            return U.sqrt(R.sum(U.multiply(x, x), axes, keepdims=keepdims))
        a = U.absolute(x)
        if ord == 1:
            return R.max(R.sum(a, r, keepdims=True), axes, keepdims=keepdims)
        if ord == -1:
            return R.min(R.sum(a, r, keepdims=True), axes, keepdims=keepdims)
        if ord == np.inf:
            return R.max(R.sum(a, c, keepdims=True), axes, keepdims=keepdims)
        if ord == -np.inf:
            return R.min(R.sum(a, c, keepdims=True), axes, keepdims=keepdims)
        raise NotImplementedError(f"matrix norm ord={ord!r} needs an SVD, which funcad does not have")
    raise ValueError("Improper number of dimensions to norm.")


def __getattr__(name):
    from ...core.errors import unsupported_name
    raise unsupported_name(__name__, name, globals(), np.linalg)
