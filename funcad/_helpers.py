"""JAX's top-level helpers: device queries and transfers, `eval_shape`,
`disable_jit`, `ensure_compile_time_eval`, `named_call` and `named_scope`.

>>> import funcad, numpy as np
>>> funcad.eval_shape(lambda x: x @ x.T, funcad.ShapeDtypeStruct((3, 2), np.float32))
ShapeDtypeStruct(shape=(3, 3), dtype=float32)
"""
from __future__ import annotations

import contextlib
import functools
import threading
from typing import Any, Callable, Iterator

from .core.avals import ShapedArray, aval_of
from .core.eval_context import ensure_compile_time_eval
from .core.pytree import flatten_fun, tree_flatten, tree_leaves, tree_map, tree_unflatten
from .core.staging import ShapeDtypeStruct, trace_to_jaxpr
from .core.trace import Trace, Tracer, ctx, set_trace
from .core import options as _options
from .lowering import transfer_guard, xla
from .transforms import jit as _jit
from .numpy._dtypes import asarray_or_tracer
from . import config

__all__ = ["block_until_ready", "default_backend", "device_count", "device_get", "devices", "disable_jit", "ensure_compile_time_eval", "eval_shape", "local_device_count", "local_devices", "named_call", "named_scope", "process_count", "process_index", "typeof"]


# ------------------------------------------------------------------ devices ----

def _client(backend):
    return xla.get_client(xla.default_backend() if backend is None else backend)


def default_backend() -> str:
    """The platform `jit` compiles for when none is given: "cpu" or "gpu".

    >>> funcad.default_backend() in ("cpu", "gpu")  # doctest: +SKIP
    True
    """
    return xla.default_backend()


def devices(backend: str | None = None) -> list:
    """The devices of `backend` (default: the default backend), as jaxlib device objects.

    >>> import funcad
    >>> funcad.devices("cpu")
    [CpuDevice(id=0)]
    """
    return list(_client(backend).devices())


def local_devices(process_index: int | None = None, backend: str | None = None,
                  host_id: int | None = None) -> list:
    """The devices of `backend` attached to this process (`process_index`, default this one)."""
    index = host_id if process_index is None else process_index
    client = _client(backend)
    if index is None:
        return list(client.local_devices())
    return [d for d in client.devices() if d.process_index == index]


def device_count(backend: str | None = None) -> int:
    """How many devices `backend` has."""
    return len(devices(backend))


def local_device_count(backend: str | None = None) -> int:
    """How many devices of `backend` this process has."""
    return len(_client(backend).local_devices())


def process_index(backend: str | None = None) -> int:
    """This process's index among the processes of `backend` (0 on one machine)."""
    return _client(backend).process_index()


def process_count(backend: str | None = None) -> int:
    """How many processes share `backend` (1 on one machine)."""
    return len({d.process_index for d in _client(backend).devices()})


def device_get(x: Any):
    """Copy the arrays of a pytree to the host, as NumPy arrays; other leaves
    (Python scalars, strings) come back unchanged, tracers too.

    >>> import funcad, numpy as np
    >>> funcad.device_get({"w": funcad.jit(lambda v: v * 2)(np.ones(2)), "step": 3})
    {'step': 3, 'w': array([2., 2.])}
    """
    if _options.transfer_guards:  # its copies are explicit ones
        with transfer_guard.explicit():
            return tree_map(_device_get, x)
    return tree_map(_device_get, x)


def _device_get(x):
    if isinstance(x, Tracer):
        return x
    to_array = getattr(x, "__array__", None)
    return x if to_array is None else to_array()


def block_until_ready(x):
    """Wait until every array in the pytree `x` is computed; returns `x`. Leaves
    without a `block_until_ready` method (NumPy arrays, scalars) are ready.

    >>> import funcad, numpy as np
    >>> funcad.block_until_ready((funcad.jit(lambda v: v + 1)(np.ones(2)), 3.0))
    (Array([2., 2.], dtype=float64), 3.0)
    """
    for leaf in tree_leaves(x):
        wait = getattr(leaf, "block_until_ready", None)
        if wait is not None and not isinstance(leaf, Tracer):
            wait()
    return x


# -------------------------------------------------------------- eval_shape ----

def _shape_aval(x) -> ShapedArray:
    if isinstance(x, Tracer):
        return x.aval
    if isinstance(x, ShapeDtypeStruct) or (
            hasattr(x, "shape") and hasattr(x, "dtype") and not hasattr(x, "__array__")):
        return ShapedArray(tuple(x.shape), x.dtype, bool(getattr(x, "weak_type", False)))
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
    return tree_unflatten(out_tree[0], [ShapeDtypeStruct(a.shape, a.dtype, weak_type=a.weak_type)
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


def typeof(x: Any) -> ShapedArray:
    """The abstract value of `x`: its shape, dtype, weak type and sharding in its type
    (`.sharding`, over Explicit mesh axes; a tracer's too).

    >>> import numpy as np
    >>> typeof(np.ones((2, 3), np.float32)).str_short()
    'f32[2,3]'
    """
    from .core.refs import Ref  # a ref's type is Ref{...}, as JAX's
    from .lowering.array import is_device_array
    if isinstance(x, Ref) or is_device_array(x):  # a device array's type keeps its sharding
        return x.aval
    return aval_of(asarray_or_tracer(x))
