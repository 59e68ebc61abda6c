"""funcad.numpy.fft: discrete Fourier transforms as numpy.fft and JAX's numpy.fft,
differentiable, batched and compiled through the one `fft` primitive.

>>> import funcad.numpy as fnp
>>> fnp.fft.rfft(fnp.array([1.0, 2.0, 3.0, 4.0]))
Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex128)
"""
from ._helpers import fftfreq, fftshift, ifftshift, rfftfreq
from ._transforms import (fft, fft2, fftn, hfft, ifft, ifft2, ifftn, ihfft, irfft, irfft2, irfftn,
                          rfft, rfft2, rfftn)

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq", "rfftn"]
