"""Block-scaled matrix multiplication (JAX's `nn.scaled_matmul`), as JAX computes it
on the CPU: each block of `block_size` entries along the contracting axis is
multiplied by its scale, then one batched dot in `preferred_element_type`."""
from __future__ import annotations

import numpy as np

from ..core.errors import FuncadValueError
from ..core.x64 import explicit_dtype
from ..lax._dot import dot_general
from ..numpy import asarray, multiply, reshape, shape as _shape

__all__ = ["scaled_matmul"]


def scaled_matmul(lhs, rhs, lhs_scales, rhs_scales, preferred_element_type=np.float32):
    """Block-scaled batched matmul: `lhs` (B, M, K), `rhs` (B, N, K), their scales
    (B, M, K/block) and (B, N, K/block); the result is (B, M, N) with
    `out[b, m, n] = sum_k lhs[b, m, k] * lhs_scales[b, m, k // block] *
    rhs[b, n, k] * rhs_scales[b, n, k // block]`.

    >>> import funcad.numpy as fnp
    >>> a, s = fnp.ones((1, 2, 4)), fnp.full((1, 2, 2), 0.5)
    >>> scaled_matmul(a, a, s, s)[0].tolist()
    [[1.0, 1.0], [1.0, 1.0]]
    """
    a, b, sa, sb = (asarray(v) for v in (lhs, rhs, lhs_scales, rhs_scales))
    shapes = [_shape(v) for v in (a, b, sa, sb)]
    if any(len(s) != 3 for s in shapes):
        raise FuncadValueError(f"scaled_matmul needs 3-d arrays (B, M, K), (B, N, K) and their "
                               f"scales, got shapes {shapes}")
    (B, M, K), (Bb, N, Kb), (Bs, Ms, Ks), (Bt, Nt, Kt) = shapes
    if K != Kb or B != Bb:
        raise FuncadValueError("scaled_matmul requires inputs a and b to have matching batch (B) "
                               f"and contract (K) dimensions, but got shapes {shapes[0]} and {shapes[1]}")
    if Ks != Kt or Bs != Bt:
        raise FuncadValueError("scaled_matmul requires scales to have matching batch (B) and "
                               f"contract (K) dimensions, but got shapes {shapes[2]} and {shapes[3]}")
    if Ms != M or Nt != N:
        raise FuncadValueError("scaled_matmul requires scales to match non-contract dimensions of "
                               f"inputs, but got shapes a: {shapes[0]}, b: {shapes[1]}, "
                               f"a_scales: {shapes[2]}, b_scales: {shapes[3]}")
    if K % Ks:
        raise FuncadValueError(f"scaled_matmul: the {Ks} scale blocks do not divide K = {K}")
    d = explicit_dtype(preferred_element_type, "scaled_matmul")

    def scaled(x, s, rows):
        # Cast first: the narrow input formats have no arithmetic of their own on CPU.
        x, s = x.astype(d), s.astype(d)
        x = multiply(reshape(x, (B, rows, Ks, K // Ks)), reshape(s, (B, rows, Ks, 1)))
        return reshape(x, (B, rows, K))

    return dot_general(scaled(a, sa, M), scaled(b, sb, N), (((2,), (2,)), ((0,), (0,))),
                       preferred_element_type=d)
