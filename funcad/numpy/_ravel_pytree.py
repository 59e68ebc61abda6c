"""`ravel_pytree` (`funcad.flatten_util`): a pytree of arrays as one flat vector and back.

>>> import numpy as np
>>> flat, unravel = ravel_pytree([np.ones(2), np.zeros(1)])
>>> unravel(flat)[1]
Array([0.], dtype=float64)
"""
from typing import Any as _Any, Callable as _Callable

import numpy as _np

from .. import lax as _lax
from .. import numpy as _fnp
from ..core.avals import aval_of as _aval_of
from ..core.errors import FuncadValueError as _FuncadValueError
from ..core.pytree import tree_flatten as _tree_flatten, tree_unflatten as _tree_unflatten
from ._jax_dtypes import result_type as _result_type
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer

__all__ = ["ravel_pytree"]


def ravel_pytree(pytree: _Any) -> tuple[_Any, _Callable[[_Any], _Any]]:
    """The leaves of `pytree` raveled and concatenated into one 1-D array, and the function
    that turns such a vector back into a pytree of `pytree`'s structure, shapes and dtypes.

    Leaves of different dtypes are promoted to their common dtype as JAX's type lattice
    does (an integer leaf never widens a float one); `unravel` then expects a vector of
    exactly that dtype and casts each piece back. When every leaf has the same dtype,
    `unravel` keeps the dtype it is given. A pytree without leaves gives an empty
    float32 vector.

    >>> import numpy as np
    >>> flat, unravel = ravel_pytree((np.ones(2, np.float32), np.arange(2, dtype=np.int32)))
    >>> flat.dtype, unravel(flat)[1].dtype
    (dtype('float32'), dtype('int32'))
    """
    leaves, treedef = _tree_flatten(pytree)
    leaves = [_asarray_or_tracer(x) for x in leaves]
    if not leaves:
        return _fnp.zeros((0,), _np.float32), _Unravel(treedef, (), (), None, None)
    avals = [_aval_of(x) for x in leaves]
    from_dtypes = tuple(_np.dtype(a.dtype) for a in avals)
    sizes = tuple(int(_np.prod(a.shape, dtype=int)) for a in avals)
    shapes = tuple(tuple(a.shape) for a in avals)
    to_dtype = _lattice_join(from_dtypes)
    if all(d == to_dtype for d in from_dtypes):
        flat = _fnp.concatenate([_fnp.reshape(x, (-1,)) for x in leaves])
        # one dtype: unravel keeps whatever dtype it is given (JAX's jax#7809 behaviour)
        return flat, _Unravel(treedef, sizes, shapes, None, None)
    flat = _fnp.concatenate([_fnp.reshape(_lax.convert_element_type(x, to_dtype), (-1,)) for x in leaves])
    return flat, _Unravel(treedef, sizes, shapes, from_dtypes, to_dtype)


def _lattice_join(dtypes: tuple) -> _np.dtype:
    """JAX's promotion of strongly typed dtypes: integers and bools join among themselves,
    but next to a float or complex leaf they take the inexact leaves' type."""
    inexact = [d for d in dtypes if _fnp.issubdtype(d, _np.inexact)]
    return _np.dtype(_result_type(*(inexact or dtypes)))


def _cast_back(x, dtype):
    if _aval_of(x).dtype == dtype:
        return x
    if _fnp.iscomplexobj(x) and not _fnp.issubdtype(dtype, _np.complexfloating):
        x = _fnp.real(x)  # a complex vector back to a real leaf keeps the real part, as JAX's
    return _lax.convert_element_type(x, dtype)


class _Unravel:
    """The inverse of one ravel_pytree call; equal (and hashing equal) to another made from
    the same structure, shapes and dtypes, so it can be a static argument of jit."""

    def __init__(self, treedef, sizes, shapes, from_dtypes, to_dtype):
        self._key = (treedef, sizes, shapes, from_dtypes, to_dtype)

    def __call__(self, flat: _Any) -> _Any:
        treedef, sizes, shapes, from_dtypes, to_dtype = self._key
        if not sizes:
            return _tree_unflatten(treedef, [])
        flat = _asarray_or_tracer(flat)
        aval = _aval_of(flat)
        if to_dtype is not None and aval.dtype != to_dtype:
            raise TypeError(f"unravel function given array of dtype {aval.dtype}, but expected dtype {to_dtype}")
        total = sum(sizes)
        if tuple(aval.shape) != (total,):
            raise _FuncadValueError(
                f"unravel function expected an array of shape ({total},), got shape {tuple(aval.shape)}; "
                "pass a vector of the length ravel_pytree returned")
        chunks = _lax.split(flat, sizes) if len(sizes) > 1 else [flat]
        leaves = [_fnp.reshape(c, s) for c, s in zip(chunks, shapes)]
        if from_dtypes is not None:
            leaves = [_cast_back(x, d) for x, d in zip(leaves, from_dtypes)]
        return _tree_unflatten(treedef, leaves)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Unravel) and self._key == other._key

    def __hash__(self) -> int:
        return hash(self._key)

    def __repr__(self) -> str:
        return f"<unravel of {self._key[0]}>"
