"""The operations on mutable array references (JAX's `jax.ref`): creation, indexed
reads and writes, freeze. A Ref is a box (funcad/core/refs.py); these write its new
value with funcad ops, so grad, jvp, vmap and jit see the functional program."""
from __future__ import annotations

from typing import Any

import numpy as np

from .. import lax
from ..core import refs as _r
from ..core.avals import aval_of
from ..core.refs import AbstractRef, Ref
from ..core.staging import ShapeDtypeStruct
from ..core.trace import Tracer, ctx
from ..core.pytree import register_pytree_node
from ..numpy import asarray, zeros


class Slice:
    """A slice with a start index (static or traced), a static size and stride, as
    JAX's `Slice` (`funcad.ds(start, size)` builds one); a pytree whose start is a leaf
    when traced.

    >>> import funcad, funcad.numpy as fnp
    >>> r = funcad.new_ref(fnp.arange(5.0))
    >>> r[funcad.ds(1, 2)]
    Array([1., 2.], dtype=float64)
    """

    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride: int = 1):
        if stride < 0:
            raise ValueError("`stride` must be >= 0.")
        self.start, self.size, self.stride = start, size, stride

    def __repr__(self):
        return f"Slice(start={self.start!r}, size={self.size!r}, stride={self.stride!r})"

    def __eq__(self, other):
        return isinstance(other, Slice) and (self.start, self.size, self.stride) == (
            other.start, other.size, other.stride)

    __hash__ = None

    @property
    def is_dynamic_start(self) -> bool:
        return not _is_static_int(self.start)

    @property
    def is_dynamic_size(self) -> bool:
        return not _is_static_int(self.size)

    @classmethod
    def from_slice(cls, slc: slice, size: int) -> "Slice":
        start, stop, step = slc.indices(size)
        if step < 1:
            raise ValueError(f"slice must have a step >= 1 (found: {step})")
        return cls(start, max(0, (stop - start + step - 1) // step), step)


def _is_static_int(x) -> bool:
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def _slice_flatten(s: Slice):
    dyn = s.is_dynamic_start
    return ((s.start,) if dyn else (), (dyn, None if dyn else s.start, s.size, s.stride))


def _slice_unflatten(aux, children):
    dyn, start, size, stride = aux
    return Slice(children[0] if dyn else start, size, stride)


class _NotSpecified:
    pass


def ds(start, size: Any = _NotSpecified(), stride: int | None = None) -> "Slice | slice":
    """A `Slice` from a start and a size, as JAX's `ds`: `ds(None)` is `:`, `ds(j)` is
    `:j`, `ds(i, n)` is `i:i+n` and `ds(i, n, k)` is `i:i+n:k`; `i` may be traced.

    >>> import funcad
    >>> funcad.ds(2, 3)
    Slice(start=2, size=3, stride=1)
    """
    if start is None:
        if isinstance(size, _NotSpecified):
            return slice(None, None, stride)
        start = 0
    if stride is None:
        stride = 1
    if not isinstance(stride, (int, np.integer)):
        raise ValueError("Non-static stride in `dslice`")
    if isinstance(size, _NotSpecified):
        start, size = 0, start
    return Slice(start, size, int(stride))


dslice = ds

# ------------------------------------------------------------------ indexing ----


def _normalize(idx, ndim: int) -> tuple:
    """idx as a tuple; `...` expanded where there is no array index to place."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    return idx


def _dynamic_parts(x, idx: tuple):
    """Split dynamic Slices out of idx: (x cut to their windows, index into the window,
    starts per axis or None). Static Slices become Python slices (checked in bounds)."""
    idx = _normalize(idx, x.ndim)
    n_ell = sum(1 for i in idx if i is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    consumed = sum(1 for i in idx if i is not None and i is not Ellipsis)
    if any(isinstance(i, Slice) for i in idx):
        if n_ell == 0:
            idx = idx + (Ellipsis,)
        pos = idx.index(Ellipsis)
        idx = idx[:pos] + (slice(None),) * (x.ndim - consumed) + idx[pos + 1:]
    out, starts, axis = [], None, 0
    for i in idx:
        if isinstance(i, Slice):
            dim = x.shape[axis]
            span = (i.size - 1) * i.stride + 1 if i.size > 0 else 0
            if not i.is_dynamic_start:
                if i.start < 0 or i.start + span > dim:
                    raise ValueError(f"Out of bound slice: start={i.start}, size={i.size}, "
                                     f"stride={i.stride}, dim={dim}.")
                out.append(slice(i.start, i.start + span, i.stride))
            else:
                if starts is None:
                    starts = [0] * x.ndim
                starts[axis] = lax.convert_element_type(asarray(i.start), np.int32)
                out.append((span, i.stride))
        else:
            out.append(i)
        if i is not None:
            axis += 1
    if starts is None:
        return x, tuple(out), None
    sizes = [o[0] if isinstance(o, tuple) else d for o, d in zip(
        [o for o in out if o is not None], x.shape)]
    starts = [s if not isinstance(s, int) else np.int32(s) for s in starts]
    window = lax.dynamic_slice(x, starts, sizes)
    inner = tuple(slice(None, None, o[1]) if isinstance(o, tuple) else o for o in out)
    return window, inner, (starts, sizes)


def _whole(idx) -> bool:
    return idx is Ellipsis or (type(idx) is tuple and (not idx or idx == (Ellipsis,)))


def _read(x, idx):
    window, inner, _ = _dynamic_parts(x, idx)
    return window[inner]


def _write(x, idx, v, how: str):
    window, inner, dyn = _dynamic_parts(x, idx)
    at = window.at[inner]
    new = at.set(v) if how == "set" else at.add(v)
    if dyn is None:
        return new
    return lax.dynamic_update_slice(x, new, dyn[0])

# ---------------------------------------------------------------- operations ----


def _value_of(ref: Ref):
    _r.check_live(ref)
    _r.touch(ref)
    return ref._value


def _check_value(ref: Ref, x, expected, op: str):
    v = asarray(x)
    a = aval_of(v)
    if a.shape != tuple(expected.shape):
        raise ValueError(f"Invalid shape for `{op}`. Ref shape: {ref.shape}. Expected shape: "
                         f"{tuple(expected.shape)}. Value shape: {a.shape}. Transforms: ().")
    if a.dtype != ref.dtype:
        raise ValueError(f"Invalid dtype for `{op}`. Ref dtype: {ref.dtype}. Value dtype: {a.dtype}.")
    return v


def _check_ref(ref, op: str) -> Ref:
    if not isinstance(ref, Ref):
        raise ValueError(f"`{op}` must be called on `Ref` types: {aval_of(ref).str_short()}. "
                         "Create one with funcad.new_ref(value).")
    return ref


def get(ref: Ref, idx=()):
    """`ref[idx]`: the indexed part of the ref's current value.

    >>> import funcad, funcad.numpy as fnp
    >>> funcad.ref.get(funcad.new_ref(fnp.arange(3.0)), 1)
    Array(1., dtype=float64)
    """
    x = _value_of(_check_ref(ref, "get"))
    return x if _whole(idx) else _read(x, idx)


def swap(ref: Ref, idx, value):
    """Write `value` at `ref[idx]` and return the previous contents there.

    >>> import funcad, funcad.numpy as fnp
    >>> r = funcad.new_ref(fnp.zeros(2))
    >>> funcad.ref.swap(r, 0, 5.0), r[...]
    (Array(0., dtype=float64), Array([5., 0.], dtype=float64))
    """
    x = _value_of(_check_ref(ref, "swap"))
    whole = _whole(idx)
    old = x if whole else _read(x, idx)
    v = _check_value(ref, value, old, "swap")
    _r.check_write(ref, v)
    ref._value = v if whole else _write(x, idx, v, "set")
    return old


def set(ref: Ref, idx, value) -> None:  # noqa: A001  (JAX's name)
    """`ref[idx] = value` (shape and dtype must match exactly, as JAX's).

    >>> import funcad, funcad.numpy as fnp
    >>> r = funcad.new_ref(fnp.zeros(2)); funcad.ref.set(r, (), fnp.ones(2)); r[...]
    Array([1., 1.], dtype=float64)
    """
    swap(ref, idx, value)


def addupdate(ref: Ref, idx, value) -> None:
    """`ref[idx] += value`, one accumulation (JAX's `ref_addupdate`).

    >>> import funcad, funcad.numpy as fnp
    >>> r = funcad.new_ref(fnp.ones(2)); funcad.ref.addupdate(r, 0, 2.0); r[...]
    Array([3., 1.], dtype=float64)
    """
    x = _value_of(_check_ref(ref, "addupdate"))
    whole = _whole(idx)
    v = _check_value(ref, value, x if whole else _read(x, idx), "addupdate")
    _r.check_write(ref, v)
    ref._value = lax.add(x, v) if whole else _write(x, idx, v, "add")


_SPACES = (None, "device", "host")


def _space(memory_space):
    name = getattr(memory_space, "name", memory_space)
    if isinstance(name, str):
        name = name.lower()
    if name not in _SPACES:
        raise ValueError(f"new_ref: memory_space={memory_space!r} is not a memory space of this "
                         "backend; pass None, 'device' or 'host' (one memory on the CPU).")
    return name


def _no_pin(pin, kind=None, what="new_ref") -> None:
    # JAX's pin lowers the ref to a pinned (host) buffer and kind picks other mutation
    # semantics under transformations; funcad's refs have one kind and no pinned buffers
    if pin:
        raise NotImplementedError(f"{what}: pin=True needs pinned buffers, which funcad lacks; "
                                  "leave pin=False")
    if kind is not None:
        raise NotImplementedError(f"{what}: kind={kind!r} needs other ref mutation semantics, "
                                  "which funcad lacks; leave kind=None")


def new_ref(init_val, *, memory_space: Any = None, kind: str | None = None, pin: bool = False) -> Ref:
    """A mutable array reference holding a copy of `init_val` (weak types made strong).

    >>> import funcad, funcad.numpy as fnp
    >>> r = funcad.new_ref(fnp.arange(3.0))
    >>> r[1] = 10.0
    >>> r
    Ref([ 0., 10.,  2.], dtype=float64)
    """
    _space(memory_space)
    _no_pin(pin, kind)
    if isinstance(init_val, (list, tuple, dict)) or isinstance(init_val, Ref) or not (
            isinstance(init_val, (Tracer, np.ndarray, np.generic, int, float, complex, bool))
            or hasattr(init_val, "__array__")):
        raise TypeError(f"Error interpreting argument to new_ref as a JAX value. The problematic value "
                        f"is of type {type(init_val)} and was passed to new_ref at position 0. Pass "
                        "an array (funcad.numpy.asarray(...)) of the ref's shape and dtype.")
    x = asarray(init_val)
    x = lax.convert_element_type(x, aval_of(x).dtype)  # strong type, as JAX's refs
    ref = Ref(x, ctx.trace)
    _r.created(ref)
    return ref


def empty_ref(ty, memory_space: Any = None, pin: bool = False) -> Ref:
    """A ref of the shape and dtype of `ty` (a ShapeDtypeStruct or an array). Its
    contents are zeros (JAX leaves them unspecified; read them only after writing).

    >>> import funcad
    >>> funcad.empty_ref(funcad.ShapeDtypeStruct((2,), "float32")).shape
    (2,)
    """
    _space(memory_space)
    _no_pin(pin, what="empty_ref")
    if not hasattr(ty, "shape") or not hasattr(ty, "dtype"):
        raise TypeError(f"empty_ref: expected a ShapeDtypeStruct or an array, got {type(ty).__name__}")
    ref = Ref(zeros(tuple(ty.shape), ty.dtype), ctx.trace)
    _r.created(ref)
    return ref


def freeze(ref: Ref):
    """The ref's final value; under a transformation the ref is invalid afterwards.

    >>> import funcad, funcad.numpy as fnp
    >>> r = funcad.new_ref(fnp.zeros(2)); r[0] = 1.0
    >>> funcad.ref.freeze(r)
    Array([1., 0.], dtype=float64)
    """
    x = _value_of(_check_ref(ref, "freeze"))
    if ctx.trace is not None:
        ref._frozen = True
    return x


def free_ref(ref: Ref) -> tuple:
    """Invalidate `ref` (under a transformation; eagerly a no-op, as JAX's). Returns ()."""
    _value_of(_check_ref(ref, "free_ref"))
    if ctx.trace is not None:
        ref._frozen = True
    return ()

# ------------------------------------------------------------ Ref's methods ----


def _repr(self) -> str:
    v = self._value
    if isinstance(v, Tracer):
        return f"Traced<{self.aval.str_short()}>"
    body = np.array2string(np.asarray(v), separator=", ", prefix="Array(")  # JAX's indent
    return f"Ref({body}, dtype={v.dtype.name})"


def _len(self) -> int:
    if not self.shape:
        raise TypeError("len() of unsized object")
    return self.shape[0]


def _not_array(self, *a, **k):
    raise TypeError(f"a Ref of type {self.aval.str_short()} can't be used where an array is expected. "
                    "Did you forget to read its value with `ref[...]`?")


def _addupdate_method(self, x, idx=()):
    addupdate(self, idx, x)


def _install():
    register_pytree_node(Slice, _slice_flatten, _slice_unflatten)
    Ref.__getitem__ = lambda self, idx: get(self, idx)
    Ref.__setitem__ = lambda self, idx, v: set(self, idx, v)
    Ref.__len__ = _len
    Ref.__repr__ = _repr
    Ref.addupdate = _addupdate_method
    Ref.__array__ = _not_array
    Ref.__bool__ = lambda self: bool(_len(self))
    Ref.__doc__ = ("Mutable array reference (JAX's jax.Ref): `funcad.new_ref(x)` makes one; "
                   "`r[idx]` reads, `r[idx] = v` writes, `r[idx] += v` accumulates.")


_install()

__all__ = ["AbstractRef", "Ref", "Slice", "addupdate", "ds", "dslice", "empty_ref", "free_ref", "freeze",
           "get", "new_ref", "set", "swap", "ShapeDtypeStruct"]
