"""JAX's `interpreters.partial_eval` over funcad's rule tables; see funcad/interpreters/_partial_eval.py."""
from ._partial_eval import (close_jaxpr, convert_constvars_jaxpr, dce_jaxpr, trace_to_jaxpr_dynamic)
from ._partial_val import PartialVal

__all__ = ['PartialVal', 'close_jaxpr', 'convert_constvars_jaxpr', 'dce_jaxpr', 'trace_to_jaxpr_dynamic']
