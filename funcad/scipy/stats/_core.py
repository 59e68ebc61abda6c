"""mode, rankdata and sem: summary statistics of samples, as JAX's scipy.stats."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ... import lax
from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import FuncadValueError
from ...arrays.dtypes import asarray_or_tracer
from ._common import promote_inexact

__all__ = ["ModeResult", "mode", "rankdata", "sem"]


class ModeResult(NamedTuple):
    mode: object
    count: object


def _check_nan_policy(who, nan_policy, allowed):
    if nan_policy not in ("propagate", "omit", "raise"):
        raise FuncadValueError(f"Illegal nan_policy value {nan_policy!r}; expected one of "
                               "{'propagate', 'omit', 'raise'}")
    if nan_policy not in allowed:
        raise FuncadValueError(f"{who}: nan_policy={nan_policy!r} is not offered (as in JAX): under jit "
                               f"whether x has NaNs is unknown; use nan_policy='propagate' and check "
                               "for NaNs outside")


def _run_bounds(s):
    """For s sorted along axis 0: the first and last index of each element's run of equal values."""
    n = s.shape[0]
    idx = lax.broadcasted_iota(np.int64, s.shape, 0)
    new = fnp.concatenate([fnp.ones_like(s[:1], dtype=bool), s[1:] != s[:-1]], axis=0)
    last = fnp.concatenate([s[1:] != s[:-1], fnp.ones_like(s[:1], dtype=bool)], axis=0)
    start = lax.cummax(fnp.where(new, idx, 0), axis=0)
    end = lax.cummin(fnp.where(last, idx, n - 1), axis=0, reverse=True)
    return start, end


def mode(a, axis: int | None = 0, nan_policy: str = "propagate", keepdims: bool = False) -> ModeResult:
    """The most common value along `axis` (the smallest of equally common ones) and its count.

    >>> import numpy as np
    >>> from funcad.scipy.stats import mode
    >>> m, c = mode(np.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))
    >>> int(m), int(c)
    (4, 3)
    """
    _check_nan_policy("mode", nan_policy, ("propagate",))
    x = fnp.atleast_1d(asarray_or_tracer(a))
    shape = x.shape
    if axis is None:
        out_shape = (1,) * len(shape) if keepdims else ()
        x = fnp.reshape(x, (-1, 1))
    else:
        axis = axis + x.ndim if axis < 0 else axis
        if not 0 <= axis < x.ndim:
            raise FuncadValueError(f"mode: axis {axis} is out of bounds for an array of {x.ndim} dimensions")
        out_shape = tuple(1 if i == axis else n for i, n in enumerate(shape)) if keepdims else \
            tuple(n for i, n in enumerate(shape) if i != axis)
        x = fnp.moveaxis(x, axis, 0)
        x = fnp.reshape(x, (x.shape[0], -1))
    if x.shape[0] == 0:
        nan = fnp.full(x.shape[1:], np.nan)
        return ModeResult(fnp.reshape(nan, out_shape), fnp.reshape(fnp.zeros_like(nan), out_shape))
    s = fnp.sort(x, axis=0)
    start, end = _run_bounds(s)
    count = end - start + 1
    best = fnp.argmax(count, axis=0)
    pick = lambda v: fnp.take_along_axis(v, best[None], axis=0)[0]  # noqa: E731
    return ModeResult(fnp.reshape(pick(s), out_shape), fnp.reshape(pick(count), out_shape))


def rankdata(a, method: str = "average", *, axis: int | None = None, nan_policy: str = "propagate"):
    """Ranks of the data, from 1; ties by `method` ("average", "min", "max", "dense",
    "ordinal"); flattened unless `axis` is given; all NaN where a slice holds a NaN.

    >>> import numpy as np
    >>> from funcad.scipy.stats import rankdata
    >>> rankdata(np.array([1, 3, 2, 3])).tolist()
    [1.0, 3.5, 2.0, 3.5]
    """
    _check_nan_policy("rankdata", nan_policy, ("propagate",))
    if method not in ("average", "min", "max", "dense", "ordinal"):
        raise FuncadValueError(f"unknown method '{method}'")
    x = asarray_or_tracer(a)
    if axis is None:
        x, axis = fnp.ravel(x), 0
    else:
        axis = axis + x.ndim if axis < 0 else axis
        if not 0 <= axis < x.ndim:
            raise FuncadValueError(f"rankdata: axis {axis} is out of bounds for an array of {x.ndim} "
                                   "dimensions")
    x = fnp.moveaxis(x, axis, 0)
    order = fnp.argsort(x, axis=0)
    inverse = fnp.argsort(order, axis=0)
    s = fnp.take_along_axis(x, order, axis=0)
    if method == "ordinal":
        ranks = inverse + 1
    elif method == "dense":
        new = fnp.concatenate([fnp.ones_like(s[:1], dtype=bool), s[1:] != s[:-1]], axis=0)
        ranks = fnp.take_along_axis(fnp.cumsum(new, axis=0), inverse, axis=0)
    else:
        start, end = _run_bounds(s)
        low, high = (fnp.take_along_axis(v, inverse, axis=0) for v in (start, end))
        ranks = {"min": low + 1, "max": high + 1}.get(method)
        if ranks is None:
            ranks = 0.5 * (fnp.asarray(low + high, np.float64) + 2.0)
    ranks = fnp.asarray(ranks, np.float64)
    if aval_of(x).dtype.kind in "fc":
        ranks = fnp.where(fnp.any(fnp.isnan(x), axis=0, keepdims=True), np.nan, ranks)
    return fnp.moveaxis(ranks, 0, axis)


def sem(a, axis: int | None = 0, ddof: int = 1, nan_policy: str = "propagate", *, keepdims: bool = False):
    """The standard error of the mean, std(a, ddof) / sqrt(n) along `axis` (all axes for
    None); nan_policy "omit" leaves NaNs out of both.

    >>> import numpy as np
    >>> from funcad.scipy.stats import sem
    >>> round(float(sem(np.array([2, 4, 1, 1, 3, 4, 4, 2, 3]))), 4)
    0.4082
    """
    b, = promote_inexact("sem", a)
    b = fnp.asarray(b)
    if nan_policy == "propagate":
        size = b.size if axis is None else b.shape[axis]
        return fnp.std(b, axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(fnp.asarray(size, b.dtype))
    if nan_policy == "omit":
        count = fnp.sum(~fnp.isnan(b), axis, keepdims=keepdims)
        return fnp.nanstd(b, axis, ddof=ddof, keepdims=keepdims) / fnp.sqrt(count).astype(b.dtype)
    raise FuncadValueError(f"sem: nan_policy={nan_policy!r} is not supported; use 'propagate' or 'omit'")
