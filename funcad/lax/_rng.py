"""funcad.lax's XLA random-number ops: `rng_bit_generator`, `RandomAlgorithm` and
`rng_uniform`, with JAX's signatures (the primitives are in primitives/rng.py).

>>> import numpy as np
>>> from funcad import lax
>>> key = np.array([0, 42, 0, 42], np.uint32)
>>> new_key, bits = lax.rng_bit_generator(key, (3,), algorithm=lax.RandomAlgorithm.RNG_THREE_FRY)
>>> bits.dtype, bits.shape
(dtype('uint32'), (3,))
"""
from __future__ import annotations

import enum
import operator

import numpy as np

from ..core.errors import FuncadTypeError
from ..primitives.rng import rng_bit_generator_p, rng_uniform_p
from ..arrays.dtypes import asarray_or_tracer
from ..primitives.sharding import with_sharding_constraint

__all__ = ["RandomAlgorithm", "rng_bit_generator", "rng_uniform"]

_BIT_DTYPES = tuple(np.dtype(t) for t in (np.uint8, np.uint16, np.uint32, np.uint64))


class RandomAlgorithm(enum.IntEnum):
    """Which algorithm `rng_bit_generator` uses: the platform's default (Philox on the
    CPU), Threefry-2x32 or Philox-4x32."""

    RNG_DEFAULT = 0
    RNG_THREE_FRY = 1
    RNG_PHILOX = 2

    def __str__(self) -> str:
        return self.name


def _shape(shape) -> tuple:
    try:
        dims = (operator.index(shape),) if np.ndim(shape) == 0 and not isinstance(shape, (tuple, list)) \
            else tuple(operator.index(d) for d in shape)
    except TypeError:
        raise FuncadTypeError(f"shape must be a sequence of integers, got {shape!r}") from None
    if any(d < 0 for d in dims):
        raise FuncadTypeError(f"shape {dims} has a negative dimension")
    return dims


def rng_bit_generator(key, shape, dtype=np.uint32, algorithm=RandomAlgorithm.RNG_DEFAULT, *,
                      out_sharding=None):
    """(new key, random bits): XLA's stateless bit generator on the state `key` (uint32[4],
    or uint64[2]); `dtype` is uint8, uint16, uint32 or uint64. Eager, jitted and JAX's
    values agree on the CPU. `out_sharding` lays the bits out on devices.

    >>> import numpy as np
    >>> k, b = rng_bit_generator(np.array([1, 2, 3, 4], np.uint32), (2,), np.uint8)
    >>> k
    Array([1, 2, 4, 4], dtype=uint32)
    """
    shape = _shape(shape)
    dtype = np.dtype(dtype)
    if dtype not in _BIT_DTYPES:
        raise FuncadTypeError(f"rng_bit_generator: unsupported dtype {dtype}; use uint8, uint16, "
                              "uint32 or uint64")
    try:
        algorithm = RandomAlgorithm(algorithm)
    except ValueError:
        raise FuncadTypeError(f"rng_bit_generator: unknown algorithm {algorithm!r}; use one of "
                              f"{[str(a) for a in RandomAlgorithm]}") from None
    new_key, bits = rng_bit_generator_p.bind(asarray_or_tracer(key), shape=shape, dtype=dtype,
                                             algorithm=algorithm)
    if out_sharding is not None:
        bits = with_sharding_constraint(bits, out_sharding)
    return new_key, bits


def rng_uniform(a, b, shape):
    """Values uniform in [a, b) from XLA's stateful generator (scalar bounds of one dtype):
    each call differs and no key reproduces them; use funcad.random for reproducible draws.

    >>> import numpy as np
    >>> x = rng_uniform(np.float32(0), np.float32(1), (3,))
    >>> x.shape, bool(((x >= 0) & (x < 1)).all())
    ((3,), True)
    """
    return rng_uniform_p.bind(asarray_or_tracer(a), asarray_or_tracer(b), shape=_shape(shape))
