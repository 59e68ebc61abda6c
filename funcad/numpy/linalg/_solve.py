"""funcad.numpy.linalg: solves, inverses, determinants and the products and views
NumPy's linalg namespace adds (all on stacks of matrices, as NumPy).

Everything is a composition of the cholesky, triangular_solve and lu
primitives and funcad.numpy, so derivatives, batching and jit come free. det
and slogdet have derivative rules of their own, as in JAX: d log|det A| =
tr(A⁻¹ dA), and d det A = tr(adj(A) dA) with the adjugate computed from the
LU factors so that it stays finite at singular matrices of rank n - 1.
"""
from __future__ import annotations

import math
import operator
from typing import NamedTuple, Sequence

import numpy as np

from ...core.avals import aval_of
from ...core.errors import FuncadTypeError, FuncadValueError
from ...core.trace import bind_custom_jvp
from ...primitives import triangular as T
from ...lax.linalg import cholesky as _chol
from ... import numpy as fnp  # (bound while funcad.numpy imports; used at call time)
from ...arrays.dtypes import asarray_or_tracer, promote, to_inexact

__all__ = ["solve", "inv", "det", "slogdet", "cholesky", "matrix_power", "multi_dot",
           "tensorsolve", "tensorinv", "cross", "outer", "trace", "diagonal",
           "matrix_transpose", "vecdot", "SlogdetResult"]


class SlogdetResult(NamedTuple):
    sign: object
    logabsdet: object


def _float(x):
    x = to_inexact(asarray_or_tracer(x))
    if aval_of(x).dtype.itemsize < 4:  # LAPACK has no float16: compute in float32, as JAX
        x = x.astype(np.float32)
    return x


def _square(name, a):
    a = _float(a)
    shape = aval_of(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise FuncadValueError(f"{name}: the argument must be a square matrix or a stack of them "
                               f"(shape (..., n, n)), got shape {tuple(shape)}")
    return a


def _lu_solve_factored(lu, perm, b):
    """x with A x = b from A's LU factors; b (..., n, m) with the batch of lu."""
    rows = fnp.broadcast_to(fnp.expand_dims(perm, -1), aval_of(b).shape)
    pb = fnp.take_along_axis(b, rows, axis=-2, mode="clip")
    y = T.triangular_solve(lu, pb, left_side=True, lower=True, unit_diagonal=True)
    return T.triangular_solve(lu, y, left_side=True, lower=False)


def _common_batch(a, b):
    sa, sb = aval_of(a).shape, aval_of(b).shape
    batch = tuple(np.broadcast_shapes(sa[:-2], sb[:-2]))
    return fnp.broadcast_to(a, batch + sa[-2:]), fnp.broadcast_to(b, batch + sb[-2:])


def solve(a, b):
    """x with a @ x = b, for a (..., n, n) and b (n,) or (..., n, m), as
    numpy.linalg.solve (LU with partial pivoting). A singular `a` gives infs or
    NaNs, as in JAX.

    >>> import numpy as np
    >>> solve(np.array([[2.0, 0.0], [0.0, 4.0]]), np.array([2.0, 2.0])).tolist()
    [1.0, 0.5]
    """
    a = _square("solve", a)
    b = _float(b)
    a, b = _promote(a, b)
    sa, sb = aval_of(a).shape, aval_of(b).shape
    n = sa[-1]
    if len(sb) == 0:
        raise FuncadValueError("solve: b must be at least one-dimensional, got a scalar")
    if len(sb) > 1 and len(sa) == len(sb) + 1 and sb[-1] == n and sb[-2] != n:
        raise FuncadValueError(
            f"solve: shapes {tuple(sa)} and {tuple(sb)} do not fit: b is read as a stack of "
            "(n, m) matrices, not a stack of vectors; for a batch of vectors use "
            "solve(a, b[..., None])[..., 0]")
    vector = len(sb) == 1
    if vector:
        b = fnp.expand_dims(b, -1)
    if aval_of(b).shape[-2] != n:
        raise FuncadValueError(f"solve: a is {n} x {n} but b has {aval_of(b).shape[-2]} rows "
                               f"(shapes {tuple(sa)} and {tuple(sb)})")
    a, b = _common_batch(a, b)
    if aval_of(a).size == 0 or aval_of(b).size == 0:  # nothing to solve: x is as empty as b
        x = fnp.zeros_like(b)
    else:
        lu, _, perm = T.lu(a)
        x = _lu_solve_factored(lu, perm, b)
    return x[..., 0] if vector else x


def _promote(a, b):
    return promote(a, b)


def inv(a):
    """The inverse of each matrix of a stack (solve with the identity), as
    numpy.linalg.inv; a singular matrix gives infs or NaNs, as in JAX.

    >>> import numpy as np
    >>> inv(np.array([[2.0, 0.0], [0.0, 4.0]])).tolist()
    [[0.5, 0.0], [0.0, 0.25]]
    """
    a = _square("inv", a)
    shape = aval_of(a).shape
    eye = fnp.broadcast_to(fnp.eye(shape[-1], dtype=aval_of(a).dtype), shape)
    return solve(a, eye)


def _parity_sign(piv, dtype):
    n = aval_of(piv).shape[-1]
    swaps = fnp.sum(fnp.not_equal(piv, np.arange(n, dtype=np.int32)), axis=-1)
    return fnp.subtract(np.array(1, dtype), fnp.multiply(np.array(2, dtype),
                                                      fnp.remainder(swaps, 2).astype(dtype)))


def _slogdet_value(a):
    dtype = aval_of(a).dtype
    lu, piv, _ = T.lu(a)
    d = fnp.diagonal(lu, axis1=-2, axis2=-1)
    is_zero = fnp.any(fnp.equal(d, 0), axis=-1)
    if dtype.kind == "c":  # the sign is a phase: ∏ d/|d|; log|det| is real
        mag = fnp.absolute(d)
        phase = fnp.prod(fnp.where(fnp.equal(d, 0), np.array(1, dtype), d / fnp.where(fnp.equal(d, 0), 1, mag)),
                         axis=-1)
        sign = fnp.where(is_zero, np.array(0, dtype), _parity_sign(piv, dtype) * phase)
        safe = fnp.where(fnp.equal(d, 0), np.array(1, mag.dtype), mag)
        return [sign, fnp.where(is_zero, np.array(-np.inf, mag.dtype), fnp.sum(fnp.log(safe), axis=-1))]
    negs = fnp.sum(fnp.less(d, 0), axis=-1)
    sign = fnp.multiply(_parity_sign(piv, dtype),
                      fnp.subtract(np.array(1, dtype), fnp.multiply(np.array(2, dtype),
                                                                 fnp.remainder(negs, 2).astype(dtype))))
    sign = fnp.where(is_zero, np.array(0, dtype), sign)
    safe = fnp.where(fnp.equal(d, 0), np.array(1, dtype), fnp.absolute(d))  # log(0) quietly
    logdet = fnp.where(is_zero, np.array(-np.inf, dtype), fnp.sum(fnp.log(safe), axis=-1))
    return [sign, logdet]


def _slogdet_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    sign, logdet = slogdet(a)
    if t is None:
        return [sign, logdet], [None, None]
    dlog = trace(solve(a, t))
    if aval_of(sign).dtype.kind == "c":  # as JAX: the phase turns by i Im tr(a⁻¹ da)
        return [sign, logdet], [fnp.multiply(dlog - fnp.real(dlog).astype(dlog.dtype), sign), fnp.real(dlog)]
    return [sign, logdet], [fnp.multiply(sign, np.array(0, aval_of(sign).dtype)), dlog]


def slogdet(a, *, method: str | None = None) -> SlogdetResult:
    """(sign, log|det|) of each matrix of a stack, from its LU factors.

    The derivative of log|det a| is tr(a⁻¹ da) (a rule, as in JAX); the sign's
    is zero. `method` may be None or 'lu'.

    >>> import numpy as np
    >>> s, l = slogdet(np.array([[0.0, 2.0], [3.0, 0.0]]))
    >>> float(s), round(float(l), 6)
    (-1.0, 1.791759)
    """
    if method not in (None, "lu"):
        raise FuncadValueError(f"slogdet: unknown method {method!r}; funcad supports 'lu' (the default). "
                               "JAX's 'qr' needs a QR decomposition")
    a = _square("slogdet", a)
    sign, logdet = bind_custom_jvp(_slogdet_value, _slogdet_jvp, [a])
    return SlogdetResult(sign, logdet)


def _det_value(a):
    n = aval_of(a).shape[-1]
    if n == 0:
        return [fnp.prod(fnp.diagonal(a, axis1=-2, axis2=-1), axis=-1)]
    sign, logdet = _slogdet_value(a)
    return [fnp.multiply(sign, fnp.exp(logdet))]


def _cofactor_solve(a, b):
    """(det a, adj(a) @ b) for a, b (..., n, n), finite when rank(a) >= n - 1.

    With P a = L U: adj(a) b = det(a) U⁻¹ L⁻¹ P b. Where U's last pivot u_nn
    is zero (rank n - 1) det(a)/u_nn is still finite: it is s · ∏_{i<n} u_ii
    (s the permutation's sign). So back-substitute with u_nn replaced by
    1 / (s ∏_{i<n} u_ii) on rows scaled by det(a), except the last row; rank
    below n - 1 gives zeros.
    """
    dtype = aval_of(a).dtype
    n = aval_of(a).shape[-1]
    if n == 1:
        return a[..., 0, 0], b
    lu, piv, perm = T.lu(a)
    d = fnp.diagonal(lu, axis1=-2, axis2=-1)
    s = _parity_sign(piv, dtype)
    det = fnp.multiply(s, fnp.prod(d, axis=-1))
    head = fnp.multiply(s, fnp.prod(d[..., :-1], axis=-1))
    corner = (np.arange(n)[:, None] == n - 1) & (np.arange(n)[None, :] == n - 1)
    flat = fnp.equal(head, 0)  # rank below n - 1: 1/head is infinite (quietly)
    inv_head = fnp.where(flat, np.array(np.inf, dtype),
                         fnp.divide(np.array(1, dtype), fnp.where(flat, np.array(1, dtype), head)))
    u = fnp.where(corner, inv_head[..., None, None], lu)
    # Rank below n - 1 is detected from the factors alone (no tangent flows
    # through the test), and zeroes both ends of the solve: the output, and
    # the input, so that reverse mode's cotangents skip the infinite solve too.
    probe = T.triangular_solve(u, fnp.ones(aval_of(lu).shape[:-1] + (1,), dtype), left_side=True,
                               lower=False)
    ok = fnp.all(fnp.isfinite(probe), axis=(-2, -1), keepdims=True)
    zero = np.array(0, dtype)
    rows = fnp.broadcast_to(fnp.expand_dims(perm, -1), aval_of(b).shape)
    x = fnp.where(ok, fnp.take_along_axis(b, rows, axis=-2, mode="clip"), zero)
    x = T.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
    last = np.arange(n) == n - 1
    x = fnp.where(last[:, None], x, fnp.multiply(x, det[..., None, None]))
    y = T.triangular_solve(u, x, left_side=True, lower=False)
    return det, fnp.where(ok, y, zero)


def _det_jvp(primals, tangents):
    (a,), (t,) = primals, tangents
    if t is None:
        return [det(a)], [None]
    value, z = _cofactor_solve(a, t)
    return [value], [trace(z)]


def det(a):
    """The determinant of each matrix of a stack (sign · exp(log|det|) from LU).

    Its derivative is tr(adj(a) da) (a rule, as in JAX), finite also at
    singular matrices of rank n - 1.

    >>> import numpy as np
    >>> float(det(np.array([[1.0, 2.0], [3.0, 4.0]])))
    -2.0000000000000004
    """
    a = _square("det", a)
    return bind_custom_jvp(_det_value, _det_jvp, [a])[0]


def cholesky(a, *, upper: bool = False, symmetrize_input: bool = True):
    """The Cholesky factor of each symmetric positive definite matrix of a stack:
    L with a = L Lᵀ, or U = Lᵀ with `upper`. NaNs where a matrix is not
    positive definite (as JAX; NumPy raises). With `symmetrize_input` the factor
    is that of (a + aᵀ)/2, so derivatives are symmetric.

    >>> import numpy as np
    >>> cholesky(np.array([[4.0, 2.0], [2.0, 5.0]])).tolist()
    [[2.0, 0.0], [1.0, 2.0]]
    """
    a = _square("cholesky", a)
    L = _chol(a, symmetrize_input=symmetrize_input)
    return fnp.conj(matrix_transpose(L)) if upper else L  # U = Lᴴ


def matrix_power(a, n: int):
    """a raised to the integer power n by repeated squaring (n < 0 inverts
    first; n = 0 gives identities), as numpy.linalg.matrix_power.

    >>> import numpy as np
    >>> matrix_power(np.array([[1.0, 1.0], [0.0, 1.0]]), 3).tolist()
    [[1.0, 3.0], [0.0, 1.0]]
    """
    a = asarray_or_tracer(a)
    shape = aval_of(a).shape
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise FuncadValueError(f"matrix_power: a must be a square matrix or a stack of them "
                               f"(shape (..., n, n)), got shape {tuple(shape)}")
    try:
        n = operator_index(n)
    except TypeError:
        raise FuncadTypeError(f"matrix_power: the exponent must be an integer, got {n!r}") from None
    if n == 0:
        return fnp.broadcast_to(fnp.eye(shape[-1], dtype=aval_of(a).dtype), shape)
    if n < 0:
        a, n = inv(a), -n
    result, z = None, None
    while n > 0:
        z = a if z is None else fnp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else fnp.matmul(result, z)
    return result


def operator_index(n) -> int:
    return operator.index(n)


def _chain_order(dims):
    """The optimal parenthesisation of a matrix chain with these dimensions
    (matrix i is dims[i] x dims[i+1]): split[i][j] for the product i..j."""
    k = len(dims) - 1
    cost = [[0] * k for _ in range(k)]
    split = [[0] * k for _ in range(k)]
    for length in range(1, k):
        for i in range(k - length):
            j = i + length
            cost[i][j] = math.inf
            for s in range(i, j):
                c = cost[i][s] + cost[s + 1][j] + dims[i] * dims[s + 1] * dims[j + 1]
                if c < cost[i][j]:
                    cost[i][j], split[i][j] = c, s
    return split


def multi_dot(arrays: Sequence, *, precision=None):
    """The product of a chain of matrices in the cheapest order, as
    numpy.linalg.multi_dot (the first and last may be vectors). `precision` is
    accepted for JAX compatibility; funcad's products are always exact float.

    >>> import numpy as np
    >>> multi_dot([np.ones(2), np.eye(2), np.ones(2)]).tolist()
    2.0
    """
    arrays = [asarray_or_tracer(x) for x in arrays]
    if len(arrays) < 2:
        raise FuncadValueError("multi_dot: expected at least two arrays")
    if len(arrays) == 2:
        return fnp.dot(arrays[0], arrays[1])
    first_vec = aval_of(arrays[0]).ndim == 1
    last_vec = aval_of(arrays[-1]).ndim == 1
    if first_vec:
        arrays[0] = arrays[0][None, :]
    if last_vec:
        arrays[-1] = arrays[-1][:, None]
    for i, x in enumerate(arrays):
        if aval_of(x).ndim != 2:
            raise FuncadValueError(f"multi_dot: array {i} has {aval_of(x).ndim} dimensions; all but "
                                   "the first and last must be 2-D (those may be 1-D)")
    dims = [aval_of(arrays[0]).shape[0]] + [aval_of(x).shape[1] for x in arrays]
    split = _chain_order(dims)

    def product(i, j):
        if i == j:
            return arrays[i]
        s = split[i][j]
        return fnp.dot(product(i, s), product(s + 1, j))

    out = product(0, len(arrays) - 1)
    if first_vec and last_vec:
        return out[0, 0]
    if first_vec:
        return out[0]
    if last_vec:
        return out[:, 0]
    return out


def tensorsolve(a, b, axes=None):
    """x with tensordot(a, x, x.ndim) = b, as numpy.linalg.tensorsolve.

    >>> import numpy as np
    >>> tensorsolve(np.eye(4).reshape(2, 2, 2, 2), np.ones((2, 2))).shape
    (2, 2)
    """
    a, b = asarray_or_tracer(a), asarray_or_tracer(b)
    an = aval_of(a).ndim
    if axes is not None:
        order = [k for k in range(an) if k not in [k % an for k in axes]] + [k % an for k in axes]
        a = fnp.transpose(a, order)
    shape_a, bn = aval_of(a).shape, aval_of(b).ndim
    x_shape = tuple(shape_a[bn:])
    size = int(np.prod(x_shape, dtype=np.int64))
    if int(np.prod(shape_a[:bn], dtype=np.int64)) != size:
        raise FuncadValueError(f"tensorsolve: a of shape {tuple(shape_a)} does not fit b of shape "
                               f"{tuple(aval_of(b).shape)}: prod(a.shape[b.ndim:]) must equal "
                               "prod(a.shape[:b.ndim])")
    x = solve(fnp.reshape(a, (size, size)), fnp.reshape(b, (size,)))
    return fnp.reshape(x, x_shape)


def tensorinv(a, ind: int = 2):
    """The inverse of a under tensordot over its first `ind` axes, as
    numpy.linalg.tensorinv.

    >>> import numpy as np
    >>> tensorinv(np.eye(4).reshape(4, 2, 2), ind=1).shape
    (2, 2, 4)
    """
    a = asarray_or_tracer(a)
    ind = operator_index(ind)
    if ind <= 0:
        raise FuncadValueError(f"tensorinv: ind must be a positive integer, got {ind}")
    shape = aval_of(a).shape
    rows = int(np.prod(shape[:ind], dtype=np.int64))
    cols = int(np.prod(shape[ind:], dtype=np.int64))
    if rows != cols:
        raise FuncadValueError(f"tensorinv: a of shape {tuple(shape)} with ind={ind} is not square: "
                               f"prod(a.shape[:ind]) = {rows} but prod(a.shape[ind:]) = {cols}")
    return fnp.reshape(inv(fnp.reshape(a, (rows, cols))), tuple(shape[ind:]) + tuple(shape[:ind]))


def cross(x1, x2, /, *, axis: int = -1):
    """The cross product of 3-vectors along `axis`, as numpy.linalg.cross.

    >>> import numpy as np
    >>> cross(np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])).tolist()
    [0.0, 0.0, 1.0]
    """
    x1, x2 = asarray_or_tracer(x1), asarray_or_tracer(x2)
    s1, s2 = aval_of(x1).shape, aval_of(x2).shape
    if not s1 or not s2 or s1[axis] != 3 or s2[axis] != 3:
        raise FuncadValueError(f"cross: both inputs must be (arrays of) 3-vectors along axis {axis}, "
                               f"got shapes {tuple(s1)} and {tuple(s2)}")
    return fnp.cross(x1, x2, axis=axis)


def outer(x1, x2, /):
    """The outer product of two vectors, as numpy.linalg.outer (1-D inputs only).

    >>> import numpy as np
    >>> outer(np.array([1.0, 2.0]), np.array([3.0, 4.0])).tolist()
    [[3.0, 4.0], [6.0, 8.0]]
    """
    x1, x2 = asarray_or_tracer(x1), asarray_or_tracer(x2)
    if aval_of(x1).ndim != 1 or aval_of(x2).ndim != 1:
        raise FuncadValueError(f"outer: inputs must be one-dimensional, got shapes "
                               f"{tuple(aval_of(x1).shape)} and {tuple(aval_of(x2).shape)}")
    return fnp.outer(x1, x2)


def trace(x, /, *, offset: int = 0, dtype=None):
    """The sum of each matrix's diagonal (over the last two axes), as
    numpy.linalg.trace.

    >>> import numpy as np
    >>> float(trace(np.eye(3)))
    3.0
    """
    x = asarray_or_tracer(x)
    if aval_of(x).ndim < 2:
        raise FuncadValueError(f"trace: x must be at least 2-D, got shape {tuple(aval_of(x).shape)}")
    out = fnp.trace(x, offset=offset, axis1=-2, axis2=-1)
    return out if dtype is None else out.astype(dtype)


def diagonal(x, /, *, offset: int = 0):
    """The diagonal of each matrix (over the last two axes), as numpy.linalg.diagonal.

    >>> import numpy as np
    >>> diagonal(np.arange(4.0).reshape(2, 2)).tolist()
    [0.0, 3.0]
    """
    x = asarray_or_tracer(x)
    if aval_of(x).ndim < 2:
        raise FuncadValueError(f"diagonal: x must be at least 2-D, got shape {tuple(aval_of(x).shape)}")
    return fnp.diagonal(x, offset=offset, axis1=-2, axis2=-1)


def matrix_transpose(x, /):
    """Each matrix transposed (the last two axes swapped).

    >>> import numpy as np
    >>> matrix_transpose(np.arange(6).reshape(2, 3)).shape
    (3, 2)
    """
    x = asarray_or_tracer(x)
    if aval_of(x).ndim < 2:
        raise FuncadValueError(f"matrix_transpose: x must be at least 2-D, got shape "
                               f"{tuple(aval_of(x).shape)}")
    return fnp.swapaxes(x, -1, -2)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """The dot product of vectors along `axis` (conjugating x1), broadcasting the rest.

    >>> import numpy as np
    >>> float(vecdot(np.array([1.0, 2.0]), np.array([3.0, 4.0])))
    11.0
    """
    return fnp.vecdot(x1, x2, axis=axis, precision=precision,
                         preferred_element_type=preferred_element_type)

