"""funcad.scipy.linalg's special matrices, as JAX offers them.

Those built from arrays (toeplitz, hankel, circulant, leslie, companion,
fiedler, fiedler_companion, convolution_matrix) are gathers and elementwise
funcad ops, batched over leading axes like JAX's (`vectorize`), so they
differentiate and jit. Those of a size alone (hilbert, invhilbert, pascal,
invpascal, helmert, hadamard, dft) are constants, computed exactly in NumPy
(integer arithmetic where the entries are integers), with JAX's dtypes.
"""
from __future__ import annotations

import math

import numpy as np

from ...core.avals import aval_of
from ...core.errors import FuncadValueError
from ...arrays.dtypes import asarray_or_tracer, promote, to_inexact
from ... import numpy as fnp

__all__ = ["toeplitz", "hankel", "circulant", "leslie", "companion", "fiedler", "fiedler_companion",
           "convolution_matrix", "hilbert", "invhilbert", "pascal", "invpascal", "helmert", "hadamard",
           "dft"]


def _fnp():
    return fnp


def _arr(x):
    return asarray_or_tracer(x)


def _shape(x):
    return tuple(aval_of(x).shape)


def _diagonals(c, r):
    """T[i, j] = c[i - j] below and on the diagonal, r[j - i] above: one gather
    from [c reversed, r[1:]] at m - 1 - i + j."""
    fnp = _fnp()
    m, n = _shape(c)[-1], _shape(r)[-1]
    if m == 0 or n == 0:
        return fnp.zeros(np.broadcast_shapes(_shape(c)[:-1], _shape(r)[:-1]) + (m, n),
                         np.result_type(aval_of(c).dtype, aval_of(r).dtype))
    c, r = _promote(c, r)
    vals = fnp.concatenate([fnp.flip(c, -1), r[..., 1:]], axis=-1)
    idx = (m - 1) - np.arange(m)[:, None] + np.arange(n)[None, :]
    return vals[..., idx]


def _promote(*xs):
    return promote(*xs)


def _batch_align(c, r):
    fnp = _fnp()
    batch = np.broadcast_shapes(_shape(c)[:-1], _shape(r)[:-1])
    return (fnp.broadcast_to(c, batch + _shape(c)[-1:]), fnp.broadcast_to(r, batch + _shape(r)[-1:]))


def toeplitz(c, r=None):
    """The Toeplitz matrix with first column c and first row r (`r` defaults to
    conj(c); T[0, 0] is c[0]). Leading axes of c and r are batch axes, broadcast
    together (as JAX, unlike SciPy, which flattens).

    >>> import numpy as np
    >>> toeplitz(np.array([1, 2, 3]), np.array([1, 4])).tolist()
    [[1, 4], [2, 1], [3, 2]]
    """
    fnp = _fnp()
    c = fnp.atleast_1d(_arr(c))
    r = fnp.conj(c) if r is None else fnp.atleast_1d(_arr(r))
    return _diagonals(*_batch_align(c, r))


def hankel(c, r=None):
    """The Hankel matrix with first column c and last row r (zeros by default;
    H[-1, 0] is c[-1]): H[i, j] = c[i + j] while i + j < len(c), r[i + j - len(c) + 1]
    after. Leading axes are batch axes.

    >>> import numpy as np
    >>> hankel(np.array([1, 2, 3]), np.array([3, 4])).tolist()
    [[1, 2], [2, 3], [3, 4]]
    """
    fnp = _fnp()
    c = _arr(c)
    r = fnp.zeros_like(c) if r is None else _arr(r)
    for name, x in (("c", c), ("r", r)):
        if len(_shape(x)) == 0:
            raise FuncadValueError(f"hankel: {name} must be at least 1-dimensional, got a scalar.")
    c, r = _batch_align(c, r)
    m, n = _shape(c)[-1], _shape(r)[-1]
    if m == 0 or n == 0:
        return fnp.zeros(_shape(c)[:-1] + (m, n), np.result_type(aval_of(c).dtype, aval_of(r).dtype))
    c, r = _promote(c, r)
    vals = fnp.concatenate([c, r[..., 1:]], axis=-1)
    return vals[..., np.arange(m)[:, None] + np.arange(n)[None, :]]


def circulant(c):
    """The circulant matrix whose first column is c: C[i, j] = c[(i - j) mod n].

    >>> import numpy as np
    >>> circulant(np.array([1, 2, 3])).tolist()
    [[1, 3, 2], [2, 1, 3], [3, 2, 1]]
    """
    fnp = _fnp()
    c = fnp.atleast_1d(_arr(c))
    n = _shape(c)[-1]
    return c[..., (np.arange(n)[:, None] - np.arange(n)[None, :]) % max(n, 1)]


def leslie(f, s):
    """The Leslie matrix: fecundities f in the first row, survival rates s on
    the subdiagonal.

    >>> import numpy as np
    >>> leslie(np.array([0.1, 2.0, 1.0]), np.array([0.5, 0.8])).tolist()
    [[0.1, 2.0, 1.0], [0.5, 0.0, 0.0], [0.0, 0.8, 0.0]]
    """
    fnp = _fnp()
    f, s = fnp.atleast_1d(_arr(f)), fnp.atleast_1d(_arr(s))
    if _shape(f)[-1] < 2:
        raise FuncadValueError(f"leslie: the length of f along the last axis must be at least 2; "
                               f"got shape {_shape(f)}.")
    if _shape(s)[-1] != _shape(f)[-1] - 1:
        raise FuncadValueError(f"leslie: incorrect lengths for f and s. The length of s along the last "
                               f"axis must be one less than the length of f; got f shape {_shape(f)} "
                               f"and s shape {_shape(s)}.")
    f, s = _promote(*_batch_align(f, s))
    n = _shape(f)[-1]
    sub = fnp.concatenate([fnp.zeros_like(s[..., :1]), s], axis=-1)  # sub[i] = s[i - 1]
    rows = np.arange(n)[:, None]
    on_sub = (rows - 1) == np.arange(n)[None, :]
    return fnp.where(rows == 0, f[..., None, :], fnp.where(on_sub, sub[..., :, None], 0))


def companion(a):
    """The companion matrix of the polynomial with coefficients a (highest
    degree first): first row -a[1:] / a[0], ones on the subdiagonal.

    >>> import numpy as np
    >>> companion(np.array([1.0, -10.0, 31.0, -30.0])).tolist()
    [[10.0, -31.0, 30.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]]
    """
    fnp = _fnp()
    a = fnp.atleast_1d(to_inexact(_arr(a)))
    if _shape(a)[-1] < 2:
        raise FuncadValueError(f"companion: the length of `a` along the last axis must be at least 2; "
                               f"got shape {_shape(a)}.")
    m = _shape(a)[-1] - 1
    first = -a[..., 1:] / a[..., :1]
    eye = np.eye(m, m, -1, dtype=aval_of(first).dtype)
    return fnp.where(np.arange(m)[:, None] == 0, first[..., None, :], eye)


def fiedler(a):
    """The symmetric Fiedler matrix |a[i] - a[j]|.

    >>> import numpy as np
    >>> fiedler(np.array([1, 4, 2])).tolist()
    [[0, 3, 1], [3, 0, 2], [1, 2, 0]]
    """
    fnp = _fnp()
    a = fnp.atleast_1d(_arr(a))
    return fnp.abs(a[..., :, None] - a[..., None, :])


def fiedler_companion(a):
    """The Fiedler companion matrix of the polynomial with coefficients a
    (highest degree first): pentadiagonal, with a's roots as eigenvalues.

    >>> import numpy as np
    >>> np.sort(np.linalg.eigvals(fiedler_companion(np.array([1.0, -6.0, 11.0, -6.0]))).real).round(8).tolist()
    [1.0, 2.0, 3.0]
    """
    fnp = _fnp()
    a = fnp.atleast_1d(to_inexact(_arr(a)))
    if _shape(a)[-1] == 0:
        raise FuncadValueError(f"fiedler_companion requires the last axis of 'a' to have nonzero length, "
                               f"but got an array of shape {_shape(a)}.")
    n = _shape(a)[-1] - 1
    dt = aval_of(a).dtype
    if n == 0:
        return fnp.zeros(_shape(a)[:-1] + (0, 0), dt)
    a = a / a[..., :1]
    i, j = np.arange(n)[:, None], np.arange(n)[None, :]
    even = i % 2 == 0
    # -a[k] with k = i + 2 on the superdiagonal of even rows, k = i + 1 on the
    # subdiagonal of even rows and at (0, 0); 1 at (1, 0) and on the second
    # super- (even rows) and sub-diagonals (odd rows >= 3).
    k = np.where((i == 0) & (j == 0), 1,
                 np.where((j == i + 1) & even, i + 2, np.where((j == i - 1) & even & (i >= 2), i + 1, 0)))
    ones = ((i == 1) & (j == 0)) | ((j == i + 2) & even) | ((j == i - 2) & ~even & (i >= 3))
    vals = -a[..., np.minimum(k, n)]
    return fnp.where(k > 0, vals, fnp.where(ones, np.ones((), dt), np.zeros((), dt)))


def convolution_matrix(a, n: int, mode: str = "full"):
    """The matrix A with A @ v == convolve(a, v, mode) for v of length n: a
    Toeplitz matrix whose columns are shifted copies of a. `mode` is 'full'
    (m + n - 1 rows), 'valid' (max(m, n) - min(m, n) + 1) or 'same' (max(m, n)).

    >>> import numpy as np
    >>> convolution_matrix(np.array([1, 2]), 3).tolist()
    [[1, 0, 0], [2, 1, 0], [0, 2, 1], [0, 0, 2]]
    """
    fnp = _fnp()
    n = int(n)
    if n <= 0:
        raise FuncadValueError(f"convolution_matrix: n must be a positive integer; got {n}.")
    a = _arr(a)
    if len(_shape(a)) == 0:
        raise FuncadValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = _shape(a)[-1]
    if m < 1:
        raise FuncadValueError(f"convolution_matrix: len(a) must be at least 1; got shape {_shape(a)}.")
    if mode not in ("full", "valid", "same"):
        raise FuncadValueError(f"convolution_matrix: mode must be one of 'full', 'valid', 'same'; "
                               f"got {mode!r}.")
    pad = [(0, 0)] * (len(_shape(a)) - 1) + [(0, n - 1)]
    az, raz = fnp.pad(a, pad), fnp.pad(fnp.flip(a, -1), pad)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        lo, hi = trim // 2, trim - trim // 2
    elif mode == "valid":
        lo = hi = min(n, m) - 1
    else:
        lo = hi = 0
    return toeplitz(az[..., lo:length - hi], raz[..., length - n - lo:length - lo])


# ---------------------------------------------------------- constants ----

def hilbert(n: int):
    """The n x n Hilbert matrix 1 / (i + j + 1), float64.

    >>> hilbert(2).tolist()
    [[1.0, 0.5], [0.5, 0.3333333333333333]]
    """
    i = np.arange(int(n), dtype=np.float64)
    return 1.0 / (i[:, None] + i[None, :] + 1)


def invhilbert(n: int):
    """The inverse of the n x n Hilbert matrix (exact integers, as float64).

    >>> invhilbert(2).tolist()
    [[4.0, -6.0], [-6.0, 12.0]]
    """
    n = int(n)
    out = np.empty((n, n), np.float64)
    for i in range(n):
        for j in range(n):
            s = i + j
            out[i, j] = float((-1) ** s * (s + 1) * math.comb(n + i, n - j - 1)
                              * math.comb(n + j, n - i - 1) * math.comb(s, i) ** 2)
    return out


_KINDS = ("symmetric", "lower", "upper")


def _pascal_lower(n, sign):
    return np.array([[sign ** (i - j) * math.comb(i, j) if j <= i else 0 for j in range(n)]
                     for i in range(n)], dtype=object).reshape(n, n)


def pascal(n: int, kind: str | None = None):
    """The n x n Pascal matrix: 'symmetric' (the default) binom(i + j, i),
    'lower' or 'upper' the triangular factors. float32, as JAX.

    >>> pascal(3).tolist()
    [[1.0, 1.0, 1.0], [1.0, 2.0, 3.0], [1.0, 3.0, 6.0]]
    """
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise FuncadValueError(f"pascal: expected kind to be one of {list(_KINDS)}; got {kind!r}")
    low = _pascal_lower(int(n), 1)
    out = low if kind == "lower" else low.T if kind == "upper" else low.dot(low.T)
    return out.astype(np.float32)


def invpascal(n: int, kind: str | None = None):
    """The inverse of `pascal(n, kind)` (exact integers, as float64).

    >>> invpascal(3).tolist()
    [[3.0, -3.0, 1.0], [-3.0, 5.0, -2.0], [1.0, -2.0, 1.0]]
    """
    kind = "symmetric" if kind is None else kind
    if kind not in _KINDS:
        raise FuncadValueError(f"invpascal: expected kind to be one of {list(_KINDS)}; got {kind!r}")
    low = _pascal_lower(int(n), -1)
    out = low if kind == "lower" else low.T if kind == "upper" else low.T.dot(low)
    return out.astype(np.float64)


def helmert(n: int, full: bool = False):
    """The (n - 1) x n Helmert matrix (n x n with `full`, its first row
    1/sqrt(n)): orthonormal rows, each orthogonal to the ones vector.

    >>> np.round(helmert(2, full=True), 12).tolist()
    [[0.707106781187, 0.707106781187], [0.707106781187, -0.707106781187]]
    """
    n = int(n)
    if n < 1:
        raise FuncadValueError(f"helmert: n must be a positive integer; got {n}.")
    k = np.arange(1, n, dtype=np.float64)[:, None]
    j = np.arange(n)[None, :]
    denom = np.sqrt(k * (k + 1))
    h = np.where(j < k, 1.0 / denom, np.where(j == k, -k / denom, 0.0))
    if full:
        h = np.concatenate([np.full((1, n), 1.0 / np.sqrt(n)), h])
    return h


def hadamard(n: int, dtype=int):
    """The n x n Hadamard matrix (Sylvester's construction), n a power of 2.

    >>> hadamard(2).tolist()
    [[1, 1], [1, -1]]
    """
    n = int(n)
    if n < 1 or not math.log2(n).is_integer():
        raise FuncadValueError(f"hadamard: n must be a positive power of 2; got {n}.")
    h = np.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = np.block([[h, h], [h, -h]])
    return h.astype(dtype)


def dft(n: int, scale: str | None = None, *, dtype=None):
    """The n x n discrete Fourier transform matrix exp(-2 pi i j k / n),
    divided by sqrt(n) (`scale='sqrtn'`) or n (`'n'`); complex128 by default.

    >>> np.round(dft(2), 12).tolist()
    [[(1+0j), (1+0j)], [(1+0j), (-1-0j)]]
    """
    if scale is not None and scale not in ("sqrtn", "n"):
        raise FuncadValueError(f"dft: scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    dtype = np.dtype(np.complex128 if dtype is None else dtype)
    if dtype.kind != "c":
        raise FuncadValueError(f"dft: dtype must be a complex floating-point type; got {dtype}.")
    n = int(n)
    a = np.arange(n, dtype=np.float64)
    w = np.exp(-2j * np.pi * a[:, None] * a[None, :] / max(n, 1))
    if scale == "sqrtn":
        w = w / np.sqrt(n)
    elif scale == "n":
        w = w / n
    return w.astype(dtype)
