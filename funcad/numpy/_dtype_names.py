"""Scalar types, dtype classes and dtype helpers under JAX's names (NumPy's types)."""
from __future__ import annotations

import builtins

import numpy as np

from ..core.errors import FuncadValueError
from ..core.narrow import kind as _kind
from ..core.avals import aval_of
from ..arrays.dtypes import asarray_or_tracer

__all__ = ["bool", "int_", "uint", "uint16", "float_", "complex_", "single", "double", "csingle",
           "cdouble", "generic", "flexible", "character", "signedinteger", "unsignedinteger",
           "complexfloating", "object_", "can_cast", "isdtype", "ComplexWarning",
           "get_printoptions", "set_printoptions", "printoptions", "array_repr", "array_str",
           "save", "savez", "load"]

bool = np.bool_
int_, uint, uint16 = np.int64, np.uint64, np.uint16
float_, complex_ = np.float64, np.complex128
single, double, csingle, cdouble = np.float32, np.float64, np.complex64, np.complex128
generic, flexible, character = np.generic, np.flexible, np.character
signedinteger, unsignedinteger, complexfloating, object_ = (np.signedinteger, np.unsignedinteger,
                                                            np.complexfloating, np.object_)
ComplexWarning = np.exceptions.ComplexWarning
get_printoptions, set_printoptions, printoptions = np.get_printoptions, np.set_printoptions, np.printoptions
save, savez, load = np.save, np.savez, np.load


def can_cast(from_, to, casting: str = "safe") -> bool:
    """Whether from_ (a dtype or an array) can be cast to `to` under the casting rule."""
    if not isinstance(from_, (np.dtype, type, str)):
        from_ = aval_of(asarray_or_tracer(from_)).dtype
    return builtins.bool(np.can_cast(from_, to, casting))


_KINDS = {"bool": "b", "signed integer": "i", "unsigned integer": "u", "integral": "iu",
          "real floating": "f", "complex floating": "c", "numeric": "iufc"}


def isdtype(dtype, kind) -> bool:
    """Whether dtype is of the given kind (the array API's isdtype): a kind name
    ('bool', 'signed integer', 'unsigned integer', 'integral', 'real floating',
    'complex floating', 'numeric'), a dtype, or a tuple of those."""
    d = np.dtype(dtype)
    kinds = kind if isinstance(kind, tuple) else (kind,)
    for k in kinds:
        if isinstance(k, str):
            if k not in _KINDS:
                raise FuncadValueError(f"isdtype: unknown kind {k!r}; use one of {', '.join(_KINDS)}")
            if _kind(d) in _KINDS[k]:
                return True
        elif d == np.dtype(k):
            return True
    return False


def array_repr(arr, max_line_width=None, precision=None, suppress_small=None):
    return np.array_repr(np.asarray(arr), max_line_width, precision, suppress_small)


def array_str(a, max_line_width=None, precision=None, suppress_small=None):
    return np.array_str(np.asarray(a), max_line_width, precision, suppress_small)
