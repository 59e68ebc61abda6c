"""JAX's `interpreters.ad` over funcad's rule tables; see funcad/interpreters/_ad.py."""
from ._ad import (UndefinedPrimal, Zero, add_jaxvals, add_tangents, defbilinear, defjvp, defjvp2, deflinear, deflinear2, get_primitive_transpose, instantiate_zeros, is_undefined_primal, primitive_jvps, primitive_transposes, zeros_like_aval)

__all__ = ['UndefinedPrimal', 'Zero', 'add_jaxvals', 'add_tangents', 'defbilinear', 'defjvp', 'defjvp2', 'deflinear', 'deflinear2', 'get_primitive_transpose', 'instantiate_zeros', 'is_undefined_primal', 'primitive_jvps', 'primitive_transposes', 'zeros_like_aval']
