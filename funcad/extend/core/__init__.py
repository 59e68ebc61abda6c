"""Primitives and the jaxpr IR for libraries (JAX's `extend.core` namespace); a
Primitive made here is a funcad primitive (see funcad/extend/_core.py)."""
from .._core import (ClosedJaxpr, Effect, Effects, Jaxpr, JaxprEqn, JaxprTypeError, Literal, Primitive, Var, array_types, check_jaxpr, concrete_or_error, find_top_trace, get_opaque_trace_state, jaxpr_as_fun, jaxprs_in_params, mapped_aval, new_jaxpr_eqn, no_effects, primal_dtype_to_tangent_dtype, subjaxprs, unmapped_aval, valid_jaxtype)

__all__ = ['ClosedJaxpr', 'Effect', 'Effects', 'Jaxpr', 'JaxprEqn', 'JaxprTypeError', 'Literal', 'Primitive', 'Var', 'array_types', 'check_jaxpr', 'concrete_or_error', 'find_top_trace', 'get_opaque_trace_state', 'jaxpr_as_fun', 'jaxprs_in_params', 'mapped_aval', 'new_jaxpr_eqn', 'no_effects', 'primal_dtype_to_tangent_dtype', 'subjaxprs', 'unmapped_aval', 'valid_jaxtype']


from . import primitives

__all__ += ["primitives"]
