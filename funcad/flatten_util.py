"""funcad.flatten_util: ravel a pytree of arrays into one flat vector and back, as JAX's
jax.flatten_util.

>>> import numpy as np
>>> flat, unravel = ravel_pytree({"a": np.ones(2), "b": np.float64(3.0)})
>>> flat
Array([1., 1., 3.], dtype=float64)
>>> unravel(flat * 2)["b"]
Array(6., dtype=float64)
"""
from .numpy._ravel_pytree import ravel_pytree

__all__ = ["ravel_pytree"]
