"""More array creation: logspace/geomspace, meshgrid, indices and the *_indices
helpers, the index tricks (r_, c_, s_, index_exp, mgrid, ogrid, ix_), vander,
fromfunction, window functions, and constructors from buffers."""
from __future__ import annotations

import numpy as np

from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.trace import Tracer
from ..primitives import structural as S
from ..arrays.creation import linspace
from ..arrays.dtypes import asarray_or_tracer, cast, promote
from ..arrays.shape import concatenate, reshape, shape, stack
from ..arrays.ufuncs import absolute, divide, exp, log, multiply, power, power as _pow, sign, sqrt
from ._bessel import i0
from ..arrays.setops import nonzero
from ..arrays.shape import atleast_2d, transpose
from ..arrays.shape import moveaxis

__all__ = ["kaiser", "logspace", "geomspace", "meshgrid", "indices", "tril_indices", "triu_indices",
           "tril_indices_from", "triu_indices_from", "diag_indices", "diag_indices_from",
           "mask_indices", "ix_", "r_", "c_", "s_", "index_exp", "mgrid", "ogrid", "vander",
           "fromfunction", "bartlett", "blackman", "hamming", "hanning", "frombuffer", "fromiter",
           "fromstring", "fromfile", "from_dlpack"]

_INT = np.dtype(np.int64)


def logspace(start, stop, num: int = 50, endpoint: bool = True, base=10.0, dtype=None, axis: int = 0):
    """base ** linspace(start, stop, num).

    >>> import funcad.numpy as fnp
    >>> fnp.logspace(0.0, 2.0, 3)
    Array([  1.,  10., 100.], dtype=float64)
    """
    if not any(isinstance(v, Tracer) for v in (start, stop, base)):
        return np.logspace(start, stop, num, endpoint, base, dtype, axis)
    exps = linspace(start, stop, num, endpoint, axis=axis)
    out = power(base, exps)
    return out if dtype is None else cast(out, np.dtype(dtype))


def geomspace(start, stop, num: int = 50, endpoint: bool = True, dtype=None, axis: int = 0):
    """Numbers spaced evenly on a log scale from start to stop (both nonzero, same sign)."""
    if not any(isinstance(v, Tracer) for v in (start, stop)):
        return np.geomspace(start, stop, num, endpoint, dtype, axis)
    start, stop = promote(start, stop)
    s = sign(start)
    out = multiply(s, exp(linspace(log(absolute(start)), log(absolute(stop)), num, endpoint, axis=axis)))
    return out if dtype is None else cast(out, np.dtype(dtype))


def meshgrid(*xi, copy: bool = True, sparse: bool = False, indexing: str = "xy"):
    """Coordinate arrays from 1-d coordinate vectors ('xy' or 'ij' indexing)."""
    if indexing not in ("xy", "ij"):
        raise FuncadValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xs = [asarray_or_tracer(x) for x in xi]
    for x in xs:
        if len(shape(x)) != 1:
            raise FuncadValueError(f"meshgrid: arguments must be 1-d, got {aval_of(x).str_short()}")
    n = len(xs)
    sizes = [shape(x)[0] for x in xs]
    if indexing == "xy" and n >= 2:
        sizes[0], sizes[1] = sizes[1], sizes[0]
    out = []
    for i, x in enumerate(xs):
        d = i
        if indexing == "xy" and n >= 2 and i < 2:
            d = 1 - i
        if sparse:
            out.append(reshape(x, tuple(shape(x)[0] if k == d else 1 for k in range(n))))
        else:
            out.append(S.broadcast_in_dim(x, tuple(sizes), (d,)))
    return out


def indices(dimensions, dtype=None, sparse: bool = False):
    """An array of the index grid of an array of shape `dimensions`."""
    dt = _x64.default_int() if dtype is None else _x64.explicit_dtype(dtype, "indices")
    return np.indices(tuple(int(d) for d in dimensions), dt, sparse)


def tril_indices(n: int, k: int = 0, m: int | None = None):
    return tuple(np.asarray(i, _x64.default_int()) for i in np.tril_indices(int(n), int(k), m))


def triu_indices(n: int, k: int = 0, m: int | None = None):
    return tuple(np.asarray(i, _x64.default_int()) for i in np.triu_indices(int(n), int(k), m))


def tril_indices_from(arr, k: int = 0):
    sh = shape(asarray_or_tracer(arr)) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(sh) != 2:
        raise FuncadValueError("tril_indices_from: input array must be 2-d")
    return tril_indices(sh[0], k, sh[1])


def triu_indices_from(arr, k: int = 0):
    sh = shape(asarray_or_tracer(arr)) if not hasattr(arr, "shape") else tuple(arr.shape)
    if len(sh) != 2:
        raise FuncadValueError("triu_indices_from: input array must be 2-d")
    return triu_indices(sh[0], k, sh[1])


def diag_indices(n: int, ndim: int = 2):
    if n < 0 or ndim < 0:
        raise FuncadValueError("diag_indices: n and ndim must be non-negative")
    return (np.arange(n, dtype=_INT),) * ndim


def diag_indices_from(arr):
    sh = tuple(arr.shape) if hasattr(arr, "shape") else shape(asarray_or_tracer(arr))
    if len(sh) < 2 or len(set(sh)) != 1:
        raise FuncadValueError("diag_indices_from: input must be at least 2-d with all dimensions equal")
    return diag_indices(sh[0], len(sh))


def mask_indices(n: int, mask_func, k: int = 0, *, size: int | None = None):
    """Indices where mask_func(ones((n, n)), k) is non-zero."""
    return nonzero(mask_func(np.ones((n, n), _INT), k), size=size)


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences (for outer-product indexing)."""
    out = []
    n = len(args)
    for i, a in enumerate(args):
        a = asarray_or_tracer(a)
        if len(shape(a)) != 1:
            raise FuncadValueError("ix_: cross index must be 1-d")
        if aval_of(a).dtype == np.bool_:
            a = nonzero(a)[0]
        out.append(reshape(a, tuple(shape(a)[0] if k == i else 1 for k in range(n))))
    return tuple(out)


class _IndexExpression:
    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


class _Grid:
    """mgrid / ogrid: dense or open grids from slices (a complex step is a count)."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        if isinstance(key, slice):
            return _grid_axis(key)
        axes = [_grid_axis(k) for k in key]
        if self.sparse:
            n = len(axes)
            return tuple(reshape(a, tuple(shape(a)[0] if i == j else 1 for j in range(n)))
                         for i, a in enumerate(axes))
        sizes = tuple(shape(a)[0] for a in axes)
        dt = np.result_type(*[a.dtype for a in axes])
        return np.stack([np.broadcast_to(np.asarray(a, dt).reshape([-1 if i == j else 1 for j in range(len(axes))]),
                                         sizes) for i, a in enumerate(axes)])


def _grid_axis(s):
    start = 0 if s.start is None else s.start
    step = 1 if s.step is None else s.step
    if isinstance(step, complex):
        return np.linspace(start, s.stop, int(abs(step)))
    return np.arange(start, s.stop, step)


mgrid = _Grid(False)
ogrid = _Grid(True)


class _Concat:
    """r_ / c_: concatenation along an axis by index syntax (as numpy.r_, numpy.c_)."""

    def __init__(self, axis, ndmin, trans1d):
        self.axis, self.ndmin, self.trans1d = axis, ndmin, trans1d

    def __getitem__(self, key):
        if not isinstance(key, tuple):
            key = (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        parts, matrix = [], None
        for i, item in enumerate(key):
            if isinstance(item, str):
                if i != 0:
                    raise FuncadValueError("r_/c_: a directive string must come first")
                if item in ("r", "c"):
                    matrix = item
                    continue
                vec = [int(x) for x in item.split(",")]
                axis = vec[0]
                if len(vec) > 1:
                    ndmin = vec[1]
                if len(vec) > 2:
                    trans1d = vec[2]
                continue
            if isinstance(item, slice):
                a = _grid_axis(item)
            else:
                a = asarray_or_tracer(item)
            a = self._ndmin(a, ndmin, trans1d)
            parts.append(a)
        if not parts:
            return np.zeros(0)
        out = concatenate(promote(*parts), axis)
        if matrix is not None:
            out = atleast_2d(out)
            if matrix == "c":
                out = transpose(out)
        return out

    @staticmethod
    def _ndmin(a, ndmin, trans1d):
        nd = len(shape(a))
        if nd >= ndmin:
            return a
        new = (1,) * (ndmin - nd) + shape(a)
        a = reshape(a, new)
        if trans1d != -1 and nd > 0:
            # Put the original axes at position trans1d, as NumPy does.
            k = trans1d % ndmin
            src = list(range(ndmin - nd, ndmin))
            dst = list(range(k, k + nd)) if k + nd <= ndmin else src
            a = moveaxis(a, src, dst)
        return a


r_ = _Concat(0, 1, -1)
c_ = _Concat(-1, 2, 0)


def vander(x, N: int | None = None, increasing: bool = False):
    """The Vandermonde matrix of 1-d x (columns are powers of x)."""
    x = asarray_or_tracer(x)
    if len(shape(x)) != 1:
        raise FuncadValueError("vander: x must be 1-d")
    n = shape(x)[0] if N is None else int(N)
    if n < 0:
        raise FuncadValueError("vander: N must be non-negative")
    powers = np.arange(n) if increasing else np.arange(n - 1, -1, -1)
    if n == 0:
        return np.zeros((shape(x)[0], 0), aval_of(x).dtype)
    return stack([_pow(x, int(p)) for p in powers], -1)


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*index_grids) for a grid of `shape` (index grids of dtype)."""
    grids = np.indices(tuple(int(s) for s in shape), dtype=np.dtype(dtype))
    return function(*grids, **kwargs)


def _window(M, fn):
    M = int(M)
    if M < 1:
        return np.zeros(0)
    if M == 1:
        return np.ones(1)
    return fn(np.arange(M, dtype=np.float64), M)


def bartlett(M: int):
    """The Bartlett (triangular) window."""
    return _window(M, lambda n, M: 1 - np.abs(2 * n / (M - 1) - 1))


def blackman(M: int):
    """The Blackman window."""
    return _window(M, lambda n, M: 0.42 - 0.5 * np.cos(2 * np.pi * n / (M - 1)) + 0.08 * np.cos(4 * np.pi * n / (M - 1)))


def hamming(M: int):
    """The Hamming window."""
    return _window(M, lambda n, M: 0.54 - 0.46 * np.cos(2 * np.pi * n / (M - 1)))


def hanning(M: int):
    """The Hann window."""
    return _window(M, lambda n, M: 0.5 - 0.5 * np.cos(2 * np.pi * n / (M - 1)))


def kaiser(M: int, beta):
    """The Kaiser window, I0(beta sqrt(1 - (2n/(M-1) - 1)^2)) / I0(beta); `beta` may be traced.

    >>> import funcad.numpy as fnp
    >>> [round(float(v), 6) for v in fnp.kaiser(4, 5.0)]
    [0.036711, 0.775322, 0.775322, 0.036711]
    """
    M = int(M)
    if M < 1:
        return np.zeros(0)
    if M == 1:
        return np.ones(1)
    alpha = (M - 1) / 2.0
    n = np.arange(M, dtype=np.float64)
    r = np.sqrt(1 - ((n - alpha) / alpha) ** 2)
    return divide(i0(multiply(beta, r)), i0(beta))


def frombuffer(buffer, dtype=float, count: int = -1, offset: int = 0):
    """An array from the bytes of a buffer (concrete, as NumPy)."""
    return np.array(np.frombuffer(buffer, dtype, count, offset))


def fromiter(iterable, dtype, count: int = -1):
    return np.fromiter(iterable, dtype, count)


def fromstring(string, dtype=float, count: int = -1, *, sep: str):
    """An array from text (sep must be given, as in NumPy 2)."""
    return np.fromstring(string, dtype, count, sep=sep)


def fromfile(*args, **kwargs):
    """An array from a file, read eagerly (as numpy.fromfile)."""
    return np.fromfile(*args, **kwargs)


def from_dlpack(x, /, *, device=None, copy=None):
    """An array from any object implementing the DLPack protocol (copied to host)."""
    return np.array(np.from_dlpack(x), copy=True)
