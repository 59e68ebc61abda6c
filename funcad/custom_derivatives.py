"""JAX's `jax.custom_derivatives`: custom_jvp, custom_vjp, custom_gradient,
closure_convert, linear_call, SymbolicZero, zero_from_primal, CustomVJPPrimal and
custom_vjp_primal_tree_values, as funcad has them.

>>> import funcad
>>> from funcad.custom_derivatives import zero_from_primal
>>> zero_from_primal(1.0, symbolic_zeros=True)
SymbolicZero(f64[])
"""

from .transforms.closure import closure_convert, custom_gradient
from .transforms.custom import (CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp,
                                custom_vjp_primal_tree_values, zero_from_primal)
from .transforms.custom_calls import custom_jvp_call_p, custom_vjp_call_p
from .transforms.linear_call import linear_call

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p",
           "custom_vjp", "custom_vjp_call_p", "custom_vjp_primal_tree_values", "linear_call",
           "zero_from_primal"]
