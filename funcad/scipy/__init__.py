"""funcad.scipy: JAX's scipy special functions, distributions, integration, linear algebra,
optimization, signal processing, the DCT, interpolation, vector quantization, the
iterative sparse solvers and 3-d rotations.

>>> import funcad.scipy.special as sps
>>> float(sps.gammaln(1.0))
0.0
"""
from . import (cluster, fft, integrate, interpolate, linalg, ndimage, optimize, signal, sparse,  # noqa: F401
               spatial, special, stats)

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse",
           "spatial", "special", "stats"]
