"""funcad.scipy.ndimage: map_coordinates, as in JAX's scipy.ndimage namespace.

>>> import numpy as np
>>> map_coordinates(np.arange(12.0).reshape(3, 4), [np.array([0.5, 1.5]), np.array([1.5, 2.5])], order=1)
Array([3.5, 8.5], dtype=float64)
"""
import itertools as _itertools
from collections.abc import Sequence as _Sequence

import numpy as _np

from .. import lax as _lax
from .. import numpy as _fnp
from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadValueError as _FuncadValueError
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer, to_inexact as _to_inexact

__all__ = ["map_coordinates"]


def _mirror(index, size):
    # a triangle wave of half-period size - 1: ... 2 1 0 1 2 ... size-1 size-2 ...
    if size == 1:
        return _fnp.zeros_like(index)
    s = size - 1
    return _fnp.abs((index + s) % (2 * s) - s)


def _reflect(index, size):
    # the mirror of the half-sample grid: ... 1 0 0 1 ... size-1 size-1 size-2 ...
    return (_mirror(2 * index + 1, 2 * size + 1) - 1) // 2


_FIX_INDEX = {
    "constant": lambda index, size: _fnp.clip(index, 0, size - 1),  # only to gather; masked below
    "nearest": lambda index, size: _fnp.clip(index, 0, size - 1),
    "wrap": lambda index, size: index % size,
    "mirror": _mirror,
    "reflect": _reflect,
}


def map_coordinates(input, coordinates: _Sequence, order: int, mode: str = "constant", cval=0.0):
    """`input` interpolated at the points `coordinates` (one array of positions per axis of
    input, all of one shape), as JAX's map_coordinates.

    order is 0 (nearest, rounding half away from zero) or 1 (linear). mode says what a
    point outside the grid sees: 'constant' (cval; SciPy's 'grid-constant'), 'nearest',
    'wrap' (SciPy's 'grid-wrap'), 'mirror' or 'reflect'. An integer input is rounded
    back to its dtype.

    >>> import numpy as np
    >>> map_coordinates(np.array([1.0, 2.0, 4.0]), [np.array([-1.0, 0.25, 2.5])], order=1, mode="nearest")
    Array([1.  , 1.25, 4.  ], dtype=float64)
    """
    x = _fnp.asarray(input)  # a funcad array: indexing it with batched indices works under vmap
    xa = _aval_of(x)
    coords = [_asarray_or_tracer(c) for c in coordinates]
    if len(coords) != xa.ndim:
        raise _FuncadValueError(f"coordinates must be a sequence of length input.ndim, but {len(coords)} != "
                                f"{xa.ndim}; give one array of positions per axis of input")
    if mode not in _FIX_INDEX:
        raise NotImplementedError(f"funcad.scipy.ndimage.map_coordinates does not support mode {mode!r} "
                                  f"(as JAX's); the supported modes are {sorted(_FIX_INDEX)}")
    if order not in (0, 1):
        raise NotImplementedError("funcad.scipy.ndimage.map_coordinates requires order 0 or 1 (as JAX's), "
                                  f"got order={order!r}")
    cval = _lax.convert_element_type(_asarray_or_tracer(cval), xa.dtype)
    per_axis = []  # per axis: [(index to gather, in bounds or None, weight)]
    for c, size in zip(coords, xa.shape):
        if order == 0:
            idx = c if _fnp.issubdtype(_aval_of(c).dtype, _np.integer) else _lax.round(c)
            nodes = [(_lax.convert_element_type(idx, _np.int32), _np.ones((), _aval_of(c).dtype))]
        else:
            c = _to_inexact(c)
            lower = _fnp.floor(c)
            upper_w = c - lower
            i = _lax.convert_element_type(lower, _np.int32)
            nodes = [(i, 1 - upper_w), (i + 1, upper_w)]
        per_axis.append([(_FIX_INDEX[mode](i, size), (i >= 0) & (i < size) if mode == "constant" else None, w)
                         for i, w in nodes])
    terms = []
    for corner in _itertools.product(*per_axis):
        idx, valid, weights = zip(*corner)
        value = x[tuple(idx)]
        valid = [v for v in valid if v is not None]
        if valid:
            ok = valid[0]
            for v in valid[1:]:
                ok = ok & v
            value = _fnp.where(ok, value, cval)
        w = weights[0]
        for wi in weights[1:]:
            w = w * wi
        terms.append(w * value)
    out = terms[0]
    for t in terms[1:]:
        out = out + t
    if _fnp.issubdtype(xa.dtype, _np.integer):
        out = _lax.round(out)
    return _lax.convert_element_type(out, xa.dtype)
