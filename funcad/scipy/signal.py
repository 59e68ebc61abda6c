"""funcad.scipy.signal: N-d convolution (direct or by FFT) and cross-correlation, as JAX's scipy.signal.

>>> import numpy as np
>>> convolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), mode="valid")
Array([3., 5.], dtype=float64)
"""
from ._signal import convolve, convolve2d, correlate, correlate2d, fftconvolve

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve"]
