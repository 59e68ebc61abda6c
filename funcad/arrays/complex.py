"""Complex parts with NumPy's names: real, imag, conj/conjugate, angle, isreal, iscomplex.

Real input stays real, as in NumPy and JAX: `real(x)` is x, `imag(x)` zeros, `conj(x)` x.
"""
from __future__ import annotations

import numpy as np

from ..core import x64 as _x64
from ..core.avals import aval_of
from ..primitives import elementwise as E
from ..primitives._base import full
from .dtypes import asarray_or_tracer, promote, to_inexact
from .shape import sort

__all__ = ["real", "imag", "conj", "conjugate", "angle", "isreal", "iscomplex", "sort_complex"]


def _is_complex(x) -> bool:
    return aval_of(x).dtype.kind == "c"


def real(val, /):
    """The real part (x itself for real input).

    >>> import funcad.numpy as fnp
    >>> fnp.real(fnp.array([1 + 2j, 3 - 1j]))
    Array([1., 3.], dtype=float64)
    """
    val = asarray_or_tracer(val)
    return E.real(val) if _is_complex(val) else _x64.canonicalize_held(val)


def imag(val, /):
    """The imaginary part (zeros of x's dtype for real input).

    >>> import funcad.numpy as fnp
    >>> fnp.imag(fnp.array([1 + 2j, 3 - 1j]))
    Array([ 2., -1.], dtype=float64)
    """
    val = asarray_or_tracer(val)
    if _is_complex(val):
        return E.imag(val)
    a = aval_of(val)
    return full(a.shape, 0, a.dtype)


def conjugate(x, /):
    """The complex conjugate, elementwise (x itself for real input).

    >>> import funcad.numpy as fnp
    >>> fnp.conjugate(fnp.array([1 + 2j]))
    Array([1.-2.j], dtype=complex128)
    """
    x = asarray_or_tracer(x)
    return E.conj(x) if _is_complex(x) else _x64.canonicalize_held(x)  # 32 bits with x64 off


conj = conjugate


def angle(z, deg: bool = False):
    """The argument of z in radians (degrees with deg=True), in (-π, π].

    >>> import funcad.numpy as fnp
    >>> float(fnp.angle(1j, deg=True))
    90.0
    """
    z = asarray_or_tracer(z)
    if _is_complex(z):
        re, im = E.real(z), E.imag(z)
    else:
        re = to_inexact(z, np.arctan2)
        im = full(aval_of(re).shape, 0, aval_of(re).dtype)
    out = E.atan2(*promote(im, re))
    return E.mul(out, np.array(180 / np.pi, aval_of(out).dtype)) if deg else out


def isreal(x):
    """True where the imaginary part is zero (everywhere for real input).

    >>> import funcad.numpy as fnp
    >>> fnp.isreal(fnp.array([1 + 0j, 1j]))
    Array([ True, False], dtype=bool)
    """
    x = asarray_or_tracer(x)
    if _is_complex(x):
        im = E.imag(x)
        return E.eq(im, np.zeros((), aval_of(im).dtype))
    return np.ones(aval_of(x).shape, bool)


def iscomplex(x):
    """True where the imaginary part is non-zero (nowhere for real input).

    >>> import funcad.numpy as fnp
    >>> fnp.iscomplex(fnp.array([1 + 0j, 1j]))
    Array([False,  True], dtype=bool)
    """
    x = asarray_or_tracer(x)
    if _is_complex(x):
        im = E.imag(x)
        return E.ne(im, np.zeros((), aval_of(im).dtype))
    return np.zeros(aval_of(x).shape, bool)


def sort_complex(a):
    """a sorted along its last axis as complex numbers: by real part, then imaginary part.

    >>> import funcad.numpy as fnp
    >>> fnp.sort_complex(fnp.array([1 + 2j, 1 - 1j, 0.5])).tolist()
    [(0.5+0j), (1-1j), (1+2j)]
    """
    a = to_inexact(asarray_or_tracer(a))
    if not _is_complex(a):
        a = E.convert_element_type(a, np.result_type(aval_of(a).dtype, np.complex64))
    return sort(a)
