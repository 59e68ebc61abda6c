"""`funcad.debug.callback` and `funcad.experimental.io_callback`: Python functions called
for their effects from inside transformed code, as JAX's (the primitives are in
funcad/primitives/effects.py)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..core.errors import FuncadTypeError, FuncadValueError
from ..core.pytree import tree_flatten, tree_leaves, tree_unflatten
from ..core.trace import Tracer
from ._pure_callback import result_aval
from ..primitives.callback import host_array
from ..primitives.effects import debug_callback_p, io_callback_p
from ..numpy import asarray
from ..arrays.dtypes import asarray_or_tracer
from ..core.sharding import SingleDeviceSharding

__all__ = ["debug_callback", "io_callback"]

_SCALARS = (bool, int, float, complex)


def _is_array(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Tracer, *_SCALARS)) or hasattr(x, "__array__")


def _operand(x):
    # Python scalars become arrays of funcad's default dtypes (32-bit with x64 off), as in JAX.
    return asarray(x) if type(x) in _SCALARS else asarray_or_tracer(x)


class _DebugCall:
    """The user's callback on the array leaves: puts the static leaves (strings, ...) back,
    rebuilds (args, kwargs) and calls it, discarding what it returns."""

    def __init__(self, callback, in_tree, static: dict):
        self.callback, self.in_tree, self.static = callback, in_tree, static

    def __call__(self, *dyn):
        it = iter(dyn)
        leaves = [self.static[i] if i in self.static else host_array(next(it))
                  for i in range(len(self.static) + len(dyn))]
        args, kwargs = tree_unflatten(self.in_tree, leaves)
        self.callback(*args, **kwargs)


def debug_callback(callback: Callable[..., None] | None = None, *args: Any, ordered: bool = False,
                   partitioned: bool = False, **kwargs: Any) -> Callable[..., None] | None:
    """Call the Python function `callback(*args, **kwargs)` for its effect (logging,
    collecting values), also under jit, vmap, grad and inside loops, as `jax.debug.callback`.

    It sees funcad arrays holding concrete values: under vmap it is called once per batch
    entry, under grad/jvp with the primal values (never with tangents), in a loop once per
    iteration; jit and the optimiser never remove it, and XLA runs the calls of one block in
    program order (`ordered=True` asks for that, as in JAX). Non-array arguments (strings,
    ...) are passed through unchanged. Its return value is ignored; it returns None.
    `debug_callback(ordered=True)(callback, *args)` is JAX's two-call form.

    >>> import funcad, funcad.numpy as fnp
    >>> seen = []
    >>> def f(x):
    ...     funcad.debug.callback(lambda v: seen.append(float(v)), x)
    ...     return fnp.sin(x)
    >>> _ = funcad.jit(funcad.grad(f))(0.5)
    >>> seen
    [0.5]
    """
    def call(callback, *c_args, **c_kwargs) -> None:
        if not callable(callback):
            raise FuncadTypeError("first argument to funcad.debug.callback must be callable, but "
                                  f"got an object of type {type(callback).__name__}")
        leaves, in_tree = tree_flatten((c_args, c_kwargs))
        static = {i: x for i, x in enumerate(leaves) if not _is_array(x)}
        dyn = [_operand(x) for i, x in enumerate(leaves) if i not in static]
        debug_callback_p.bind(*dyn, callback=_DebugCall(callback, in_tree, static),
                              ordered=bool(ordered), partitioned=bool(partitioned))

    if callback is not None:
        call(callback, *args, **kwargs)
        return None
    if args or kwargs:
        raise FuncadTypeError("funcad.debug.callback received unexpected arguments in the "
                              f"two-call form: args={args} kwargs={kwargs}; write "
                              "funcad.debug.callback(ordered=...)(callback, *args, **kwargs)")
    return call


class _IOCall:
    """The user's callback on flat host arrays: rebuilds (args, kwargs), returns the leaves
    of its result (their structure is not checked, as in JAX)."""

    def __init__(self, callback, in_tree):
        self.callback, self.in_tree = callback, in_tree

    def __call__(self, *flat):
        args, kwargs = tree_unflatten(self.in_tree, [host_array(x) for x in flat])
        return [np.asarray(x) for x in tree_leaves(self.callback(*args, **kwargs))]


def io_callback(callback: Callable[..., Any], result_shape_dtypes: Any, *args: Any,
                sharding: Any = None, ordered: bool = False, **kwargs: Any) -> Any:
    """Call an impure Python function (I/O, state) from inside transformed code, as
    `jax.experimental.io_callback`: `result_shape_dtypes` (a pytree of
    `ShapeDtypeStruct`s, or None) declares what it returns.

    Every call happens (jit and the optimiser keep it), in program order within a block;
    in a loop once per iteration. Under vmap it is called once per batch entry in turn,
    unless `ordered=True`, which cannot be batched (JAX's error). It has no derivative: wrap
    it in `custom_jvp`, or `stop_gradient` its arguments.

    >>> import funcad, numpy as np
    >>> from funcad.experimental import io_callback
    >>> log = []
    >>> def save(x):
    ...     log.append(float(x))
    ...     return np.float64(len(log))
    >>> spec = funcad.ShapeDtypeStruct((), np.float64)
    >>> float(funcad.jit(lambda x: io_callback(save, spec, x * 2.0))(1.0)), log
    (1.0, [2.0])
    """
    if not callable(callback):
        raise FuncadTypeError("first argument to io_callback must be callable, but got an "
                              f"object of type {type(callback).__name__}")
    if sharding is not None:
        if not isinstance(sharding, SingleDeviceSharding):
            raise FuncadValueError("io_callback in funcad takes only a SingleDeviceSharding "
                                   f"(a program on one device), got {sharding!r}")
    flat_args, in_tree = tree_flatten((args, kwargs))
    result_leaves, out_tree = tree_flatten(result_shape_dtypes)
    avals = tuple(result_aval(x, "io_callback") for x in result_leaves)
    outs = io_callback_p.bind(*[_operand(a) for a in flat_args], callback=_IOCall(callback, in_tree),
                              result_avals=avals, sharding=sharding, ordered=bool(ordered))
    return tree_unflatten(out_tree, outs)
