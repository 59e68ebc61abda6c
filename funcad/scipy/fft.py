"""funcad.scipy.fft: the discrete cosine transform (type 2) and its inverse, as JAX's
scipy.fft namespace has them, computed with one complex FFT per axis (Makhoul's reordering).

>>> import numpy as np
>>> np.round(np.asarray(dct(np.array([1.0, 2.0, 3.0]))), 6).tolist()
[12.0, -3.464102, -0.0]
"""
import operator as _operator
from collections.abc import Sequence as _Sequence

import numpy as _np

from .. import lax as _lax
from .. import numpy as _fnp
from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadValueError as _FuncadValueError
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer, to_inexact as _to_inexact

__all__ = ["dct", "dctn", "idct", "idctn"]


def dct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The type-2 discrete cosine transform of x along `axis`, as scipy.fft.dct:
    y[k] = 2 sum_n x[n] cos(pi k (2n + 1) / (2N)), scaled to an orthonormal transform
    with norm="ortho". `n` zero-pads or truncates the axis first.

    >>> import numpy as np
    >>> dct(np.array([1.0, 0.0]), norm="ortho")
    Array([0.70710678, 0.70710678], dtype=float64)
    """
    x = _check("dct", x, type, norm)
    if _fnp.iscomplexobj(x):
        return _lax.complex(dct(_fnp.real(x), type, n, axis, norm), dct(_fnp.imag(x), type, n, axis, norm))
    axis = _axis(axis, _aval_of(x).ndim)
    x = _resize(x, axis, n)
    N = _aval_of(x).shape[axis]
    # Makhoul's order: the even entries, then the odd ones reversed
    perm = _np.concatenate([_np.arange(0, N, 2), _np.arange(N - 1 - N % 2, 0, -2)]).astype(_np.int64)
    v = _fnp.take(x, perm, axis=axis)
    V = _fnp.fft.fft(v, axis=axis)
    k = _np.arange(N)
    # y[k] = 2 Re(V[k] exp(-i pi k / 2N)), the twiddle a constant of V's dtype
    w = _along(_np.exp(-0.5j * _np.pi * k / max(N, 1)).astype(_aval_of(V).dtype), axis, _aval_of(x).ndim)
    out = 2 * _fnp.real(V * w)
    if norm == "ortho":
        out = out * _along(_ortho_scale(N).astype(_aval_of(out).dtype), axis, _aval_of(x).ndim)
    return out


def idct(x, type: int = 2, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of the type-2 DCT along `axis` (a scaled type-3 DCT), as scipy.fft.idct:
    idct(dct(x)) == x for either `norm`. `n` zero-pads or truncates the axis first.

    >>> import numpy as np
    >>> idct(dct(np.array([1.0, 2.0, 3.0])))
    Array([1., 2., 3.], dtype=float64)
    """
    x = _check("idct", x, type, norm)
    if _fnp.iscomplexobj(x):
        return _lax.complex(idct(_fnp.real(x), type, n, axis, norm), idct(_fnp.imag(x), type, n, axis, norm))
    axis = _axis(axis, _aval_of(x).ndim)
    x = _to_inexact(_resize(x, axis, n))
    ndim = _aval_of(x).ndim
    N = _aval_of(x).shape[axis]
    k = _np.arange(N)
    # x[n] = (1/N) sum_k c_k y[k] cos(pi k (2n+1) / 2N), with c_0 = 1/2, c_k = 1 (backward)
    # or c_0 = sqrt(N), c_k = sqrt(2N) (ortho): the real part of one inverse FFT of
    # c_k y[k] exp(i pi k / 2N), read back in Makhoul's order.
    c = _np.full(N, 2.0 * N) ** 0.5 if norm == "ortho" else _np.ones(N)
    if N:
        c[0] = N ** 0.5 if norm == "ortho" else 0.5
    dtype = _aval_of(x).dtype
    cdtype = _np.result_type(dtype, _np.complex64)
    w = _along((c * _np.exp(0.5j * _np.pi * k / max(N, 1))).astype(cdtype), axis, ndim)
    v = _fnp.real(_fnp.fft.ifft(x * w, axis=axis))
    perm = _np.where(k % 2 == 0, k // 2, N - 1 - k // 2).astype(_np.int64)
    return _fnp.take(v, perm, axis=axis)


def dctn(x, type: int = 2, s: _Sequence[int] | None = None, axes: _Sequence[int] | None = None,
         norm: str | None = None):
    """The type-2 DCT over several axes (all, or the last len(s)), as scipy.fft.dctn;
    `s` zero-pads or truncates those axes first.

    >>> import numpy as np
    >>> dctn(np.ones((2, 2)))
    Array([[16.,  0.],
           [ 0.,  0.]], dtype=float64)
    """
    return _nd("dctn", dct, x, type, s, axes, norm)


def idctn(x, type: int = 2, s: _Sequence[int] | None = None, axes: _Sequence[int] | None = None,
          norm: str | None = None):
    """The inverse of dctn over several axes, as scipy.fft.idctn.

    >>> import numpy as np
    >>> np.round(np.asarray(idctn(dctn(np.eye(2)))), 6).tolist()
    [[1.0, -0.0], [-0.0, 1.0]]
    """
    return _nd("idctn", idct, x, type, s, axes, norm)


def _nd(name, one, x, type, s, axes, norm):
    x = _check(name, x, type, norm)
    ndim = _aval_of(x).ndim
    if s is not None:
        try:
            s = list(s)
        except TypeError:
            s = [_operator.index(s)]
        if len(s) > ndim:
            raise _FuncadValueError(f"{name}: s must have at most x.ndim ({ndim}) elements, got {len(s)}")
    if axes is None:
        axes = tuple(range(ndim - len(s), ndim)) if s is not None else tuple(range(ndim))
    else:
        axes = tuple(_axis(a, ndim) for a in ((axes,) if _np.ndim(axes) == 0 else axes))
        if len(set(axes)) != len(axes):
            raise _FuncadValueError(f"{name}: repeated axis in axes {axes}; give each axis once")
    sizes = dict(zip(axes, s)) if s is not None else {}
    for a in axes:  # the DCT is separable: one axis at a time
        x = one(x, 2, sizes.get(a), a, norm)
    return x


def _check(name, x, type, norm):
    x = _asarray_or_tracer(x)
    if type != 2:
        raise NotImplementedError(f"funcad.scipy.fft.{name}: only DCT type 2 is implemented (as in JAX), "
                                  f"got type={type!r}")
    if norm is not None and norm not in ("backward", "ortho"):
        raise _FuncadValueError(f"funcad.scipy.fft.{name}: norm={norm!r} is not implemented; "
                                "use None, 'backward' or 'ortho'")
    return x


def _axis(axis, ndim):
    a = _operator.index(axis)
    if not -ndim <= a < ndim:
        raise _FuncadValueError(f"axis {a} is out of bounds for an array of {ndim} dimensions")
    return a % ndim


def _resize(x, axis, n):
    """x zero-padded or truncated to length n along axis."""
    if n is None:
        return x
    n = _operator.index(n)
    if n < 1:
        raise _FuncadValueError(f"invalid number of data points ({n}) specified; n must be at least 1")
    size = _aval_of(x).shape[axis]
    if n <= size:
        return _lax.slice_in_dim(x, 0, n, 1, axis)
    widths = [(0, 0)] * _aval_of(x).ndim
    widths[axis] = (0, n - size)
    return _fnp.pad(x, widths)


def _along(c, axis, ndim):
    """A 1-D constant shaped to broadcast along `axis` of an ndim-array."""
    return c.reshape([-1 if a == axis else 1 for a in range(ndim)])


def _ortho_scale(N):
    f = _np.full(N, (1.0 / (2 * N)) ** 0.5) if N else _np.zeros(0)
    if N:
        f[0] = (1.0 / (4 * N)) ** 0.5
    return f
