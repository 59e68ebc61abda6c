"""The two no-op markers the key-reuse checker reads (`debug_key_reuse`; funcad/random/_key_reuse.py).

Typed keys reach a jaxpr as their uint32[..., n] data, so a traced program cannot tell a
key's uses from other arithmetic. With `debug_key_reuse` on, funcad.random binds these
identities on key data where JAX's typed-key primitives consume or create keys:

- `random_consume(data, site=, mask=)` marks the keys `mask` selects (None: all; else a
  `KeyMask` over the key axes) as consumed by `site` (the name JAX's error gives:
  'jit' for a sampler, 'random_split', 'random_bits', 'slice' for indexing). Its output
  is the same keys.
- `random_clone(data)` is a fresh, unconsumed copy of the keys (`clone`, `wrap_key_data`).

Both are the identity in every rule (impl, lowering, to_python); they have no tangent
(key data is uint32), and the batching rule adds the batch axis to the mask. With the option off neither
is ever bound.
"""
from __future__ import annotations

from ..core.trace import sharding_rules as _sharding_rules
from ..core.typed_sharding import BY_SHAPE_RULE as _BY_SHAPE_RULE
import numpy as np

from ..core.trace import batch_rules, lowering_rules
from ._base import defpython, defzero, new_primitive

__all__ = ["KeyMask", "random_clone_p", "random_consume_p"]


class KeyMask:
    """A read-only boolean array over key axes, hashable so it can be a primitive param."""

    __slots__ = ("array",)

    def __init__(self, array):
        a = np.array(array, dtype=bool)
        a.flags.writeable = False
        self.array = a

    def __eq__(self, other) -> bool:
        return (isinstance(other, KeyMask) and self.array.shape == other.array.shape
                and bool(np.all(self.array == other.array)))

    def __hash__(self) -> int:
        return hash((self.array.shape, self.array.tobytes()))

    def __repr__(self) -> str:
        return f"KeyMask({self.array.tolist()})"


def _identity(x, **params):
    return x


random_consume_p = new_primitive("random_consume", _identity, _identity)
random_clone_p = new_primitive("random_clone", _identity, _identity)
_sharding_rules[random_consume_p] = _sharding_rules[random_clone_p] = _BY_SHAPE_RULE  # identities


def _consume_batch(vals, dims, *, axis_size, site, mask):
    (x,), (d,) = vals, dims
    if mask is not None and d is not None:  # each batch entry consumes the same keys
        mask = KeyMask(np.repeat(np.expand_dims(mask.array, d), axis_size, d))
    return random_consume_p.bind(x, site=site, mask=mask), d


batch_rules[random_consume_p] = _consume_batch
batch_rules[random_clone_p] = lambda vals, dims, *, axis_size: (random_clone_p.bind(vals[0]), dims[0])
defzero(random_consume_p)  # key data is uint32: no tangent
defzero(random_clone_p)
lowering_rules[random_consume_p] = lambda ctx, x, **params: x
lowering_rules[random_clone_p] = lambda ctx, x: x
defpython(random_consume_p, "{0}")
defpython(random_clone_p, "{0}")
