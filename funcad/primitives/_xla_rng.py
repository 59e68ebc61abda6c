"""XLA's RngBitGenerator on the CPU, in NumPy: the same bits for the same state.

XLA expands `rng_bit_generator` (state u64[2] = [key, counter]) into one of two
counter-based generators; JAX passes the state as uint32[4], two little-endian
words per u64. Both definitions below follow XLA's expansion (openxla,
`hlo/builder/lib/prng.cc` and `rng_bit_generator_expander.cc`); the CPU's
RNG_DEFAULT is Philox. Each returns (new state as uint32[4], bits).

- THREE_FRY: the counters are `counter + i` over a "half shape" (the first even
  dimension, or else the largest one, halved and rounded up); one threefry-2x32
  block per counter gives two words, placed side by side along that dimension.
  64-bit outputs hash one counter per element and join (low, high) words.
  The new counter is `counter + number of blocks`.
- PHILOX: the 128-bit counter (low u64 = counter, high u64 = key) plus i for
  i < ceil(n/4) gives four words per block (Philox-4x32, 10 rounds, key =
  the key's two words), taken round-robin; 64-bit outputs use two blocks' worth
  of words per pair of elements. The new counter is the low 64 bits of the
  128-bit counter plus the number of blocks.

Narrower outputs (8, 16 bits) are the 32-bit words truncated.
"""
from __future__ import annotations

import numpy as np

from .bits import _threefry_impl

__all__ = ["xla_rng_bits"]

_U32, _U64 = np.dtype(np.uint32), np.dtype(np.uint64)
_M32 = np.uint64(0xFFFFFFFF)
_PHILOX_W = (np.uint32(0x9E3779B9), np.uint32(0xBB67AE85))
_PHILOX_M = (np.uint64(0xD2511F53), np.uint64(0xCD9E8D57))


def _state_words(state) -> tuple[int, int]:
    """The (key, counter) u64 pair of a uint32[4] (or u64[2]) state."""
    s = np.asarray(state)
    if s.dtype == _U64:
        return int(s[0]), int(s[1])
    w = [int(v) for v in s.astype(_U32)]
    return w[0] | w[1] << 32, w[2] | w[3] << 32


def _pack_state(key: int, counter: int, like) -> np.ndarray:
    counter &= (1 << 64) - 1
    if np.asarray(like).dtype == _U64:
        return np.array([key, counter], _U64)
    return np.array([key & 0xFFFFFFFF, key >> 32, counter & 0xFFFFFFFF, counter >> 32], _U32)


def _lo_hi(v: np.ndarray):
    return (v & _M32).astype(_U32), (v >> np.uint64(32)).astype(_U32)


def _split_dim(shape: tuple) -> int:
    for i, d in enumerate(shape):
        if d % 2 == 0:
            return i
    return int(np.argmax(shape))  # the first of the largest


def _threefry_block(key: int, counters: np.ndarray):
    k1, k2 = np.uint32(key & 0xFFFFFFFF), np.uint32(key >> 32)
    lo, hi = _lo_hi(counters)
    return _threefry_impl(k1, k2, lo, hi)


def _threefry(key: int, counter: int, shape: tuple, bits: int):
    n = int(np.prod(shape, dtype=np.int64))
    if bits == 64:
        c = np.arange(n, dtype=_U64) + np.uint64(counter)
        a, b = _threefry_block(key, c)
        out = a.astype(_U64) | (b.astype(_U64) << np.uint64(32))
        return counter + n, out.reshape(shape)
    if not shape:
        a, _ = _threefry_block(key, np.array([counter], _U64))
        return counter + 1, a.reshape(())
    d = _split_dim(shape)
    half = list(shape)
    half[d] = -(-shape[d] // 2)
    m = int(np.prod(half, dtype=np.int64))
    c = np.arange(m, dtype=_U64) + np.uint64(counter)
    a, b = (w.reshape(half) for w in _threefry_block(key, c))
    out = np.stack([a, b], axis=d + 1).reshape(shape[:d] + (2 * half[d],) + shape[d + 1:])
    return counter + m, out[tuple(slice(0, s) for s in shape)]


def _philox_rounds(x, key: tuple):
    x0, x1, x2, x3 = x
    k0, k1 = np.uint32(key[0]), np.uint32(key[1])
    with np.errstate(over="ignore"):
        for _ in range(10):
            p0 = x0.astype(_U64) * _PHILOX_M[0]
            p1 = x2.astype(_U64) * _PHILOX_M[1]
            lo0, hi0 = _lo_hi(p0)
            lo1, hi1 = _lo_hi(p1)
            x0, x1, x2, x3 = hi1 ^ x1 ^ k0, lo1, hi0 ^ x3 ^ k1, lo0
            k0, k1 = k0 + _PHILOX_W[0], k1 + _PHILOX_W[1]
    return x0, x1, x2, x3


def _philox_words(key: int, counter: int, n_words: int):
    """4 * ceil(n_words / 4) Philox words in round-robin order, and the block count."""
    blocks = -(-n_words // 4)
    i = np.arange(blocks, dtype=_U64)
    low = i + np.uint64(counter)  # wraps modulo 2**64, as the u128 add's low half
    carry = (low < np.uint64(counter)).astype(_U64)
    high = np.uint64(key) + carry
    x = (*_lo_hi(low), *_lo_hi(high))
    words = np.stack(_philox_rounds(x, (key & 0xFFFFFFFF, key >> 32)), axis=1)
    return words, blocks


def _philox(key: int, counter: int, shape: tuple, bits: int):
    n = int(np.prod(shape, dtype=np.int64))
    if bits == 64:
        words, blocks = _philox_words(key, counter, 2 * n)
        w = words.astype(_U64)
        pairs = np.stack([w[:, 0] | w[:, 1] << np.uint64(32), w[:, 2] | w[:, 3] << np.uint64(32)], 1)
        return counter + blocks, pairs.reshape(-1)[:n].reshape(shape)
    words, blocks = _philox_words(key, counter, n)
    return counter + blocks, words.reshape(-1)[:n].reshape(shape)


def xla_rng_bits(state, shape: tuple, dtype, algorithm: int):
    """XLA's (new state, bits) of RngBitGenerator: algorithm 1 is THREE_FRY, 0 (the CPU's
    default) and 2 are PHILOX.

    >>> new, bits = xla_rng_bits(np.array([1, 2, 3, 4], np.uint32), (2,), np.uint32, 1)
    >>> new
    array([1, 2, 4, 4], dtype=uint32)
    """
    dtype = np.dtype(dtype)
    key, counter = _state_words(state)
    gen = _threefry if algorithm == 1 else _philox
    counter, out = gen(key, counter, tuple(shape), 64 if dtype.itemsize == 8 else 32)
    return _pack_state(key, counter, state), np.asarray(out).astype(dtype)
