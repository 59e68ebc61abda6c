"""DLPack interchange, as JAX's `jax.dlpack`: `from_dlpack` and `is_supported_dtype`.

funcad's device Arrays export themselves too (`__dlpack__`, `__dlpack_device__`), so
`np.from_dlpack(x)` and `torch.from_dlpack(x)` take them without a copy.

>>> import funcad, numpy as np
>>> x = funcad.dlpack.from_dlpack(np.arange(3.0))
>>> x
Array([0., 1., 2.], dtype=float64)
>>> np.from_dlpack(x * 2.0)
array([0., 2., 4.])
>>> funcad.dlpack.is_supported_dtype(np.float32), funcad.dlpack.is_supported_dtype("float8_e4m3fn")
(True, False)
"""
from .lowering.dlpack import from_dlpack, is_supported_dtype

__all__ = ["from_dlpack", "is_supported_dtype"]
