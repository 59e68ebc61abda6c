"""JAX's `jax.experimental.layout`: `Layout` (the order of an array's dimensions in
memory) and `Format` (a layout with a sharding); see funcad/core/layout.py.

>>> import funcad, funcad.numpy as fnp
>>> from funcad.experimental.layout import Format, Layout
>>> s = funcad.sharding.SingleDeviceSharding(funcad.devices()[0])
>>> x = fnp.ones((2, 3))
>>> funcad.jit(lambda v: funcad.lax.with_sharding_constraint(v, Format(Layout.for_array(v), s)))(x).shape
(2, 3)
"""
from ..core.layout import Format, Layout

__all__ = ["Format", "Layout"]
