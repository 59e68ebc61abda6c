"""Raw threefry-2x32 keys (uint32[..., 2]) and the random bits they name.

The definitions are JAX's (with `jax_threefry_partitionable` on, its
default): a seed's two key words are its high and low 32 bits; `split` and
`random_bits` hash the 64-bit counters 0, 1, 2, ... of the output positions
(high word, low word) under the key; `fold_in` hashes the counter pair
(0, data). Everything is written with funcad's primitives, so keys flow
through jit, vmap, scan carries and grad like any uint32 array.
"""
from __future__ import annotations

import operator
from typing import Sequence

import numpy as np

from ..core.avals import aval_of
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives.bits import shift_left, shift_right_logical, threefry2x32
from ._keyarray import PRNGKeyArray, key_dtype, resolve_impl

__all__ = ["PRNGKey", "key", "split", "fold_in", "clone", "key_data", "key_impl", "key_dtype",
           "wrap_key_data", "bits"]

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}


def _aval(x):
    return x.aval if isinstance(x, Tracer) else aval_of(x)


def _is_arraylike(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Tracer)) or hasattr(x, "__array__") and hasattr(x, "dtype")


def check_key(name: str, key, allow_batched: bool = False):
    """The uint32[..., 2] data of `key` (a raw or typed key); JAX's errors for anything else."""
    if isinstance(key, PRNGKeyArray):
        key = key._data
    elif not _is_arraylike(key):
        raise TypeError(f"unexpected PRNG key type {type(key)}; {name} needs a key from "
                        "funcad.random.PRNGKey(seed) (a uint32 array of shape (2,))")
    a = _aval(key)
    if a.ndim < 1 or a.shape[-1:] != (2,):
        raise TypeError(f"{name}: invalid PRNG key data: expected key_data.shape to end with (2,); "
                        f"got shape={a.shape}. Make keys with funcad.random.PRNGKey(seed) or split.")
    if a.dtype != _U32:
        raise TypeError(f"{name}: invalid PRNG key data: expected key_data.dtype = uint32; got "
                        f"dtype={a.dtype}. Make keys with funcad.random.PRNGKey(seed) or split.")
    if not allow_batched and a.ndim != 1:
        raise ValueError(f"{name} accepts a single key, but was given a key array of shape "
                         f"{a.shape[:-1]} != (). Use funcad.vmap for batching.")
    return key if isinstance(key, Tracer) else np.asarray(key)


def canonical_shape(shape) -> tuple:
    """A shape as a tuple of non-negative ints (an int is a 1-d shape), as JAX accepts."""
    try:
        dims = (operator.index(shape),) if np.ndim(shape) == 0 and not isinstance(shape, Sequence) \
            else tuple(operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got "
                        f"{shape!r}") from None
    if any(d < 0 for d in dims):
        raise ValueError(f"shape {dims} has a negative dimension; dimensions must be >= 0")
    return dims


def key_words(key):
    """The two uint32 words of a single key, as 0-d arrays (or tracers)."""
    k1 = S.reshape(S.slice(key, (0,), (1,)), ())
    k2 = S.reshape(S.slice(key, (1,), (2,)), ())
    return k1, k2


def _stack_pair(a, b):
    shape = np.shape(a) if not isinstance(a, Tracer) else a.shape
    expand = lambda x: S.reshape(x, tuple(shape) + (1,))
    return S.concatenate([expand(a), expand(b)], len(shape))


def _counters(shape):
    """High and low uint32 words of the uint64 counters 0..n-1 laid out in `shape`."""
    n = int(np.prod(shape, dtype=np.int64))
    if n < 2 ** 32:
        lo = S.reshape(S.iota(_U32, (n,), 0), tuple(shape))
        return np.zeros((), _U32), lo
    c = S.reshape(S.iota(np.uint64, (n,), 0), tuple(shape))
    hi = shift_right_logical(c, np.uint64(32))
    return E.convert_element_type(hi, _U32), E.convert_element_type(c, _U32)


def _hash_counters(key, shape):
    k1, k2 = key_words(key)
    if not shape:
        zero = np.zeros((), _U32)
        return threefry2x32(k1, k2, zero, zero)
    hi, lo = _counters(shape)
    return threefry2x32(k1, k2, hi, lo)


def random_bits(key, bit_width: int, shape) -> "np.ndarray":
    """Unsigned integers of `bit_width` bits in `shape`, JAX's bits for this key."""
    b1, b2 = _hash_counters(key, shape)
    dtype = _UINT[bit_width]
    if bit_width == 64:
        hi = E.convert_element_type(b1, dtype)
        return E.bitwise_or(shift_left(hi, np.uint64(32)), E.convert_element_type(b2, dtype))
    out = E.bitwise_xor(b1, b2)
    return out if bit_width == 32 else E.convert_element_type(out, dtype)


def split_key(key, shape: tuple):
    b1, b2 = _hash_counters(key, shape)
    return _stack_pair(b1, b2)


# ------------------------------------------------------------------ public ----

def _rewrap(like, data):
    """New keys typed like the keys they came from: typed in, typed out."""
    return PRNGKeyArray(data) if isinstance(like, PRNGKeyArray) else data


def PRNGKey(seed, *, impl=None) -> "np.ndarray":
    """A raw key (uint32[2]) from an integer seed, JAX's words for every seed: the high
    and low 32 bits of the seed as a 64-bit integer (Python ints are int64).

    >>> PRNGKey(42)
    Array([ 0, 42], dtype=uint32)
    """
    resolve_impl(impl, who="PRNGKey")
    return _seed_words("PRNGKey", seed)


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed key (shape (), dtype key<fry>) from an integer seed; its data is PRNGKey(seed).

    >>> key(42)
    Array((), dtype=key<fry>) overlaying:
    [ 0 42]
    """
    resolve_impl(impl, dtype, who="key")
    return PRNGKeyArray(_seed_words("key", seed))


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Typed keys over uint32[..., 2] key data (the inverse of `key_data`).

    >>> wrap_key_data(np.array([0, 42], np.uint32)).shape
    ()
    """
    resolve_impl(impl, dtype, who="wrap_key_data")
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data requires a uint32 array of key data, but was given a key "
                        "array; it is already wrapped")
    if not _is_arraylike(key_bits_array):
        key_bits_array = np.asarray(key_bits_array)
    a = _aval(key_bits_array)
    if a.ndim < 1 or a.shape[-1:] != (2,):
        raise TypeError(f"invalid PRNG key data: expected key_data.shape to end with (2,); got "
                        f"shape={a.shape} for impl='threefry2x32'")
    if a.dtype != _U32:
        raise TypeError(f"invalid PRNG key data: expected key_data.dtype = uint32; got dtype={a.dtype}")
    return PRNGKeyArray(key_bits_array)


def _seed_words(name, seed):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, bool) or isinstance(seed, (np.ndarray, np.generic)) and seed.dtype == np.bool_:
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        seed = np.int64(seed)  # OverflowError beyond int64, as in JAX
    if not _is_arraylike(seed):
        seed = np.asarray(seed)
    a = _aval(seed)
    if a.dtype == _U32 and a.shape[-1:] == (2,):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if a.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape {a.shape} "
                        "!= (). Use funcad.vmap for batching")
    if a.dtype.kind not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got {a.str_short()} {seed!r}")
    if a.dtype.itemsize == 8:
        hi = E.convert_element_type(shift_right_logical(seed, np.array(32, a.dtype)), _U32)
    else:
        hi = np.zeros((), _U32)
    lo = E.convert_element_type(seed, _U32)
    return S.concatenate([S.reshape(hi, (1,)), S.reshape(lo, (1,))], 0)


def split(key, num: int | Sequence[int] = 2):
    """`num` new keys (or a shape of keys) from one: uint32[*num, 2].

    >>> split(PRNGKey(0)).shape
    (2, 2)
    """
    data = check_key("split", key)
    return _rewrap(key, split_key(data, canonical_shape(num)))


def fold_in(key, data):
    """A new key that is a deterministic function of `key` and the 32-bit integer `data`.

    >>> fold_in(PRNGKey(0), 3).dtype
    dtype('uint32')
    """
    keys, key = key, check_key("fold_in", key)
    if np.ndim(data) if not isinstance(data, Tracer) else data.ndim:
        raise TypeError("fold_in accepts a scalar, but was given an array of shape "
                        f"{np.shape(data) if not isinstance(data, Tracer) else data.shape} != (). "
                        "Use funcad.vmap for batching.")
    if isinstance(data, (int, np.integer)) and not isinstance(data, bool):
        if not 0 <= int(data) < 2 ** 32:
            raise OverflowError(f"Python integer {int(data)} out of bounds for uint32")
        data = np.uint32(data)
    elif not isinstance(data, Tracer):
        data = np.asarray(data)
    data = E.convert_element_type(data, _U32)
    k1, k2 = key_words(key)
    a, b = threefry2x32(k1, k2, np.zeros((), _U32), data)
    return _rewrap(keys, _stack_pair(a, b))


def clone(key):
    """The same keys: keys are immutable values, so a clone needs no copy (as JAX's).

    >>> clone(PRNGKey(1))
    array([0, 1], dtype=uint32)
    """
    return _rewrap(key, check_key("clone", key, allow_batched=True))


def key_data(keys):
    """The uint32[..., 2] data of typed keys; raw keys are their own data.

    >>> key_data(key(7))
    array([0, 7], dtype=uint32)
    """
    return check_key("key_data", keys, allow_batched=True)


def key_impl(keys) -> str:
    """The name of the keys' PRNG implementation: always 'threefry2x32'."""
    check_key("key_impl", keys, allow_batched=True)
    return "threefry2x32"


def bits(key, shape=(), dtype=None):
    """Uniform random bits: unsigned integers of `dtype` (default uint64, as JAX with x64).

    >>> bits(PRNGKey(0), (2,), np.uint32).dtype
    dtype('uint32')
    """
    key = check_key("bits", key)
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    return random_bits(key, dtype.itemsize * 8, canonical_shape(shape))

