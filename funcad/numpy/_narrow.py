"""The narrow dtypes of JAX (from `ml_dtypes`): scalar types, finfo/iinfo,
and the dtype queries that know them (promotion on JAX's lattice, subtypes).

>>> import funcad.numpy as fnp
>>> fnp.zeros(2, fnp.bfloat16).dtype, fnp.promote_types(fnp.bfloat16, fnp.float16)
(dtype(bfloat16), dtype('float32'))
>>> float(fnp.finfo(fnp.float8_e4m3fn).max)
448.0
"""
from __future__ import annotations

import ml_dtypes
import numpy as np

from ..core import narrow as _narrow
from ..core import options as _options
from ..core import x64 as _x64
from ..core.avals import (ShapedArray, aval_of, check_strict as _check_strict,
                          check_strict_dtypes as _check_strict_dtypes, result_type as _result_type)
from ..core.trace import Tracer

__all__ = ["bfloat16", "float4_e2m1fn", "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4",
           "float8_e4m3", "float8_e4m3b11fnuz", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2",
           "float8_e5m2fnuz", "float8_e8m0fnu", "int1", "int2", "int4", "uint1", "uint2", "uint4",
           "finfo", "iinfo", "issubdtype", "promote_types", "result_type"]

bfloat16 = ml_dtypes.bfloat16
float4_e2m1fn, float6_e2m3fn, float6_e3m2fn = (ml_dtypes.float4_e2m1fn, ml_dtypes.float6_e2m3fn,
                                               ml_dtypes.float6_e3m2fn)
float8_e3m4, float8_e4m3, float8_e4m3b11fnuz = (ml_dtypes.float8_e3m4, ml_dtypes.float8_e4m3,
                                                ml_dtypes.float8_e4m3b11fnuz)
float8_e4m3fn, float8_e4m3fnuz, float8_e5m2 = (ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
                                               ml_dtypes.float8_e5m2)
float8_e5m2fnuz, float8_e8m0fnu = ml_dtypes.float8_e5m2fnuz, ml_dtypes.float8_e8m0fnu
int1, int2, int4 = ml_dtypes.int1, ml_dtypes.int2, ml_dtypes.int4
uint1, uint2, uint4 = ml_dtypes.uint1, ml_dtypes.uint2, ml_dtypes.uint4

# ml_dtypes' finfo/iinfo are NumPy's for NumPy's dtypes and know the narrow ones too.
finfo, iinfo = ml_dtypes.finfo, ml_dtypes.iinfo


def promote_types(a, b) -> np.dtype:
    """The dtype a and b promote to: NumPy's table for NumPy's dtypes, JAX's type lattice
    where one is a narrow dtype (bfloat16 with float16 gives float32; two float8
    formats have no common type and raise)."""
    a, b = np.dtype(a), np.dtype(b)
    if _options.numpy_dtype_promotion == "strict":
        _check_strict_dtypes([(a, False), (b, False)])
    if a in _narrow.KINDS or b in _narrow.KINDS:
        return _narrow.lattice_result([a, b])
    return np.promote_types(a, b)


_STAND_IN = {"b": False, "i": 0, "u": 0, "f": 0.0, "c": 0j}


def _aval(a):
    if isinstance(a, Tracer) or isinstance(a, (np.ndarray, np.generic, int, float, complex, bool)):
        return aval_of(a)
    return ShapedArray((), np.dtype(a))  # a dtype or scalar type


def result_type(*arrays_and_dtypes) -> np.dtype:
    """numpy.result_type that also takes tracers (a weak-typed one counts as a Python
    scalar) and promotes narrow dtypes on JAX's lattice.

    >>> result_type(np.float32, 2.0), result_type(bfloat16, 2.0)
    (dtype('float32'), dtype(bfloat16))
    """
    if not arrays_and_dtypes:
        raise TypeError("result_type() needs at least one array or dtype")
    avals = [_aval(a) for a in arrays_and_dtypes]
    if _options.numpy_dtype_promotion == "strict":
        _check_strict(avals)
    if any(a.dtype in _narrow.KINDS for a in avals):
        return _result_type(*avals)[0]
    # With x64 off, a dtype NumPy widens to (a Python float alone: float64) is narrowed
    # as funcad's operations narrow their results.
    return _x64.canonicalize_dtype(
        np.result_type(*[_STAND_IN[a.dtype.kind] if a.weak_type else a.dtype for a in avals]))


_ABSTRACT = {"f": (np.floating, np.inexact, np.number, np.generic),
             "i": (np.signedinteger, np.integer, np.number, np.generic),
             "u": (np.unsignedinteger, np.integer, np.number, np.generic)}


def issubdtype(arg1, arg2) -> bool:
    """numpy.issubdtype, with the narrow dtypes under the abstract types they belong to
    (bfloat16 is a floating type, int4 a signed integer), as in JAX."""
    if isinstance(arg1, np.dtype) or not (isinstance(arg1, type) and issubclass(arg1, np.generic)):
        try:
            arg1 = np.dtype(arg1).type
        except TypeError:
            return False
    d1 = np.dtype(arg1)
    if d1 in _narrow.KINDS:
        if isinstance(arg2, type) and arg2 in _ABSTRACT[_narrow.KINDS[d1]]:
            return True
        try:
            return np.dtype(arg2) == d1
        except TypeError:
            return False
    return bool(np.issubdtype(arg1, arg2))
