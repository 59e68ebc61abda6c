"""JAX's `jax.custom_derivatives`: custom_jvp, custom_vjp, custom_gradient,
closure_convert, linear_call, SymbolicZero, zero_from_primal, CustomVJPPrimal and
custom_vjp_primal_tree_values, as funcad has them.

>>> import funcad
>>> from funcad.custom_derivatives import zero_from_primal
>>> zero_from_primal(1.0, symbolic_zeros=True)
SymbolicZero(f64[])
"""

from typing import Any as _Any

from .transforms.closure import closure_convert, custom_gradient
from .core.avals import ShapedArray as _ShapedArray, aval_of as _aval_of, tangent_dtype as _tangent_dtype
from .core.pytree import tree_map as _tree_map
from .primitives._base import zeros_tangent as _zeros_tangent
from .transforms.custom import (CustomVJPPrimal, SymbolicZero, custom_jvp, custom_vjp,
                                custom_vjp_primal_tree_values)
from .transforms.custom_calls import custom_jvp_call_p, custom_vjp_call_p
from .transforms.linear_call import linear_call

__all__ = ["CustomVJPPrimal", "SymbolicZero", "closure_convert", "custom_gradient", "custom_jvp", "custom_jvp_call_p",
           "custom_vjp", "custom_vjp_call_p", "custom_vjp_primal_tree_values", "linear_call",
           "zero_from_primal"]


def zero_from_primal(val: _Any, symbolic_zeros: bool = False) -> _Any:
    """The zero tangent of each leaf of `val`: a `SymbolicZero` with `symbolic_zeros`,
    else a zero array of the tangent's type (float0 for integer primals)."""
    def zero(x):
        a = _aval_of(x)
        t = _ShapedArray(a.shape, _tangent_dtype(a.dtype))
        return SymbolicZero(t) if symbolic_zeros else _zeros_tangent(t)
    return _tree_map(zero, val)
