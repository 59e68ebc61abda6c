"""funcad's primitives, one module per family; importing one registers its rules.

The core families load here; the rest (decompositions, eig, schur, tridiagonal,
fft, convolution, special, ...) load with the namespace functions that bind them,
so a program that never uses them does not pay for their import.
"""
from . import elementwise, structural, reductions, linalg, indexing  # noqa: F401
from ._base import UndefinedPrimal, is_undefined  # noqa: F401
