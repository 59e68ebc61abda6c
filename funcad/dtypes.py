"""JAX's dtype utilities (`jax.dtypes`): canonical dtypes in the current 64-bit mode,
promotion as funcad computes it, the narrow dtypes, and the abstract types of key
dtypes (`extended`, `prng_key`).

>>> import numpy as np, funcad
>>> from funcad import dtypes
>>> dtypes.result_type(np.float32, 2.0), dtypes.result_type(2.0, return_weak_type_flag=True)
(dtype('float32'), (dtype('float64'), True))
>>> with funcad.enable_x64(False):
...     print(dtypes.canonicalize_dtype(np.float64))
float32
>>> dtypes.issubdtype(funcad.random.key(0).dtype, dtypes.prng_key)
True

Promotion is funcad's (NumPy 2's rules, and JAX's lattice for the narrow dtypes), so
`result_type` says what funcad's operations give: `result_type(np.float16, np.int64)` is
float64 here and float16 in JAX, `result_type(np.int32, np.float32)` float64 here and
float32 in JAX.
"""
from .numpy._jax_dtypes import (TypePromotionError, bfloat16, canonicalize_dtype, extended, finfo,  # noqa: F401
                                float0, iinfo, issubdtype, itemsize_bits, prng_key, result_type,
                                scalar_type_of)

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0",
           "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of"]
