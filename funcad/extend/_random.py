"""PRNG building blocks (JAX's `extend.random` namespace).

>>> import numpy as np
>>> from funcad.extend.random import threefry_2x32
>>> threefry_2x32(np.zeros(2, np.uint32), np.zeros(2, np.uint32)).dtype
dtype('uint32')
"""
from __future__ import annotations

from ..numpy import asarray, concatenate, zeros
from ..primitives.bits import threefry2x32, threefry2x32_p


def threefry_2x32(keypair, count):
    """The threefry-2x32 hash of the uint32 array `count` under the key pair `keypair`
    (an odd-sized count is padded with a zero, as JAX does)."""
    key = asarray(keypair)
    flat = asarray(count).ravel()
    n = flat.shape[0]
    if n % 2:
        flat = concatenate([flat, zeros(1, flat.dtype)])
    half = flat.shape[0] // 2
    a, b = threefry2x32(key[0], key[1], flat[:half], flat[half:])
    return concatenate([a, b])[:n].reshape(asarray(count).shape)


__all__ = ["threefry2x32_p", "threefry_2x32"]
