"""funcad.scipy: JAX's scipy special functions, distributions, integration, signal
processing and 3-d rotations.

>>> import funcad.scipy.special as sps
>>> float(sps.gammaln(1.0))
0.0
"""
from . import integrate, linalg, optimize, signal, spatial, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "optimize", "signal", "spatial", "special", "stats"]
