"""DLPack interchange (`funcad.dlpack`): funcad Arrays over other libraries' tensors.

The import itself is jaxlib's (`array.from_dlpack`); this module checks the arguments
as JAX does and lists the dtypes DLPack carries.

>>> import numpy as np
>>> from_dlpack(np.arange(2.0))
Array([0., 1.], dtype=float64)
"""
from typing import Any as _Any

import ml_dtypes as _ml_dtypes
import numpy as _np

from ..core.sharding import Sharding as _Sharding
from . import array as _array

__all__ = ["from_dlpack", "is_supported_dtype"]

# The dtypes DLPack carries between funcad and other libraries (JAX's list).
_SUPPORTED = frozenset(_np.dtype(d) for d in (
    _np.int8, _np.int16, _np.int32, _np.int64, _np.uint8, _np.uint16, _np.uint32, _np.uint64,
    _np.float16, _ml_dtypes.bfloat16, _np.float32, _np.float64, _np.complex64, _np.complex128,
    _np.bool_))


def is_supported_dtype(dtype: _Any) -> bool:
    """Whether arrays of `dtype` can travel through DLPack.

    >>> is_supported_dtype("int4")
    False
    """
    if dtype is None:
        raise TypeError(f"Expected a string or dtype-like object; got {dtype=}")
    return _np.dtype(dtype) in _SUPPORTED


def from_dlpack(external_array: _Any, device: _Any = None, copy: bool | None = None) -> "_array.Array":
    """A funcad `Array` over a DLPack tensor: any object with `__dlpack__` and
    `__dlpack_device__` (a NumPy array, a jax or torch array, a funcad Array).

    The result shares memory with `external_array` unless a copy is asked for
    (`copy=True`) or needed to move it to `device` (a Device, or a Sharding of one
    device; default: the device the data is on). `copy=False` refuses a copy with a
    ValueError. As in JAX, mutating the source afterwards is undefined behaviour.

    >>> import funcad, numpy as np
    >>> from_dlpack(np.ones(2, np.float32), copy=True)
    Array([1., 1.], dtype=float32)
    """
    if isinstance(device, _Sharding):
        devices = device.device_set
        if len(devices) > 1:
            raise ValueError("from_dlpack can only unpack a dlpack tensor onto a singular device, but "
                             f"a Sharding with {len(devices)} devices was provided.")
        device, = devices
    if not hasattr(external_array, "__dlpack__") or not hasattr(external_array, "__dlpack_device__"):
        raise TypeError("The array passed to from_dlpack must have __dlpack__ and __dlpack_device__ "
                        f"methods; got {type(external_array).__name__}. Convert it with numpy.asarray "
                        "first, or pass a NumPy, jax, torch or funcad array.")
    return _array.from_dlpack(external_array, device, copy)
