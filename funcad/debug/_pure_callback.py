"""`funcad.pure_callback`: call a Python function on NumPy arrays from inside transformed
code, as JAX's pure_callback (the primitive is in funcad/primitives/callback.py)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.avals import ShapedArray
from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.x64 import explicit_dtype
from ..primitives.callback import VMAP_METHODS, pure_callback_p
from ..arrays.dtypes import asarray_or_tracer
from ..core.sharding import SingleDeviceSharding

__all__ = ["pure_callback"]


class _FlatCallback:
    """The user's callback on flat NumPy arrays: rebuilds (args, kwargs), flattens the result."""

    def __init__(self, callback, in_tree, out_tree):
        self.callback, self.in_tree, self.out_tree = callback, in_tree, out_tree

    def __call__(self, *flat):
        args, kwargs = tree_unflatten(self.in_tree, flat)
        out = self.callback(*args, **kwargs)
        leaves, tree = tree_flatten(out)
        if tree != self.out_tree:
            raise FuncadValueError(f"pure_callback: the callback returned a value of structure "
                                   f"{tree}, but result_shape_dtypes has structure {self.out_tree}")
        return leaves


def result_aval(x, name: str = "pure_callback") -> ShapedArray:
    """The aval a callback's declared result `x` (a ShapeDtypeStruct or array) stands for."""
    if not (hasattr(x, "shape") and hasattr(x, "dtype")):
        raise FuncadTypeError(f"{name}: result_shape_dtypes must hold objects with .shape and "
                              f".dtype (e.g. funcad.ShapeDtypeStruct), got {x!r}")
    return ShapedArray(tuple(x.shape), np.dtype(explicit_dtype(x.dtype)))


def pure_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                  sharding: Any = None, vmap_method: str | None = None, **kwargs: Any):
    """Call the Python function `callback` on funcad arrays, also under jit, vmap and
    inside loops; `result_shape_dtypes` (a pytree of `ShapeDtypeStruct`s) declares what
    it returns. As in JAX the callback must be pure (it may be called any number of
    times, or not at all), has no derivative (wrap it in `custom_jvp`), and under vmap
    `vmap_method` says how it sees the batch: "sequential" (once per entry),
    "expand_dims" (once, unbatched arguments with a leading axis of 1), "broadcast_all"
    (unbatched arguments broadcast), or "legacy_vectorized".

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> def host_sin(x):
    ...     return np.sin(x)
    >>> f = lambda x: funcad.pure_callback(host_sin, funcad.ShapeDtypeStruct(x.shape, x.dtype), x)
    >>> funcad.jit(f)(fnp.zeros(2)).tolist()
    [0.0, 0.0]
    """
    if vmap_method not in VMAP_METHODS:
        raise FuncadValueError(f"vmap_method must be one of {list(VMAP_METHODS)}, got {vmap_method!r}")
    if sharding is not None:
        if not isinstance(sharding, SingleDeviceSharding):
            raise FuncadValueError("pure_callback only supports a SingleDeviceSharding (as JAX), "
                                   f"got {sharding!r}")
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_leaves, out_tree = tree_flatten(result_shape_dtypes)
    avals = tuple(result_aval(x) for x in result_leaves)
    outs = pure_callback_p.bind(*[asarray_or_tracer(a) for a in flat_args],
                                callback=_FlatCallback(callback, in_tree, out_tree),
                                result_avals=avals, vmap_method=vmap_method)
    return tree_unflatten(out_tree, outs)
