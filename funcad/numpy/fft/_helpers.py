"""Sample frequencies and spectrum shifts of funcad.numpy.fft, as JAX's."""
from __future__ import annotations

import operator

import numpy as np

from ...core.errors import FuncadTypeError, FuncadValueError
from ...lowering.runtime import device_put as _device_put
from ...arrays.dtypes import asarray_or_tracer, cast
from ...arrays.shape import ndim, roll, shape
from ...arrays.ufuncs import divide, multiply


def _count(n, fn: str) -> int:
    if isinstance(n, (list, tuple)):
        raise FuncadValueError(f"The n argument of {fn} only takes an int, got n = {list(n)}")
    try:
        return operator.index(n)
    except TypeError:
        raise FuncadTypeError(f"{fn}: n must be an int, got {n!r}") from None


def _spacing(d, fn: str):
    if isinstance(d, (list, tuple)):
        raise FuncadValueError(f"The d argument of {fn} only takes a single value, got d = {list(d)}")
    return d


def _work_dtype(dtype) -> np.dtype:
    dt = np.dtype(dtype)
    return np.finfo(dt).dtype if dt.kind in "fc" else np.dtype(np.float64)


def _place(x, device):
    if device is None:
        return x
    platform = getattr(device, "platform", None)
    if platform is None:
        raise FuncadTypeError(f"device must be a device (from funcad.devices()) or None, got {device!r}")
    return _device_put(x, device)


def _frequencies(k, n: int, d, dtype, device):
    out = np.dtype(np.float64 if dtype is None else dtype)
    work = _work_dtype(out)
    res = divide(k.astype(work), cast(multiply(asarray_or_tracer(d), n), work))
    return _place(cast(res, out), device)


def fftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point fft with sample spacing `d`, as
    numpy.fft.fftfreq (float64 unless `dtype` says otherwise; `device` places the result).

    >>> import funcad.numpy as fnp
    >>> fnp.fft.fftfreq(4, 0.5)
    Array([ 0. ,  0.5, -1. , -0.5], dtype=float64)
    """
    n = _count(n, "fftfreq")
    i = np.arange(n)
    return _frequencies((i + n // 2) % max(n, 1) - n // 2, n, _spacing(d, "fftfreq"), dtype, device)


def rfftfreq(n: int, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an n-point rfft (the n//2 + 1 non-negative ones), as
    numpy.fft.rfftfreq.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.rfftfreq(5)
    Array([0. , 0.2, 0.4], dtype=float64)
    """
    n = _count(n, "rfftfreq")
    return _frequencies(np.arange(n // 2 + 1), n, _spacing(d, "rfftfreq"), dtype, device)


def _shifts(x, axes, sign: int):
    if axes is None:
        axes = tuple(range(ndim(x)))
    elif isinstance(axes, int):
        return sign * (shape(x)[axes] // 2), axes
    return [sign * (shape(x)[a] // 2) for a in axes], axes


def fftshift(x, axes=None):
    """Move the zero frequency to the middle of the spectrum (all axes, or `axes`), as
    numpy.fft.fftshift.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.fftshift(fnp.fft.fftfreq(5))
    Array([-0.4, -0.2,  0. ,  0.2,  0.4], dtype=float64)
    """
    x = asarray_or_tracer(x)
    shift, axes = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x, axes=None):
    """The inverse of fftshift, as numpy.fft.ifftshift.

    >>> import funcad.numpy as fnp
    >>> fnp.fft.ifftshift(fnp.fft.fftshift(fnp.fft.fftfreq(5)))
    Array([ 0. ,  0.2,  0.4, -0.4, -0.2], dtype=float64)
    """
    x = asarray_or_tracer(x)
    shift, axes = _shifts(x, axes, -1)
    return roll(x, shift, axes)
