"""funcad.lax's general reductions: reduce and reduce_window with any monoid or
Python reducer, reduce_and/or/xor."""
from __future__ import annotations

import operator
import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..primitives import elementwise as E
from ..primitives import reductions as R
from ..primitives import structural as S
from ..primitives._base import broadcast_to, canonical_axis
from .. import lax as flax
from ..arrays import ufuncs as U  # funcad.numpy's ufuncs are these
from ..core.trace import Tracer, bind_custom_jvp
from ..transforms.vmap import vmap
from ..arrays.dtypes import asarray_or_tracer as _arr
from ._slicing import _shape
from ..arrays.shape import moveaxis, reshape
from ..transforms.control_flow_api import scan
from ..arrays.shape import ravel, reshape

__all__ = ['reduce', 'reduce_and', 'reduce_or', 'reduce_xor', 'reduce_window']


def _monoid(computation, init):
    """The primitive reduction for a standard monoid whose identity is `init`, else None."""
    if isinstance(init, Tracer):
        return None  # a traced initial value: fold instead
    d = aval_of(init).dtype
    v = np.asarray(init)
    adds = (operator.add, U.add, flax.add, E.add)
    muls = (operator.mul, U.multiply, flax.mul, E.mul)
    maxs = (U.maximum, flax.max, E.max)
    mins = (U.minimum, flax.min, E.min)
    ors = (operator.or_, U.bitwise_or, flax.bitwise_or, U.logical_or)
    ands = (operator.and_, U.bitwise_and, flax.bitwise_and, U.logical_and)
    if computation in adds and v == 0:
        return R.reduce_sum
    if computation in muls and v == 1:
        return R.reduce_prod
    lo = -np.inf if d.kind == "f" else (np.iinfo(d).min if d.kind in "iu" else False)
    hi = np.inf if d.kind == "f" else (np.iinfo(d).max if d.kind in "iu" else True)
    if computation in maxs and v == lo:
        return R.reduce_max
    if computation in mins and v == hi:
        return R.reduce_min
    if d == np.bool_ and computation in ors and not v:
        return R.reduce_max
    if d == np.bool_ and computation in ands and v:
        return R.reduce_min
    return None


def reduce(operands, init_values, computation, dimensions):
    """Reduce operands over dimensions with computation, starting from init_values.

    Standard monoids (add/mul/max/min/and/or with their identities) become one
    reduction primitive; any other computation (pytrees of operands included) is
    applied as a sequential fold along the reduced dimensions, vectorised with vmap.

    >>> import numpy as np, funcad.lax as lax
    >>> lax.reduce(np.arange(6.0).reshape(2, 3), 0.0, lax.add, (1,))
    Array([ 3., 12.], dtype=float64)
    """
    flat_ops, tree = tree_flatten(operands)
    flat_init, init_tree = tree_flatten(init_values)
    if init_tree != tree:
        raise FuncadValueError("reduce: operands and init_values must have the same structure")
    flat_ops = [_arr(x) for x in flat_ops]
    flat_init = [np.array(v, aval_of(x).dtype) if isinstance(v, (int, float, bool)) else _arr(v)
                 for v, x in zip(flat_init, flat_ops)]  # Python scalars are weak, as in JAX
    nd = len(_shape(flat_ops[0]))
    dims = tuple(sorted(canonical_axis(d, nd, "reduce") for d in dimensions))
    if len(flat_ops) == 1:
        prim = _monoid(computation, flat_init[0])
        if prim is not None:
            return tree_unflatten(tree, [prim(flat_ops[0], dims)])
    return tree_unflatten(tree, _fold(flat_ops, flat_init, computation, dims, tree))


def _fold(ops, inits, computation, dims, tree):
    nd = len(_shape(ops[0]))
    keep = [d for d in range(nd) if d not in dims]
    out_shape = tuple(_shape(ops[0])[d] for d in keep)
    m = int(np.prod(out_shape, dtype=np.int64))
    k = int(np.prod([_shape(ops[0])[d] for d in dims], dtype=np.int64))
    xs = [reshape(moveaxis(x, list(dims), list(range(len(dims)))), (k, m)) for x in ops]

    def comb(a, b):
        out = computation(tree_unflatten(tree, list(a)), tree_unflatten(tree, list(b)))
        return [_arr(o) for o in tree_flatten(out)[0]]
    vcomb = vmap(lambda a, b: comb(a, b))
    carry0 = [broadcast_to(i, (m,)) for i in inits]

    def body(carry, x):
        return vcomb(carry, x), None
    carry, _ = scan(body, carry0, xs)
    return [reshape(c, out_shape) for c in carry]


def reduce_and(operand, axes):
    x = _arr(operand)
    if aval_of(x).dtype == np.bool_:
        return R.reduce_min(x, tuple(axes))
    return reduce(x, np.array(-1, aval_of(x).dtype), E.bitwise_and, axes)


def reduce_or(operand, axes):
    x = _arr(operand)
    if aval_of(x).dtype == np.bool_:
        return R.reduce_max(x, tuple(axes))
    return reduce(x, np.array(0, aval_of(x).dtype), E.bitwise_or, axes)


def reduce_xor(operand, axes):
    x = _arr(operand)
    return reduce(x, np.array(0, aval_of(x).dtype) if aval_of(x).dtype != np.bool_ else np.bool_(False),
                  E.bitwise_xor, axes)


def _padding_pairs(padding, shape, window, strides, dilation):
    if not isinstance(padding, str):
        return [(int(lo), int(hi)) for lo, hi in padding]
    if padding.upper() == "VALID":
        return [(0, 0)] * len(shape)
    if padding.upper() in ("SAME", "SAME_LOWER"):
        pads = []
        for n, w, s, d in zip(shape, window, strides, dilation):
            eff = (w - 1) * d + 1
            out = -(-n // s)
            total = max((out - 1) * s + eff - n, 0)
            lo = total // 2 if padding.upper() == "SAME" else -(-total // 2)
            pads.append((lo, total - lo))
        return pads
    raise FuncadValueError(f"reduce_window: padding must be 'VALID', 'SAME', 'SAME_LOWER' or pairs, got {padding!r}")


def reduce_window(operand, init_value, computation, window_dimensions, window_strides=None,
                  padding="VALID", base_dilation=None, window_dilation=None):
    """Reduce each window of operand with computation (max pooling, sums over windows...):
    the operand is padded with init_value and the windows' strided slices are combined."""
    flat_ops, tree = tree_flatten(operand)
    flat_init, init_tree = tree_flatten(init_value)
    if init_tree != tree:
        raise FuncadValueError("reduce_window: operand and init_value must have the same structure")
    flat_ops = [_arr(x) for x in flat_ops]
    flat_init = [_arr(x) for x in flat_init]
    nd = len(_shape(flat_ops[0]))
    window = tuple(int(w) for w in window_dimensions)
    strides = tuple(window_strides) if window_strides is not None else (1,) * nd
    bdil = tuple(base_dilation) if base_dilation is not None else (1,) * nd
    wdil = tuple(window_dilation) if window_dilation is not None else (1,) * nd
    if not (len(window) == len(strides) == len(bdil) == len(wdil) == nd):
        raise FuncadValueError(f"reduce_window: window, strides and dilations need {nd} entries each")
    dil_shape = tuple((n - 1) * b + 1 if n else 0 for n, b in zip(_shape(flat_ops[0]), bdil))
    pads = _padding_pairs(padding, dil_shape, window, strides, wdil)
    padded = []
    for x, v in zip(flat_ops, flat_init):
        v = v if aval_of(v).dtype == aval_of(x).dtype else E.convert_element_type(v, aval_of(x).dtype)
        padded.append(S.pad(x, v, [(lo, hi, b - 1) for (lo, hi), b in zip(pads, bdil)]))
    pshape = _shape(padded[0])
    out_shape = tuple(max((p - ((w - 1) * d + 1)) // s + 1, 0) for p, w, d, s in zip(pshape, window, wdil, strides))
    prim = _monoid(computation, flat_init[0]) if len(flat_ops) == 1 else None

    def comb(a, b):
        if prim is not None:
            op = {R.reduce_sum: E.add, R.reduce_prod: E.mul, R.reduce_max: E.max, R.reduce_min: E.min}[prim]
            if aval_of(a[0]).dtype == np.bool_ and op in (E.max, E.min):
                op = E.bitwise_or if op is E.max else E.bitwise_and
            return [op(a[0], b[0])]
        out = computation(tree_unflatten(tree, list(a)), tree_unflatten(tree, list(b)))
        return [_arr(o) for o in tree_flatten(out)[0]]
    if prim is None:
        vc = vmap(lambda a, b: comb(a, b))
        combine = lambda a, b: [reshape(o, out_shape) for o in vc([ravel(x) for x in a], [ravel(x) for x in b])]  # noqa: E731
    else:
        combine = comb
    def pieces(x):
        """The strided slice of x under each window offset, in row-major offset order."""
        for offs in np.ndindex(*window):
            start = [o * d for o, d in zip(offs, wdil)]
            stop = [st + (n - 1) * s + 1 if n else st for st, n, s in zip(start, out_shape, strides)]
            yield S.slice(x, start, stop, strides)

    if prim in (R.reduce_max, R.reduce_min) and aval_of(padded[0]).dtype.kind == "f" and np.prod(window) > 1:
        return tree_unflatten(tree, [_window_choose(padded[0], pieces, comb)])
    # A monoid starts from the first window entry; any other reducer folds from init_value.
    acc = None if prim is not None else [S.broadcast_in_dim(
        v if aval_of(v).dtype == aval_of(x).dtype else E.convert_element_type(v, aval_of(x).dtype), out_shape, ())
        for v, x in zip(flat_init, flat_ops)]
    for piece in zip(*[pieces(p) for p in padded]):
        acc = list(piece) if acc is None else combine(acc, list(piece))
    if acc is None:
        acc = [S.broadcast_in_dim(v, out_shape, ()) for v in flat_init]
    return tree_unflatten(tree, acc)


def _window_choose(x, pieces, comb):
    """A max or min over windows whose tangent is that of the first chosen entry of
    each window (row-major), as JAX's reduce_window max/min: a tie passes the whole
    tangent to one entry, not shares of it."""

    def value(x):
        acc = None
        for piece in pieces(x):
            acc = piece if acc is None else comb([acc], [piece])[0]
        return [acc]

    def jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        out = _window_choose(x, pieces, comb)  # itself, so that its derivative follows the same rule
        if t is None:
            return [out], [None]
        tan = taken = None
        for px, pt in zip(pieces(x), pieces(t)):
            hit = E.eq(px, out)
            if taken is not None:
                hit = E.bitwise_and(hit, E.bitwise_not(taken))
            tan = pt * 0 if tan is None else tan  # (a zero of the tangent's type, to select into)
            tan = E.select_n(hit, tan, pt)
            taken = hit if taken is None else E.bitwise_or(taken, hit)
        return [out], [tan]
    return bind_custom_jvp(value, jvp, [x])[0]
