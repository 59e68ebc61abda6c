"""Raw keys (uint32[..., n]) of JAX's implementations and the random bits they name.

The definitions are JAX's. threefry2x32 (uint32[2] keys): a seed's two key
words are its high and low 32 bits. With `threefry_partitionable` on (JAX's
default) `split` and `random_bits` hash the 64-bit counters 0, 1, 2, ... of the
output positions (high word, low word); off, they hash one flat uint32 iota cut
in two halves (JAX's older scheme). `fold_in` hashes the counter pair (0, data).
rbg and unsafe_rbg (uint32[4] keys, two threefry half-keys): bits come from
XLA's `rng_bit_generator`; rbg splits and folds each half-key as threefry does,
unsafe_rbg derives new keys from the generator's own output. threefry4x32,
philox2x32 and philox4x32 are in `_counter_impls.py`.

Samplers see key data only: the implementation is set for the extent of a call
by `impl_scope` (the public samplers do it from their key argument), and
`split_key`/`random_bits` read it. Everything is written with funcad's
primitives, so keys flow through jit, vmap, scan carries and grad like any
uint32 array.
"""
from __future__ import annotations

import contextlib
import operator
import threading
import warnings
from typing import Sequence

import numpy as np

from ..core import options, prng_settings
from ..core.avals import aval_of
from ..core.trace import Tracer
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives.bits import shift_left, shift_right_logical, threefry2x32
from ..primitives.rng import rng_bit_generator_p
from . import _counter_impls as C
from ._keyarray import PRNGKeyArray, key_dtype, key_shape, resolve_impl
from ._key_reuse import consume, fresh
from ._words import counters as _counters, shape_of as _shape_of, size as _size, word as _word

__all__ = ["PRNGKey", "key", "split", "fold_in", "clone", "key_data", "key_impl", "key_dtype",
           "wrap_key_data", "bits"]

_U32 = np.dtype(np.uint32)
_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: _U32, 64: np.dtype(np.uint64)}
_scope = threading.local()


@contextlib.contextmanager
def impl_scope(impl: str):
    """Raw key data inside the block belongs to `impl`."""
    prev = getattr(_scope, "impl", None)
    _scope.impl = impl
    try:
        yield
    finally:
        _scope.impl = prev


def current_impl() -> str:
    return getattr(_scope, "impl", None) or prng_settings.default_impl


def impl_of(key) -> str:
    """The implementation of a typed key; raw keys are the current one's."""
    return key._impl if isinstance(key, PRNGKeyArray) else current_impl()


def _aval(x):
    return x.aval if isinstance(x, Tracer) else aval_of(x)


def _is_arraylike(x) -> bool:
    return isinstance(x, (np.ndarray, np.generic, Tracer)) or hasattr(x, "__array__") and hasattr(x, "dtype")


# > 0 while a public sampler runs: the raw key data it hands its parts is not the user's
_inside = [0]
_LEGACY_TEXT = ("Legacy uint32 key array passed as key to funcad.random function. Please create keys "
                "using funcad.random.key(). If use of a raw key array was intended, set "
                'jax_legacy_prng_key="allow".')


def check_legacy(key, stacklevel: int = 3) -> None:
    """JAX's `legacy_prng_key` option on a key the user passed: a raw (uint32) key warns
    ('warn') or raises ValueError ('error'); typed keys always pass."""
    if _inside[0] or isinstance(key, PRNGKeyArray) or not _is_arraylike(key):
        return
    level = options.legacy_prng_key
    if level == "error":
        raise ValueError(_LEGACY_TEXT)
    if level == "warn":
        warnings.warn(_LEGACY_TEXT, stacklevel=stacklevel + 1)
    elif options.enable_custom_prng:
        warnings.warn("Raw arrays as random keys to funcad.random functions are deprecated. "
                      "Assuming valid threefry2x32 key for now.", FutureWarning, stacklevel=stacklevel + 1)


def check_key(name: str, key, allow_batched: bool = False):
    """The uint32[..., n] data of `key` (a raw or typed key); JAX's errors for anything else."""
    impl = impl_of(key)
    if isinstance(key, PRNGKeyArray):
        key = key._data
    elif not _is_arraylike(key):
        raise TypeError(f"unexpected PRNG key type {type(key)}; {name} needs a key from "
                        "funcad.random.PRNGKey(seed) or funcad.random.key(seed)")
    else:
        check_legacy(key, stacklevel=4)
    a, kshape = _aval(key), key_shape(impl)
    if a.ndim < 1 or a.shape[-1:] != kshape:
        raise TypeError(f"{name}: invalid PRNG key data: expected key_data.shape to end with "
                        f"{kshape} for impl={impl!r}; got shape={a.shape}. Make keys with "
                        "funcad.random.PRNGKey(seed) or split (raw keys belong to "
                        "funcad.config.default_prng_impl).")
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
    """The two uint32 words of a single threefry key, as 0-d arrays (or tracers)."""
    return _word(key, 0), _word(key, 1)


def _stack_pair(a, b):
    shape = _shape_of(a)
    expand = lambda x: S.reshape(x, tuple(shape) + (1,))
    return S.concatenate([expand(a), expand(b)], len(shape))


# ---------------------------------------------------------- threefry2x32 ----

def _hash_counters(key, shape):
    k1, k2 = key_words(key)
    if not shape:
        zero = np.zeros((), _U32)
        return threefry2x32(k1, k2, zero, zero)
    hi, lo = _counters(shape)
    return threefry2x32(k1, k2, hi, lo)


def _hash_flat(key, counts, n: int):
    """JAX's threefry_2x32 of n flat uint32 counts: the two halves (zero-padded to even
    length) are hashed as pairs and the outputs joined back in order."""
    if n == 0:
        return np.zeros((0,), _U32)
    if n % 2:
        counts = S.concatenate([counts, np.zeros((1,), _U32)], 0)
    m = (n + 1) // 2
    k1, k2 = key_words(key)
    a, b = threefry2x32(k1, k2, S.slice(counts, (0,), (m,)), S.slice(counts, (m,), (2 * m,)))
    out = S.concatenate([a, b], 0)
    return S.slice(out, (0,), (n,)) if n % 2 else out


def _tf_split(key, shape: tuple):
    if prng_settings.threefry_partitionable:
        b1, b2 = _hash_counters(key, shape)
        return _stack_pair(b1, b2)
    n = 2 * _size(shape)
    return S.reshape(_hash_flat(key, S.iota(_U32, (n,), 0), n), tuple(shape) + (2,))


def _tf_fold_in(key, data):
    k1, k2 = key_words(key)
    a, b = threefry2x32(k1, k2, np.zeros((), _U32), data)
    return _stack_pair(a, b)


def _tf_bits_partitionable(key, bit_width: int, shape):
    b1, b2 = _hash_counters(key, shape)
    dtype = _UINT[bit_width]
    if bit_width == 64:
        hi = E.convert_element_type(b1, dtype)
        return E.bitwise_or(shift_left(hi, np.uint64(32)), E.convert_element_type(b2, dtype))
    out = E.bitwise_xor(b1, b2)
    return out if bit_width == 32 else E.convert_element_type(out, dtype)


_BLOCK = 2 ** 32 - 1  # counts per hashed block in the older scheme (a uint32 iota's reach)


def _tf_bits_original(key, bit_width: int, shape):
    size = _size(shape)
    words = -(-bit_width * size // 32)
    nblocks, rem = divmod(words, _BLOCK)
    if not nblocks:
        bits = _hash_flat(key, S.iota(_U32, (rem,), 0), rem)
    else:  # more than 2**32 - 1 words: one split key per block, as JAX
        keys = _tf_split(key, (nblocks + 1,))
        sub = lambda i: S.reshape(S.slice(keys, (i, 0), (i + 1, 2)), (2,))
        parts = [_hash_flat(sub(i), S.iota(_U32, (_BLOCK,), 0), _BLOCK) for i in range(nblocks)]
        parts.append(_hash_flat(sub(nblocks), S.iota(_U32, (rem,), 0), rem))
        bits = S.concatenate(parts, 0)
    dtype = _UINT[bit_width]
    if bit_width == 64:
        hi = E.convert_element_type(S.slice(bits, (0,), (size,)), dtype)
        lo = E.convert_element_type(S.slice(bits, (size,), (2 * size,)), dtype)
        bits = E.bitwise_or(shift_left(hi, np.uint64(32)), lo)
    elif bit_width < 32:  # each word's pieces, lowest first (a little-endian view)
        per = 32 // bit_width
        shifts = np.arange(per, dtype=_U32).reshape(1, per) * np.uint32(bit_width)
        pieces = shift_right_logical(S.reshape(bits, (words, 1)), shifts)
        pieces = E.bitwise_and(pieces, np.array(np.iinfo(dtype).max, _U32))
        flat = S.reshape(pieces, (words * per,))
        bits = E.convert_element_type(S.slice(flat, (0,), (size,)), dtype)
    return S.reshape(bits, tuple(shape))


def _tf_bits(key, bit_width, shape):
    if prng_settings.threefry_partitionable:
        return _tf_bits_partitionable(key, bit_width, shape)
    return _tf_bits_original(key, bit_width, shape)


# ------------------------------------------------------ rbg, unsafe_rbg ----

def _halves(key):
    return S.slice(key, (0,), (2,)), S.slice(key, (2,), (4,))


def _rbg_split(key, shape):
    h0, h1 = _halves(key)
    return S.concatenate([_tf_split(h0, shape), _tf_split(h1, shape)], len(shape))


def _rbg_fold_in(key, data):
    h0, h1 = _halves(key)
    return S.concatenate([_tf_fold_in(h0, data), _tf_fold_in(h1, data)], 0)


def _rbg_bits(key, bit_width, shape):
    _, bits = rng_bit_generator_p.bind(key, shape=tuple(shape), dtype=_UINT[bit_width], algorithm=0)
    return bits


def _urbg_split(key, shape):
    # Ten draws of the generator per new key, every tenth kept: its output is the hash.
    num = _size(shape)
    _, keys = rng_bit_generator_p.bind(key, shape=(10 * num, 4), dtype=_U32, algorithm=0)
    return S.reshape(S.slice(keys, (0, 0), (10 * num, 4), (10, 1)), tuple(shape) + (4,))


def _urbg_fold_in(key, data):
    _, bits = rng_bit_generator_p.bind(_rbg_seed(data), shape=(10, 4), dtype=_U32, algorithm=0)
    return E.bitwise_xor(key, S.reshape(S.slice(bits, (9, 0), (10, 4)), (4,)))


def _rbg_seed(seed):
    half = _tf_seed(seed)
    return S.concatenate([half, half], 0)


# ------------------------------------------------------------- dispatch ----

_SPLIT = {"threefry2x32": _tf_split, "rbg": _rbg_split, "unsafe_rbg": _urbg_split, **C.SPLIT}
_FOLD_IN = {"threefry2x32": _tf_fold_in, "rbg": _rbg_fold_in, "unsafe_rbg": _urbg_fold_in,
            **C.FOLD_IN}
_BITS = {"threefry2x32": _tf_bits, "rbg": _rbg_bits, "unsafe_rbg": _rbg_bits, **C.BITS}


def random_bits(key, bit_width: int, shape) -> "np.ndarray":
    """Unsigned integers of `bit_width` bits in `shape`, JAX's bits for this key."""
    return _BITS[current_impl()](key, bit_width, tuple(shape))


def split_key(key, shape: tuple):
    """New key data (*shape, n) from one key's data, as JAX's split."""
    return _SPLIT[current_impl()](key, tuple(shape))


# ------------------------------------------------------------------ public ----

def _rewrap(like, data, impl):
    """New keys typed like the keys they came from: typed in, typed out (always typed
    with JAX's `enable_custom_prng` option on)."""
    return PRNGKeyArray(data, impl) if isinstance(like, PRNGKeyArray) or options.enable_custom_prng else data


def PRNGKey(seed, *, impl=None) -> "np.ndarray":
    """A raw key from an integer seed (uint32[2] for threefry2x32, JAX's default; uint32[4]
    for rbg, unsafe_rbg and threefry4x32; uint32[1] for philox2x32; uint32[2] for
    philox4x32), JAX's words for every seed: the high and low 32 bits of the seed as a
    64-bit integer (Python ints are int64), twice for rbg, hashed for the others.

    >>> PRNGKey(42)
    Array([ 0, 42], dtype=uint32)
    """
    impl = resolve_impl(impl, who="PRNGKey")
    data = _seed_data("PRNGKey", seed, impl)
    return PRNGKeyArray(data, impl) if options.enable_custom_prng else data


def key(seed, *, impl=None, dtype=None) -> PRNGKeyArray:
    """A typed key (shape (), dtype key<fry>, or key<rbg>, key<urbg>, key<fry4>, key<phx2>,
    key<phx4>) from an integer seed; its data is PRNGKey(seed, impl=impl).

    >>> key(42)
    Array((), dtype=key<fry>) overlaying:
    [ 0 42]
    """
    impl = resolve_impl(impl, dtype, who="key")
    return PRNGKeyArray(_seed_data("key", seed, impl), impl)


def wrap_key_data(key_bits_array, *, impl=None, dtype=None) -> PRNGKeyArray:
    """Typed keys over uint32[..., n] key data (the inverse of `key_data`).

    >>> wrap_key_data(np.array([0, 42], np.uint32)).shape
    ()
    """
    impl = resolve_impl(impl, dtype, who="wrap_key_data")
    if isinstance(key_bits_array, PRNGKeyArray):
        raise TypeError("wrap_key_data requires a uint32 array of key data, but was given a key "
                        "array; it is already wrapped")
    if not _is_arraylike(key_bits_array):
        key_bits_array = np.asarray(key_bits_array)
    a, kshape = _aval(key_bits_array), key_shape(impl)
    if a.ndim < 1 or a.shape[-1:] != kshape:
        raise TypeError(f"invalid PRNG key data: expected key_data.shape to end with {kshape}; got "
                        f"shape={a.shape} for impl={impl!r}")
    if a.dtype != _U32:
        raise TypeError(f"invalid PRNG key data: expected key_data.dtype = uint32; got dtype={a.dtype}")
    out = PRNGKeyArray(key_bits_array, impl)
    return fresh(out) if options.debug_key_reuse else out


def _seed_data(name, seed, impl):
    seed = _check_seed(name, seed)
    if impl in C.SEED:
        return C.SEED[impl](*_seed_words(seed))
    words = _tf_seed(seed)
    return S.concatenate([words, words], 0) if impl != "threefry2x32" else words


def _check_seed(name, seed):
    if isinstance(seed, PRNGKeyArray):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if isinstance(seed, bool) or isinstance(seed, (np.ndarray, np.generic)) and seed.dtype == np.bool_:
        raise TypeError(f"PRNG key seed must be an integer; got {seed!r}")
    if isinstance(seed, int):
        seed = np.int64(seed)  # OverflowError beyond int64, as in JAX
    if not _is_arraylike(seed):
        seed = np.asarray(seed)
    a = _aval(seed)
    if a.dtype == _U32 and a.shape[-1:] in ((1,), (2,), (4,)):
        raise TypeError(f"{name} accepts a scalar seed, but was given a PRNG key.")
    if a.ndim:
        raise TypeError(f"{name} accepts a scalar seed, but was given an array of shape {a.shape} "
                        "!= (). Use funcad.vmap for batching")
    if a.dtype.kind not in "iu":
        raise TypeError(f"PRNG key seed must be an integer; got {a.str_short()} {seed!r}")
    return seed


def _seed_words(seed):
    """An integer seed's high and low 32 bits (the high word of a narrower seed is 0,
    XLA's shift by the bit width), as 0-d uint32."""
    a = _aval(seed)
    if a.dtype.itemsize == 8:
        hi = E.convert_element_type(shift_right_logical(seed, np.array(32, a.dtype)), _U32)
    else:
        hi = np.zeros((), _U32)
    return hi, E.convert_element_type(seed, _U32)


def _tf_seed(seed):
    """A threefry key's two words from an integer seed: its high and low 32 bits."""
    hi, lo = _seed_words(seed)
    return S.concatenate([S.reshape(hi, (1,)), S.reshape(lo, (1,))], 0)


def split(key, num: int | Sequence[int] = 2):
    """`num` new keys (or a shape of keys) from one: uint32[*num, n] (typed keys of shape num
    for a typed key).

    >>> split(PRNGKey(0)).shape
    (2, 2)
    """
    impl = impl_of(key)
    if options.debug_key_reuse and not _inside[0]:
        key = consume(key, "random_split")
    data = check_key("split", key)
    with impl_scope(impl):
        return _rewrap(key, split_key(data, canonical_shape(num)), impl)


def fold_in(key, data):
    """A new key that is a deterministic function of `key` and the 32-bit integer `data`.

    >>> fold_in(PRNGKey(0), 3).dtype
    dtype('uint32')
    """
    impl = impl_of(key)
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
    return _rewrap(keys, _FOLD_IN[impl](key, data), impl)


def clone(key):
    """The same keys: keys are immutable values, so a clone needs no copy (as JAX's).

    >>> clone(PRNGKey(1))
    array([0, 1], dtype=uint32)
    """
    out = _rewrap(key, check_key("clone", key, allow_batched=True), impl_of(key))
    return fresh(out) if options.debug_key_reuse else out


def key_data(keys):
    """The uint32[..., n] data of typed keys; raw keys are their own data.

    >>> key_data(key(7))
    array([0, 7], dtype=uint32)
    """
    return check_key("key_data", keys, allow_batched=True)


def key_impl(keys) -> str:
    """The name of the keys' PRNG implementation ('threefry2x32', 'rbg', 'unsafe_rbg',
    'threefry4x32', 'philox2x32' or 'philox4x32').

    >>> key_impl(key(0, impl="rbg"))
    'rbg'
    """
    check_key("key_impl", keys, allow_batched=True)
    return impl_of(keys)


def bits(key, shape=(), dtype=None):
    """Uniform random bits: unsigned integers of `dtype` (default uint64, as JAX with x64).

    >>> bits(PRNGKey(0), (2,), np.uint32).dtype
    dtype('uint32')
    """
    impl = impl_of(key)
    key = check_key("bits", key)
    dtype = np.dtype(np.uint64 if dtype is None else dtype)
    if dtype.kind != "u":
        raise ValueError(f"dtype argument to `bits` must be an unsigned int dtype, got {dtype}")
    with impl_scope(impl):
        return random_bits(key, dtype.itemsize * 8, canonical_shape(shape))
