"""Statistics: quantiles and medians, NaN-skipping reductions, average, cov/corrcoef,
histograms, bincount, digitize, ptp, count_nonzero, cumulative_sum/prod."""
from __future__ import annotations

import builtins

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from .placement import place
from .dtypes import asarray_or_tracer, cast, no_out, promote, to_inexact
from .indexing import getitem, take_along_axis
from .reductions import (_norm_axes, argmax as _argmax, argmin as _argmin, cumprod as _cumprod,
                          cumsum as _cumsum, max as _max, mean as _mean, min as _min, prod as _prod,
                          sum as _sum)
from .shape import atleast_2d, concatenate, ravel, reshape, shape, sort, squeeze, stack, transpose
from .ufuncs import (_as_bool, add, ceil, divide, floor, isnan, less_equal, logical_not, multiply,
                      sqrt, subtract, where)
from .reductions import all as _all, any as _any
from .linalg import dot
from .ufuncs import clip
from .setops import searchsorted
from .creation import linspace
from .reductions import mean as _m
from .shape import _ax
from .shape import broadcast_to
from .setops import concrete_or_raise
from ..transforms.eager_xla import jitted_like_jax

_select = where

__all__ = ["quantile", "percentile", "median", "nanquantile", "nanpercentile", "nanmedian",
           "nansum", "nanprod", "nanmax", "nanmin", "nanargmax", "nanargmin", "nanmean", "nanvar",
           "nanstd", "nancumsum", "nancumprod", "average", "cov", "corrcoef", "histogram",
           "histogram_bin_edges", "histogram2d", "histogramdd", "bincount", "digitize", "ptp",
           "count_nonzero", "cumulative_sum", "cumulative_prod", "minmax"]

_INT = np.dtype(np.int64)
_METHODS = ("linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf")


def _inexact(x):
    return to_inexact(asarray_or_tracer(x), np.true_divide)


def _fold_axes(a, axis):
    """a with the reduced axes moved last and merged into one; the keepdims shape."""
    sh = shape(a)
    axes = _norm_axes(len(sh), axis)
    keep = [d for d in range(len(sh)) if d not in axes]
    a = transpose(a, keep + list(axes))
    kept_shape = tuple(sh[d] for d in keep)
    a = reshape(a, kept_shape + (int(np.prod([sh[d] for d in axes], dtype=np.int64)),))
    return a, tuple(1 if d in axes else n for d, n in enumerate(sh))


def _percent(q):
    return q / 100.0 if isinstance(q, (int, float)) else divide(q, 100.0)


def _quantile(a, q, axis, method, keepdims, nan_skip, weights, fn):
    if method not in _METHODS:
        raise FuncadValueError(f"{fn}: method must be one of {', '.join(map(repr, _METHODS))}, got {method!r}")
    if weights is not None and method != "inverted_cdf":
        raise FuncadValueError(f"{fn}: method {method!r} does not support weights; only 'inverted_cdf' does")
    a = _inexact(a)
    q = asarray_or_tracer(q)
    if len(shape(q)) > 1:
        raise FuncadValueError(f"{fn}: q must have rank <= 1, got {aval_of(q).str_short()}")
    a, q = promote(a, q)
    a, q = _inexact(a), _inexact(q)
    if weights is not None:
        w = cast(asarray_or_tracer(weights), aval_of(a).dtype)
        if shape(w) != shape(a):
            if axis is None:
                raise FuncadValueError(f"{fn}: weights shape must match a's shape when axis is None")
            axes = _norm_axes(len(shape(a)), axis)
            if shape(w) != tuple(shape(a)[d] for d in axes):
                raise FuncadValueError(f"{fn}: weights shape {shape(w)} must match the reduced axes")
            w = S.broadcast_in_dim(w, shape(a), axes)
        w, _ = _fold_axes(w, axis)
    a, keep_shape = _fold_axes(a, axis)
    dt = aval_of(a).dtype
    n = shape(a)[-1]
    lead = shape(a)[:-1]
    qn = len(shape(q))
    nan = np.array(np.nan, dt)
    if nan_skip and n == 0:
        out_shape = keep_shape if keepdims else lead
        return np.full(out_shape, np.nan, dt)
    if not nan_skip:
        a = where(_any_last(isnan(a)), nan, a)
    if weights is not None:
        a, w = I.sort([a, w], len(lead), num_keys=1)
    else:
        a = sort(a, -1)
    isn = isnan(a)
    counts = _sum(cast(logical_not(isn), dt), -1) if nan_skip else np.full(lead, n, dt)
    # Positions: leading q axis (if any), then the kept axes.
    qb = reshape(q, shape(q) + (1,) * len(lead))
    if method == "inverted_cdf":
        wt = np.ones(shape(a), dt) if weights is None else w
        zero = np.zeros((), dt)
        bad = E.bitwise_or(E.bitwise_or(E.lt(wt, zero), isnan(wt)), isn)
        cw = _cumsum(E.select_n(bad, wt, zero) if isinstance(bad, Tracer) or np.any(bad) else wt, -1)
        total = S.slice(cw, (0,) * len(shape(cw)), lead + (0,)) if n == 0 else \
            S.reshape(S.slice(cw, (0,) * len(lead) + (n - 1,), shape(cw)), lead)
        target = multiply(qb, total)
        less = E.lt(S.broadcast_in_dim(cw, shape(q) + shape(cw), tuple(range(qn, qn + len(shape(cw))))),
                    S.expand_dims(target, (qn + len(lead),)))
        idx = _sum(cast(less, _INT), -1)
        limit = cast(subtract(counts, 1), _INT)
        idx = E.max(np.zeros((), _INT), E.min(idx, S.broadcast_in_dim(limit, shape(idx), tuple(range(qn, qn + len(lead))))))
        low_val = _take_positions(a, idx, qn)
        out = low_val
    else:
        pos = multiply(qb, subtract(counts, 1))
        low, high = floor(pos), ceil(pos)
        hw = subtract(pos, low)
        lw = subtract(np.ones((), dt), hw)
        top = subtract(counts, 1)
        low = E.max(np.zeros((), dt), E.min(low, top))
        high = E.max(np.zeros((), dt), E.min(high, top))
        low_val = _take_positions(a, cast(low, _INT), qn)
        high_val = _take_positions(a, cast(high, _INT), qn)
        if method == "linear":
            out = add(multiply(low_val, lw), multiply(high_val, hw))
        elif method == "lower":
            out = low_val
        elif method == "higher":
            out = high_val
        elif method == "nearest":
            out = where(less_equal(hw, 0.5), low_val, high_val)
        else:
            out = multiply(add(low_val, high_val), 0.5)
    if keepdims:
        out = reshape(out, shape(q) + keep_shape)
    return out


def _any_last(m):
    return _any(m, -1, keepdims=True)


def _take_positions(a, idx, qn):
    """a[..., idx] where idx has a leading q axis (qn = 0 or 1) before a's kept axes."""
    if qn == 0:
        return S.squeeze(take_along_axis(a, S.expand_dims(idx, (len(shape(idx)),)), -1, mode="clip"), (len(shape(a)) - 1,))
    k = shape(idx)[0]
    am = S.broadcast_in_dim(a, (k,) + shape(a), tuple(range(1, len(shape(a)) + 1)))
    out = take_along_axis(am, S.expand_dims(idx, (len(shape(idx)),)), -1, mode="clip")
    return S.squeeze(out, (len(shape(am)) - 1,))


def quantile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
             keepdims: bool = False, *, weights=None):
    """The q-th quantiles of a along axis (q in [0, 1]), as numpy.quantile.

    >>> import funcad.numpy as fnp
    >>> float(fnp.quantile(fnp.array([1.0, 2.0, 3.0, 4.0]), 0.5))
    2.5
    """
    no_out(out, "quantile")
    return _quantile(a, q, axis, method, keepdims, False, weights, "quantile")


def nanquantile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
                keepdims: bool = False, *, weights=None):
    """quantile ignoring NaNs."""
    no_out(out, "nanquantile")
    return _quantile(a, q, axis, method, keepdims, True, weights, "nanquantile")


def percentile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
               keepdims: bool = False, *, weights=None, out_sharding=None):
    """The q-th percentiles (q in [0, 100])."""
    no_out(out, "percentile")
    out = _quantile(a, _percent(q), axis, method, keepdims, False, weights, "percentile")
    return out if out_sharding is None else place(out, out_sharding=out_sharding, name="percentile")


def nanpercentile(a, q, axis=None, out=None, overwrite_input: bool = False, method: str = "linear",
                  keepdims: bool = False, *, weights=None):
    no_out(out, "nanpercentile")
    return _quantile(a, _percent(q), axis, method, keepdims, True, weights, "nanpercentile")


def median(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    """The median along axis (NaN if a NaN is present)."""
    no_out(out, "median")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, False, None, "median")


def nanmedian(a, axis=None, out=None, overwrite_input: bool = False, keepdims: bool = False):
    no_out(out, "nanmedian")
    return _quantile(a, 0.5, axis, "midpoint", keepdims, True, None, "nanmedian")


# ----------------------------------------------------------- NaN reductions ----

def _nan_to(a, value):
    a = asarray_or_tracer(a)
    if aval_of(a).dtype.kind not in "fc":
        return a
    return where(isnan(a), np.array(value, aval_of(a).dtype), a)


def _where_arg(a, where_, value):
    return a if where_ is None else E.select_n(_as_bool(where_), np.array(value, aval_of(a).dtype), a) \
        if not isinstance(a, Tracer) and not isinstance(where_, Tracer) else where(where_, a, value)


def nansum(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None, where=None):
    """sum treating NaN as zero."""
    no_out(out, "nansum")
    a = _where_arg(_nan_to(a, 0), where, 0)
    s = _sum(a, axis, dtype, keepdims=keepdims)
    return s if initial is None else add(s, initial)


def nanprod(a, axis=None, dtype=None, out=None, keepdims: bool = False, initial=None, where=None):
    """prod treating NaN as one."""
    no_out(out, "nanprod")
    a = _where_arg(_nan_to(a, 1), where, 1)
    p = _prod(a, axis, dtype, keepdims=keepdims)
    return p if initial is None else multiply(p, initial)


def nanmax(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """max ignoring NaNs (NaN where all are NaN)."""
    no_out(out, "nanmax")
    return _nan_extreme(a, axis, keepdims, initial, where, _max, -np.inf)


def nanmin(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """min ignoring NaNs (NaN where all are NaN)."""
    no_out(out, "nanmin")
    return _nan_extreme(a, axis, keepdims, initial, where, _min, np.inf)


def _nan_extreme(a, axis, keepdims, initial, where_, red, neutral):
    a = asarray_or_tracer(a)
    if aval_of(a).dtype.kind not in "fc":
        if where_ is not None and initial is None:
            raise FuncadValueError("reduction with where= needs initial= for integer input")
        info = np.iinfo(aval_of(a).dtype) if aval_of(a).dtype.kind in "iu" else None
        fill = (info.min if neutral < 0 else info.max) if info else neutral < 0
        b = _where_arg(a, where_, fill)
        out = red(b, axis, keepdims=keepdims)
        if initial is not None:
            out = (E.max if neutral < 0 else E.min)(*promote(out, initial))
        return out
    nan_mask = isnan(a)
    if where_ is not None:
        nan_mask = E.bitwise_or(nan_mask, logical_not(_as_bool(where_)))
    b = where(nan_mask, np.array(neutral, aval_of(a).dtype), a)
    out = red(b, axis, keepdims=keepdims)
    all_nan = _all(nan_mask, axis, keepdims=keepdims)
    if initial is not None:
        out = (E.max if neutral < 0 else E.min)(*promote(out, initial))
        return out
    return where(all_nan, np.array(np.nan, aval_of(a).dtype), out)


def nanargmax(a, axis=None, out=None, keepdims=None):
    """argmax ignoring NaNs (-1 where all are NaN, as in JAX)."""
    no_out(out, "nanargmax")
    return _nan_arg(a, axis, keepdims, _argmax, -np.inf)


def nanargmin(a, axis=None, out=None, keepdims=None):
    no_out(out, "nanargmin")
    return _nan_arg(a, axis, keepdims, _argmin, np.inf)


def _nan_arg(a, axis, keepdims, arg, neutral):
    a = asarray_or_tracer(a)
    if aval_of(a).dtype.kind not in "fc":
        return arg(a, axis, keepdims=bool(keepdims))
    nan_mask = isnan(a)
    res = arg(where(nan_mask, np.array(neutral, aval_of(a).dtype), a), axis, keepdims=bool(keepdims))
    return where(_all(nan_mask, axis, keepdims=bool(keepdims)), np.int64(-1), res)


def _count_valid(a, axis, keepdims, where_):
    ok = logical_not(isnan(a))
    if where_ is not None:
        ok = E.bitwise_and(ok, _as_bool(where_))
    return ok


@jitted_like_jax(static_argnames=('axis', 'dtype', 'keepdims'))
def nanmean(a, axis=None, dtype=None, out=None, keepdims: bool = False, where=None):
    """mean ignoring NaNs (NaN where all are NaN)."""
    no_out(out, "nanmean")
    a = asarray_or_tracer(a)
    if aval_of(a).dtype.kind not in "fc":
        if where is None:
            return _m(a, axis, dtype, keepdims=keepdims)
        a = _inexact(a)
    d = np.dtype(dtype) if dtype is not None else aval_of(a).dtype
    ok = _count_valid(a, axis, keepdims, where)
    s = _sum(E.select_n(ok, np.zeros((), aval_of(a).dtype), a) if isinstance(ok, Tracer) or isinstance(a, Tracer)
             else np.where(ok, a, 0), axis, d, keepdims=keepdims)
    n = _sum(cast(ok, d), axis, d, keepdims=keepdims)
    return divide(s, n)


@jitted_like_jax(static_argnames=('axis', 'dtype', 'ddof', 'keepdims'))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False, where=None, mean=None):
    """var ignoring NaNs."""
    no_out(out, "nanvar")
    a = _inexact(a)
    d = np.dtype(dtype) if dtype is not None else aval_of(a).dtype
    a = cast(a, d)
    ok = _count_valid(a, axis, keepdims, where)
    m = nanmean(a, axis, d, keepdims=True, where=where) if mean is None else asarray_or_tracer(mean)
    c = _select(ok, subtract(a, m), 0.0)  # `where` is shadowed by the keyword
    n = _sum(cast(ok, d), axis, d, keepdims=keepdims)
    ss = _sum(multiply(c, c), axis, d, keepdims=keepdims)
    denom = E.max(subtract(n, ddof), np.zeros((), d))
    return divide(ss, denom)


@jitted_like_jax(static_argnames=('axis', 'dtype', 'ddof', 'keepdims'))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims: bool = False, where=None, mean=None):
    return sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where, mean))


def nancumsum(a, axis=None, dtype=None, out=None):
    """cumsum treating NaN as zero."""
    no_out(out, "nancumsum")
    return _cumsum(_nan_to(a, 0), axis, dtype)


def nancumprod(a, axis=None, dtype=None, out=None):
    """cumprod treating NaN as one."""
    no_out(out, "nancumprod")
    return _cumprod(_nan_to(a, 1), axis, dtype)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    """The array API's cumulative sum: axis may be omitted for 1-d input; include_initial
    prepends a zero."""
    return _cumulative(_cumsum, 0, x, axis, dtype, include_initial)


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial: bool = False):
    return _cumulative(_cumprod, 1, x, axis, dtype, include_initial)


def _cumulative(fn, init, x, axis, dtype, include_initial):
    x = asarray_or_tracer(x)
    nd = len(shape(x))
    if nd == 0:
        raise FuncadValueError("cumulative_sum/prod needs an array of rank >= 1")
    if axis is None:
        if nd > 1:
            raise FuncadValueError(f"axis must be given for an array of rank {nd} > 1")
        axis = 0
    out = fn(x, axis, dtype)
    if include_initial:
        ax = _ax(axis, nd, "cumulative")
        cfg = [(0, 0, 0)] * nd
        cfg[ax] = (1, 0, 0)
        out = S.pad(out, np.array(init, aval_of(out).dtype), cfg)
    return out


# ------------------------------------------------------------ summaries ----

def ptp(a, axis=None, out=None, keepdims: bool = False):
    """max - min along axis."""
    no_out(out, "ptp")
    return subtract(_max(a, axis, keepdims=keepdims), _min(a, axis, keepdims=keepdims))


def minmax(a, axis=None, out=None, keepdims: bool = False, initial=None, where=None):
    """(min, max) along axis."""
    no_out(out, "minmax")
    if initial is None:
        lo_init = hi_init = None
    else:
        lo_init, hi_init = initial if isinstance(initial, tuple) else (initial, initial)
    return (_reduce_init(a, axis, keepdims, lo_init, where, _min, np.inf),
            _reduce_init(a, axis, keepdims, hi_init, where, _max, -np.inf))


def _reduce_init(a, axis, keepdims, initial, where_, red, neutral):
    a = asarray_or_tracer(a)
    if where_ is not None:
        if initial is None:
            raise FuncadValueError("reduction with where= needs initial=")
        kind = aval_of(a).dtype.kind
        fill = neutral if kind in "fc" else (np.iinfo(aval_of(a).dtype).max if neutral > 0
                                             else np.iinfo(aval_of(a).dtype).min)
        a = where(where_, a, np.array(fill, aval_of(a).dtype))
    out = red(a, axis, keepdims=keepdims)
    if initial is not None:
        out = (E.min if neutral > 0 else E.max)(*promote(out, initial))
    return out


def count_nonzero(a, axis=None, keepdims: bool = False):
    """The number of non-zero entries along axis."""
    return _sum(cast(_as_bool(a), _INT), axis, _INT, keepdims=keepdims)


@jitted_like_jax(static_argnames=('axis', 'returned', 'keepdims'))
def average(a, axis=None, weights=None, returned: bool = False, keepdims: bool = False):
    """Weighted mean along axis (and, with returned=True, the sum of weights)."""
    a = _inexact(a)
    if weights is None:
        avg = _mean(a, axis, keepdims=keepdims)
        sh = shape(a)
        cnt = int(np.prod([sh[d] for d in _norm_axes(len(sh), axis)], dtype=np.int64))
        wsum = np.full(shape(avg), cnt, aval_of(avg).dtype)
    else:
        a, w = promote(a, _inexact(weights))
        if shape(w) != shape(a):
            if axis is None:
                raise FuncadValueError("average: weights of a different shape need axis=")
            axes = _norm_axes(len(shape(a)), axis)
            if shape(w) != tuple(shape(a)[d] for d in axes):
                raise FuncadValueError(f"average: weights shape {shape(w)} must match a or the axis")
            w = S.broadcast_in_dim(w, shape(a), axes)
        wsum = _sum(w, axis, keepdims=keepdims)
        avg = divide(_sum(multiply(a, w), axis, keepdims=keepdims), wsum)
    if returned:
        return avg, broadcast_to(wsum, shape(avg))
    return avg


@jitted_like_jax(static_argnames=('rowvar', 'bias', 'ddof', 'dtype'))
def cov(m, y=None, rowvar: bool = True, bias: bool = False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """The covariance matrix of the variables in m's rows (columns with rowvar=False)."""
    m = atleast_2d(_inexact(m))
    if not rowvar and shape(m)[0] != 1:
        m = transpose(m)
    if y is not None:
        yy = atleast_2d(_inexact(y))
        if not rowvar and shape(yy)[0] != 1:
            yy = transpose(yy)
        m = concatenate(promote(m, yy), 0)
    if dtype is not None:
        m = cast(m, np.dtype(dtype))
    if ddof is None:
        ddof = 0 if bias else 1
    n = shape(m)[1]
    dt = aval_of(m).dtype
    w = None
    if fweights is not None:
        w = cast(asarray_or_tracer(fweights), dt)
    if aweights is not None:
        aw = cast(asarray_or_tracer(aweights), dt)
        w = aw if w is None else multiply(w, aw)
    if w is None:
        avg = _mean(m, 1)
        fact = np.array(n - ddof, dt)
        x = subtract(m, S.expand_dims(avg, (1,)))
        c = dot(x, transpose(x))
    else:
        wsum = _sum(w)
        avg = divide(_sum(multiply(m, w), 1), wsum)
        if ddof == 0:
            fact = wsum
        elif aweights is None:
            fact = subtract(wsum, ddof)
        else:
            fact = subtract(wsum, divide(multiply(ddof, _sum(multiply(w, cast(asarray_or_tracer(aweights), dt)))), wsum))
        x = subtract(m, S.expand_dims(avg, (1,)))
        c = dot(multiply(x, w), transpose(x))
    return squeeze(divide(c, fact))


@jitted_like_jax(static_argnames=('rowvar', 'dtype'))
def corrcoef(x, y=None, rowvar: bool = True, dtype=None):
    """Pearson correlation coefficients, clipped to [-1, 1]."""
    c = cov(x, y, rowvar, dtype=dtype)
    if len(shape(c)) == 0:
        return divide(c, c)
    d = sqrt(S.reshape(I.gather(c, np.stack([np.arange(shape(c)[0])] * 2, -1)), (shape(c)[0],)))
    c = divide(divide(c, S.expand_dims(d, (1,))), S.expand_dims(d, (0,)))
    return clip(c, -1, 1)


# -------------------------------------------------------------- histograms ----

def bincount(x, weights=None, minlength: int = 0, *, length: int | None = None, out_sharding=None):
    """Counts (or summed weights) of each non-negative integer; `length=` fixes the
    output length (needed under jit). Negative entries are ignored, as in JAX."""
    if out_sharding is not None:
        return place(bincount(x, weights, minlength, length=length), out_sharding=out_sharding, name="bincount")
    x = asarray_or_tracer(x)
    if aval_of(x).dtype.kind not in "iub":
        raise FuncadValueError(f"bincount: x must be an integer array, got {aval_of(x).str_short()}")
    if len(shape(x)) != 1:
        raise FuncadValueError(f"bincount: x must be 1-d, got {aval_of(x).str_short()}")
    if length is None:
        c = concrete_or_raise(x, "bincount") if isinstance(x, Tracer) else np.asarray(x)
        length = builtins.max(int(minlength), int(c.max()) + 1 if c.size else 0)
    length = int(length)
    if weights is None:
        w = np.ones(shape(x), _INT)
    else:
        w = asarray_or_tracer(weights)
        if aval_of(w).dtype == np.bool_:
            w = cast(w, _INT)
        w = broadcast_to(w, shape(x))
    idx = cast(x, _INT)
    # Negative entries would wrap; send them out of range instead (dropped by the scatter).
    idx = where(E.lt(idx, np.int64(0)), np.int64(length), idx)
    return I.scatter_add(np.zeros(length, aval_of(w).dtype), S.reshape(idx, shape(x) + (1,)), w)


def digitize(x, bins, right: bool = False, *, method: str | None = None):
    """The index of the bin each x falls in (bins increasing or decreasing)."""
    bins = asarray_or_tracer(bins)
    if len(shape(bins)) != 1:
        raise FuncadValueError(f"digitize: bins must be 1-d, got {aval_of(bins).str_short()}")
    side = "left" if right else "right"
    kw = {} if method is None else {"method": method}
    if shape(bins)[0] == 0:  # searchsorted's dtype, as JAX's
        return np.zeros(shape(x), np.int32)
    b0, b1 = getitem(bins, 0), getitem(bins, -1)
    inc = searchsorted(bins, x, side, **kw)
    # decreasing bins: counted from the end of the reversed bins, with the same side
    dec = subtract(shape(bins)[0], searchsorted(getitem(bins, slice(None, None, -1)), x, side, **kw))
    return where(less_equal(b0, b1), inc, dec)


def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """The bin edges histogram would use."""
    a = ravel(_inexact(a))
    if np.ndim(bins) == 1 or isinstance(bins, Tracer) and len(shape(bins)) == 1:
        return asarray_or_tracer(bins)
    bins = int(bins)
    dt = aval_of(a).dtype
    if range is None:
        lo, hi = _min(a), _max(a)
    else:
        lo, hi = (cast(asarray_or_tracer(v), dt) for v in range)
    # An empty range widens to [lo - 0.5, hi + 0.5], as in NumPy.
    same = E.eq(lo, hi)
    lo = where(same, subtract(lo, 0.5), lo)
    hi = where(same, add(hi, 0.5), hi)
    return linspace(cast(lo, dt), cast(hi, dt), bins + 1)


def histogram(a, bins=10, range=None, weights=None, density=None, out_sharding=None):
    """(counts, bin_edges) of a (as numpy.histogram; the last bin includes its right edge)."""
    if out_sharding is not None:
        counts, edges = histogram(a, bins, range, weights, density)
        return place(counts, out_sharding=out_sharding, name="histogram"), edges
    a = ravel(_inexact(a))
    edges = histogram_bin_edges(a, bins, range, weights)
    edges = cast(asarray_or_tracer(edges), aval_of(a).dtype) if aval_of(asarray_or_tracer(edges)).dtype.kind != "f" \
        else asarray_or_tracer(edges)
    nb = shape(edges)[0] - 1
    idx = searchsorted(edges, a, "right")
    # A value equal to the last edge goes into the last bin; values outside fall off.
    idx = where(E.eq(a, getitem(edges, -1)), np.int64(nb), idx)
    idx = E.sub(idx, np.int64(1))
    idx = where(E.bitwise_or(E.lt(idx, np.int64(0)), E.ge(idx, np.int64(nb))), np.int64(nb), idx)
    w = np.ones(shape(a), aval_of(a).dtype) if weights is None else ravel(asarray_or_tracer(weights))
    counts = I.scatter_add(np.zeros(nb, aval_of(w).dtype), S.reshape(idx, (shape(a)[0], 1)), w)
    if density:
        widths = subtract(S.slice(edges, (1,), (nb + 1,)), S.slice(edges, (0,), (nb,)))
        counts = divide(divide(counts, widths), _sum(counts))
    return counts, edges


def histogramdd(sample, bins=10, range=None, weights=None, density=None):
    """(counts, [edges per dimension]) of N points in D dimensions (sample: (N, D))."""
    sample = _inexact(sample)
    if len(shape(sample)) == 1:
        sample = S.reshape(sample, (shape(sample)[0], 1))
    npts, d = shape(sample)
    bins_list = list(bins) if isinstance(bins, (list, tuple)) else [bins] * d
    if len(bins_list) != d:
        raise FuncadValueError(f"histogramdd: {len(bins_list)} bin specs for {d} dimensions")
    ranges = list(range) if range is not None else [None] * d
    edges, flat, nbs = [], np.zeros((), _INT), []
    valid = np.ones(npts, bool)
    for k in builtins.range(d):
        col = S.reshape(S.slice(sample, (0, k), (npts, k + 1)), (npts,))
        e = histogram_bin_edges(col, bins_list[k], ranges[k])
        e = asarray_or_tracer(e)
        if aval_of(e).dtype != aval_of(col).dtype:
            e, col = promote(_inexact(e), col)
        nb = shape(e)[0] - 1
        i = searchsorted(e, col, "right")
        i = where(E.eq(col, getitem(e, -1)), np.int64(nb), i)
        i = E.sub(i, np.int64(1))
        valid = E.bitwise_and(valid, E.bitwise_and(E.ge(i, np.int64(0)), E.lt(i, np.int64(nb))))
        flat = E.add(E.mul(flat, np.int64(nb)), i)
        edges.append(e)
        nbs.append(nb)
    total = int(np.prod(nbs, dtype=np.int64))
    flat = where(valid, flat, np.int64(total))
    w = np.ones(npts, aval_of(sample).dtype) if weights is None else ravel(asarray_or_tracer(weights))
    counts = I.scatter_add(np.zeros(total, aval_of(w).dtype), S.reshape(flat, (npts, 1)), w)
    counts = reshape(counts, tuple(nbs))
    if density:
        counts = divide(counts, _sum(counts))
        for k, e in enumerate(edges):
            widths = subtract(S.slice(e, (1,), (nbs[k] + 1,)), S.slice(e, (0,), (nbs[k],)))
            counts = divide(counts, reshape(widths, tuple(nbs[k] if j == k else 1 for j in builtins.range(d))))
    return counts, edges


def histogram2d(x, y, bins=10, range=None, weights=None, density=None):
    """(counts, x_edges, y_edges) of points (x, y)."""
    x, y = promote(_inexact(x), _inexact(y))
    if not (isinstance(bins, (list, tuple)) or np.ndim(bins) == 0):
        bins = [bins, bins]
    counts, (ex, ey) = histogramdd(stack([x, y], 1), bins, range, weights, density)
    return counts, ex, ey
