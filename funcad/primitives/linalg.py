"""dot_general: batched tensor contraction, the one matrix-product primitive."""
from __future__ import annotations

import numpy as np

from ..core.avals import ShapedArray
from ..core.trace import transpose_rules
from ._base import defjvp, is_undefined, new_primitive, shape_of, type_error
from .structural import transpose


def _free(nd, contract, batch):
    return [i for i in range(nd) if i not in contract and i not in batch]


def _dot_aval(x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    ok = (x.dtype == y.dtype and len(xc) == len(yc) and len(xb) == len(yb)
          and all(0 <= i < x.ndim for i in xc + xb) and all(0 <= i < y.ndim for i in yc + yb)
          and all(x.shape[i] == y.shape[j] for i, j in zip(xc + xb, yc + yb)))
    if not ok:
        raise type_error("dot_general", f"dimension_numbers {dimension_numbers} do not fit: "
                         "contracted and batch dimensions must match in size and dtypes must agree", x, y)
    shape = ([x.shape[i] for i in xb] + [x.shape[i] for i in _free(x.ndim, xc, xb)]
             + [y.shape[i] for i in _free(y.ndim, yc, yb)])
    return ShapedArray(shape, x.dtype, x.weak_type and y.weak_type)


def _dot_impl(x, y, *, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    x, y = np.asarray(x), np.asarray(y)
    if not xb and len(xc) == 1 and x.ndim <= 2 and y.ndim <= 2 and xc[0] == x.ndim - 1 and yc[0] == 0:
        return np.dot(x, y)  # the common matrix case: BLAS directly
    xf, yf = _free(x.ndim, xc, xb), _free(y.ndim, yc, yb)
    b = [x.shape[i] for i in xb]
    m = [x.shape[i] for i in xf]
    n = [y.shape[i] for i in yf]
    k = int(np.prod([x.shape[i] for i in xc], dtype=np.int64))
    xt = np.transpose(x, list(xb) + xf + list(xc)).reshape(b + [int(np.prod(m, dtype=np.int64)), k])
    yt = np.transpose(y, list(yb) + list(yc) + yf).reshape(b + [k, int(np.prod(n, dtype=np.int64))])
    return np.matmul(xt, yt).reshape(b + m + n)


dot_general_p = new_primitive("dot_general", _dot_impl, _dot_aval)


def dot_general(x, y, dimension_numbers):
    (xc, yc), (xb, yb) = dimension_numbers
    dn = ((tuple(map(int, xc)), tuple(map(int, yc))), (tuple(map(int, xb)), tuple(map(int, yb))))
    return dot_general_p.bind(x, y, dimension_numbers=dn)


defjvp(dot_general_p,
       lambda t, ans, x, y, *, dimension_numbers: dot_general(t, y, dimension_numbers),
       lambda t, ans, x, y, *, dimension_numbers: dot_general(x, t, dimension_numbers))


def _transpose_operand(ct, other, dims, nd, other_nd, ct_first):
    """Cotangent of one operand of dot_general; `ct_first` says it is the lhs."""
    (xc, yc), (xb, yb) = dims
    if not ct_first:  # view the rhs as the lhs of the swapped product
        xc, yc, xb, yb = yc, xc, yb, xb
    x_free = _free(nd, xc, xb)
    y_free = _free(other_nd, yc, yb)
    nb = len(xb)
    if ct_first:
        ct_yfree = list(range(nb + len(x_free), nb + len(x_free) + len(y_free)))
    else:
        ct_yfree = list(range(nb, nb + len(y_free)))
    res = dot_general(ct, other, ((ct_yfree, y_free), (list(range(nb)), list(yb))))
    layout = list(xb) + x_free + [xc[list(yc).index(j)] for j in sorted(yc)]
    perm = [layout.index(k) for k in range(nd)]
    return res if perm == list(range(nd)) else transpose(res, perm)


def _dot_transpose(ct, x, y, *, dimension_numbers):
    cx = cy = None
    if is_undefined(x):
        cx = _transpose_operand(ct, y, dimension_numbers, len(shape_of(x)), len(shape_of(y)), True)
    if is_undefined(y):
        cy = _transpose_operand(ct, x, dimension_numbers, len(shape_of(y)), len(shape_of(x)), False)
    return [cx, cy]


transpose_rules[dot_general_p] = _dot_transpose
