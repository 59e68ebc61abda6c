"""The two PRNG settings `funcad.config` holds, read by funcad.random and jit's cache key.

- `default_impl`: the implementation of keys made without `impl=` and of raw keys
  (JAX's `jax_default_prng_impl`): 'threefry2x32', 'rbg', 'unsafe_rbg', 'threefry4x32',
  'philox2x32' or 'philox4x32'.
- `threefry_partitionable`: threefry's counter layout (JAX's `jax_threefry_partitionable`,
  on by default): on, `split` and `random_bits` hash the 64-bit counters of the output
  positions; off, JAX's older scheme hashes one flat iota split in two halves.
"""
from __future__ import annotations

__all__ = ["IMPLS", "default_impl", "threefry_partitionable", "set_default_impl",
           "set_threefry_partitionable"]

from . import options as _options

IMPLS = _options.PRNG_IMPLS
default_impl = "threefry2x32"
threefry_partitionable = True


def set_default_impl(name: str) -> None:
    global default_impl
    default_impl = name


def set_threefry_partitionable(on: bool) -> None:
    global threefry_partitionable
    threefry_partitionable = bool(on)


_options.bind("default_prng_impl", on_set=set_default_impl, get=lambda: default_impl)
_options.bind("threefry_partitionable", on_set=set_threefry_partitionable,
              get=lambda: threefry_partitionable)
