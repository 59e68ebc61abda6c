"""Typed keys: arrays of PRNG keys whose shape hides the key words.

`funcad.random.key(0)` is a `PRNGKeyArray` of shape () and dtype `key<fry>`
over uint32[2] data, as JAX's typed keys are (`key<rbg>`, `key<urbg>` and
`key<fry4>` over uint32[4] for 'rbg', 'unsafe_rbg' and 'threefry4x32',
`key<phx2>` over uint32[1] and `key<phx4>` over uint32[2] for 'philox2x32' and
'philox4x32'). It is a pytree
with one leaf, the raw uint32[..., n] data (its implementation is the aux
data), so it flows through jit, vmap (batched along a
leading axis), scan carries and grad (whose gradient for a key is a float0
array of the key's shape, as in JAX) without any special rule. Indexing,
reshape, ravel, squeeze, transpose, len, iteration and == act on the key
axes only.
"""
from __future__ import annotations

import numpy as np

from ..core.avals import float0
from ..core.pytree import register_pytree_node
from ..core import options, prng_settings
from ..core.trace import Tracer
from ..lowering.array import register_array_type
from .. import numpy as fnp

__all__ = ["KeyDType", "PRNGKeyArray", "key_dtype", "key_shape", "resolve_impl"]


class hooks:
    """Set by random/_key_reuse.py, which builds on this module: `consume_slice(keys, idx)`,
    the keys `keys[idx]` consumes under debug_key_reuse."""
    consume_slice = None

# name -> (shape of one key's data, dtype tag), as JAX's implementations.
_IMPLS = {"threefry2x32": ((2,), "fry"), "rbg": ((4,), "rbg"), "unsafe_rbg": ((4,), "urbg"),
          "threefry4x32": ((4,), "fry4"), "philox2x32": ((1,), "phx2"),
          "philox4x32": ((2,), "phx4")}


class KeyDType:
    """The dtype of key arrays of one implementation, printed `key<fry>` (or `key<rbg>`,
    `key<urbg>`, `key<fry4>`, `key<phx2>`, `key<phx4>`) as JAX prints it."""

    __slots__ = ("impl",)

    def __init__(self, impl: str):
        self.impl = impl

    @property
    def name(self) -> str:
        return f"key<{_IMPLS[self.impl][1]}>"

    def __repr__(self) -> str:
        return self.name

    __str__ = __repr__

    def __eq__(self, other) -> bool:
        return (other.impl == self.impl) if isinstance(other, KeyDType) else other == self.name

    def __hash__(self) -> int:
        return hash(self.name)


_KEY_DTYPES = {name: KeyDType(name) for name in _IMPLS}


def resolve_impl(impl, dtype=None, who: str = "key") -> str:
    """The implementation name from `impl=`/`dtype=` (a name or a key dtype); None is the
    configured default (`funcad.config.default_prng_impl`)."""
    if impl is not None and dtype is not None:
        raise ValueError(f"Cannot specify both `impl` and `dtype` arguments to funcad.random.{who}")
    spec = impl if impl is not None else dtype
    if spec is None:
        return prng_settings.default_impl
    if isinstance(spec, KeyDType):
        return spec.impl
    if isinstance(spec, str) and spec in _IMPLS:
        return spec
    if not isinstance(spec, str):
        raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation; "
                        f"pass a name ({', '.join(map(repr, _IMPLS))}) or a key dtype")
    raise ValueError(f"unrecognized PRNG implementation {spec!r}; did you mean one of "
                     f"{', '.join(map(repr, _IMPLS))}?")


def key_shape(impl: str) -> tuple:
    """The shape of one key's uint32 data: (2,) for threefry2x32 and philox4x32, (4,) for
    rbg, unsafe_rbg and threefry4x32, (1,) for philox2x32."""
    return _IMPLS[impl][0]


def key_dtype(impl_spec=None) -> KeyDType:
    """The dtype of typed keys of an implementation (default: the configured one).

    >>> key_dtype(), key_dtype("rbg")
    (key<fry>, key<rbg>)
    """
    return _KEY_DTYPES[resolve_impl(impl_spec, who="key_dtype")]


def _shape(x) -> tuple:
    return tuple(x.shape)


@register_array_type  # isinstance(key, funcad.Array) holds, as with JAX's key arrays
class PRNGKeyArray:
    """An array of typed PRNG keys over uint32[*shape, n] key data (n is the implementation's).

    >>> import funcad.random as fr
    >>> keys = fr.split(fr.key(0), 4)
    >>> keys.shape, keys.dtype, keys[1:].shape
    ((4,), key<fry>, (3,))
    """

    # _consumed is set only by the key-reuse checker (debug_key_reuse; _key_reuse.py)
    __slots__ = ("_data", "_impl", "_consumed")
    _hidden_ndim = 1  # the key words' axis: vmap counts negative axes without it
    __array_priority__ = 2000  # NumPy defers == to us

    def __init__(self, data, impl: str = "threefry2x32"):
        self._data = data
        self._impl = impl

    # -- array attributes (of the key axes) --------------------------------
    @property
    def shape(self) -> tuple:
        return _shape(self._data)[:-1]

    @property
    def dtype(self) -> KeyDType:
        return _KEY_DTYPES[self._impl]

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return 4 * key_shape(self._impl)[0]

    @property
    def nbytes(self) -> int:
        return self.itemsize * self.size

    def __len__(self) -> int:
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    # -- structural methods act on the key axes ----------------------------
    def __getitem__(self, idx) -> "PRNGKeyArray":
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(isinstance(i, PRNGKeyArray) for i in idx):
            raise TypeError("key arrays cannot be used as indices")
        keys = self
        if options.debug_key_reuse:  # indexing consumes the keys it takes, as JAX's slice
            keys = hooks.consume_slice(self, idx)
        # The trailing full slice keeps the key words whatever idx holds (..., None, masks).
        return PRNGKeyArray(keys._data[idx + (slice(None),)], self._impl)

    def reshape(self, *shape, order: str = "C") -> "PRNGKeyArray":
        if order != "C":
            raise ValueError(f"key arrays can only be reshaped in C order, got order={order!r}")
        shape = shape[0] if len(shape) == 1 and not isinstance(shape[0], int) else shape
        shape = tuple(int(d) for d in (shape if isinstance(shape, tuple) else tuple(shape)))
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise TypeError(f"cannot reshape key array of shape {self.shape} (size {self.size}) "
                            f"into shape {shape} (size {int(np.prod(shape, dtype=np.int64))})")
        return PRNGKeyArray(fnp.reshape(self._data, shape + key_shape(self._impl)), self._impl)

    def ravel(self) -> "PRNGKeyArray":
        return self.reshape(-1)

    flatten = ravel

    def squeeze(self, axis=None) -> "PRNGKeyArray":
        if axis is None:
            axes = tuple(i for i, d in enumerate(self.shape) if d == 1)
        else:
            axes = tuple(a % max(self.ndim, 1) for a in (axis if isinstance(axis, tuple) else (axis,)))
            bad = [a for a in axes if self.shape[a] != 1]
            if bad:
                raise ValueError(f"cannot select an axis to squeeze out which has size not equal to "
                                 f"one: axis {bad[0]} of key array shape {self.shape}")
        return self.reshape(tuple(d for i, d in enumerate(self.shape) if i not in axes))

    def transpose(self, *axes) -> "PRNGKeyArray":
        axes = axes[0] if len(axes) == 1 and not isinstance(axes[0], int) else axes
        axes = tuple(range(self.ndim))[::-1] if not axes else tuple(a % self.ndim for a in axes)
        return PRNGKeyArray(fnp.transpose(self._data, axes + (self.ndim,)), self._impl)

    @property
    def T(self) -> "PRNGKeyArray":
        return self.transpose()

    def copy(self) -> "PRNGKeyArray":
        out = PRNGKeyArray(self._data, self._impl)
        if options.debug_key_reuse and hasattr(self, "_consumed"):  # a copy is the same keys
            out._consumed = self._consumed
        return out

    def block_until_ready(self) -> "PRNGKeyArray":
        if hasattr(self._data, "block_until_ready"):
            self._data.block_until_ready()
        return self

    # -- comparisons --------------------------------------------------------
    def _compare(self, other, name):
        if not isinstance(other, PRNGKeyArray):
            raise TypeError(f"{name} requires two key arrays; got a key array and "
                            f"{type(other).__name__}. Compare key data with funcad.random.key_data.")
        if other._impl != self._impl:
            raise TypeError(f"{name} of keys of different implementations: {self.dtype} and "
                            f"{other.dtype}")
        return fnp.all(fnp.equal(self._data, other._data), axis=-1)

    def __eq__(self, other):
        return self._compare(other, "==")

    def __ne__(self, other):
        return fnp.logical_not(self._compare(other, "!="))

    __hash__ = None  # arrays are unhashable, as JAX's

    def __array__(self, dtype=None, copy=None):
        raise TypeError("a key array cannot be converted to a NumPy array; take its uint32 data "
                        "with funcad.random.key_data(keys)")

    def __bool__(self):
        raise TypeError("the truth value of a key array is ambiguous; compare keys with ==")

    def __repr__(self) -> str:
        if isinstance(self._data, Tracer):
            return f"Traced<{self.dtype}{list(self.shape)}>"
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{np.asarray(self._data)}"

    __str__ = __repr__


def _unflatten(impl, children):
    (data,) = children
    # A cotangent of key data is float0; JAX's gradient for a key has the key's own shape.
    if isinstance(getattr(data, "dtype", None), np.dtype) and data.dtype == float0:
        return np.zeros(_shape(data)[:-1], float0)
    return PRNGKeyArray(data, impl)


register_pytree_node(PRNGKeyArray, lambda k: ((k._data,), k._impl), _unflatten)
