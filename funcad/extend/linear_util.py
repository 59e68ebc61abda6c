"""Wrapped functions and their transformations (JAX's `extend.linear_util`)."""
from ._linear_util import (DebugInfo, StoreException, WrappedFun, cache, merge_linear_aux, transformation, transformation2, transformation_with_aux, transformation_with_aux2, wrap_init)

__all__ = ['DebugInfo', 'StoreException', 'WrappedFun', 'cache', 'merge_linear_aux', 'transformation', 'transformation2', 'transformation_with_aux', 'transformation_with_aux2', 'wrap_init']
