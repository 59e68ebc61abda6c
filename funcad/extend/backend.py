"""The XLA clients funcad runs programs on (JAX's `extend.backend`)."""
from ._backend import (backends, clear_in_memory_compilation_cache, get_backend, get_default_device)

__all__ = ['backends', 'clear_in_memory_compilation_cache', 'get_backend', 'get_default_device']
