"""JAX's scalar types: `fnp.float32(x)` is x as a float32 array, traced values included.

Each stands for NumPy's (or ml_dtypes') scalar type: it compares and hashes equal to
it, `np.dtype(fnp.float32)` is float32, `isinstance(np.float32(1), fnp.float32)` holds,
and `dtype=fnp.float32` works wherever a dtype is taken. Calling it converts, as
`jnp.float32(x)` does (`jnp.asarray(x, jnp.float32)`), so it works on tracers under
jit where NumPy's own type would need a concrete value.

>>> import funcad, funcad.numpy as fnp, numpy as np
>>> fnp.float32(1.5)
Array(1.5, dtype=float32)
>>> funcad.jit(lambda x: fnp.int32(x) * 2)(2.7)
Array(4, dtype=int32)
>>> fnp.float32 == np.float32, np.dtype(fnp.float32), isinstance(np.float32(1), fnp.float32)
(True, dtype('float32'), True)
"""
from __future__ import annotations

import numpy as np
from ..core.eager import wrap
from ..arrays.creation import asarray


class _ScalarMeta(type):
    dtype: np.dtype
    _scalar: type

    def __call__(cls, x):
        return wrap(asarray(x, dtype=cls.dtype))

    def __eq__(cls, other):
        return other is cls or other is cls._scalar or (isinstance(other, type) and other == cls._scalar)

    def __ne__(cls, other):
        return not _ScalarMeta.__eq__(cls, other)

    def __hash__(cls):
        return hash(cls._scalar)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls._scalar)

    def __repr__(cls):
        return f"<class 'funcad.numpy.{cls.__name__}'>"


def scalar_type(name: str, scalar: type) -> type:
    """funcad.numpy's scalar type `name`, standing for the NumPy scalar type `scalar`."""
    doc = (f"JAX's {name}: `{name}(x)` is x as an array of dtype {np.dtype(scalar).name} "
           f"(traced values too); it compares equal to NumPy's type.")
    return _ScalarMeta(name, (), {"dtype": np.dtype(scalar), "_scalar": scalar, "__doc__": doc,
                                  "__module__": "funcad.numpy"})
