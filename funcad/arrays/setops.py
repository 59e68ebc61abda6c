"""Data-dependent selections and set operations: nonzero, argwhere, unique, isin,
union1d/intersect1d/setdiff1d/setxor1d, searchsorted, lexsort, partition, top_k.

Their output shapes depend on values, so (as in JAX) under `jit`/`vmap` they take a
static `size=` (padded with `fill_value=`); eagerly they work without it.
"""
from __future__ import annotations

from collections import namedtuple

import numpy as np

from ..core import x64 as _x64
from ..core.avals import aval_of
from ..core.errors import ConcretizationError, FuncadTypeError, FuncadValueError
from ..core.narrow import kind as _kind
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import indexing as I
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ..primitives.bits import bitcast_convert_type
from .dtypes import asarray_or_tracer, cast, no_out, promote
from .indexing import getitem, take_along_axis
from .reductions import any as _any, cumsum, max as _max, min as _min, sum as _sum
from .shape import (atleast_1d, broadcast_arrays, concatenate, moveaxis, ravel, reshape,
    shape, stack)
from .ufuncs import (_as_bool, add, clip, equal, isnan, logical_and, logical_not, logical_or, mod,
    multiply, not_equal, where as _where)
from .creation import full
from .shape import sort
from .reductions import argmax

__all__ = ["where", "nonzero", "argwhere", "flatnonzero", "unique", "unique_all", "unique_counts",
           "unique_inverse", "unique_values", "isin", "union1d", "intersect1d", "setdiff1d",
           "setxor1d", "searchsorted", "lexsort", "partition", "argpartition", "top_k",
           "ravel_multi_index", "unravel_index", "extract", "compress"]

_INT = np.dtype(np.int64)


def concrete_or_raise(x, fn: str):
    """x as a NumPy array, or a ConcretizationError that explains `size=`."""
    if not isinstance(x, Tracer):
        return np.asarray(x)
    try:
        return np.asarray(x.concrete())
    except ConcretizationError:
        raise ConcretizationError(
            f"{fn}: the output shape depends on the values of a traced {aval_of(x).str_short()} "
            f"array. Under jit/vmap pass a static size, e.g. {fn}(..., size=n, fill_value=...): the "
            "result is then padded (or cut) to length n. For a masked choice, the three-argument "
            "where(cond, x, y) needs no size.") from None


def _iota(n):
    return S.iota(_INT, (int(n),), 0)


# ------------------------------------------------------------------ nonzero ----

def _flat_nonzero_sized(mask, size):
    """(positions, count): the flat positions of True entries padded with 0 to `size`."""
    n = aval_of(mask).size
    m = ravel(mask)
    pos = E.sub(cumsum(cast(m, _INT)), np.int64(1))
    target = E.select_n(m, np.full((), size, _INT) if n == 0 else S.broadcast_in_dim(
        np.array(size, _INT), (n,), ()), pos)
    out = I.scatter_add(np.zeros(size, _INT), S.reshape(target, (n, 1)), _iota(n))
    return out, _sum(cast(m, _INT))


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """Elementwise choice: x where condition, else y (both branches are computed).
    With only the condition it is nonzero(condition, size=, fill_value=)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if x is None or y is None:
        raise FuncadValueError("where: give both x and y, or neither (then it is nonzero(condition))")
    if size is not None or fill_value is not None:
        raise FuncadValueError("where: size= and fill_value= apply only to the one-argument form where(condition)")
    return _where(condition, x, y)


def nonzero(a, *, size: int | None = None, fill_value=None) -> tuple:
    """Indices of the non-zero entries, one array per dimension (as numpy.nonzero).

    >>> import funcad.numpy as fnp
    >>> fnp.nonzero(fnp.array([0, 3, 0, 4]), size=3, fill_value=-1)
    (Array([ 1,  3, -1], dtype=int64),)
    """
    a = asarray_or_tracer(a)
    sh = shape(a)
    if len(sh) == 0:
        raise FuncadValueError("nonzero of a 0-d array is not allowed; use atleast_1d(a) first")
    mask = _as_bool(a)
    if size is None:
        return tuple(np.asarray(i, _x64.default_int())
                     for i in np.nonzero(concrete_or_raise(mask, "nonzero")))
    size = int(size)
    flat, count = _flat_nonzero_sized(mask, size)
    fills = fill_value if isinstance(fill_value, (tuple, list)) else [fill_value] * len(sh)
    if len(fills) != len(sh):
        raise FuncadValueError(f"nonzero: fill_value has {len(fills)} entries but the array has "
                               f"{len(sh)} dimensions; give one per dimension or a scalar")
    valid = E.lt(_iota(size), count)
    out, stride = [], int(np.prod(sh, dtype=np.int64))
    for n, fill in zip(sh, fills):
        stride //= max(n, 1)
        i = E.rem(E.div(flat, np.int64(max(stride, 1))), np.int64(max(n, 1)))
        if fill is not None:
            i = E.select_n(valid, S.broadcast_in_dim(cast(asarray_or_tracer(fill), _INT), (size,), ())
                           if isinstance(fill, Tracer) else np.full(size, fill, _INT), i)
        out.append(i)
    return tuple(out)


def flatnonzero(a, *, size: int | None = None, fill_value=None):
    """Flat indices of the non-zero entries of ravel(a)."""
    return nonzero(ravel(asarray_or_tracer(a)), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size: int | None = None, fill_value=None):
    """Indices of non-zero entries as rows, shape (count, ndim)."""
    a = asarray_or_tracer(a)
    if len(shape(a)) == 0:
        a = atleast_1d(a)
        out = stack(nonzero(a, size=size, fill_value=fill_value), -1)
        return S.slice(out, (0, 0), (shape(out)[0], 0))
    return stack(nonzero(a, size=size, fill_value=fill_value), -1)


def extract(condition, arr, *, size: int | None = None, fill_value=0):
    """The entries of ravel(arr) where ravel(condition) is true."""
    arr = ravel(asarray_or_tracer(arr))
    cond = ravel(_as_bool(condition))
    n = min(shape(cond)[0], shape(arr)[0])
    cond, arr = S.slice(cond, (0,), (n,)), S.slice(arr, (0,), (n,))
    if size is None:
        return getitem(arr, np.nonzero(concrete_or_raise(cond, "extract"))[0])
    idx = nonzero(cond, size=size)[0]
    count = _sum(cast(cond, _INT))
    vals = getitem(arr, idx) if n else np.zeros(size, aval_of(arr).dtype)
    return where(E.lt(_iota(size), count), vals, fill_value)


def compress(condition, a, axis: int | None = None, *, size: int | None = None, fill_value=0, out=None):
    """The slices of `a` along `axis` where `condition` is true."""
    no_out(out, "compress")
    a = asarray_or_tracer(a)
    if axis is None:
        a, axis = ravel(a), 0
    axis = canonical_axis(axis, len(shape(a)), "compress", a)
    cond = ravel(_as_bool(condition))
    n = shape(a)[axis]
    if shape(cond)[0] > n:
        cond_c = concrete_or_raise(cond, "compress") if not isinstance(cond, Tracer) else None
        if cond_c is None or cond_c[n:].any():
            raise FuncadValueError(f"compress: condition has {shape(cond)[0]} entries but axis {axis} has only {n}")
    m = min(shape(cond)[0], n)
    cond = S.slice(cond, (0,), (m,))
    a = moveaxis(a, axis, 0)
    a = S.slice(a, (0,) * len(shape(a)), (m,) + shape(a)[1:])
    if size is None:
        res = getitem(a, np.nonzero(concrete_or_raise(cond, "compress"))[0])
    else:
        idx = nonzero(cond, size=size)[0]
        valid = E.lt(_iota(size), _sum(cast(cond, _INT)))
        vals = getitem(a, idx) if m else np.zeros((size,) + shape(a)[1:], aval_of(a).dtype)
        res = where(reshape(valid, (size,) + (1,) * (len(shape(a)) - 1)), vals, fill_value)
    return moveaxis(res, 0, axis)


# ------------------------------------------------------------------- unique ----

def _sorted_rows(ar, equal_nan):
    """Rows of the (n, ...) array sorted lexicographically, the permutation, and the
    mask of rows that differ from their predecessor (the first of each run)."""
    sh = shape(ar)
    n = sh[0]
    rest = int(np.prod(sh[1:], dtype=np.int64))
    flat = reshape(ar, (n, rest))
    if rest == 0:
        n1 = min(n, 1)
        return S.slice(ar, (0,) * len(sh), (n1,) + sh[1:]), np.zeros(n1, _INT), np.ones(n1, bool)
    cols = [S.reshape(S.slice(flat, (0, j), (n, j + 1)), (n,)) for j in range(rest)]
    *cols, perm = I.sort(cols + [_iota(n)], 0, num_keys=rest)
    rows = getitem(ar, perm)
    if n == 0:
        return rows, perm, np.zeros(0, bool)
    srt = S.reshape(rows, (n, rest))
    a, b = S.slice(srt, (1, 0), (n, rest)), S.slice(srt, (0, 0), (n - 1, rest))
    neq = not_equal(a, b)
    if equal_nan and aval_of(ar).dtype.kind in "fc":
        neq = logical_and(neq, logical_not(logical_and(isnan(a), isnan(b))))
    mask = concatenate([np.ones(1, bool), _any(neq, 1)])
    return rows, perm, mask


def _unique(ar, return_index, return_inverse, return_counts, axis, equal_nan, size, fill_value):
    ar = asarray_or_tracer(ar)
    in_shape = shape(ar)
    if axis is None:
        ar, axis = ravel(ar), 0
    axis = canonical_axis(axis, len(shape(ar)), "unique", ar)
    aux = moveaxis(ar, axis, 0)
    n = shape(aux)[0]
    if n == 0 and size and fill_value is None:
        raise FuncadValueError("unique: for an empty input with size > 0, fill_value must be given")
    rows, perm, mask = _sorted_rows(aux, equal_nan)
    m = shape(mask)[0]
    if size is None:
        ind = np.nonzero(concrete_or_raise(mask, "unique"))[0].astype(_INT)
    else:
        ind = nonzero(mask, size=int(size))[0] if m else np.zeros(int(size), _INT)
    result = getitem(rows, ind) if m else rows
    if size is not None and fill_value is not None:
        k = int(size)
        valid = E.lt(_iota(k), _sum(cast(mask, _INT)))
        fill = cast(asarray_or_tracer(fill_value), aval_of(rows).dtype)
        if m:
            result = where(reshape(valid, (k,) + (1,) * (len(shape(result)) - 1)), result, fill)
        else:
            result = full((k,) + shape(rows)[1:], fill, aval_of(rows).dtype)
    out = [moveaxis(result, 0, axis)]
    if return_index:
        out.append(getitem(perm, ind) if m else perm)
    if return_inverse:
        if m:
            imask = E.sub(cumsum(cast(mask, _INT)), np.int64(1))
            inv = I.scatter_add(np.zeros(m, _INT), S.reshape(perm, (m, 1)), imask)
        else:
            inv = np.zeros(n, _INT)
        out.append(reshape(inv, in_shape) if len(in_shape) and axis == 0 and shape(ar) != in_shape
                   else inv)
    if return_counts:
        if m and n:
            if size is None:
                idx = np.append(ind, m)
            else:
                idx = nonzero(mask, size=int(size) + 1)[0]
                tail = S.slice(idx, (1,), (int(size) + 1,))
                idx = concatenate([S.slice(idx, (0,), (1,)),
                                   E.select_n(E.ne(tail, np.int64(0)), np.full(int(size), m, _INT), tail)])
            k = shape(idx)[0]
            out.append(E.sub(S.slice(idx, (1,), (k,)), S.slice(idx, (0,), (k - 1,))))
        elif n:
            out.append(np.full(1, n, _INT))
        else:
            out.append(np.zeros(0, _INT))
    return out[0] if len(out) == 1 else tuple(out)


def unique(ar, return_index: bool = False, return_inverse: bool = False, return_counts: bool = False,
           axis: int | None = None, *, equal_nan: bool = True, size: int | None = None,
           fill_value=None, sorted: bool = True):
    """The sorted unique values (as numpy.unique); `size=` makes the length static.

    Without `fill_value`, padding repeats the smallest unique value, as in JAX.

    >>> import funcad.numpy as fnp
    >>> fnp.unique(fnp.array([3, 1, 3, 2]), size=4, fill_value=0)
    Array([1, 2, 3, 0], dtype=int64)
    """
    return _unique(ar, return_index, return_inverse, return_counts, axis, equal_nan, size, fill_value)


UniqueAllResult = namedtuple("UniqueAllResult", ["values", "indices", "inverse_indices", "counts"])
UniqueCountsResult = namedtuple("UniqueCountsResult", ["values", "counts"])
UniqueInverseResult = namedtuple("UniqueInverseResult", ["values", "inverse_indices"])


def unique_all(x, /, *, size: int | None = None, fill_value=None) -> UniqueAllResult:
    """unique with indices, inverse indices and counts (the array API's unique_all)."""
    return UniqueAllResult(*_unique(x, True, True, True, None, False, size, fill_value))


def unique_counts(x, /, *, size: int | None = None, fill_value=None) -> UniqueCountsResult:
    return UniqueCountsResult(*_unique(x, False, False, True, None, False, size, fill_value))


def unique_inverse(x, /, *, size: int | None = None, fill_value=None) -> UniqueInverseResult:
    return UniqueInverseResult(*_unique(x, False, True, False, None, False, size, fill_value))


def unique_values(x, /, *, size: int | None = None, fill_value=None):
    return _unique(x, False, False, False, None, False, size, fill_value)


# ------------------------------------------------------------------ set ops ----

def isin(element, test_elements, assume_unique: bool = False, invert: bool = False, *, method="auto"):
    """Whether each entry of `element` occurs in `test_elements` (same shape as element)."""
    if method not in ("auto", "compare_all", "binary_search", "sort"):
        raise FuncadValueError(f"isin: unknown method {method!r}; use 'auto', 'compare_all', "
                               "'binary_search' or 'sort'")
    element, test = promote(element, test_elements)
    test = ravel(test)
    e = S.expand_dims(element, (len(shape(element)),))
    if shape(test)[0] == 0:
        found = np.zeros(shape(element), bool)
    else:
        found = _any(equal(e, test), -1)
    return logical_not(found) if invert else found


def _fill_tail(vals, count, fill_value, default_smallest):
    k = shape(vals)[0]
    valid = E.lt(_iota(k), count)
    if k == 0:
        return vals
    if fill_value is None:
        if not default_smallest:
            return where(valid, vals, np.zeros((), aval_of(vals).dtype))
        vals = where(valid, vals, _max(vals))  # the smallest real result, as in JAX
        return where(valid, vals, _min(vals))
    return where(valid, vals, cast(asarray_or_tracer(fill_value), aval_of(vals).dtype))


def union1d(ar1, ar2, *, size: int | None = None, fill_value=None):
    """The sorted unique values found in either input."""
    a, b = promote(ar1, ar2)
    return unique(concatenate([ravel(a), ravel(b)]), size=size, fill_value=fill_value)


def _unique_padded(a):
    """(sorted unique values padded with repeats, their first indices, the count)."""
    vals, idx, counts = _unique(a, True, False, True, None, True, shape(a)[0], None)
    return vals, idx, _sum(cast(E.gt(counts, np.int64(0)), _INT))


def setdiff1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None, fill_value=None):
    """The sorted unique values of ar1 that are not in ar2."""
    a, b = promote(ar1, ar2)
    a, b = ravel(a), ravel(b)
    if size is None:
        u = a if assume_unique else unique(a)
        return getitem(u, np.nonzero(concrete_or_raise(isin(u, b, invert=True), "setdiff1d"))[0])
    size = int(size)
    if shape(a)[0] == 0 or size == 0:
        return np.full(size, 0 if fill_value is None else fill_value, aval_of(a).dtype)
    if assume_unique:
        u, valid = a, np.ones(shape(a)[0], bool)
    else:
        u, _, count = _unique_padded(a)
        valid = E.lt(_iota(shape(a)[0]), count)
    keep = logical_and(valid, isin(u, b, invert=True))
    vals = getitem(u, nonzero(keep, size=size)[0])
    return _fill_tail(vals, _sum(cast(keep, _INT)), fill_value, False)


def setxor1d(ar1, ar2, assume_unique: bool = False, *, size: int | None = None, fill_value=None):
    """The sorted values in exactly one of the inputs."""
    a, b = promote(ar1, ar2)
    a, b = ravel(a), ravel(b)
    if size is None:
        ua, ub = (a, b) if assume_unique else (unique(a), unique(b))
        both = concatenate([getitem(ua, np.nonzero(concrete_or_raise(isin(ua, ub, invert=True), "setxor1d"))[0]),
                            getitem(ub, np.nonzero(concrete_or_raise(isin(ub, ua, invert=True), "setxor1d"))[0])])
        return sort(both)
    size = int(size)
    parts, keeps = [], []
    for x, y in ((a, b), (b, a)):
        if assume_unique:
            u, valid = x, np.ones(shape(x)[0], bool)
        else:
            u, _, count = _unique_padded(x) if shape(x)[0] else (x, None, 0)
            valid = E.lt(_iota(shape(x)[0]), count) if shape(x)[0] else np.zeros(0, bool)
        parts.append(u)
        keeps.append(logical_and(valid, isin(u, y, invert=True)))
    vals, keep = concatenate(parts), concatenate(keeps)
    n = shape(vals)[0]
    if n == 0:
        return np.zeros(size, aval_of(vals).dtype)
    # Kept values first, sorted.
    _, vals = I.sort([cast(logical_not(keep), _INT), vals], 0, num_keys=2)
    count = _sum(cast(keep, _INT))
    vals = vals if n >= size else concatenate([vals, np.zeros(size - n, aval_of(vals).dtype)])
    vals = S.slice(vals, (0,), (size,))
    return _fill_tail(vals, count, fill_value, True)


def intersect1d(ar1, ar2, assume_unique: bool = False, return_indices: bool = False, *,
                size: int | None = None, fill_value=None):
    """The sorted unique values found in both inputs (and, with return_indices, the
    indices of their first occurrences in each)."""
    a, b = promote(ar1, ar2)
    a, b = ravel(a), ravel(b)
    na, nb = shape(a)[0], shape(b)[0]
    if assume_unique:
        ua, ia = a, _iota(na)
    elif na:
        ua, ia = unique(a, return_index=True, size=None if size is None else na)
    else:
        ua, ia = a, np.zeros(0, _INT)
    if assume_unique or size is None or na == 0:
        valid = np.ones(shape(ua)[0], bool)
    else:
        valid = E.lt(_iota(na), _unique_padded(a)[2])
    keep = logical_and(valid, isin(ua, b)) if nb else np.zeros(shape(ua)[0], bool)
    if size is None:
        sel = np.nonzero(concrete_or_raise(keep, "intersect1d"))[0]
        vals, i1 = getitem(ua, sel), getitem(ia, sel)
        count = None
    else:
        sel = nonzero(keep, size=int(size))[0] if shape(ua)[0] else np.zeros(int(size), _INT)
        count = _sum(cast(keep, _INT))
        vals = getitem(ua, sel) if shape(ua)[0] else np.zeros(int(size), aval_of(a).dtype)
        vals = _fill_tail(vals, count, fill_value, True)
        i1 = where(E.lt(_iota(int(size)), count), getitem(ia, sel), na) if shape(ua)[0] \
            else np.full(int(size), na, _INT)
    if not return_indices:
        return vals
    k = shape(vals)[0]
    if nb and k:
        hit = equal(S.expand_dims(vals, (1,)), S.broadcast_in_dim(b, (k, nb), (1,)))
        i2 = argmax(hit, axis=1)
        if count is not None:
            i2 = where(E.lt(_iota(k), count), i2, nb)
    else:
        i2 = np.full(k, nb, _INT)
    return vals, i1, i2


# -------------------------------------------------------------- searchsorted ----

def _nan_lt(x, y):
    """x < y with NaN sorted last (NumPy's order)."""
    if aval_of(x).dtype.kind not in "fc":
        return E.lt(x, y)
    return logical_or(E.lt(x, y), logical_and(isnan(y), logical_not(isnan(x))))


def searchsorted(a, v, side: str = "left", sorter=None, *, method: str = "scan"):
    """Insertion points of v into the sorted 1-d a (as numpy.searchsorted).

    >>> import funcad.numpy as fnp
    >>> fnp.searchsorted(fnp.array([1.0, 2.0, 3.0]), fnp.array([2.0, 2.5]))
    Array([1, 2], dtype=int32)
    """
    if side not in ("left", "right"):
        raise FuncadValueError(f"searchsorted: side must be 'left' or 'right', got {side!r}")
    if method not in ("scan", "scan_unrolled", "sort", "compare_all"):
        raise FuncadValueError(f"searchsorted: unknown method {method!r}; use 'scan', 'scan_unrolled', "
                               "'sort' or 'compare_all'")
    a, v = promote(a, v)
    if len(shape(a)) != 1:
        raise FuncadValueError(f"searchsorted: a must be 1-d, got {aval_of(a).str_short()}")
    if sorter is not None:
        a = getitem(a, asarray_or_tracer(sorter))
    n = shape(a)[0]
    vs = shape(v)
    ve = S.expand_dims(v, (len(vs),))
    ab = S.broadcast_in_dim(a, vs + (n,), (len(vs),))
    # left: count of a < v; right: count of a <= v, i.e. not (v < a).
    below = _nan_lt(ab, ve) if side == "left" else logical_not(_nan_lt(ve, ab))
    # int32 where every position fits, as JAX's (in both precision modes)
    dtype = _x64.canonicalize_dtype(np.int32 if n <= np.iinfo(np.int32).max else np.int64)
    return _sum(below, -1, dtype=dtype) if n else np.zeros(vs, dtype)


# ------------------------------------------------------------ sort relatives ----

def lexsort(keys, axis: int = -1, *, batch_size: int = 16):
    """Indices that sort by the last key, then the one before, ... (as numpy.lexsort).
    `batch_size` is how many keys JAX's sort takes per pass; funcad sorts by all keys
    in one pass, so it changes nothing here (the result is the same either way)."""
    keys = [asarray_or_tracer(k) for k in (list(keys) if not hasattr(keys, "shape") or isinstance(keys, Tracer)
                                           or np.ndim(keys) > 1 else [keys])]
    if len(keys) == 0:
        raise FuncadValueError("lexsort: need at least one key")
    keys = broadcast_arrays(*keys)
    sh = shape(keys[0])
    if len(sh) == 0:
        return np.zeros((), _INT)
    ax = canonical_axis(axis, len(sh), "lexsort")
    return I.sort(keys[::-1] + [S.iota(_INT, sh, ax)], ax, num_keys=len(keys))[-1]


def partition(a, kth: int, axis: int = -1):
    """`a` partitioned at kth along axis: the kth+1 smallest entries in ascending
    order, then the others in descending order (JAX's layout).

    >>> import funcad.numpy as fnp
    >>> fnp.partition(fnp.array([5, 1, 4, 2, 3]), 1)
    Array([1, 2, 5, 4, 3], dtype=int64)
    """
    a = asarray_or_tracer(a)
    sh = shape(a)
    ax = canonical_axis(axis, len(sh), "partition", a)
    kth = canonical_axis(kth, sh[ax], "partition")
    srt = sort(a, ax)
    lo = S.slice(srt, (0,) * len(sh), tuple(kth + 1 if d == ax else s for d, s in enumerate(sh)))
    hi = S.slice(srt, tuple(kth + 1 if d == ax else 0 for d in range(len(sh))), sh)
    return concatenate([lo, S.rev(hi, (ax,))], ax)


def argpartition(a, kth: int, axis: int = -1):
    """Indices that partition `a` at kth: those of the kth+1 smallest entries (in the
    order top_k ranks them in the order-reversed array, as JAX's), then the others in
    ascending index order; int32, as JAX's.

    >>> import funcad.numpy as fnp
    >>> fnp.argpartition(fnp.array([5.0, 1.0, 4.0, 2.0, 3.0]), 1)
    Array([1, 3, 0, 2, 4], dtype=int32)
    """
    a = asarray_or_tracer(a)
    sh = shape(a)
    k = _kind(aval_of(a).dtype)
    if k == "c":
        raise FuncadTypeError("argpartition does not take complex arrays (as JAX's); partition the "
                              "real part, or sort with argsort")
    ax = canonical_axis(axis, len(sh), "argpartition", a)
    kth = canonical_axis(kth, sh[ax], "argpartition")
    # JAX's contract: top_k of the order-reversed array (bitwise not for integers and
    # bools, negation for floats, so a NaN's sign says where it goes)
    rev = E.bitwise_not(a) if k in "biu" else E.neg(a)
    order = _topk_indices(rev, ax, True)
    lo = S.slice(order, (0,) * len(sh), tuple(kth + 1 if d == ax else s for d, s in enumerate(sh)))
    # rank of each entry in that order (the inverse permutation), then the entries not
    # among the first kth+1 in ascending index order
    rank = I.sort([order, S.iota(np.int32, sh, ax)], ax, num_keys=1)[1]
    in_lo = cast(E.le(rank, np.int32(kth)), np.int32)
    rest = I.sort([in_lo, S.iota(np.int32, sh, ax)], ax, num_keys=2)[1]
    hi = S.slice(rest, (0,) * len(sh), tuple(s - kth - 1 if d == ax else s for d, s in enumerate(sh)))
    return concatenate([lo, hi], ax)


def top_k(a, k: int, /, *, axis: int = -1, mode: str = "largest", sorted: bool = True):
    """The k largest (mode='largest') or smallest entries along axis and their indices."""
    a = asarray_or_tracer(a)
    ax = canonical_axis(axis, len(shape(a)), "top_k", a)
    n = shape(a)[ax]
    k = int(k)
    if not 0 <= k <= n:
        raise FuncadValueError(f"top_k: k={k} must be between 0 and the axis size {n}")
    if mode not in ("largest", "smallest"):
        raise FuncadValueError(f"top_k: mode must be 'largest' or 'smallest', got {mode!r}")
    idx = _topk_indices(a, ax, mode == "largest")
    idx = S.slice(idx, (0,) * len(shape(a)), tuple(k if d == ax else s for d, s in enumerate(shape(a))))
    return take_along_axis(a, idx, ax, mode="clip"), idx


def _topk_indices(a, ax, largest):
    """Indices sorting a along ax, descending for largest (ties: lower index first); int32,
    as XLA's TopK gives them."""
    sh = shape(a)
    dt = aval_of(a).dtype
    if largest and _kind(dt) == "f":
        # XLA's TopK orders floats totally: -nan < -inf < ... < -0 < +0 < ... < inf < +nan.
        # The bits as a signed integer are in that order once a negative one's magnitude
        # bits are flipped; bitwise not makes it descending.
        it = np.dtype(f"int{8 * dt.itemsize}")
        b = bitcast_convert_type(a, it)
        total = where(E.lt(b, np.zeros((), it)), E.bitwise_xor(b, np.array(np.iinfo(it).max, it)), b)
        return I.sort([E.bitwise_not(total), S.iota(np.int32, sh, ax)], ax, num_keys=1)[-1]
    key = a
    if largest:
        if dt == np.bool_:
            key = logical_not(a)
        elif dt.kind == "u":
            key = E.sub(np.array(np.iinfo(dt).max, dt), a)
        else:
            key = E.sub(E.neg(a), np.array(1, dt))  # ~a: no overflow at the minimum
    return I.sort([key, S.iota(np.int32, sh, ax)], ax, num_keys=1)[-1]


# ------------------------------------------------------- flat/multi indices ----

def ravel_multi_index(multi_index, dims, mode: str = "raise", order: str = "C", *, dtype=None):
    """Flat indices of index tuples into an array of shape dims (of `dtype` if given)."""
    if dtype is not None:
        return cast(ravel_multi_index(multi_index, dims, mode, order), _x64.explicit_dtype(dtype, "ravel_multi_index"))
    dims = tuple(int(d) for d in dims)
    if len(multi_index) != len(dims):
        raise FuncadValueError(f"ravel_multi_index: {len(multi_index)} index arrays for {len(dims)} dims")
    if order not in ("C", "F"):
        raise FuncadValueError(f"ravel_multi_index: order must be 'C' or 'F', got {order!r}")
    idx = [cast(asarray_or_tracer(i), _INT) for i in multi_index]
    if mode == "raise":
        for i, d in zip(idx, dims):
            c = concrete_or_raise(i, "ravel_multi_index") if isinstance(i, Tracer) else np.asarray(i)
            if c.size and (c.min() < 0 or c.max() >= d):
                raise FuncadValueError("ravel_multi_index: invalid entry in coordinates array; "
                                       "use mode='clip' or mode='wrap'")
    elif mode == "clip":
        idx = [clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    elif mode == "wrap":
        idx = [mod(i, d) for i, d in zip(idx, dims)]
    else:
        raise FuncadValueError(f"ravel_multi_index: mode must be 'raise', 'clip' or 'wrap', got {mode!r}")
    order_dims = list(range(len(dims)))[::-1] if order == "C" else list(range(len(dims)))
    out, stride = np.int64(0), 1
    for d in order_dims:
        out = add(out, multiply(idx[d], np.int64(stride)))
        stride *= dims[d]
    return out


def unravel_index(indices, shape):
    """The tuple of index arrays of flat `indices` into an array of shape `shape`;
    out-of-range indices are clipped, as in JAX."""
    sh = tuple(int(s) for s in (shape if np.ndim(shape) else (shape,)))
    total = int(np.prod(sh, dtype=np.int64))
    i = cast(asarray_or_tracer(indices), _INT)
    i = clip(i, -total, total - 1)
    i = where(E.lt(i, np.int64(0)), E.add(i, np.int64(total)), i)
    out, stride = [], total
    for n in sh:
        stride //= max(n, 1)
        out.append(E.rem(E.div(i, np.int64(max(stride, 1))), np.int64(max(n, 1))))
    return tuple(out)
