"""funcad.numpy.linalg: NumPy's linear algebra, built from funcad's primitives
(so every function is differentiable, batchable and jittable)."""
import numpy as _np

from ._spectral import *  # noqa: F401,F403
from ._spectral import __all__ as _spectral_all

__all__ = [*_spectral_all]


def __getattr__(name):
    from ...core.errors import unsupported_name
    raise unsupported_name(__name__, name, globals(), _np.linalg)
