"""funcad.scipy.interpolate: RegularGridInterpolator, as in JAX's scipy.interpolate namespace.

>>> import numpy as np
>>> f = RegularGridInterpolator((np.array([0.0, 1.0]),), np.array([0.0, 10.0]))
>>> f(np.array([[0.25], [2.0]]))
Array([2.5, nan], dtype=float64)
"""
import itertools as _itertools

import numpy as _np

from .. import numpy as _fnp
from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadValueError as _FuncadValueError
from ..core.pytree import register_pytree_node as _register_pytree_node
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer, to_inexact as _to_inexact

__all__ = ["RegularGridInterpolator"]

_METHODS = ("linear", "nearest")


class RegularGridInterpolator:
    """Interpolation on a rectangular grid in any number of dimensions, as JAX's
    RegularGridInterpolator (a pytree: grid, values and fill_value are its leaves).

    points: one strictly increasing 1-D array of coordinates per grid axis. values: the
    data on the grid (its trailing axes beyond len(points) are carried along). method:
    "linear" or "nearest". fill_value: the value outside the grid (NaN by default; None
    extrapolates). bounds_error=True is refused, as in JAX: an error that depends on the
    data cannot be raised under jit.

    >>> import numpy as np
    >>> f = RegularGridInterpolator((np.array([1.0, 2.0, 3.0]), np.array([4.0, 5.0, 6.0])),
    ...                             np.array([[10.0, 20.0, 30.0], [40.0, 50.0, 60.0], [70.0, 80.0, 90.0]]))
    >>> f(np.array([[1.5, 4.5], [2.2, 5.8]]))
    Array([30., 64.], dtype=float64)
    """

    def __init__(self, points, values, method: str = "linear", bounds_error: bool = False,
                 fill_value=_np.nan):
        if method not in _METHODS:
            raise _FuncadValueError(f"method {method!r} is not defined; use 'linear' or 'nearest'")
        if bounds_error:
            raise NotImplementedError("RegularGridInterpolator: bounds_error=True is not supported (as in JAX): "
                                      "a data-dependent error has no effect under jit; check the points yourself")
        values = _to_inexact(_fnp.asarray(values))  # a funcad array, indexable by tracers
        vdtype = _aval_of(values).dtype
        if len(points) > _aval_of(values).ndim:
            raise _FuncadValueError(f"there are {len(points)} point arrays, but values has "
                                    f"{_aval_of(values).ndim} dimensions")
        if fill_value is not None:
            fill_value = _fnp.asarray(fill_value)
            if not _np.can_cast(_aval_of(fill_value).dtype, vdtype, casting="same_kind"):
                raise _FuncadValueError(f"fill_value must be either 'None' or of a type compatible with values "
                                        f"({_aval_of(fill_value).dtype} does not cast to {vdtype})")
        self.method = method
        self.bounds_error = bounds_error
        self.fill_value = fill_value
        self.grid = tuple(_fnp.asarray(p) for p in points)
        self.values = values

    def __call__(self, xi, method: str | None = None):
        """The interpolated values at the points xi (..., ndim), or at a tuple of
        coordinate arrays (one per axis, broadcast together)."""
        method = self.method if method is None else method
        if method not in _METHODS:
            raise _FuncadValueError(f"method {method!r} is not defined; use 'linear' or 'nearest'")
        ndim = len(self.grid)
        xi = _points_array(xi, ndim)
        if _aval_of(xi).shape[-1] != ndim:
            raise _FuncadValueError(f"the requested sample points xi have dimension {_aval_of(xi).shape[-1]}, "
                                    f"but this RegularGridInterpolator has dimension {ndim}")
        lead = _aval_of(xi).shape[:-1]
        xi = _fnp.reshape(xi, (-1, ndim))
        indices, dists, outside = [], [], None
        for d, g in enumerate(self.grid):
            x = xi[:, d]
            n = _aval_of(g).shape[0]
            i = _fnp.clip(_fnp.searchsorted(g, x) - 1, 0, n - 2)  # the cell [g[i], g[i+1]] x is in or nearest
            indices.append(i)
            dists.append((x - g[i]) / (g[i + 1] - g[i]))
            out_d = (x < g[0]) | (x > g[-1])
            outside = out_d if outside is None else outside | out_d
        vals = _fnp.asarray(self.values)
        trail = (slice(None),) + (None,) * (_aval_of(vals).ndim - ndim)
        if method == "linear":
            result = None
            for corner in _itertools.product((0, 1), repeat=ndim):
                w = None
                for up, y in zip(corner, dists):
                    wd = y if up else 1 - y
                    w = wd if w is None else w * wd
                term = vals[tuple(i + up for i, up in zip(indices, corner))] * w[trail]
                result = term if result is None else result + term
        else:
            result = vals[tuple(_fnp.where(y <= 0.5, i, i + 1) for i, y in zip(indices, dists))]
        if self.fill_value is not None:
            result = _fnp.where(outside[trail], self.fill_value, result)
        return _fnp.reshape(result, lead + _aval_of(vals).shape[ndim:])


def _points_array(xi, ndim):
    """Sample points as one (..., ndim) array, from an array or a tuple of coordinate arrays."""
    if isinstance(xi, tuple) and len(xi) == 1:
        xi = xi[0]
    if isinstance(xi, tuple):
        parts = _fnp.broadcast_arrays(*xi)
        return _fnp.stack([_fnp.asarray(p, float) for p in parts], axis=-1)
    xi = _asarray_or_tracer(xi)
    if _aval_of(xi).ndim == 1:
        xi = _fnp.reshape(xi, (-1, ndim))
    return xi


def _flatten(f):
    return (f.grid, f.values, f.fill_value), (f.method, f.bounds_error)


def _unflatten(aux, children):
    # no __init__: children may be tracers or placeholders of a transformation
    f = object.__new__(RegularGridInterpolator)
    f.grid, f.values, f.fill_value = children
    f.method, f.bounds_error = aux
    return f


_register_pytree_node(RegularGridInterpolator, _flatten, _unflatten)
