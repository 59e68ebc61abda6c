"""Helpers for libraries that build transformations on wrapped functions (JAX's
`api_util` namespace); see funcad/extend/_api_util.py."""
from .extend._api_util import (argnums_partial, debug_info, donation_vector, flatten_axes, flatten_fun, flatten_fun_nokwargs, rebase_donate_argnums, safe_map, shaped_abstractify)

__all__ = ['argnums_partial', 'debug_info', 'donation_vector', 'flatten_axes', 'flatten_fun', 'flatten_fun_nokwargs', 'rebase_donate_argnums', 'safe_map', 'shaped_abstractify']
