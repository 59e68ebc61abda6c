"""Polynomials as coefficient arrays, highest power first (numpy.poly*, with JAX's dtype rules)."""
from __future__ import annotations

import operator

import numpy as np

from ..core.errors import FuncadTypeError
from ._calculus import convolve
from ._creation import arange, asarray, ones, zeros
from ._dtypes import promote, to_inexact
from ._indexing import _IndexUpdateHelper as _at  # eager results are ndarrays, without .at
from ._manip import trim_zeros
from ._shape import concatenate

__all__ = ["poly", "polyadd", "polysub", "polymul", "polyder", "polyint", "polyval", "polydiv"]


def _coeffs(name, *ps, inexact=False):
    ps = [asarray(to_inexact(p) if inexact else p) for p in ps]
    for p in ps:
        if p.ndim < 1:
            raise FuncadTypeError(f"{name} needs coefficient arrays with at least one dimension "
                                  f"(highest power first), got a scalar; wrap it as [c]")
    return [asarray(p) for p in promote(*ps)] if len(ps) > 1 else ps


def _order(name, m, what):
    try:
        m = operator.index(m)
    except TypeError:
        raise FuncadTypeError(f"{name}: the order m must be a Python int, got {m!r:.40}") from None
    if m < 0:
        raise ValueError(f"Order of {what} must be positive" + (" (see polyder)" if what == "integral" else ""))
    return m


def poly(seq_of_zeros):
    """The monic polynomial with the given roots (or a square matrix's eigenvalues).

    >>> poly([1.0, 2.0]).tolist()
    [1.0, -3.0, 2.0]
    """
    z = asarray(to_inexact(seq_of_zeros))
    z = z.reshape(1) if z.ndim == 0 else z
    if z.ndim == 2 and z.shape[0] == z.shape[1] and z.shape[0] != 0:
        from .linalg import eigvals  # linalg builds on the numpy namespace
        z = eigvals(z)
    if z.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    if z.shape[0] == 0:
        return ones((), z.dtype)
    a = ones((1,), z.dtype)
    one = ones((1,), z.dtype)
    for k in range(z.shape[0]):
        a = convolve(a, concatenate([one, -z[k:k + 1]]))
    return a


def polyadd(a1, a2):
    """The sum of two polynomials (the shorter one aligned with the lower powers).

    >>> polyadd([1, 2], [1, 2, 3]).tolist()
    [1, 3, 5]
    """
    a1, a2 = _coeffs("polyadd", a1, a2)
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    return _at(a1)[a1.shape[0] - a2.shape[0]:].add(a2)


def polysub(a1, a2):
    """The difference of two polynomials.

    >>> polysub([1, 2], [1, 2, 3]).tolist()
    [-1, -1, -1]
    """
    a1, a2 = _coeffs("polysub", a1, a2)
    return polyadd(a1, -a2)


def _trim(p):
    p = trim_zeros(p, "f")
    return zeros((1,), p.dtype) if p.shape[0] == 0 else p


def polymul(a1, a2, *, trim_leading_zeros: bool = False):
    """The product of two polynomials (an empty one counts as zero).

    `trim_leading_zeros=True` drops leading zeros first, which needs concrete values.

    >>> polymul([1.0, 2.0], [1.0, 3.0]).tolist()
    [1.0, 5.0, 6.0]
    """
    a1, a2 = _coeffs("polymul", a1, a2, inexact=True)
    if trim_leading_zeros:
        a1, a2 = _trim(a1), _trim(a2)
    a1 = zeros((1,), a1.dtype) if a1.shape[0] == 0 else a1
    a2 = zeros((1,), a2.dtype) if a2.shape[0] == 0 else a2
    return convolve(a1, a2)


def polyder(p, m: int = 1):
    """The m-th derivative of a polynomial.

    >>> polyder([1, 2, 3, 4], 2).tolist()
    [6.0, 4.0]
    """
    m = _order("polyder", m, "derivative")
    p, = _coeffs("polyder", p, inexact=True)
    if p.ndim != 1:  # NumPy refuses too; JAX would scale the wrong axis
        raise ValueError(f"polyder needs a 1-D coefficient array, got shape {p.shape}")
    n = p.shape[0]
    if m == 0:
        return p
    if m >= n:
        return zeros((0,), p.dtype)
    # degree d picks up d (d-1) ... (d-m+1)
    deg = np.arange(n - 1, m - 1, -1)
    factor = np.prod([deg - j for j in range(m)], axis=0).astype(p.dtype)
    return p[:n - m] * factor


def polyint(p, m: int = 1, k=None):
    """The m-th antiderivative, with integration constants k (a scalar or one per integration).

    >>> polyint([3.0, 2.0, 1.0]).tolist()
    [1.0, 1.0, 1.0, 0.0]
    """
    m = _order("polyint", m, "integral")
    p, = _coeffs("polyint", p, inexact=True)
    k = asarray(0 if k is None else k)
    p, k = [asarray(x) for x in promote(p, to_inexact(k))]
    k = k.reshape(1) if k.ndim == 0 else k
    if k.ndim != 1 or (m > 0 and k.shape[0] not in (1, m)):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    for i in range(m):
        n = p.shape[0]
        p = concatenate([p / arange(n, 0, -1, dtype=p.dtype), k[i if k.shape[0] > 1 else 0][None]])
    return p


def polyval(p, x, *, unroll: int | None = None):
    """The polynomial p at x by Horner's rule (p's trailing dimensions broadcast with x).

    `unroll` is accepted for JAX compatibility; the loop is always fully unrolled here.

    >>> int(polyval([1, 2, 3], 2))
    11
    """
    p, = _coeffs("polyval", p)
    p, x = [asarray(v) for v in promote(p, x)]
    shape = np.broadcast_shapes(p.shape[1:], x.shape)
    y = zeros(shape, x.dtype)
    for i in range(p.shape[0]):
        y = y * x + p[i]
    return y


def polydiv(u, v, *, trim_leading_zeros: bool = False):
    """Quotient and remainder of polynomial division u / v (the remainder keeps u's length).

    >>> q, r = polydiv([1.0, 3.0, 3.0, 1.0], [1.0, 1.0])
    >>> q.tolist(), r.tolist()
    ([1.0, 2.0, 1.0], [0.0, 0.0, 0.0, 0.0])
    """
    u, v = _coeffs("polydiv", u, v, inexact=True)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = 1.0 / v[0]
    q = zeros((max(m - n + 1, 1),), u.dtype)
    r = u
    for k in range(m - n + 1):
        d = scale * r[k]
        q = _at(q)[k].set(d)
        r = _at(r)[k:k + n + 1].add(-d * v)
    if trim_leading_zeros:
        r = trim_zeros(r, "f")
    return q, r
