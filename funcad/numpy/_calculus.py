"""Differences, integrals, interpolation and products of sequences: diff, ediff1d,
gradient, trapezoid, interp, unwrap, convolve, correlate, kron, cross, vecdot,
matvec, vecmat."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ..arrays.dtypes import asarray_or_tracer, cast, promote, to_inexact
from ..arrays.indexing import getitem
from ..arrays.shape import (broadcast_arrays, broadcast_to, concatenate, moveaxis, ravel, reshape, shape,
    stack)
from ..arrays.ufuncs import (absolute, add, divide, equal, less, less_equal, greater, logical_and, multiply,
                      remainder, subtract, where)
from ..arrays.reductions import cumsum, sum as _sum
from ..arrays.setops import searchsorted
from ..arrays.ufuncs import clip
from ..lax._conv import conv_general_dilated
from ..arrays.linalg import matmul
from ..arrays.shape import argsort
from ..arrays.complex import conj
from ..transforms.eager_xla import jitted_like_jax

__all__ = ["diff", "ediff1d", "gradient", "trapezoid", "interp", "unwrap", "convolve", "correlate",
           "kron", "cross", "vecdot", "matvec", "vecmat"]


def _axis_slice(a, axis, lo, hi):
    sh = shape(a)
    start = [0] * len(sh)
    stop = list(sh)
    start[axis], stop[axis] = lo, hi
    return S.slice(a, start, stop)


def diff(a, n: int = 1, axis: int = -1, prepend=None, append=None):
    """The n-th discrete difference along axis.

    >>> import funcad.numpy as fnp
    >>> fnp.diff(fnp.array([1, 4, 9, 16]))
    Array([3, 5, 7], dtype=int64)
    """
    a = asarray_or_tracer(a)
    nd = len(shape(a))
    if nd == 0:
        raise FuncadValueError("diff requires input that is at least one dimensional")
    axis = canonical_axis(axis, nd, "diff", a)
    n = int(n)
    if n < 0:
        raise FuncadValueError(f"diff: order must be non-negative, got n={n}")
    parts = []
    for extra in (prepend, append):
        if extra is None:
            parts.append(None)
            continue
        a, e = promote(a, extra)  # a Python scalar stays weak, as in JAX
        if len(shape(e)) == 0:
            sh = list(shape(a))
            sh[axis] = 1
            e = broadcast_to(e, tuple(sh))
        parts.append(e)
    if parts[0] is not None or parts[1] is not None:
        a = concatenate([p for p in (parts[0], a, parts[1]) if p is not None], axis)
    boolean = aval_of(a).dtype == np.bool_
    for _ in range(n):
        m = shape(a)[axis]
        if m == 0:
            break
        hi, lo = _axis_slice(a, axis, 1, m), _axis_slice(a, axis, 0, m - 1)
        a = E.ne(hi, lo) if boolean else subtract(hi, lo)
    return a


def ediff1d(ary, to_end=None, to_begin=None):
    """Differences of consecutive entries of ravel(ary), with optional ends."""
    a = ravel(asarray_or_tracer(ary))
    n = shape(a)[0]
    d = subtract(S.slice(a, (1,), (n,)), S.slice(a, (0,), (n - 1,))) if n else a
    parts = []
    if to_begin is not None:
        parts.append(cast(ravel(asarray_or_tracer(to_begin)), aval_of(d).dtype))
    parts.append(d)
    if to_end is not None:
        parts.append(cast(ravel(asarray_or_tracer(to_end)), aval_of(d).dtype))
    return concatenate(parts) if len(parts) > 1 else d


def gradient(f, *varargs, axis=None, edge_order: int | None = None):
    """Second-order central differences inside, first-order one-sided at the edges
    (as numpy.gradient with edge_order=1); spacing is a scalar or a coordinate array
    per axis."""
    f = to_inexact(asarray_or_tracer(f), np.true_divide)
    nd = len(shape(f))
    if edge_order is not None and edge_order != 1:
        raise FuncadValueError("gradient: only edge_order=1 is supported (as in JAX)")
    axes = tuple(range(nd)) if axis is None else tuple(
        canonical_axis(ax, nd, "gradient", f) for ax in ((axis,) if np.ndim(axis) == 0 else axis))
    if len(varargs) == 0:
        spacing = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacing = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacing = list(varargs)
    else:
        raise FuncadValueError(f"gradient: got {len(varargs)} spacings for {len(axes)} axes")
    out = []
    for ax, h in zip(axes, spacing):
        n = shape(f)[ax]
        if n < 2:
            raise FuncadValueError("gradient: each differentiated axis needs at least 2 points")
        h2 = 2.0 * h if isinstance(h, (int, float)) else multiply(h, 2.0)  # Python spacing stays weak
        h = h if isinstance(h, (int, float)) else asarray_or_tracer(h)
        if np.ndim(h) == 0 if isinstance(h, (int, float)) else len(shape(h)) == 0:
            inner = divide(subtract(_axis_slice(f, ax, 2, n), _axis_slice(f, ax, 0, n - 2)), h2)
            first = divide(subtract(_axis_slice(f, ax, 1, 2), _axis_slice(f, ax, 0, 1)), h)
            last = divide(subtract(_axis_slice(f, ax, n - 1, n), _axis_slice(f, ax, n - 2, n - 1)), h)
            parts = [first, inner, last] if n > 2 else [first, last]
        else:
            if shape(h) != (n,):
                raise FuncadValueError(f"gradient: coordinates for axis {ax} must have length {n}")
            dx = cast(subtract(S.slice(h, (1,), (n,)), S.slice(h, (0,), (n - 1,))), aval_of(f).dtype)
            bshape = [1] * nd
            bshape[ax] = n - 1
            dx = reshape(dx, tuple(bshape))
            d1, d2 = _axis_slice(dx, ax, 0, n - 2), _axis_slice(dx, ax, 1, n - 1)
            y0, y1, y2 = _axis_slice(f, ax, 0, n - 2), _axis_slice(f, ax, 1, n - 1), _axis_slice(f, ax, 2, n)
            # Non-uniform second-order central difference.
            inner = divide(add(subtract(multiply(multiply(d1, d1), y2), multiply(multiply(d2, d2), y0)),
                               multiply(subtract(multiply(d2, d2), multiply(d1, d1)), y1)),
                           multiply(multiply(d1, d2), add(d1, d2)))
            first = divide(subtract(_axis_slice(f, ax, 1, 2), _axis_slice(f, ax, 0, 1)), _axis_slice(dx, ax, 0, 1))
            last = divide(subtract(_axis_slice(f, ax, n - 1, n), _axis_slice(f, ax, n - 2, n - 1)),
                          _axis_slice(dx, ax, n - 2, n - 1))
            parts = [first, inner, last] if n > 2 else [first, last]
        out.append(concatenate(promote(*parts), ax))
    return out[0] if len(out) == 1 else out


@jitted_like_jax(static_argnames=('axis',))
def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of y along axis by the trapezoidal rule."""
    y = to_inexact(asarray_or_tracer(y), np.true_divide)
    ax = canonical_axis(axis, len(shape(y)), "trapezoid", y)
    n = shape(y)[ax]
    y = moveaxis(y, ax, -1)
    if x is None:
        d = dx
    else:
        x = to_inexact(asarray_or_tracer(x), np.true_divide)
        if len(shape(x)) == 1:
            d = subtract(S.slice(x, (1,), (shape(x)[0],)), S.slice(x, (0,), (shape(x)[0] - 1,)))
        else:
            x = moveaxis(x, ax, -1)
            d = subtract(_axis_slice(x, len(shape(x)) - 1, 1, shape(x)[-1]),
                         _axis_slice(x, len(shape(x)) - 1, 0, shape(x)[-1] - 1))
    k = len(shape(y)) - 1
    mid = multiply(add(_axis_slice(y, k, 1, n), _axis_slice(y, k, 0, max(n - 1, 0))), 0.5)
    return _sum(multiply(d, mid), -1)


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x (xp increasing).

    >>> import funcad.numpy as fnp
    >>> fnp.interp(fnp.array([0.5, 1.5]), fnp.array([0.0, 1.0, 2.0]), fnp.array([0.0, 10.0, 0.0]))
    Array([5., 5.], dtype=float64)
    """
    x, xp, fp = promote(to_inexact(x, np.true_divide), to_inexact(xp, np.true_divide),
                        to_inexact(fp, np.true_divide))
    if len(shape(xp)) != 1 or len(shape(fp)) != 1 or shape(xp) != shape(fp):
        raise FuncadValueError(f"interp: xp and fp must be 1-d of the same length, got "
                               f"{aval_of(xp).str_short()} and {aval_of(fp).str_short()}")
    if shape(xp)[0] == 0:
        raise FuncadValueError("interp: xp and fp must not be empty")
    if period is not None:
        if left is not None or right is not None:
            raise FuncadValueError("interp: left/right are ignored with period; leave them None")
        period = absolute(asarray_or_tracer(period))
        x = remainder(x, period)
        xp = remainder(xp, period)
        order = argsort(xp)
        xp, fp = getitem(xp, order), getitem(fp, order)
        xp = concatenate([subtract(getitem(xp, slice(-1, None)), period), xp,
                          add(getitem(xp, slice(0, 1)), period)])
        fp = concatenate([getitem(fp, slice(-1, None)), fp, getitem(fp, slice(0, 1))])
    n = shape(xp)[0]
    if n == 1:
        out = broadcast_to(getitem(fp, 0), shape(x))
    else:
        i = clip(searchsorted(xp, x, side="right"), 1, n - 1)
        x0, x1 = getitem(xp, i - 1), getitem(xp, i)
        f0, f1 = getitem(fp, i - 1), getitem(fp, i)
        dx = subtract(x1, x0)
        eps = np.spacing(np.finfo(aval_of(xp).dtype).eps)
        tiny = less_equal(absolute(dx), eps)  # repeated xp: no 0/0 (nor NaN gradients)
        out = where(tiny, f0, add(f0, multiply(divide(subtract(x, x0), where(tiny, 1.0, dx)), subtract(f1, f0))))
    if period is None:
        lo = getitem(fp, 0) if left is None else left
        hi = getitem(fp, -1) if right is None else right
        out = where(less(x, getitem(xp, 0)), lo, out)
        out = where(greater(x, getitem(xp, -1)), hi, out)
    return out


def unwrap(p, discont=None, axis: int = -1, period=2 * np.pi):
    """p with jumps larger than discont (default period/2) corrected by multiples of period."""
    p = to_inexact(asarray_or_tracer(p), np.true_divide)
    ax = canonical_axis(axis, len(shape(p)), "unwrap", p)
    n = shape(p)[ax]
    if n < 2:
        return p
    half = divide(period, 2)
    discont = half if discont is None else E.max(*promote(asarray_or_tracer(discont), half))
    dd = diff(p, axis=ax)
    ddmod = subtract(remainder(add(dd, half), period), half)
    # The boundary case: a jump of exactly +period/2 keeps its sign.
    ddmod = where(logical_and(equal(ddmod, subtract(0.0, half)), greater(dd, 0)), half, ddmod)
    corr = subtract(ddmod, dd)
    corr = where(less(absolute(dd), discont), 0.0, corr)
    c = cumsum(corr, ax)
    zeros_shape = list(shape(p))
    zeros_shape[ax] = 1
    return add(p, concatenate([np.zeros(zeros_shape, aval_of(c).dtype), c], ax))


def _conv(a, v, mode, op, precision, preferred_element_type):
    """numpy.convolve/correlate as one 1-d conv_general_dilated (the shorter input is the kernel)."""
    a, v = promote(a, v)  # integers stay integers (exact), as in NumPy
    if len(shape(a)) != 1 or len(shape(v)) != 1:
        raise FuncadValueError(f"{op}: a and v must be 1-d, got shapes {shape(a)} and {shape(v)}")
    na, nv = shape(a)[0], shape(v)[0]
    if na == 0 or nv == 0:
        raise FuncadValueError(f"{op}: inputs cannot be empty, got shapes {shape(a)} and {shape(v)}")
    if mode not in ("full", "same", "valid"):
        raise FuncadValueError(f"{op}: mode must be 'full', 'same' or 'valid', got {mode!r}")
    reverse = False
    if op == "correlate":
        v = conj(v)
    if nv > na:  # as NumPy: the longer input slides; correlate then reads backwards
        a, v, na, nv = v, a, nv, na
        reverse = op == "correlate"
    if op == "convolve":
        v = S.rev(v, (0,))
    pad = {"valid": (0, 0), "same": (nv // 2, nv - nv // 2 - 1), "full": (nv - 1, nv - 1)}[mode]
    out = conv_general_dilated(reshape(a, (1, 1, na)), reshape(v, (1, 1, nv)), (1,), [pad],
                               precision=precision, preferred_element_type=preferred_element_type)
    out = reshape(out, (shape(out)[2],))
    return S.rev(out, (0,)) if reverse else out


def convolve(a, v, mode: str = "full", *, precision=None, preferred_element_type=None):
    """The discrete linear convolution of 1-d a and v (as numpy.convolve).

    >>> import funcad.numpy as fnp
    >>> fnp.convolve(fnp.array([1.0, 2.0, 3.0]), fnp.array([0.0, 1.0, 0.5]))
    Array([0. , 1. , 2.5, 4. , 1.5], dtype=float64)
    """
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


def correlate(a, v, mode: str = "valid", *, precision=None, preferred_element_type=None):
    """The cross-correlation of 1-d a and v (as numpy.correlate).

    >>> import funcad.numpy as fnp
    >>> fnp.correlate(fnp.array([1.0, 2.0, 3.0]), fnp.array([0.0, 1.0, 0.5]))
    Array([3.5], dtype=float64)
    """
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)


def kron(a, b):
    """The Kronecker product."""
    a, b = promote(a, b)
    na, nb = len(shape(a)), len(shape(b))
    nd = max(na, nb)
    a = reshape(a, (1,) * (nd - na) + shape(a))
    b = reshape(b, (1,) * (nd - nb) + shape(b))
    a2 = reshape(a, tuple(x for s in shape(a) for x in (s, 1)))
    b2 = reshape(b, tuple(x for s in shape(b) for x in (1, s)))
    return reshape(multiply(a2, b2), tuple(x * y for x, y in zip(shape(a), shape(b))))


def cross(a, b, axisa: int = -1, axisb: int = -1, axisc: int = -1, axis: int | None = None):
    """The cross product of 3-vectors along the given axes."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = promote(a, b)
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if shape(a)[-1] != 3 or shape(b)[-1] != 3:
        raise FuncadValueError("cross: both vectors must have 3 components (as in JAX; for 2-vectors "
                               "append a zero component)")

    def comp(x, i):
        return getitem(x, (Ellipsis, i))
    a0, a1, a2 = comp(a, 0), comp(a, 1), comp(a, 2)
    b0, b1, b2 = comp(b, 0), comp(b, 1), comp(b, 2)
    c = broadcast_arrays(subtract(multiply(a1, b2), multiply(a2, b1)),
                         subtract(multiply(a2, b0), multiply(a0, b2)),
                         subtract(multiply(a0, b1), multiply(a1, b0)))
    out = stack(c, -1)
    return moveaxis(out, -1, axisc)


def vecdot(x1, x2, /, *, axis: int = -1, precision=None, preferred_element_type=None):
    """Sum of conj(x1) * x2 along axis (with broadcasting)."""
    x1, x2 = promote(conj(x1), x2)
    if shape(x1)[axis] != shape(x2)[axis]:
        raise FuncadValueError(f"vecdot: axis {axis} has sizes {shape(x1)[axis]} and {shape(x2)[axis]}")
    out = _sum(multiply(moveaxis(x1, axis, -1), moveaxis(x2, axis, -1)), -1)
    return out if preferred_element_type is None else cast(out, np.dtype(preferred_element_type))


def matvec(x1, x2, /):
    """Matrix-vector products with batch broadcasting: x1 (..., m, n), x2 (..., n)."""
    x1, x2 = promote(x1, x2)
    out = matmul(x1, S.expand_dims(x2, (len(shape(x2)),)))
    return S.squeeze(out, (len(shape(out)) - 1,))


def vecmat(x1, x2, /):
    """Vector-matrix products conj(x1) @ x2 with batch broadcasting: x1 (..., m), x2 (..., m, n)."""
    x1, x2 = promote(conj(x1), x2)
    out = matmul(S.expand_dims(x1, (len(shape(x1)) - 1,)), x2)
    return S.squeeze(out, (len(shape(out)) - 2,))
