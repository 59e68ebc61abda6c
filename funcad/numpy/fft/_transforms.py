"""The transforms of funcad.numpy.fft, all through the one `fft` primitive.

`_fft_core` does what every variant shares: validate `s`/`axes`/`norm` as
NumPy does, move the transformed axes last (the primitive works on trailing
axes), crop or zero-pad them to the requested lengths, transform at most
three axes per primitive (XLA's limit), scale for `norm`, move the axes back.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Sequence

import numpy as np

from ...core.avals import aval_of
from ...core.errors import AxisError, FuncadTypeError, FuncadValueError
from ...primitives._base import full
from ...primitives.elementwise import convert_element_type, mul
from ...primitives.fft import FftType, fft_input_dtype, fft_p, reflect
from ...primitives.structural import pad, slice as _slice, transpose
from ...arrays.dtypes import asarray_or_tracer

FFT, IFFT, RFFT, IRFFT = FftType.FFT, FftType.IFFT, FftType.RFFT, FftType.IRFFT
_NORMS = ("backward", "ortho", "forward")


def _index(v, what: str, fn: str) -> int:
    try:
        return operator.index(v)
    except TypeError:
        raise FuncadTypeError(f"{fn}: {what} must be an int, got {v!r}") from None


def _check_norm(norm, fn: str) -> str:
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise FuncadValueError(f'{fn}: invalid norm value {norm!r}; should be "backward", "ortho" '
                               'or "forward" (or None, the same as "backward")')
    return norm


def _norm_factor(norm: str, inverse: bool, n: int) -> float:
    """The extra scale on top of the primitive (FFT/RFFT unscaled, IFFT/IRFFT by 1/n)."""
    if norm == "backward" or n == 0:  # n == 0: an empty result
        return 1.0
    if norm == "ortho":
        return math.sqrt(n) if inverse else 1.0 / math.sqrt(n)
    return float(n) if inverse else 1.0 / n


def _scale(x, factor: float):
    if factor == 1.0:
        return x
    return mul(x, np.array(factor, aval_of(x).dtype))


def _plan(fn: str, x, s, axes):
    """Canonical (axes, lengths) for `x`: NumPy's rules, JAX's errors for repeated axes."""
    nd = aval_of(x).ndim
    if s is not None:
        s = tuple(_index(v, "each entry of s", fn) for v in s)
    if axes is None:
        if s is None:
            axes = tuple(range(nd))
        else:
            if len(s) > nd:
                raise AxisError(f"{fn}: s={s} has {len(s)} entries but the input has only {nd} axes; "
                                "pass axes= too, or fewer sizes")
            axes = tuple(range(nd - len(s), nd))
    else:
        axes = tuple(_index(a, "each entry of axes", fn) for a in axes)
        if s is not None and len(s) != len(axes):
            raise FuncadValueError(f"{fn}: Shape and axes have different lengths: s={s}, "
                                   f"axes={axes}; give one size per axis")
        for a in axes:
            if not -nd <= a < nd:
                raise AxisError(f"{fn}: axis {a} is out of bounds for array of dimension {nd}")
        axes = tuple(a % nd for a in axes)
    if len(set(axes)) != len(axes):
        raise FuncadValueError(f"{fn} does not support repeated axes, got axes={axes}; "
                               "apply the transform twice instead")
    return axes, s


def _crop_or_pad(x, axis: int, n: int):
    shape = aval_of(x).shape
    have = shape[axis]
    if have > n:
        start, stop = [0] * len(shape), list(shape)
        stop[axis] = n
        return _slice(x, start, stop)
    if have < n:
        config = [(0, 0, 0)] * len(shape)
        config[axis] = (0, n - have, 0)
        return pad(x, np.zeros((), aval_of(x).dtype), config)
    return x


def _apply(x, typ: FftType, lengths: tuple):
    """The transform over the trailing len(lengths) axes, at most three per primitive."""
    if 0 in lengths:  # an empty result (JAX's; XLA and NumPy have no 0-point transform)
        a = aval_of(x)
        if typ == IRFFT:
            return full(a.shape[:-1] + (lengths[-1],), 0, np.finfo(a.dtype).dtype)
        if typ == RFFT:
            return full(a.shape[:-1] + (lengths[-1] // 2 + 1,), 0, np.result_type(a.dtype, np.complex64))
        return x
    if len(lengths) <= 3:
        return fft_p.bind(x, fft_type=typ, fft_lengths=lengths)
    # Leading transformed axes go last for a complex transform, then come back:
    # RFFT transforms the last three first, IRFFT inverts the others first.
    nd, k = aval_of(x).ndim, len(lengths) - 3
    lead = list(range(nd - len(lengths), nd - 3))
    rest = [i for i in range(nd) if i not in lead]
    there = rest + lead
    back = [there.index(i) for i in range(nd)]
    if typ in (FFT, RFFT):
        x = fft_p.bind(x, fft_type=typ, fft_lengths=lengths[-3:])
        x = transpose(_apply(transpose(x, there), FFT, lengths[:k]), back)
    else:
        x = transpose(_apply(transpose(x, there), IFFT, lengths[:k]), back)
        x = fft_p.bind(x, fft_type=typ, fft_lengths=lengths[-3:])
    return x


def _prepare(fn: str, typ: FftType, a, s, axes):
    """Validate, convert the dtype, move the transformed axes last and crop or pad
    them: (x, lengths, permutation to undo or None)."""
    x = asarray_or_tracer(a)
    dt = aval_of(x).dtype
    if typ == RFFT and dt.kind == "c":
        raise FuncadTypeError(f"{fn} takes real input, got {dt}; use fft/fftn for complex input, "
                              "or take the real part first")
    target = fft_input_dtype(dt, typ)
    if dt != target:
        x = convert_element_type(x, target)
    axes, s = _plan(fn, x, s, axes)
    shape = aval_of(x).shape
    if s is None:
        # A length 0 from the input's shape gives an empty result, as JAX's
        s = tuple(shape[a] for a in axes)
        if typ == IRFFT and axes:
            s = s[:-1] + (builtins.max(0, 2 * (s[-1] - 1)),)
        if typ == RFFT and s and s[-1] == 0:
            raise FuncadValueError(f"{fn}: the input has 0 points along axis {axes[-1]} (shape "
                                   f"{shape}), the real transform's axis; it needs at least one "
                                   "(JAX fails in XLA here)")
    elif builtins.min(s, default=1) < 1:
        raise FuncadValueError(f"{fn}: Shape should be positive (s={s}); every transformed length "
                               "must be at least 1")
    nd, k = len(shape), len(axes)
    perm = None
    if axes != tuple(range(nd - k, nd)):
        perm = [i for i in range(nd) if i not in axes] + list(axes)
        x = transpose(x, perm)
    for i, n in enumerate(s):
        want = n // 2 + 1 if typ == IRFFT and i == k - 1 else n
        x = _crop_or_pad(x, nd - k + i, want)
    return x, s, perm


def _finish(x, typ: FftType, s, perm, norm: str, inverse: bool):
    if s:
        x = _apply(x, typ, tuple(s))
        x = _scale(x, _norm_factor(norm, inverse, math.prod(s)))
    if perm is not None:
        x = transpose(x, [perm.index(i) for i in range(len(perm))])
    return x


def fft_core(fn: str, typ: FftType, a, s, axes, norm, inverse: bool):
    """The shared body of every transform but hfft/ihfft."""
    norm = _check_norm(norm, fn)
    x, s, perm = _prepare(fn, typ, a, s, axes)
    return _finish(x, typ, s, perm, norm, inverse)


_SWAPPED = {"backward": "forward", "ortho": "ortho", "forward": "backward"}


def _one_axis(fn: str, axis):
    if isinstance(axis, (list, tuple)):
        raise FuncadValueError(f"{fn} does not support multiple axes, got axis={axis!r}; "
                               f"use {fn}n for several axes")
    return (axis,)


def _two_axes(fn: str, axes):
    axes = tuple(axes)
    if len(axes) != 2:
        raise FuncadValueError(f"{fn} only supports 2 axes, got axes={axes}; use {fn[:-1]}n for others")
    return axes


def _n(fn, n):
    return None if n is None else (_index(n, "n", fn),)


# ------------------------------------------------------------ 1-D ----

def fft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The 1-D discrete Fourier transform, as numpy.fft.fft: `n` crops or zero-pads
    the input along `axis`; float32 input gives complex64, others complex128.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.fft(fnp.array([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j, -2.-2.j], dtype=complex128)
    """
    return fft_core("fft", FFT, a, _n("fft", n), _one_axis("fft", axis), norm, False)


def ifft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The 1-D inverse discrete Fourier transform, as numpy.fft.ifft.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.ifft(fnp.array([10.0, -2 + 2j, -2.0, -2 - 2j])).real
    Array([1., 2., 3., 4.], dtype=float64)
    """
    return fft_core("ifft", IFFT, a, _n("ifft", n), _one_axis("ifft", axis), norm, True)


def rfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The 1-D transform of real input, as numpy.fft.rfft: the n//2 + 1 non-negative
    frequencies.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.rfft(fnp.array([1.0, 2.0, 3.0, 4.0]))
    Array([10.+0.j, -2.+2.j, -2.+0.j], dtype=complex128)
    """
    return fft_core("rfft", RFFT, a, _n("rfft", n), _one_axis("rfft", axis), norm, False)


def irfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of rfft, as numpy.fft.irfft: `n` real outputs (default 2 * (m - 1)).

    >>> import funcad.numpy as fnp
    >>> fnp.fft.irfft(fnp.array([10.0, -2 + 2j, -2.0]))
    Array([1., 2., 3., 4.], dtype=float64)
    """
    return fft_core("irfft", IRFFT, a, _n("irfft", n), _one_axis("irfft", axis), norm, True)


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The transform of a Hermitian-symmetric signal given by its first half, as
    numpy.fft.hfft: a real spectrum of `n` points (default 2 * (m - 1)).

    >>> import funcad.numpy as fnp
    >>> fnp.fft.hfft(fnp.array([1.0, 2.0, 3.0]))
    Array([ 8., -2.,  0., -2.], dtype=float64)
    """
    norm = _SWAPPED[_check_norm(norm, "hfft")]
    # NumPy's hfft(a) is irfft(conj(a)) with the norm's direction swapped, and
    # irfft(conj(a)) is irfft(a) reflected.
    x, s, perm = _prepare("hfft", IRFFT, a, _n("hfft", n), _one_axis("hfft", axis))
    x = _apply(x, IRFFT, s)
    x = reflect(_scale(x, _norm_factor(norm, True, s[0])), (aval_of(x).ndim - 1,))
    return _finish(x, IRFFT, (), perm, norm, True)


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of hfft, as numpy.fft.ihfft: conj(rfft(a)) / n for real `a`.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.ihfft(fnp.array([8.0, -2.0, 0.0, -2.0]))
    Array([1.+0.j, 2.+0.j, 3.+0.j], dtype=complex128)
    """
    norm = _SWAPPED[_check_norm(norm, "ihfft")]
    # conj(rfft(x)) is rfft of x reflected, for real x.
    x, s, perm = _prepare("ihfft", RFFT, a, _n("ihfft", n), _one_axis("ihfft", axis))
    x = reflect(x, (aval_of(x).ndim - 1,))
    return _finish(x, RFFT, s, perm, norm, False)


# ------------------------------------------------------------ 2-D and N-D ----

def fft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None):
    """The 2-D discrete Fourier transform, as numpy.fft.fft2."""
    return fft_core("fft2", FFT, a, s, _two_axes("fft2", axes), norm, False)


def ifft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None):
    """The 2-D inverse discrete Fourier transform, as numpy.fft.ifft2."""
    return fft_core("ifft2", IFFT, a, s, _two_axes("ifft2", axes), norm, True)


def rfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None):
    """The 2-D transform of real input, as numpy.fft.rfft2."""
    return fft_core("rfft2", RFFT, a, s, _two_axes("rfft2", axes), norm, False)


def irfft2(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None):
    """The inverse of rfft2, as numpy.fft.irfft2."""
    return fft_core("irfft2", IRFFT, a, s, _two_axes("irfft2", axes), norm, True)


def fftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
    """The N-D discrete Fourier transform, as numpy.fft.fftn (all axes by default,
    or the last len(s)).

    >>> import funcad.numpy as fnp
    >>> fnp.fft.fftn(fnp.ones((2, 2)))
    Array([[4.+0.j, 0.+0.j],
           [0.+0.j, 0.+0.j]], dtype=complex128)
    """
    return fft_core("fftn", FFT, a, s, axes, norm, False)


def ifftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
    """The N-D inverse discrete Fourier transform, as numpy.fft.ifftn."""
    return fft_core("ifftn", IFFT, a, s, axes, norm, True)


def rfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
    """The N-D transform of real input, as numpy.fft.rfftn (the last axis halved)."""
    return fft_core("rfftn", RFFT, a, s, axes, norm, False)


def irfftn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
    """The inverse of rfftn, as numpy.fft.irfftn."""
    return fft_core("irfftn", IRFFT, a, s, axes, norm, True)
