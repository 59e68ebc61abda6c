"""The implementation of funcad.scipy.signal: N-d convolution and correlation (as JAX's scipy.signal), each
one conv_general_dilated (or FFTs for fftconvolve), so derivatives, vmap and jit come with the primitives."""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..lax._conv import conv_general_dilated
from ..arrays.complex import conj
from ..arrays.dtypes import promote, to_inexact
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ..transforms.vmap import vmap



_MODES = ("full", "same", "valid")


def _flip(x):
    return S.rev(x, tuple(range(len(aval_of(x).shape))))


def _convolve_nd(in1, in2, mode, precision, name):
    if mode not in _MODES:
        raise FuncadValueError(f"{name}: mode must be one of {list(_MODES)}, got {mode!r}")
    in1, in2 = (to_inexact(x) for x in promote(in1, in2))
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    if len(s1) != len(s2):
        raise FuncadValueError(f"{name}: in1 and in2 need the same number of dimensions, got shapes {s1} and {s2}")
    if 0 in s1 or 0 in s2:
        raise FuncadValueError(f"{name}: zero-size inputs are not supported, got shapes {s1} and {s2}")
    no_swap = all(a >= b for a, b in zip(s1, s2))
    swap = all(a <= b for a, b in zip(s1, s2))
    if not (no_swap or swap):
        raise FuncadValueError(f"{name}: one input must be at least as large as the other in every "
                               f"dimension, got shapes {s1} and {s2}")
    shape_o = s2
    if swap:  # the smaller array is the kernel; 'same' stays centred on the first input
        in1, in2 = in2, in1
    shape = aval_of(in2).shape
    if mode == "valid":
        padding = [(0, 0)] * len(shape)
    elif mode == "same":
        padding = [(s - 1 - (so - 1) // 2, s - so + (so - 1) // 2) for s, so in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]
    one = (1, 1)
    out = conv_general_dilated(S.reshape(in1, one + aval_of(in1).shape), S.reshape(_flip(in2), one + shape),
                               (1,) * len(shape), padding, precision=precision)
    return S.reshape(out, aval_of(out).shape[2:])


def _method(method, name):
    if method not in ("auto", "direct", "fft"):
        raise FuncadValueError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")


def _fftconvolve_one(in1, in2, mode):
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    full = tuple(a + b - 1 for a, b in zip(s1, s2))
    if mode == "valid":
        no_swap = all(a >= b for a, b in zip(s1, s2))
        swap = all(a <= b for a, b in zip(s1, s2))
        if not (no_swap or swap):
            raise FuncadValueError("fftconvolve: for mode='valid' one input must be at least as large as "
                                   f"the other in every dimension, got shapes {s1} and {s2}")
        if swap:
            in1, in2, s1, s2 = in2, in1, s2, s1
    if all(a == 1 or b == 1 for a, b in zip(s1, s2)):
        conv = fnp.multiply(in1, in2)  # nothing to slide: a product (broadcast)
    elif aval_of(in1).dtype.kind == "c":
        conv = fnp.fft.ifftn(fnp.fft.fftn(in1, full) * fnp.fft.fftn(in2, full), full)
    else:
        conv = fnp.fft.irfftn(fnp.fft.rfftn(in1, full) * fnp.fft.rfftn(in2, full), full)
    out = {"full": full, "same": s1, "valid": tuple(a - b + 1 for a, b in zip(s1, s2))}[mode]
    start = [(f - o) // 2 for f, o in zip(full, out)]
    return S.slice(conv, start, [st + o for st, o in zip(start, out)])


def fftconvolve(in1, in2, mode: str = "full", axes=None):
    """N-d convolution through the FFT (over `axes`, others matched pairwise), as JAX's
    (same numbers as `convolve` up to rounding; faster for large kernels).

    >>> fftconvolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0, 0.5])).round(12)
    Array([1. , 3. , 5.5, 4. , 1.5], dtype=float64)
    """
    in1, in2 = (to_inexact(x) for x in promote(in1, in2))
    nd = len(aval_of(in1).shape)
    if nd != len(aval_of(in2).shape):
        raise FuncadValueError(f"fftconvolve: in1 and in2 need the same number of dimensions, got shapes "
                               f"{aval_of(in1).shape} and {aval_of(in2).shape}")
    if mode not in _MODES:
        raise FuncadValueError(f"fftconvolve: mode must be one of {list(_MODES)}, got {mode!r}")
    fun = lambda a, b: _fftconvolve_one(a, b, mode)  # noqa: E731
    if axes is None:
        return fun(in1, in2)
    axes = (axes,) if np.ndim(axes) == 0 else tuple(axes)
    axes = {canonical_axis(a, nd, "fftconvolve") for a in axes}
    mapped = sorted(set(range(nd)) - axes)
    if any(aval_of(in1).shape[i] != aval_of(in2).shape[i] for i in mapped):
        raise FuncadValueError(f"fftconvolve: axes not in axes={tuple(sorted(axes))} are matched pairwise "
                               f"and need equal sizes, got shapes {aval_of(in1).shape} and {aval_of(in2).shape}")
    for ax in mapped:  # innermost first, so that each axis index stays valid
        fun = vmap(fun, in_axes=ax, out_axes=ax)
    return fun(in1, in2)


def _fill_only(boundary, fillvalue, name):
    if boundary != "fill" or fillvalue != 0:
        raise FuncadValueError(f"{name} supports boundary='fill' with fillvalue=0 only (as JAX's); pad "
                               "the input yourself (funcad.numpy.pad with mode='wrap' or 'symmetric') "
                               "and use mode='valid'")


def _two_d(in1, in2, name):
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise FuncadValueError(f"{name} needs 2-d inputs, got shapes {np.shape(in1)} and {np.shape(in2)}")


def convolve(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-d convolution of in1 and in2 ('full', 'same' (centred, the size of in1) or 'valid').

    >>> convolve(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float64)
    """
    _method(method, "convolve")
    if method == "fft":
        return fftconvolve(in1, in2, mode)
    return _convolve_nd(in1, in2, mode, precision, "convolve")


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-d cross-correlation of in1 and in2: convolution with in2 flipped.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    Array([0.5, 2. , 3.5, 3. , 0. ], dtype=float64)
    """
    _method(method, "correlate")
    in2 = _flip(conj(promote(in2)[0]))
    if method == "fft":
        return fftconvolve(in1, in2, mode)
    return _convolve_nd(in1, in2, mode, precision, "correlate")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """2-d convolution with zero fill at the borders.

    >>> convolve2d(np.eye(2), np.ones((2, 2)))
    Array([[1., 1., 0.],
           [1., 2., 1.],
           [0., 1., 1.]], dtype=float64)
    """
    _fill_only(boundary, fillvalue, "convolve2d")
    _two_d(in1, in2, "convolve2d")
    return _convolve_nd(in1, in2, mode, precision, "convolve2d")


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """2-d cross-correlation with zero fill at the borders, centred as SciPy's.

    >>> correlate2d(np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
    Array([[4., 3., 0.],
           [2., 5., 3.],
           [0., 2., 1.]], dtype=float64)
    """
    _fill_only(boundary, fillvalue, "correlate2d")
    _two_d(in1, in2, "correlate2d")
    in1, in2 = promote(in1, in2)
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    swap = all(a <= b for a, b in zip(s1, s2))
    if mode == "valid" and swap and s1 != s2:
        return _convolve_nd(_flip(in2), conj(in1), mode, precision, "correlate2d")
    if mode not in ("same", "valid") and swap:
        return conj(_convolve_nd(_flip(in2), conj(in1), mode, precision, "correlate2d"))
    return _flip(_convolve_nd(_flip(in1), conj(in2), mode, precision, "correlate2d"))
