"""The persistent compilation cache's API, as `jax.experimental.compilation_cache.compilation_cache`:
`set_cache_dir(path)` keeps every jit-compiled program in `path`, where a later process
finds it instead of compiling; `reset_cache()`, `is_initialized()`, `initialize_cache(path)`.
The cache itself is funcad/lowering/compilation_cache.py; its thresholds are funcad.config
options (`persistent_cache_min_compile_time_secs`, `persistent_cache_min_entry_size_bytes`).

>>> import tempfile, funcad, funcad.numpy as fnp
>>> from funcad.experimental.compilation_cache import compilation_cache as cc
>>> cc.set_cache_dir(tempfile.mkdtemp())
>>> cc.is_initialized()
True
>>> cc.set_cache_dir(None); cc.reset_cache()
"""
from ...lowering.compilation_cache import initialize_cache, is_initialized, reset_cache, set_cache_dir

__all__ = ["set_cache_dir", "reset_cache", "is_initialized", "initialize_cache"]
