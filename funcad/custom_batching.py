"""JAX's `jax.custom_batching`: functions with their own vmap rule.

`custom_vmap` and `sequential_vmap` (a custom_vmap whose rule loops with `lax.map`) are
in funcad/transforms/custom_vmap.py.
"""

from .transforms.custom_vmap import custom_vmap, sequential_vmap

__all__ = ["custom_vmap", "sequential_vmap"]
