"""Polynomials as coefficient arrays, highest power first (numpy.poly*, with JAX's dtype rules)."""
from __future__ import annotations

import operator

import numpy as np

from ..core.errors import ConcretizationError, FuncadTypeError
from ._calculus import convolve
from ..arrays.creation import arange, asarray, ones, zeros
from ..arrays.dtypes import promote, to_inexact
from ..arrays.indexing import _IndexUpdateHelper as _at  # eager results are ndarrays, without .at
from ..arrays.manip import trim_zeros
from ..arrays.shape import concatenate
from ..core.trace import Tracer
from . import all as all_, argmin, argsort, finfo, outer, sqrt, take, vander, where

__all__ = ["poly", "polyadd", "polysub", "polymul", "polyder", "polyint", "polyval", "polydiv",
           "polyfit", "roots"]


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


# ------------------------------------------------------- roots, polyfit ----

def _companion_roots(p):
    """The eigenvalues of p's companion matrix (p[0] != 0): its roots."""
    from .linalg import eigvals  # funcad.numpy.linalg loads on first use
    n = p.shape[0]
    if n < 2:
        return zeros((0,), np.result_type(p.dtype, np.complex64))
    first = (-p[1:] / p[0])[None]
    return eigvals(concatenate([first, np.eye(n - 2, n - 1, dtype=p.dtype)]))


def roots(p, *, strip_zeros: bool = True):
    """The roots of a polynomial (highest power first), as eigenvalues of its
    companion matrix: always complex, in LAPACK's order (as JAX).

    With `strip_zeros` (the default) leading zero coefficients are dropped,
    which needs concrete values; under jit pass `strip_zeros=False`: then each
    leading zero gives a NaN root at the end of a fixed-length result.
    Trailing zeros give zero roots (computed, not appended as NumPy does).

    >>> np.round(roots([1.0, -3.0, 2.0]).real, 6).tolist()
    [2.0, 1.0]
    """
    p = asarray(to_inexact(p))
    p = p.reshape(1) if p.ndim == 0 else p
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    n = p.shape[0]
    if n < 2:
        return zeros((0,), np.result_type(p.dtype, np.complex64))
    lead = where(all_(p == 0), n, argmin(p == 0))
    if strip_zeros:
        try:
            lead = int(lead.concrete() if isinstance(lead, Tracer) else lead)
        except ConcretizationError:
            raise ConcretizationError(
                "roots: stripping leading zeros (strip_zeros=True) makes the number of roots depend on "
                "the values of p; under jit or vmap pass strip_zeros=False, and leading zeros then "
                "give NaN roots at the end") from None
        return _companion_roots(p[lead:])
    # Fixed length: an all-zero p becomes [1, 1, ...] (no LAPACK failure); the
    # leading zeros are rolled to the end, their (zero) roots sorted last and set to NaN.
    p = where(lead == n, np.ones((), p.dtype), p)
    r = _companion_roots(take(p, (arange(n) + lead) % n, mode="clip"))
    key = (r == 0).astype(np.int64) * n + arange(n - 1)
    r = take(r, argsort(key), mode="clip")
    return where(arange(n - 1) < n - 1 - lead, r, np.array(complex(np.nan, np.nan), r.dtype))


def polyfit(x, y, deg: int, rcond: float | None = None, full: bool = False, w=None,
            cov: bool | str = False):
    """Least-squares polynomial fit of degree `deg` (coefficients highest power
    first), as numpy.polyfit, by JAX's algorithm: a Vandermonde matrix with
    columns scaled to unit norm, solved with lstsq. `y` may be 2-D (one fit
    per column); `w` weights the residuals; `full=True` also returns
    (residuals, rank, singular values, rcond); `cov=True` (or "unscaled") the
    covariance matrix of the coefficients.

    >>> np.round(polyfit([0.0, 1.0, 2.0, 3.0], [1.0, 3.0, 5.0, 7.0], 1), 6).tolist()
    [2.0, 1.0]
    """
    from .linalg import inv, lstsq  # funcad.numpy.linalg loads on first use
    try:
        deg = operator.index(deg)
    except TypeError:
        raise FuncadTypeError(f"polyfit: deg must be a Python int, got {deg!r:.40}") from None
    x, y = asarray(x), asarray(y)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x.shape[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if y.ndim < 1 or y.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x.shape[0] != y.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = x.shape[0] * float(finfo(to_inexact(x).dtype).eps)
    rcond = float(rcond)
    lhs, rhs = vander(x, order), y
    if w is not None:
        w = asarray(to_inexact(w))
        if w.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w.shape[0] != y.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if rhs.ndim == 2 else w)
    # Unit-norm columns improve the condition number of the Vandermonde matrix.
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs = lhs / scale[None, :]
    c, resids, rank, s = lstsq(lhs, rhs, rcond)
    c = (c.T / scale[None, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if not cov:
        return c
    vbase = inv(lhs.T @ lhs) / outer(scale, scale)
    if cov == "unscaled":
        fac = asarray(1.0)
    else:
        if x.shape[0] <= order:
            raise ValueError("the number of data points must exceed order to scale the covariance matrix")
        fac = resids / (x.shape[0] - order)
    fac = fac.reshape(-1) if fac.ndim == 0 else fac
    if y.ndim == 1:
        return c, vbase * fac[None]
    return c, vbase[:, :, None] * fac[None, None, :]
