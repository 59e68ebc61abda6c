"""funcad.experimental.compilation_cache: the persistent compilation cache, as JAX's
`jax.experimental.compilation_cache` (its functions are in the `compilation_cache` submodule)."""
from . import compilation_cache  # noqa: F401

__all__ = ["compilation_cache"]
