"""JAX's dtype utilities, the implementation of `funcad.dtypes` (see there)."""
import sys as _sys
from typing import Any as _Any

import numpy as _np

from ..core import narrow as _narrow, x64 as _x64
from ..core.avals import float0, result_type as _aval_result_type
from ..core.errors import TypePromotionError
from ._narrow import _aval, bfloat16, finfo, iinfo, issubdtype as _issubdtype

__all__ = ["TypePromotionError", "bfloat16", "canonicalize_dtype", "extended", "finfo", "float0",
           "iinfo", "issubdtype", "itemsize_bits", "prng_key", "result_type", "scalar_type_of"]


class extended(_np.generic):
    """Abstract scalar type of the dtypes that are not NumPy's: funcad's key dtypes
    (`key<fry>`, ...). Use it with `issubdtype`, as JAX's."""


class prng_key(extended):
    """Abstract scalar type of PRNG key dtypes: `issubdtype(key.dtype, prng_key)`."""


def _is_key_dtype(x) -> bool:
    keys = _sys.modules.get("funcad.random._keyarray")  # no key dtype exists before it loads
    return keys is not None and isinstance(x, keys.KeyDType)


def issubdtype(arg1, arg2) -> bool:
    """numpy.issubdtype that knows the narrow dtypes and key dtypes, as JAX's.

    >>> issubdtype(bfloat16, _np.floating), issubdtype(_np.int8, _np.floating)
    (True, False)
    """
    if _is_key_dtype(arg1) or arg1 is extended or arg1 is prng_key:
        if arg2 is extended:
            return True
        if arg2 is prng_key:
            return arg1 is not extended
        return _is_key_dtype(arg2) and arg1 == arg2
    if arg2 is extended or arg2 is prng_key or _is_key_dtype(arg2):
        return False
    return _issubdtype(arg1, arg2)


def canonicalize_dtype(dtype: _Any, allow_extended_dtype: bool = False) -> _np.dtype:
    """The dtype funcad gives values of `dtype` in the current mode: itself with x64 on
    (funcad's default), JAX's 32-bit stand-in with it off (float64 -> float32, ...).

    >>> canonicalize_dtype(int)
    dtype('int64')
    """
    if _is_key_dtype(dtype):
        if allow_extended_dtype:
            return dtype
        raise ValueError(f"Internal: canonicalize_dtype called on extended dtype {dtype} with "
                         "allow_extended_dtype=False")
    return _x64.canonicalize_dtype(dtype)


def result_type(*args: _Any, return_weak_type_flag: bool = False):
    """The dtype funcad's operations give for these arrays, scalars and dtypes; Python
    scalars are weakly typed. With `return_weak_type_flag=True`, (dtype, weak).

    >>> result_type(_np.int8, 3), result_type(_np.int8, _np.uint8)
    (dtype('int8'), dtype('int16'))
    """
    if not args:
        raise ValueError("at least one array or dtype is required")
    dtype, weak = _aval_result_type(*[_aval(a) for a in args])
    return (dtype, weak) if return_weak_type_flag else dtype


_SCALAR_OF_KIND = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def scalar_type_of(x: _Any) -> type:
    """The Python scalar type of values like `x`'s: bool, int, float or complex.

    >>> scalar_type_of(_np.uint8(3)), scalar_type_of(_np.ones(2, bfloat16))
    (<class 'int'>, <class 'float'>)
    """
    dtype = x.dtype if hasattr(x, "dtype") else _aval(x).dtype
    kind = _narrow.kind(_np.dtype(dtype))
    if kind not in _SCALAR_OF_KIND:
        raise TypeError(f"Invalid scalar value {x!r}: its dtype {dtype} has no Python scalar type")
    return _SCALAR_OF_KIND[kind]


def itemsize_bits(dtype: _Any) -> int:
    """Bits per element of `dtype`: 4 for int4 and float4_e2m1fn, 8 for bool, ...

    >>> itemsize_bits(_np.float32), itemsize_bits(_np.bool_)
    (32, 8)
    """
    if dtype is None:
        raise ValueError("dtype cannot be None.")
    d = _np.dtype(dtype)
    if d == float0:
        raise ValueError(f"unexpected input: dtype={d!r}")
    if d in _narrow.KINDS:
        return int(finfo(d).bits) if _narrow.KINDS[d] == "f" else int(iinfo(d).bits)
    return d.itemsize * 8
