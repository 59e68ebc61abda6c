"""funcad.lax's sorting compositions: top_k, sort_key_val, approx_max_k/approx_min_k."""
from __future__ import annotations

import math
import operator
import numpy as np

from ..primitives import indexing as I
from ..primitives._base import canonical_axis
from ..arrays.setops import top_k as _top_k
from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives import elementwise as E
from ..arrays.dtypes import asarray_or_tracer as _arr
from ._slicing import _shape

__all__ = ['top_k', 'sort_key_val', 'approx_max_k', 'approx_min_k']


def top_k(operand, k: int, *, axis: int = -1, is_stable: bool = True):
    """The k largest entries along axis (default: the last) in descending order, and their indices."""
    return _top_k(operand, k, axis=axis)


def sort_key_val(keys, values, dimension: int = -1, is_stable: bool = True):
    """keys sorted along dimension, with values permuted alongside."""
    k, v = _arr(keys), _arr(values)
    nd = len(_shape(k))
    return tuple(I.sort([k, v], canonical_axis(dimension, nd, "sort_key_val", k), num_keys=1))


def _approx_output_size(n, rank, k, recall_target, aggregate_to_topk, override):
    """XLA's approximate top-k reduction output size (what a TPU keeps before its final
    sort); on CPU the result is the exact top entries of that count."""
    if aggregate_to_topk:
        return k
    tiling = 1024 if rank == 1 else 128
    if n <= tiling:
        return n
    if override >= 0 and n > override:
        raise FuncadValueError(f"reduction_input_size_override ({override}) must be at least the "
                               f"reduction dimension's size ({n})")
    logical = override if override >= 0 else n
    if recall_target == 1.0:
        return n
    if not 0.0 < recall_target <= 1.0:
        raise FuncadValueError(f"recall_target must be in (0, 1], got {recall_target}")
    m = min(max(int((1.0 - k) / math.log(recall_target)), tiling), n)
    log2 = (logical // m).bit_length() - 1
    if log2 <= 0:
        return n
    return -(-(-(-n // (1 << log2))) // tiling) * tiling


def _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
              aggregate_to_topk, largest):
    x = _arr(operand)
    a = aval_of(x)
    if a.ndim == 0:
        raise FuncadTypeError("approx_top_k operand must have >= 1 dimension")
    if a.dtype.kind != "f":
        raise FuncadTypeError(f"approx_max_k/approx_min_k need a floating operand, got {a.str_short()}")
    ax = canonical_axis(reduction_dimension, a.ndim, "approx_max_k", x)
    k = operator.index(k)
    if k <= 0:
        raise FuncadValueError(f"k must be positive, got {k}")
    if a.shape[ax] < k:
        raise FuncadValueError(f"k must be smaller than the size of reduction_dim {a.shape[ax]}, got {k}")
    size = _approx_output_size(a.shape[ax], a.ndim, k, float(recall_target), aggregate_to_topk,
                               int(reduction_input_size_override))
    vals, idx = _top_k(x if largest else E.neg(x), size, axis=ax)
    return (vals if largest else E.neg(vals)), E.convert_element_type(idx, np.int32)


def approx_max_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The k largest entries along reduction_dimension and their int32 indices. On CPU this
    is the exact top-k (as in JAX); ties keep index order. With aggregate_to_topk=False
    it returns the (larger) number of entries a TPU's approximate pass would keep.

    >>> [v.tolist() for v in approx_max_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)]
    [[4.0, 3.0], [2, 0]]
    """
    return _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                     aggregate_to_topk, True)


def approx_min_k(operand, k: int, reduction_dimension: int = -1, recall_target: float = 0.95,
                 reduction_input_size_override: int = -1, aggregate_to_topk: bool = True):
    """The k smallest entries along reduction_dimension and their int32 indices (see approx_max_k).

    >>> [v.tolist() for v in approx_min_k(np.array([3.0, 1.0, 4.0, 1.5]), 2)]
    [[1.0, 1.5], [1, 3]]
    """
    return _approx_k(operand, k, reduction_dimension, recall_target, reduction_input_size_override,
                     aggregate_to_topk, False)
