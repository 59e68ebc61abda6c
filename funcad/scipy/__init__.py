"""funcad.scipy: JAX's scipy special functions, distributions and integration.

>>> import funcad.scipy.special as sps
>>> float(sps.gammaln(1.0))
0.0
"""
from . import integrate, linalg, special, stats  # noqa: F401

__all__ = ["integrate", "linalg", "special", "stats"]
