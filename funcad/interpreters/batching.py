"""JAX's `interpreters.batching` over funcad's rule tables; see funcad/interpreters/_batching.py."""
from ._batching import (axis_primitive_batchers, bdim_at_front, broadcast, defbroadcasting, defvectorized, moveaxis, not_mapped, primitive_batchers)

__all__ = ['axis_primitive_batchers', 'bdim_at_front', 'broadcast', 'defbroadcasting', 'defvectorized', 'moveaxis', 'not_mapped', 'primitive_batchers']
