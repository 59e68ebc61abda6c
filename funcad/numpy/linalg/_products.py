"""The array-API spellings of matrix products in numpy.linalg: matmul and tensordot."""
from __future__ import annotations

from ...core.errors import FuncadValueError
from ...arrays import linalg as _linalg
from ...arrays.dtypes import asarray_or_tracer
from ...arrays.shape import ndim as _ndim

__all__ = ["matmul", "tensordot"]


def matmul(x1, x2, /, *, precision=None, preferred_element_type=None):
    """numpy.matmul, for arrays of at least one dimension (the array API's linalg.matmul).

    >>> import numpy as np
    >>> matmul(np.eye(2), np.array([1.0, 2.0])).tolist()
    [1.0, 2.0]
    """
    x1, x2 = asarray_or_tracer(x1), asarray_or_tracer(x2)
    for i, x in enumerate((x1, x2)):
        if _ndim(x) < 1:
            raise FuncadValueError(f"matmul input operand {i} must have ndim at least 1, but it has ndim 0")
    return _linalg.matmul(x1, x2, precision=precision, preferred_element_type=preferred_element_type)


def tensordot(x1, x2, /, *, axes=2, precision=None, preferred_element_type=None, out_sharding=None):
    """numpy.tensordot with `axes` keyword-only (the array API's linalg.tensordot).

    >>> import numpy as np
    >>> float(tensordot(np.ones((2, 3)), np.ones((2, 3))))
    6.0
    """
    return _linalg.tensordot(x1, x2, axes, precision=precision, preferred_element_type=preferred_element_type,
                             out_sharding=out_sharding)
