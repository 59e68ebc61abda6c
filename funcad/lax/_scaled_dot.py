"""`lax.scaled_dot`: a dot_general of operands multiplied by per-subchannel scales,
as JAX computes it without a native kernel: each scale is repeated over its
subchannel, operands and scales are cast to bfloat16 and multiplied there, and
one dot_general runs in `preferred_element_type` (bfloat16 by default)."""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core.errors import FuncadTypeError
from ..core.x64 import explicit_dtype
from ..arrays.creation import public as _creation
from ..arrays.shape import broadcast_to, expand_dims, ndim, reshape, shape as _shape
from ._dot import dot_general

__all__ = ["scaled_dot"]


def _check_scale(side, shape, sshape, contract):
    for i, size in enumerate(shape):
        if i in contract:
            if size % sshape[i]:
                raise FuncadTypeError(f"scaled_dot: {side} contracting dim {i} of size {size} must "
                                      f"be divisible by its scale's dim size {sshape[i]}.")
            if size // sshape[i] < 2:
                raise FuncadTypeError(
                    f"scaled_dot: the ratio of {side} contracting dim {i} to its scale's dim size "
                    f"({size // sshape[i]}) must be at least 2; give the scale fewer entries there.")
        elif sshape[i] != size:
            raise FuncadTypeError(f"scaled_dot: {side} dim {i} of size {size} does not match scale "
                                  f"dim size {sshape[i]}; scales repeat only along contracting dims.")


def _validate(ls, rs, lss, rss, dn):
    (lc, rc), (lb, rb) = dn
    if len({len(ls), len(rs), len(lss), len(rss)}) != 1:
        raise FuncadTypeError(f"scaled_dot: all input tensors must have the same rank. Got lhs {ls}, "
                              f"rhs {rs}, lhs_scale {lss}, rhs_scale {rss}.")
    if len(lb) != len(rb) or len(lc) != len(rc):
        raise FuncadTypeError("scaled_dot: LHS and RHS must have the same number of batch and of "
                              f"contracting dimensions, got dimension_numbers {dn}.")
    for d, n in ((lc + lb, len(ls)), (rc + rb, len(rs))):
        if any(not 0 <= a < n for a in d) or len(set(d)) != len(d):
            raise FuncadTypeError(f"scaled_dot: dimension_numbers {dn} name axes out of range or "
                                  f"twice for operands of rank {n}.")
    for i, j in zip(lb, rb):
        if len({ls[i], rs[j], lss[i], rss[j]}) != 1:
            raise FuncadTypeError("scaled_dot: all input tensors must have the same batch dimension "
                                  f"size for batch dims ({i}, {j}); got lhs {ls}, rhs {rs}, "
                                  f"lhs_scale {lss}, rhs_scale {rss}.")
    for i, j in zip(lc, rc):
        if ls[i] != rs[j]:
            raise FuncadTypeError(f"scaled_dot: LHS contracting dim {i} of size {ls[i]} does not "
                                  f"match RHS contracting dim {j} of size {rs[j]}.")
    _check_scale("LHS", ls, lss, lc)
    _check_scale("RHS", rs, rss, rc)


def _repeat(scale, shape, contract):
    """Each scale entry repeated over its subchannel (so it matches the operand's shape)."""
    for i in contract:
        s = _shape(scale)
        if s[i] != shape[i]:
            scale = broadcast_to(expand_dims(scale, i + 1), s[:i + 1] + (shape[i] // s[i],) + s[i + 1:])
            scale = reshape(scale, s[:i] + (shape[i],) + s[i + 1:])
    return scale


def scaled_dot(lhs, rhs, *, lhs_scale=None, rhs_scale=None, dimension_numbers=None,
               preferred_element_type=None):
    """`dot_general(lhs * lhs_scale, rhs * rhs_scale)` in `preferred_element_type`
    (default bfloat16), as JAX's `lax.scaled_dot`. A scale has the operand's shape
    except along contracting dims, where each entry covers a subchannel of at
    least 2 entries; a missing scale is 1. `dimension_numbers` defaults to a
    (batched) matmul: contract lhs's last axis with rhs's second to last.

    >>> import numpy as np
    >>> x, s = np.ones((2, 4), np.float32), np.full((2, 2), 2.0, np.float32)
    >>> scaled_dot(x, x.T, lhs_scale=s, preferred_element_type=np.float32).tolist()
    [[8.0, 8.0], [8.0, 8.0]]
    """
    lhs, rhs = _creation.asarray(lhs), _creation.asarray(rhs)
    if dimension_numbers is None:
        n = ndim(lhs)
        if n < 2:
            raise FuncadTypeError("scaled_dot does not support 0-rank and 1-rank operands; pass "
                                  "dimension_numbers or reshape the operands to matrices.")
        dimension_numbers = (((n - 1,), (n - 2,)), (tuple(range(n - 2)), tuple(range(n - 2))))
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        dn = ((tuple(map(int, lc)), tuple(map(int, rc))), (tuple(map(int, lb)), tuple(map(int, rb))))
    except (TypeError, ValueError):
        raise FuncadTypeError("scaled_dot: dimension_numbers must be ((lhs_contracting, "
                              "rhs_contracting), (lhs_batch, rhs_batch)), tuples of axes; got "
                              f"{dimension_numbers!r}") from None
    (lc, rc), _ = dn

    def dummy(x, contract):
        s = tuple(1 if i in contract else d for i, d in enumerate(_shape(x)))
        return _creation.ones(s, ml_dtypes.float8_e8m0fnu)

    ls = dummy(lhs, lc) if lhs_scale is None else _creation.asarray(lhs_scale)
    rs = dummy(rhs, rc) if rhs_scale is None else _creation.asarray(rhs_scale)
    pet = explicit_dtype(ml_dtypes.bfloat16 if preferred_element_type is None
                         else preferred_element_type, "scaled_dot")
    _validate(_shape(lhs), _shape(rhs), _shape(ls), _shape(rs), dn)
    bf16 = ml_dtypes.bfloat16
    # The product is rounded to bfloat16 before the dot, as JAX's decomposition does.
    a = lhs.astype(bf16) * _repeat(ls, _shape(lhs), lc).astype(bf16)
    b = rhs.astype(bf16) * _repeat(rs, _shape(rhs), rc).astype(bf16)
    return dot_general(a, b, dn, preferred_element_type=pet)
