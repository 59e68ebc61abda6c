"""Static type annotations for funcad code, as `jax.typing`: `ArrayLike` for inputs that
funcad converts to arrays, `DTypeLike` for dtype arguments (`funcad.Array` annotates
outputs). As JAX's, `ArrayLike` works with `isinstance`; `DTypeLike` is for annotations.

>>> import numpy as np, funcad
>>> from funcad.typing import ArrayLike, DTypeLike
>>> def f(x: ArrayLike) -> funcad.Array:
...     return funcad.numpy.asarray(x) * 2
>>> [isinstance(v, ArrayLike) for v in (1.5, np.ones(2), np.float32(1), [1.0], "a")]
[True, True, True, False, False]
>>> def zeros(n: int, dtype: DTypeLike = "float32") -> funcad.Array:
...     return funcad.numpy.zeros(n, dtype)
"""
from .arrays.array_types import ArrayLike, DTypeLike

__all__ = ["ArrayLike", "DTypeLike"]
