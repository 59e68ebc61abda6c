"""Tracing helpers of JAX's top level: `eval_shape`, `disable_jit`, `named_call`,
`named_scope` (and `ensure_compile_time_eval`, from core).

>>> import funcad, numpy as np
>>> funcad.eval_shape(lambda x: x @ x.T, funcad.ShapeDtypeStruct((3, 2), np.float32))
ShapeDtypeStruct(shape=(3, 3), dtype=float32)
"""
from __future__ import annotations

import contextlib
import functools
import threading
from typing import Callable, Iterator

from ..core.avals import ShapedArray, aval_of
from ..core.eval_context import ensure_compile_time_eval
from ..core.pytree import flatten_fun, tree_flatten, tree_unflatten
from ..core.staging import ShapeDtypeStruct, struct_aval, trace_to_jaxpr
from ..core.trace import Tracer, ctx
from . import jit as _jit

__all__ = ["disable_jit", "ensure_compile_time_eval", "eval_shape", "named_call", "named_scope"]


# -------------------------------------------------------------- eval_shape ----

def _shape_aval(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, ShapeDtypeStruct) or (
            hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__")):
        return struct_aval(x)
    return aval_of(x)


def eval_shape(fun: Callable, *args, **kwargs):
    """The shapes and dtypes `fun(*args, **kwargs)` would return, as a pytree of
    ShapeDtypeStruct, found by tracing: nothing is computed. Arguments may be
    arrays, scalars, or anything with `.shape` and `.dtype` (e.g. ShapeDtypeStruct).

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> x = funcad.ShapeDtypeStruct((1000, 3), np.float32)
    >>> funcad.eval_shape(lambda x: {"mean": fnp.mean(x, axis=0), "n": x.shape[0]}, x)
    {'mean': ShapeDtypeStruct(shape=(3,), dtype=float32), 'n': ShapeDtypeStruct(shape=(), dtype=int64, weak_type=True)}
    """
    leaves, in_tree = tree_flatten((args, kwargs))
    flat_fun, out_tree = flatten_fun(lambda a, kw: fun(*a, **kw), in_tree)
    closed = trace_to_jaxpr(flat_fun, [_shape_aval(x) for x in leaves], name="eval_shape",
                            parent=ctx.trace)
    # a result typed over Explicit mesh axes carries its sharding, as JAX's
    return tree_unflatten(out_tree[0], [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type,
                                                         sharding=a._sharding)
                                        for a in closed.out_avals])


# ---------------------------------------------------------- tracing context ----

class _JitSwitch(threading.local):
    disabled = False


_switch = _JitSwitch()
_switch_lock = threading.Lock()
_open_blocks = 0   # disable_jit blocks open in any thread
_compiled_call = None  # Jitted.__call__ while a block is open


def _maybe_eager_call(self, *args, **kwargs):
    if _switch.disabled:
        return self.fun(*args, **kwargs)
    return _compiled_call(self, *args, **kwargs)


@contextlib.contextmanager
def disable_jit(disable: bool = True) -> Iterator[None]:
    """Inside this block (in this thread) jitted functions run their Python
    code eagerly, op by op, instead of compiling: for debugging with prints
    and breakpoints.

    >>> import funcad
    >>> f = funcad.jit(lambda x: print("traced with", x) or x * 2)
    >>> with funcad.disable_jit():
    ...     f(3.0)
    traced with 3.0
    6.0
    """
    # While any block is open, Jitted.__call__ is swapped for one that checks
    # this thread's switch, so jit's dispatch path pays nothing otherwise.
    global _open_blocks, _compiled_call
    with _switch_lock:
        if _open_blocks == 0:
            _compiled_call = _jit.Jitted.__call__
            _jit.Jitted.__call__ = _maybe_eager_call
        _open_blocks += 1
    prev, _switch.disabled = _switch.disabled, bool(disable)
    try:
        yield
    finally:
        _switch.disabled = prev
        with _switch_lock:
            _open_blocks -= 1
            if _open_blocks == 0:
                _jit.Jitted.__call__ = _compiled_call


def named_call(fun: Callable, *, name: str | None = None) -> Callable:
    """`fun` under the name `name` (default: its own). JAX records the name in
    its name stack for profilers; funcad has no name stack, so the wrapper
    computes exactly what `fun` does.

    >>> import funcad
    >>> funcad.named_call(lambda x: x + 1, name="inc")(1.0)
    2.0
    """
    if name is None:
        name = fun.__name__

    @functools.wraps(fun)
    def named(*args, **kwargs):
        return fun(*args, **kwargs)

    named.__name__ = name
    return named


@contextlib.contextmanager
def named_scope(name: str) -> Iterator[None]:
    """A block named `name` for profilers (a context manager, as in JAX); funcad
    has no name stack, so the block runs unchanged.

    >>> import funcad
    >>> with funcad.named_scope("layer1"):
    ...     y = 2.0 * 3.0
    """
    if not isinstance(name, str):
        raise TypeError(f"named_scope takes a string name, got {name!r}")
    yield
