"""funcad.lax's products: dot_general with precision and preferred_element_type, dot,
batch_matmul, ragged_dot and ragged_dot_general."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..primitives import elementwise as E
from ..primitives import structural as S
from ._types import RaggedDotDimensionNumbers
from ..arrays import linalg as L
from ..arrays.precision import _preferred, canonical_precision, dot_operands
from ..primitives.linalg import dot_general as _dot
from ..primitives.reductions import cumsum
from ..arrays.dtypes import asarray_or_tracer as _arr
from ._slicing import _shape

__all__ = ['dot', 'batch_matmul', 'dot_general', 'ragged_dot', 'ragged_dot_general']


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """Vector/matrix products (lhs's last axis against rhs's first); with
    dimension_numbers it is dot_general. `precision` and `out_sharding` as in dot_general.

    >>> import numpy as np
    >>> from funcad.lax import dot
    >>> dot(np.ones((2, 3)), np.ones(3), precision="F64_F64_F64").tolist()
    [3.0, 3.0]
    """
    x, y = _arr(lhs), _arr(rhs)  # operands of two dtypes are typed by dot_general's rule
    if dimension_numbers is None:
        if not 1 <= len(_shape(x)) <= 2 or not 1 <= len(_shape(y)) <= 2:
            raise FuncadValueError(f"dot: expected 1-d or 2-d operands, got {aval_of(x).str_short()} and "
                                   f"{aval_of(y).str_short()}; use dot_general for higher ranks")
        dimension_numbers = (((len(_shape(x)) - 1,), (0,)), ((), ()))
    return dot_general(x, y, dimension_numbers, precision, preferred_element_type,
                       out_sharding=out_sharding)


def batch_matmul(lhs, rhs, precision=None):
    """Batched matrix product over matching leading dimensions."""
    x, y = _arr(lhs), _arr(rhs)
    nd = len(_shape(x))
    if nd < 2 or len(_shape(y)) != nd or _shape(x)[:-2] != _shape(y)[:-2]:
        raise FuncadValueError(f"batch_matmul: operands need equal rank >= 2 and equal batch dims, got "
                               f"{aval_of(x).str_short()} and {aval_of(y).str_short()}")
    b = tuple(range(nd - 2))
    return dot_general(x, y, (((nd - 1,), (nd - 2,)), (b, b)), precision)


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None, *,
                out_sharding=None):
    """General tensor contraction (XLA's DotGeneral): ((lhs_contract, rhs_contract),
    (lhs_batch, rhs_batch)); the output is batch dims, lhs free dims, rhs free dims.
    `precision` takes None, a Precision, a string or a pair (CPU computes each exactly in
    the operand dtype), or a DotAlgorithmPreset (or its name) or DotAlgorithm, whose
    operand and accumulation types are applied as XLA's CPU backend applies them;
    `preferred_element_type` sets the accumulation and output dtype.

    >>> dot_general(np.ones((2, 3)), np.ones((3, 4)), (((1,), (0,)), ((), ()))).shape
    (2, 4)
    """
    precision = canonical_precision(precision)
    x, y = _arr(lhs), _arr(rhs)
    x, y, narrower = dot_operands(x, y, precision, preferred_element_type)
    return _dot(x, y, dimension_numbers, precision, out_sharding, narrower)


def ragged_dot(lhs, rhs, group_sizes, precision=None, preferred_element_type=None,
               group_offset=None, out_sharding=None):
    """Grouped matmul: lhs [m, k] is cut into consecutive row groups of `group_sizes`
    [g]; group i is multiplied by rhs[i] ([g, k, n]); rows past the groups are zero.

    >>> ragged_dot(np.ones((3, 2)), np.stack([np.eye(2), 2 * np.eye(2)]), np.array([1, 2])).tolist()
    [[1.0, 1.0], [2.0, 2.0], [2.0, 2.0]]
    """
    dn = RaggedDotDimensionNumbers((((1,), (1,)), ((), ())), (0,), (0,))
    return ragged_dot_general(lhs, rhs, group_sizes, dn, precision, preferred_element_type,
                              group_offset, out_sharding)


def _group_mask(group_sizes, n, g):
    """mask[g, i]: entry i of a ragged axis of size n belongs to group g."""
    sizes = E.convert_element_type(_arr(group_sizes), np.int64)
    ends = cumsum(sizes, 0)
    starts = E.sub(ends, sizes)
    i = S.iota(np.int64, (g, n), 1)
    col = lambda v: S.broadcast_in_dim(v, (g, n), (0,))  # noqa: E731
    return E.bitwise_and(E.ge(i, col(starts)), E.lt(i, col(ends)))


def ragged_dot_general(lhs, rhs, group_sizes, ragged_dot_dimension_numbers: RaggedDotDimensionNumbers,
                       precision=None, preferred_element_type=None, group_offset=None, out_sharding=None):
    """ragged_dot with general dimension numbers. Three modes, as in JAX: the lhs's ragged
    dimension is a free (non-contracting) dimension and the rhs has a group dimension
    (each group uses its own rhs); the ragged dimension is contracting (the output gets a
    leading group dimension); or it is a batch dimension."""
    if group_offset is not None:
        raise FuncadValueError("ragged_dot: group_offset is not supported (JAX supports it only on TPU)")
    dn = ragged_dot_dimension_numbers
    (lc, rc), (lb, rb) = dn.dot_dimension_numbers
    x, y = _arr(lhs), _arr(rhs)
    if preferred_element_type is not None:
        x, y = _preferred(x, y, preferred_element_type)
    if len(dn.lhs_ragged_dimensions) != 1:
        raise FuncadValueError("ragged_dot_general needs exactly one lhs ragged dimension")
    r = dn.lhs_ragged_dimensions[0] % aval_of(x).ndim
    g = aval_of(_arr(group_sizes)).shape[-1]
    mask = E.convert_element_type(_group_mask(group_sizes, aval_of(x).shape[r], g), aval_of(x).dtype)
    letters = "abcdefghijklmnopqrstuvwxyz"
    xs = letters[:aval_of(x).ndim]
    ys = list(letters[aval_of(x).ndim:aval_of(x).ndim + aval_of(y).ndim])
    for a, b in zip(list(lc) + list(lb), list(rc) + list(rb)):
        ys[b] = xs[a]
    batch = [xs[a] for a in lb]
    if r in lb:
        # Ragged batch dimension: every group multiplies its own batch entries, which is
        # the plain batched product (JAX's result does not depend on group_sizes here).
        free_x = [c for i, c in enumerate(xs) if i not in lc and i not in lb]
        free_y = [c for i, c in enumerate(ys) if i not in rc and i not in rb]
        return L.einsum(f"{xs},{''.join(ys)}->{''.join(batch + free_x + free_y)}", x, y, precision=precision, out_sharding=out_sharding)
    if r in lc:
        # Ragged contracting dimension: each group contracts its own stretch of it, and
        # the output gets a leading group dimension.
        free_x = [c for i, c in enumerate(xs) if i not in lc and i not in lb]
        free_y = [c for i, c in enumerate(ys) if i not in rc and i not in rb]
        out = "".join(["Z"] + batch + free_x + free_y)
        return L.einsum(f"Z{xs[r]},{xs},{''.join(ys)}->{out}", mask, x, y, precision=precision, out_sharding=out_sharding)
    if len(dn.rhs_group_dimensions) != 1:
        raise FuncadValueError("ragged_dot_general with a ragged free dimension needs one rhs group dimension")
    gdim = dn.rhs_group_dimensions[0] % aval_of(y).ndim
    ys[gdim] = "Z"
    ys_s = "".join(ys)
    free_x = [c for i, c in enumerate(xs) if i not in lc and i not in lb]
    free_y = [c for i, c in enumerate(ys_s) if i not in rc and i not in rb and i != gdim]
    out = "".join(batch + free_x + free_y)
    return L.einsum(f"Z{xs[r]},{xs},{ys_s}->{out}", mask, x, y, precision=precision, out_sharding=out_sharding)
