"""funcad.scipy.signal: N-d convolution (direct or by FFT), cross-correlation and spectral analysis
(stft, istft, welch, csd, detrend), as JAX's scipy.signal.

>>> import numpy as np
>>> convolve(np.array([1.0, 2.0, 3.0]), np.array([1.0, 1.0]), mode="valid")
Array([3., 5.], dtype=float64)
"""
from ._signal import convolve, convolve2d, correlate, correlate2d, fftconvolve
from ._spectral import csd, detrend, istft, stft, welch

__all__ = ["convolve", "correlate", "convolve2d", "correlate2d", "fftconvolve",
           "csd", "detrend", "istft", "stft", "welch"]
