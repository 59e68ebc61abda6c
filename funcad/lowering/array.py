"""`Array`: a device-resident result of a jitted call.

It wraps jaxlib's device buffer so that results of one jitted call flow into
the next without a host round trip. In eager funcad code it behaves like an
array: its operators and methods are funcad.numpy's, and funcad.numpy turns
it into NumPy (once; the host copy is cached) through `__funcad_array__`.
jax's own array methods are never exposed.

>>> import funcad, numpy as np
>>> y = funcad.jit(lambda x: x * 2.0)(np.arange(3.0))
>>> y
Array([0., 2., 4.], dtype=float64)
>>> float((y + 1.0).sum())
9.0
"""
from __future__ import annotations

import numpy as np

from . import transfer_guard as _guard, xla
from ..core import options as _options
from ..core.avals import ShapedArray
from ..core import eager, x64
from ..core.eager import EagerArray
from ..core.trace import Tracer
from ..core.sharding import SingleDeviceSharding


class _ArrayType(type):
    """`isinstance(x, funcad.Array)` holds for every funcad array value, as
    `isinstance(x, jax.Array)` does in JAX: device arrays, eager results and tracers (not
    plain NumPy arrays). Code that needs a device buffer tests `type(x) is Array`."""

    # Array types of higher layers that count as funcad arrays too (funcad.random's
    # key arrays, as JAX's key arrays are jax.Arrays); see register_array_type.
    virtual: tuple = (EagerArray, Tracer)

    def __instancecheck__(cls, obj) -> bool:
        return type.__instancecheck__(cls, obj) or (cls is Array and isinstance(obj, _ArrayType.virtual))

    def __subclasscheck__(cls, sub) -> bool:
        return type.__subclasscheck__(cls, sub) or (
            cls is Array and isinstance(sub, type) and issubclass(sub, _ArrayType.virtual))


def register_array_type(cls: type) -> type:
    """Make `isinstance(x, funcad.Array)` hold for instances of `cls` (a class of a
    higher layer, which this one cannot import)."""
    _ArrayType.virtual += (cls,)
    return cls


def is_device_array(x) -> bool:
    """Whether x holds device buffers (an `Array` or `ShardedArray`), not an eager value."""
    return type.__instancecheck__(Array, x)


class Array(metaclass=_ArrayType):
    """An array living on an XLA device (CPU or GPU).

    As the type in `isinstance` checks it stands for any funcad array, as JAX's does:

    >>> import funcad, funcad.numpy as fnp
    >>> isinstance(fnp.arange(3.0), funcad.Array), isinstance([1.0], funcad.Array)
    (True, False)
    """

    __slots__ = ("_buf", "aval", "_device", "_host")
    __array_priority__ = 100  # below tracers (1000): x_tracer + array traces

    def __init__(self, buf, aval: ShapedArray, device):
        self._buf = buf            # jaxlib's device array; never handed to the user
        self.aval = aval           # funcad's aval (keeps the weak type)
        self._device = device
        self._host = None          # NumPy copy, made on first use

    # -- values ------------------------------------------------------------
    def _value(self, guarded: bool = True) -> np.ndarray:
        # `guarded=False`: a copy the caller has guarded already (device to device)
        if self._host is None:
            if guarded and _options.transfer_guards:
                _guard.device_to_host(self.aval, self._device)
            if self._buf.is_deleted():
                raise RuntimeError("this Array was donated to a jitted call (donate_argnums) "
                                   "and its buffer was deleted; use the call's result instead")
            # np.asarray of a CPU buffer is a read-only zero-copy view.
            self._host = np.asarray(self._buf)
        return self._host

    def __funcad_array__(self) -> np.ndarray:
        return self._value()

    def __array__(self, dtype=None, copy=None):
        v = self._value()
        if dtype is not None and np.dtype(dtype) != v.dtype:
            return v.astype(dtype)
        return v.copy() if copy else v

    def block_until_ready(self) -> "Array":
        """Wait for the computation that produces this array; returns self."""
        self._buf.block_until_ready()
        return self

    def devices(self) -> set:
        return self._buf.devices()

    @property
    def device(self):
        return self._device

    @property
    def sharding(self):
        return SingleDeviceSharding(self._device)

    @property
    def addressable_shards(self) -> list:
        return [Shard(self._device, tuple(slice(None) for _ in self.shape), self)]

    @property
    def is_fully_replicated(self) -> bool:
        return True

    def delete(self) -> None:
        self._buf.delete()
        self._host = None

    def is_deleted(self) -> bool:
        return self._buf.is_deleted()

    # -- array protocol ----------------------------------------------------
    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: self.aval.size)
    weak_type = property(lambda self: self.aval.weak_type)
    nbytes = property(lambda self: self.aval.size * self.aval.dtype.itemsize)

    def item(self, *args):
        return self._value().item(*args)

    def tolist(self):
        return self._value().tolist()

    def copy(self) -> np.ndarray:
        return np.array(self._value())

    def __bool__(self):
        return bool(self._value())

    def __int__(self):
        return int(self._value())

    def __float__(self):
        return float(self._value())

    def __complex__(self):
        return complex(self._value())

    def __index__(self):
        return int(self._value())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d array")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return iter(self._value())

    def __format__(self, spec):
        return format(self._value().item() if not self.shape else self._value(), spec)

    def __repr__(self):
        body = np.array2string(self._value(), separator=", ", prefix="Array(")
        return f"Array({body}, dtype={self.dtype.name})"

    def __str__(self):
        return str(self._value())

    def __reduce__(self):  # pickles as NumPy
        return (np.asarray, (np.array(self._value()),))

    # -- DLPack (np.from_dlpack(x), torch.from_dlpack(x), funcad.dlpack.from_dlpack) --
    def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
        """A DLPack capsule of this array's device buffer (zero-copy unless `copy` or
        `dl_device` asks for one), as a `jax.Array` exports it."""
        buf = self._dlpack_buffer()
        kw = {k: v for k, v in (("max_version", max_version), ("dl_device", dl_device),
                                ("copy", copy)) if v is not None}
        return buf.__dlpack__(stream=stream, **kw)

    def __dlpack_device__(self) -> tuple:
        """(DLPack device type, device index) of the buffer: (1, 0) for the first CPU."""
        return self._dlpack_buffer().__dlpack_device__()

    def _dlpack_buffer(self):
        if self._buf.is_deleted():
            raise RuntimeError("this Array was donated to a jitted call (donate_argnums) and its "
                               "buffer was deleted; DLPack cannot export it")
        if len(self.devices()) > 1:
            raise BufferError(f"DLPack exports one device's buffer, but this Array spans "
                              f"{len(self.devices())} devices; export one shard "
                              "(x.addressable_shards[i].data) or device_put it to one device")
        return self._buf


# Array's NumPy-style methods (x.sum(), x.T, ...) are installed from above, by funcad.numpy,
# as the tracers' are.
eager.hooks.cpu_device = staticmethod(lambda: xla.get_client("cpu").devices()[0])


class Shard:
    """One device's piece of an `Array` (JAX's `jax.Shard`): `.device`, `.index`
    (slices of the global array), `.replica_id` (0 for the first device holding
    that piece, 1 for the next copy, ...) and `.data` (an Array on that device)."""

    __slots__ = ("device", "index", "replica_id", "data")

    def __init__(self, device, index=None, data=None, replica_id: int = 0, *, sharding=None,
                 global_shape=None):
        if sharding is not None or global_shape is not None:
            raise TypeError("Shard(device, sharding=..., global_shape=..., data) is JAX's constructor, "
                            "which funcad does not have: funcad's Shard holds a device, the index of "
                            "its piece and the data, and Array.addressable_shards builds them")
        self.device, self.index, self.data, self.replica_id = device, index, data, replica_id

    def __repr__(self):
        return (f"Shard(device={self.device!r}, index={self.index}, replica_id={self.replica_id}, "
                f"data={self.data!r})")


class ShardedArray(Array):
    """An `Array` laid out over several devices (a `funcad.sharding.Sharding`).

    Eager funcad code and NumPy see the whole array (gathered once);
    `addressable_shards` gives the per-device pieces. Programs compiled for
    the same layout take its per-device buffers as they are.
    """

    __slots__ = ()

    def __init__(self, buf, aval: ShapedArray, sharding):
        super().__init__(buf, aval, sharding)

    @property
    def sharding(self):
        return self._device

    @property
    def device(self):  # as in JAX: the sharding when the array spans several devices
        return self._device

    def devices(self) -> set:
        return set(self._device.device_set)

    @property
    def is_fully_replicated(self) -> bool:
        return self._device.is_fully_replicated

    @property
    def addressable_shards(self) -> list:
        out, copies = [], {}
        for d, idx, b in shards(self._buf):
            key = repr(idx)
            copies[key] = copies.get(key, -1) + 1
            out.append(Shard(d, idx, Array(b, ShapedArray(np.shape(b), self.aval.dtype), d), copies[key]))
        return out



def from_dlpack(external, device=None, copy: bool | None = None) -> Array:
    """A device `Array` over the DLPack tensor `external` (an object with `__dlpack__`
    and `__dlpack_device__`), through jaxlib's DLPack import: on `device` (a jaxlib
    Device; None: the device the data is on), sharing its memory unless `copy` is
    True or the data must move (which `copy=False` refuses with a ValueError)."""
    xla._load()
    jax = xla._jax
    with xla.jax_x64_scope():  # funcad canonicalizes dtypes itself, below, by its own x64 mode
        try:
            buf = jax.dlpack.from_dlpack(external, device=device, copy=copy)
        except BufferError:
            # a read-only NumPy array (an eager funcad value) to a jax whose DLPack predates
            # 1.0 (jax 0.6), which cannot signal read-only: through a writable copy
            if copy is False or not isinstance(external, np.ndarray):
                raise
            buf = jax.dlpack.from_dlpack(np.array(external), device=device)
    dev = next(iter(buf.devices()))
    dev = next((d for d in xla.get_client(xla._canonical(dev.platform)).devices() if d.id == dev.id), dev)
    dtype = x64.canonicalize_dtype(buf.dtype)
    if dtype != buf.dtype or copy:
        # 64-bit data with x64 off is converted, as JAX's from_dlpack does. copy=True must
        # not alias: jaxlib 0.12 shares an aligned CPU buffer even then (JAX with x64 on
        # returns an array that follows the source), so the copy is made here.
        buf = xla.device_put(np.asarray(buf).astype(dtype), dev)
    return Array(buf, ShapedArray(tuple(buf.shape), dtype), dev)


def shards(buf) -> list:
    """(device, index, single-device buffer) for each piece of a jaxlib array."""
    return [(s.device, s.index, s.data) for s in buf.addressable_shards]
