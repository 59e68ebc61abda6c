"""funcad.numpy: the NumPy API, built on funcad's primitives.

With no transformation active each function is the NumPy call plus one
dispatch; under grad, jvp, vmap or jit the same code is traced.

>>> import funcad.numpy as fnp
>>> float(fnp.sum(fnp.tanh(fnp.ones(3))))
2.284782...
"""
import importlib as _importlib
import types as _types

import numpy as _np

from ..core.trace import Tracer as _Tracer
from ..core.avals import aval_of as _aval_of, float0
from ..arrays.creation import public as _creation
from ..core.errors import unsupported_name as _unsupported_name
from ..core.eager import eager_result as _eager_result
from ._scalar_types import scalar_type as _scalar_type
# Creation builds arrays with NumPy directly; its results are immutable funcad arrays too.
(arange, array, asarray, astype, empty, empty_like, eye, full, full_like, identity, linspace, ones,
 ones_like, zeros, zeros_like) = (getattr(_creation, n) for n in (
    "arange", "array", "asarray", "astype", "empty", "empty_like", "eye", "full", "full_like", "identity",
    "linspace", "ones", "ones_like", "zeros", "zeros_like"))
from ..arrays.indexing import take, take_along_axis
from ..arrays.linalg import dot, einsum, einsum_path, inner, matmul, outer, tensordot, vdot
from ..arrays.reductions import (all, amax, amin, any, argmax, argmin, cumprod, cumsum, logsumexp, max,
                          mean, min, prod, std, sum, var)
from ..arrays.shape import (argsort, array_split, atleast_1d, atleast_2d, broadcast_arrays, broadcast_to,
                     column_stack, concatenate, diag, diagonal, expand_dims, flip, fliplr, flipud,
                     hsplit, hstack, matrix_transpose, moveaxis, ndim, ravel, reshape, roll,
                     shape, size, sort, split, squeeze, stack, swapaxes, tile, trace, transpose, tri,
                     tril, triu, vsplit, vstack)
from ..arrays.ufuncs import (abs, absolute, acos, acosh, add, arccos, arccosh, arcsin, arcsinh, arctan,
                      arctan2, arctanh, around, asin, asinh, atan, atan2, atanh, bitwise_and,
                      bitwise_not, bitwise_or, bitwise_xor, cbrt, ceil, clip, copysign, cos, cosh,
                      deg2rad, degrees, divide, divmod, equal, exp, exp2, expm1, fix, float_power,
                      floor, floor_divide, fmod, greater, greater_equal, heaviside, hypot, invert,
                      isfinite, isinf, isnan, less, less_equal, log, log1p, log2, log10, logaddexp,
                      logaddexp2, logical_and, logical_not, logical_or, logical_xor, maximum,
                      minimum, mod, multiply, negative, not_equal, positive, power,
                      rad2deg, radians, reciprocal, remainder, rint, round, sign, sin, sinc, sinh,
                      sqrt, square, subtract, tan, tanh, true_divide, trunc)
from ..arrays.setops import nonzero, where
from ._ufunc_api import frompyfunc, ufunc
from ._ufunc_builtins import install as _install_ufuncs
_install_ufuncs(globals())
from ._methods import install as _install, install_eager as _install_eager
from ..core.eager import EagerArray as _EagerArray
from ..lowering.array import Array as _Array

_install(_Tracer)
_install(_Array)  # device Arrays: lowering knows nothing of funcad.numpy
_install_eager(_EagerArray)
from ._interop import array_function as _array_function, array_ufunc as _array_ufunc  # noqa: E402

# np.sin(tracer) traces as funcad.numpy.sin(tracer) instead of dropping derivatives.
_Tracer.__array_ufunc__, _Tracer.__array_function__ = _array_ufunc, _array_function

pi, e, inf, nan, newaxis, euler_gamma = _np.pi, _np.e, _np.inf, _np.nan, None, _np.euler_gamma
float16, float32, float64 = _np.float16, _np.float32, _np.float64
int8, int16, int32, int64 = _np.int8, _np.int16, _np.int32, _np.int64
uint8, uint32, uint64 = _np.uint8, _np.uint32, _np.uint64
complex64, complex128, bool_ = _np.complex64, _np.complex128, _np.bool_
ndarray, dtype = _np.ndarray, _np.dtype
integer, floating, inexact, number = _np.integer, _np.floating, _np.inexact, _np.number
from ._narrow import (bfloat16, finfo, float4_e2m1fn, float6_e2m3fn, float6_e3m2fn, float8_e3m4,  # noqa: E402,F401
                      float8_e4m3, float8_e4m3b11fnuz, float8_e4m3fn, float8_e4m3fnuz, float8_e5m2,
                      float8_e5m2fnuz, float8_e8m0fnu, iinfo, int1, int2, int4, issubdtype,
                      promote_types, result_type, uint1, uint2, uint4)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether all entries are close, as a boolean array (traceable).

    >>> allclose([1.0, 2.0], [1.0, 2.0 + 1e-9]).item()
    True
    """
    return all(isclose(a, b, rtol, atol, equal_nan))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = asarray(a), asarray(b)
    ok = less_equal(absolute(subtract(a, b)), add(atol, multiply(rtol, absolute(b))))
    return logical_or(ok, logical_and(isnan(a), isnan(b))) if equal_nan else ok


def array_equal(a1, a2, equal_nan: bool = False):
    """Whether two arrays have one shape and equal entries (False for different shapes).

    >>> array_equal([1, 2], [1, 2]).item(), array_equal([1, 2], [1, 2, 3]).item()
    (True, False)
    """
    a1, a2 = asarray(a1), asarray(a2)
    if _np.shape(a1) != _np.shape(a2):
        return asarray(False)
    same = equal(a1, a2)
    if equal_nan:
        same = logical_or(same, logical_and(isnan(a1), isnan(a2)))
    return all(same)


def array_equiv(a1, a2):
    """Whether two arrays broadcast together and are equal entry by entry.

    >>> array_equiv([[1, 2], [1, 2]], [1, 2]).item()
    True
    """
    a1, a2 = asarray(a1), asarray(a2)
    try:
        _np.broadcast_shapes(_np.shape(a1), _np.shape(a2))
    except ValueError:
        return asarray(False)
    return all(equal(a1, a2))


__all__ = ["abs", "frompyfunc", "ufunc", "absolute", "acos", "acosh", "add", "all", "allclose", "amax", "amin", "any",
           "arange", "arccos", "arccosh", "arcsin", "arcsinh", "arctan", "arctan2",
           "arctanh", "argmax", "argmin", "argsort", "around", "array", "array_equal", "array_equiv",
           "array_split", "asarray", "asin", "asinh", "astype", "atan", "atan2", "atanh",
           "atleast_1d", "atleast_2d", "bitwise_and", "bitwise_not", "bitwise_or",
           "bitwise_xor", "bool_", "broadcast_arrays", "broadcast_to", "cbrt", "ceil",
           "clip", "column_stack", "complex128", "complex64", "concatenate", "copysign",
           "cos", "cosh", "cumprod", "cumsum", "deg2rad", "degrees", "diag", "diagonal",
           "divide", "divmod", "dot", "dtype", "e", "einsum", "einsum_path", "empty", "empty_like",
           "equal", "euler_gamma", "exp", "exp2", "expand_dims", "expm1", "eye", "finfo",
           "fix", "flip", "fliplr", "flipud", "float0", "float16", "float32", "float64",
           "float_power", "floating", "floor", "floor_divide", "fmod", "full",
           "full_like", "greater", "greater_equal", "heaviside", "hsplit", "hstack",
           "hypot", "identity", "iinfo", "inexact", "inf", "inner", "int16", "int32",
           "int64", "int8", "integer", "invert", "isclose", "isfinite", "isinf", "isnan",
           "issubdtype", "less", "less_equal", "linspace", "log", "log10", "log1p",
           "log2", "logaddexp", "logaddexp2", "logical_and", "logical_not", "logical_or",
           "logical_xor", "logsumexp", "matmul", "matrix_transpose", "max", "maximum",
           "mean", "min", "minimum", "mod", "moveaxis", "multiply", "nan", "ndarray",
           "ndim", "negative", "newaxis", "nonzero", "not_equal", "number", "ones",
           "ones_like", "outer", "pi", "positive", "power", "prod", "rad2deg", "radians",
           "ravel", "reciprocal", "remainder", "repeat", "reshape", "result_type",
           "rint", "roll", "round", "shape", "sign", "sin", "sinc", "sinh", "size",
           "sort", "split", "sqrt", "square", "squeeze", "stack", "std", "subtract",
           "sum", "swapaxes", "take", "take_along_axis", "tan", "tanh", "tensordot",
           "tile", "trace", "transpose", "tri", "tril", "triu", "true_divide", "trunc",
           "uint32", "uint64", "uint8", "var", "vdot", "vsplit", "vstack", "where",
           "zeros", "zeros_like"]


# Submodules loaded on first attribute access (PEP 562), so that a program that never
# touches them does not pay for importing them (cold start); `dir()` lists them.
_LAZY_SUBMODULES = frozenset({"fft", "linalg"})


def __getattr__(name):
    if name in _LAZY_SUBMODULES:
        return _importlib.import_module(f"{__name__}.{name}")
    raise _unsupported_name("funcad.numpy", name, globals(), _np)


def __dir__():
    return sorted(set(globals()) | _LAZY_SUBMODULES)


from ._bits import (bitwise_count, bitwise_left_shift, bitwise_right_shift, left_shift,  # noqa: E402
                    packbits, right_shift, unpackbits)
# The rest of JAX's numpy surface, one topic per module (all compositions of primitives).
from ._calculus import *  # noqa: E402,F401,F403
from ..arrays.complex import *  # noqa: E402,F401,F403
from ._construct import *  # noqa: E402,F401,F403
from ._dtype_names import *  # noqa: E402,F401,F403
from ..arrays.manip import *  # noqa: E402,F401,F403
from ..arrays.setops import *  # noqa: E402,F401,F403
from ..arrays.stats import *  # noqa: E402,F401,F403
from ._ufuncs_composed import *  # noqa: E402,F401,F403
from ._ndarray import ndarray  # noqa: E402,F811  (isinstance true for tracers too, as jnp.ndarray)

from . import _calculus, _construct, _dtype_names, _narrow, _ufuncs_composed  # noqa: E402
from ..arrays import complex as _complex, manip as _manip, setops as _setops, stats as _stats  # noqa: E402
__all__ = sorted(set(__all__).union(_narrow.__all__,
    ["bitwise_count", "bitwise_left_shift", "bitwise_right_shift", "left_shift", "right_shift"],
    *(m.__all__ for m in (_calculus, _complex, _construct, _dtype_names, _manip, _setops, _stats,
                          _ufuncs_composed))))
from ._floatbits import frexp, nextafter, spacing  # noqa: E402
from ._vectorize import vectorize  # noqa: E402
from ._poly import *  # noqa: E402,F401,F403
from . import _poly  # noqa: E402
__all__ = sorted(set(__all__) | set(_poly.__all__) | {"frexp", "nextafter", "packbits", "spacing", "unpackbits", "vectorize"})
from ._bessel import i0  # noqa: E402
__all__ = sorted(set(__all__) | {"i0"})


def _wrap_results() -> None:
    # These modules' functions may build results with NumPy directly (eagerly, for
    # data-dependent shapes and constants); their results become immutable funcad arrays
    # in this one place. (Elementwise, reduction, shape, linalg and indexing functions
    # return primitives' results, wrapped by `Primitive.bind`, and stay unwrapped for speed.)
    modules = ("_calculus", "_complex", "_construct", "_manip", "_setops", "_stats", "_ufuncs_composed",
               "_poly", "_bits", "_floatbits", "_bessel", "_dtype_names")
    g = globals()
    for name in __all__:
        fn = g.get(name)
        if type(fn) is _types.FunctionType and fn.__module__.rsplit(".", 1)[-1] in modules:
            g[name] = _eager_result(fn)


_wrap_results()


def _scalar_types() -> None:
    # JAX's scalar types convert when called (`fnp.float32(x)`, traced values too) and
    # otherwise stand for NumPy's (equal, hashable alike, valid wherever a dtype is taken).
    g = globals()
    for name in ("bool", "bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                 "float16", "float32", "float64", "complex64", "complex128", "int_", "uint", "float_",
                 "complex_", "single", "double", "csingle", "cdouble", "bfloat16", "float4_e2m1fn",
                 "float6_e2m3fn", "float6_e3m2fn", "float8_e3m4", "float8_e4m3", "float8_e4m3b11fnuz",
                 "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float8_e8m0fnu",
                 "int1", "int2", "int4", "uint1", "uint2", "uint4"):
        g[name] = _scalar_type(name, g[name])


_scalar_types()

from ._docstrings import attach as _attach_docstrings  # noqa: E402 (after every name is bound)

_attach_docstrings(globals())
