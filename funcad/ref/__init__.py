"""JAX's `jax.ref`: mutable array references.

>>> import funcad, funcad.numpy as fnp
>>> r = funcad.ref.new_ref(fnp.zeros(3))
>>> r[1] += 2.0
>>> funcad.ref.freeze(r)
Array([0., 2., 0.], dtype=float64)
"""
from ._ops import (AbstractRef, Ref, addupdate, empty_ref, free_ref, freeze, get, new_ref, set,
                       swap)

__all__ = ["AbstractRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get", "new_ref",
           "set", "swap"]
