"""funcad.scipy.sparse: iterative linear solvers (funcad.scipy.sparse.linalg), as JAX's."""
from . import linalg  # noqa: F401

__all__ = ["linalg"]
