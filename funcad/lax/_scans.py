"""funcad.lax's scans written with primitives: associative_scan (any associative
function, by the odd/even recursion) and cumlogsumexp."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives._base import canonical_axis
from ..arrays.ufuncs import logaddexp
from ..arrays.dtypes import asarray_or_tracer as _arr
from ._slicing import _shape

__all__ = ['associative_scan', 'cumlogsumexp']


def associative_scan(fn, elems, reverse: bool = False, axis: int = 0):
    """Inclusive scan of an associative fn over pytrees of arrays along axis, in
    O(log n) parallel steps (up-sweep and down-sweep of odd and even entries)."""
    leaves, tree = tree_flatten(elems)
    leaves = [_arr(x) for x in leaves]
    if not leaves:
        raise FuncadValueError("associative_scan: elems has no arrays")
    nd = len(_shape(leaves[0]))
    ax = canonical_axis(axis, nd, "associative_scan", leaves[0])
    n = _shape(leaves[0])[ax]
    if any(_shape(x)[ax] != n for x in leaves):
        raise FuncadValueError("associative_scan: every array must have the same length along axis")
    if reverse:
        leaves = [S.rev(x, (ax,)) for x in leaves]

    def combine(a, b):
        out = fn(tree_unflatten(tree, a), tree_unflatten(tree, b))
        out_leaves, out_tree = tree_flatten(out)
        if out_tree != tree:
            raise FuncadValueError("associative_scan: fn must return the structure of its arguments")
        return [_arr(o) for o in out_leaves]

    def sl(xs, lo, hi, step):
        out = []
        for x in xs:
            start, stop, st = [0] * nd, list(_shape(x)), [1] * nd
            start[ax], stop[ax], st[ax] = lo, max(hi, lo), step
            out.append(S.slice(x, start, stop, st))
        return out

    def interleave(a, b):
        # a holds positions 0, 2, 4...; b holds 1, 3, ...
        out = []
        for x, y in zip(a, b):
            na, nb = _shape(x)[ax], _shape(y)[ax]
            cfg_a = [(0, 0, 0)] * nd
            cfg_b = [(0, 0, 0)] * nd
            cfg_a[ax] = (0, nb - na + 1, 1)
            cfg_b[ax] = (1, na - nb, 1)
            zero = np.zeros((), aval_of(x).dtype)
            out.append(E.add(S.pad(x, zero, cfg_a), S.pad(y, zero, cfg_b)) if aval_of(x).dtype != np.bool_
                       else E.bitwise_or(S.pad(x, zero, cfg_a), S.pad(y, zero, cfg_b)))
        return out

    def scan(xs):
        m = _shape(xs[0])[ax]
        if m < 2:
            return xs
        reduced = combine(sl(xs, 0, m - 1, 2), sl(xs, 1, m, 2))
        odd = scan(reduced)
        if m % 2 == 0:
            even = combine(sl(odd, 0, _shape(odd[0])[ax] - 1, 1), sl(xs, 2, m, 2))
        else:
            even = combine(odd, sl(xs, 2, m, 2))
        even = [S.concatenate([s0, e], ax) for s0, e in zip(sl(xs, 0, 1, 1), even)]
        return interleave(even, odd)

    out = scan(leaves)
    if reverse:
        out = [S.rev(x, (ax,)) for x in out]
    return tree_unflatten(tree, out)


def cumlogsumexp(operand, axis: int = 0, reverse: bool = False):
    """log(cumsum(exp(x))) along axis, computed stably."""
    return associative_scan(logaddexp, _arr(operand), reverse=reverse, axis=axis)
