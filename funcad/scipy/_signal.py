"""The implementation of funcad.scipy.signal: N-d convolution and correlation (as JAX's scipy.signal), each
one conv_general_dilated, so derivatives, vmap and jit come with the primitive."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..lax._conv import conv_general_dilated
from ..numpy._dtypes import promote, to_inexact
from ..primitives import structural as S



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
    # 'fft' computes the same convolution; here it is always evaluated directly.
    if method not in ("auto", "direct", "fft"):
        raise FuncadValueError(f"{name}: method must be 'auto', 'direct' or 'fft', got {method!r}")


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
    array([0. , 1. , 2.5, 4. , 1.5])
    """
    _method(method, "convolve")
    return _convolve_nd(in1, in2, mode, precision, "convolve")


def correlate(in1, in2, mode: str = "full", method: str = "auto", precision=None):
    """N-d cross-correlation of in1 and in2: convolution with in2 flipped.

    >>> correlate(np.array([1.0, 2.0, 3.0]), np.array([0.0, 1.0, 0.5]))
    array([0.5, 2. , 3.5, 3. , 0. ])
    """
    _method(method, "correlate")
    in2 = promote(in2)[0]
    return _convolve_nd(in1, _flip(in2), mode, precision, "correlate")


def convolve2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """2-d convolution with zero fill at the borders.

    >>> convolve2d(np.eye(2), np.ones((2, 2)))
    array([[1., 1., 0.],
           [1., 2., 1.],
           [0., 1., 1.]])
    """
    _fill_only(boundary, fillvalue, "convolve2d")
    _two_d(in1, in2, "convolve2d")
    return _convolve_nd(in1, in2, mode, precision, "convolve2d")


def correlate2d(in1, in2, mode: str = "full", boundary: str = "fill", fillvalue=0, precision=None):
    """2-d cross-correlation with zero fill at the borders, centred as SciPy's.

    >>> correlate2d(np.eye(2), np.array([[1.0, 2.0], [3.0, 4.0]]))
    array([[4., 3., 0.],
           [2., 5., 3.],
           [0., 2., 1.]])
    """
    _fill_only(boundary, fillvalue, "correlate2d")
    _two_d(in1, in2, "correlate2d")
    in1, in2 = promote(in1, in2)
    s1, s2 = aval_of(in1).shape, aval_of(in2).shape
    swap = all(a <= b for a, b in zip(s1, s2))
    if mode == "valid" and swap and s1 != s2 or mode not in ("same", "valid") and swap:
        return _convolve_nd(_flip(in2), in1, mode, precision, "correlate2d")
    return _flip(_convolve_nd(_flip(in1), in2, mode, precision, "correlate2d"))
