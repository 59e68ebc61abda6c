"""funcad's primitives, one module per family; importing registers their rules."""
from . import elementwise, structural, reductions, linalg, indexing, decompositions, eig, schur, tridiagonal  # noqa: F401
from ._base import UndefinedPrimal, is_undefined  # noqa: F401
