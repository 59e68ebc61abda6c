"""The spectral half of funcad.scipy.signal: detrend, stft, istft, csd and welch, as JAX 0.12's
(which follow SciPy's `_spectral_helper`). Everything is funcad.numpy (static gathers for the
segments, rfft/fft, a static scatter-add for overlap-add), so grad, vmap and jit come free.

Window names other than 'hann' are tabulated by `scipy.signal.get_window`, as JAX does: a
window is a constant, computed once per call from static arguments.
"""
from __future__ import annotations

import operator
import warnings
from typing import Any, Callable, Sequence

import numpy as np

from .. import numpy as fnp
from ..core.errors import FuncadValueError
from ..arrays.dtypes import promote, to_inexact
from ..primitives._base import canonical_axis


class NotSupportedError(FuncadValueError, NotImplementedError):
    """An option JAX refuses (caught as NotImplementedError, as JAX's, or as ValueError)."""


def _static_int(value, what: str) -> int:
    try:
        return operator.index(value)
    except TypeError:
        return int(value)  # a concrete float or 0-d array; a tracer raises ConcretizationError here


def _complex_dtype(dtype) -> np.dtype:
    return np.result_type(dtype, np.complex64)


def _real_dtype(dtype) -> np.dtype:
    return np.finfo(_complex_dtype(dtype)).dtype


# ------------------------------------------------------------------ detrend ----

def detrend(data, axis: int = -1, type: str = "linear", bp: int | Sequence[int] | np.ndarray = 0,
            overwrite_data: None = None):
    """Remove the mean ('constant') or a least-squares line ('linear', piecewise between the
    breakpoints `bp`) along `axis`, as JAX's `scipy.signal.detrend`.

    >>> detrend(np.array([1.0, 4.0, 8.0, 8.0, 9.0]), type="constant")
    Array([-5., -2.,  2.,  2.,  3.], dtype=float64)
    """
    if overwrite_data is not None:
        raise NotSupportedError("detrend: overwrite_data is not supported (funcad arrays are immutable, "
                                "detrend always returns a new array); leave it None")
    if type not in ("constant", "linear"):
        raise FuncadValueError(f"detrend: trend type must be 'linear' or 'constant', got {type!r}")
    x = to_inexact(fnp.asarray(data))
    if type == "constant":
        return x - fnp.mean(x, axis=axis, keepdims=True)
    axis = canonical_axis(axis, x.ndim, "detrend")
    n = x.shape[axis]
    bps = np.sort(np.unique(np.r_[0, bp, n]))
    if bps[0] < 0 or bps[-1] > n:
        raise FuncadValueError(f"detrend: breakpoints must be non-negative and at most the length of the "
                               f"data along the axis ({n}), got bp={bp!r}")
    x = fnp.moveaxis(x, axis, 0)
    pieces = []
    for lo, hi in zip(bps[:-1], bps[1:]):
        piece = x[int(lo):int(hi)]
        # The least-squares line through a piece is its mean plus its projection on the centred
        # abscissa: the same numbers as JAX's lstsq on [1, t], in O(n) and with plain derivatives.
        t = np.arange(1, hi - lo + 1, dtype=np.float64)
        tc = t - t.mean()
        fit = fnp.mean(piece, axis=0, keepdims=True)
        if tc @ tc > 0:
            w = (tc / (tc @ tc)).astype(_real_dtype(x.dtype)).reshape((-1,) + (1,) * (x.ndim - 1))
            tcol = tc.astype(w.dtype).reshape(w.shape)
            fit = fit + tcol * fnp.sum(w * piece, axis=0, keepdims=True)
        pieces.append(piece - fit)
    return fnp.moveaxis(fnp.concatenate(pieces, axis=0), 0, axis)


# ------------------------------------------------------------------ windows ----

def _hann(n: int, dtype):
    if n == 1:
        return fnp.ones(1, dtype)
    return (fnp.sin(fnp.linspace(0, np.pi, n, endpoint=False)) ** 2).astype(dtype)


def _named_window(window, n: int, dtype):
    if isinstance(window, str) and window == "hann":
        return _hann(n, dtype)
    from scipy.signal import get_window  # a lazy module (SciPy), as in JAX
    return fnp.asarray(get_window(window, n), dtype=dtype)


def _triage_segments(window, nperseg: int | None, input_length: int, dtype):
    """The window as an array and the segment length (SciPy's rules, as JAX's)."""
    if isinstance(window, (str, tuple)):
        n = input_length if nperseg is None else int(nperseg)
        if n > input_length:
            warnings.warn(f"nperseg={n} is greater than input_length={input_length}, using "
                          f"nperseg={input_length}")
            n = input_length
        return _named_window(window, n, dtype), n
    win = fnp.asarray(window, dtype=dtype)
    n = win.size if nperseg is None else int(nperseg)
    if win.ndim != 1:
        raise FuncadValueError(f"window must be 1-D, got shape {win.shape}")
    if input_length < win.size:
        raise FuncadValueError(f"window is longer than input signal ({win.size} > {input_length})")
    if n != win.size:
        raise FuncadValueError(f"value specified for nperseg ({n}) is different from length of "
                               f"window ({win.size})")
    return win, n


# ------------------------------------------------------------- the helper ----

def _pad_last(mode: str, **kwargs):
    def pad(x, n):
        return fnp.pad(x, [(0, 0)] * (x.ndim - 1) + [(n, n)], mode, **kwargs)
    return pad


def _odd_ext(x, n: int):
    if n < 1:
        return x
    if n > x.shape[-1] - 1:
        raise FuncadValueError(f"The extension length n ({n}) is too big. It must not exceed "
                               f"x.shape[axis]-1, which is {x.shape[-1] - 1}.")
    left, right = x[..., :1], x[..., -1:]
    left_ext = fnp.flip(x[..., 1:n + 1], axis=-1)
    right_ext = fnp.flip(x[..., -(n + 1):-1], axis=-1)
    return fnp.concatenate((2 * left - left_ext, x, 2 * right - right_ext), axis=-1)


_BOUNDARIES: dict[Any, Callable] = {
    "even": _pad_last("reflect"),
    "odd": _odd_ext,
    "constant": _pad_last("edge"),
    "zeros": _pad_last("constant", constant_values=0.0),
    None: lambda x, n: x,
}


def _zero_pad_last(x, n: int):
    return fnp.concatenate((x, fnp.zeros(x.shape[:-1] + (n,), x.dtype)), axis=-1) if n else x


def _fft_segments(x, win, detrend_func, nperseg: int, noverlap: int, nfft: int, sides: str):
    """The windowed FFT of each segment of the last axis: (..., nseg, nfreq)."""
    step = nperseg - noverlap
    starts = np.arange(0, x.shape[-1] - nperseg + 1, step)
    segments = x[..., starts[:, None] + np.arange(nperseg)]  # a static gather
    segments = detrend_func(segments)
    if fnp.iscomplexobj(win):
        segments = segments.astype(_complex_dtype(segments.dtype))
    segments = win * segments
    if sides == "twosided":
        return fnp.fft.fft(segments, n=nfft)
    return fnp.fft.rfft(segments.real, n=nfft)


def _detrend_func(detrend_type, axis: int):
    if isinstance(detrend_type, str):
        return lambda d: detrend(d, axis=-1, type=detrend_type)
    if callable(detrend_type):
        # JAX's axis is non-negative by now, so its wrapper always moves `axis` to the end.
        def moved(d):
            return fnp.moveaxis(detrend_type(fnp.moveaxis(d, axis, -1)), -1, axis)
        return moved
    if not detrend_type:
        return lambda d: d
    raise FuncadValueError(f"Unsupported detrend type: {detrend_type!r} (use False, 'constant', "
                           "'linear' or a function of a segment)")


def _spectral_helper(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None,
                     detrend_type="constant", return_onesided=True, scaling="density", axis=-1,
                     mode="psd", boundary=None, padded=False):
    """SciPy's `_spectral_helper` with JAX's conventions (y=None: the auto-spectrum of x)."""
    if mode not in ("psd", "stft"):
        raise FuncadValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")
    if boundary not in _BOUNDARIES:
        raise FuncadValueError(f"Unknown boundary option '{boundary}', must be one of: "
                               f"{list(_BOUNDARIES)}")
    x = to_inexact(fnp.asarray(x)) if y is None else x
    if y is not None:
        x, y = (to_inexact(v) for v in promote(fnp.asarray(x), fnp.asarray(y)))
    axis = canonical_axis(_static_int(axis, "axis"), x.ndim, "spectral analysis")
    if y is None:
        outer = x.shape[:axis] + x.shape[axis + 1:]
    else:
        if mode != "psd":
            raise FuncadValueError("two-argument mode is available only when mode=='psd'")
        if x.ndim != y.ndim:
            raise FuncadValueError(f"two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outer = np.broadcast_shapes(x.shape[:axis] + x.shape[axis + 1:],
                                        y.shape[:axis] + y.shape[axis + 1:])
        except ValueError as err:
            raise FuncadValueError(f"x and y cannot be broadcast together: shapes {x.shape} and "
                                   f"{y.shape} outside axis {axis}") from err
    result_dtype = _complex_dtype(x.dtype)
    freq_dtype = _real_dtype(x.dtype)

    if nperseg is not None:
        nperseg = _static_int(nperseg, "nperseg")
        if nperseg < 1:
            raise FuncadValueError(f"nperseg must be a positive integer, got {nperseg}")
    win, nperseg = _triage_segments(window, nperseg, x.shape[axis], x.dtype)
    noverlap = nperseg // 2 if noverlap is None else _static_int(noverlap, "noverlap")
    nfft = nperseg if nfft is None else _static_int(nfft, "nfft")

    if y is None and x.size == 0:
        z = fnp.zeros(x.shape, freq_dtype)
        return z, z, fnp.zeros(x.shape, result_dtype)
    if y is not None and (x.size == 0 or y.size == 0):
        shape = outer[:axis] + (min(x.shape[axis], y.shape[axis]),) + outer[axis:]
        z = fnp.zeros(shape, freq_dtype)
        return z, z, fnp.zeros(shape, result_dtype)

    x = fnp.moveaxis(x, axis, -1)
    if y is not None:
        y = fnp.moveaxis(y, axis, -1)
        x = _zero_pad_last(x, max(0, y.shape[-1] - x.shape[-1]))
        y = _zero_pad_last(y, max(0, x.shape[-1] - y.shape[-1]))

    if nfft < nperseg:
        raise FuncadValueError(f"nfft must be greater than or equal to nperseg, got nfft={nfft} and "
                               f"nperseg={nperseg}")
    if noverlap >= nperseg:
        raise FuncadValueError(f"noverlap must be less than nperseg, got noverlap={noverlap} and "
                               f"nperseg={nperseg}")
    nstep = nperseg - noverlap

    if boundary is not None:
        x = _BOUNDARIES[boundary](x, nperseg // 2)
        if y is not None:
            y = _BOUNDARIES[boundary](y, nperseg // 2)
    if padded:  # a whole number of segments: x.shape[-1] == nperseg + k * nstep
        nadd = (-(x.shape[-1] - nperseg) % nstep) % nperseg
        x = _zero_pad_last(x, nadd)
        if y is not None:
            y = _zero_pad_last(y, nadd)

    detrend_func = _detrend_func(detrend_type, axis)
    if scaling == "density":
        scale = 1.0 / (fs * fnp.sum(win * win))
    elif scaling == "spectrum":
        scale = 1.0 / fnp.sum(win) ** 2
    else:
        raise FuncadValueError(f"Unknown scaling: {scaling!r} (use 'density' or 'spectrum')")
    if mode == "stft":
        scale = fnp.sqrt(scale)

    sides = "twosided"
    if return_onesided:
        if fnp.iscomplexobj(x) or (y is not None and fnp.iscomplexobj(y)):
            warnings.warn("Input data is complex, switching to return_onesided=False")
        else:
            sides = "onesided"
    freq_fn = fnp.fft.fftfreq if sides == "twosided" else fnp.fft.rfftfreq
    freqs = freq_fn(nfft, 1 / fs, dtype=freq_dtype)

    result = _fft_segments(x, win, detrend_func, nperseg, noverlap, nfft, sides)
    if y is not None:
        result = fnp.conjugate(result) * _fft_segments(y, win, detrend_func, nperseg, noverlap, nfft, sides)
    elif mode == "psd":
        result = fnp.conjugate(result) * result
    result = result * scale
    if sides == "onesided" and mode == "psd":
        end = None if nfft % 2 else -1
        result = result.at[..., 1:end].multiply(2)

    time = fnp.arange(nperseg / 2, x.shape[-1] - nperseg / 2 + 1, nstep, dtype=freq_dtype) / fs
    if boundary is not None:
        time = time - (nperseg / 2) / fs
    result = result.astype(result_dtype)
    if y is None and mode != "stft":
        result = result.real
    return freqs, time, fnp.moveaxis(result, -1, axis)


# ----------------------------------------------------------- public functions ----

def stft(x, fs=1.0, window: Any = "hann", nperseg: int = 256, noverlap: int | None = None,
         nfft: int | None = None, detrend: Any = False, return_onesided: bool = True,
         boundary: str | None = "zeros", padded: bool = True, axis: int = -1):
    """The short-time Fourier transform `(f, t, Zxx)` of x along `axis`, as JAX's
    `scipy.signal.stft` ('hann' by default; any `scipy.signal.get_window` name, tuple or array).

    >>> f, t, Z = stft(np.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0]), nperseg=4)
    >>> Z.shape, Z[0].real
    ((3, 5), Array([1. , 2.5, 1. , 1. , 0.5], dtype=float64))
    """
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                            scaling="spectrum", axis=axis, mode="stft", boundary=boundary, padded=padded)


def _median_bias(n: int):
    ii = fnp.arange(2.0, n, 2)
    return 1 + fnp.sum(1.0 / (ii + 1) - 1.0 / ii)


def csd(x, y, fs=1.0, window: Any = "hann", nperseg: int | None = None, noverlap: int | None = None,
        nfft: int | None = None, detrend: Any = "constant", return_onesided: bool = True,
        scaling: str = "density", axis: int = -1, average: str = "mean"):
    """The cross power spectral density `(f, Pxy)` of x and y by Welch's method, as JAX's
    `scipy.signal.csd` (y=None: the PSD of x).

    >>> f, p = csd(np.array([1.0, 2.0, 0.0, 1.0]), np.array([0.0, 1.0, 1.0, 2.0]), nperseg=4)
    >>> p.dtype
    dtype('complex128')
    """
    freqs, _, pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend,
                                     return_onesided, scaling, axis, mode="psd")
    if y is not None:
        pxy = pxy + 0j
    if pxy.ndim >= 2 and pxy.size > 0:
        if pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(pxy.shape[-1]).astype(pxy.dtype)
                if fnp.iscomplexobj(pxy):
                    pxy = fnp.median(pxy.real, axis=-1) + 1j * fnp.median(pxy.imag, axis=-1)
                else:
                    pxy = fnp.median(pxy, axis=-1)
                pxy = pxy / bias
            elif average == "mean":
                pxy = fnp.mean(pxy, axis=-1)
            else:
                raise FuncadValueError(f'average must be "median" or "mean", got {average}')
        else:
            pxy = fnp.reshape(pxy, pxy.shape[:-1])
    return freqs, pxy


def welch(x, fs=1.0, window: Any = "hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, detrend: Any = "constant", return_onesided: bool = True,
          scaling: str = "density", axis: int = -1, average: str = "mean"):
    """The power spectral density `(f, Pxx)` of x by Welch's method, as JAX's `scipy.signal.welch`.

    >>> f, p = welch(np.array([0.0, 1.0, 0.0, -1.0] * 4), nperseg=8)
    >>> f.tolist(), p.round(6).tolist()
    ([0.0, 0.125, 0.25, 0.375, 0.5], [0.0, 0.666667, 2.666667, 0.666667, 0.0])
    """
    freqs, pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft,
                     detrend=detrend, return_onesided=return_onesided, scaling=scaling, axis=axis,
                     average=average)
    return freqs, pxx.real


def _overlap_and_add(frames, step: int):
    """Sum frames (..., n, length) placed `step` apart: (..., step * (n - 1) + length)."""
    *batch, n, length = frames.shape
    size = step * (n - 1) + length
    where = (np.arange(n)[:, None] * step + np.arange(length)).reshape(-1)
    out = fnp.zeros((*batch, size), frames.dtype)
    return out.at[..., where].add(frames.reshape(*batch, n * length))


def istft(Zxx, fs=1.0, window: Any = "hann", nperseg: int | None = None, noverlap: int | None = None,
          nfft: int | None = None, input_onesided: bool = True, boundary: bool = True,
          time_axis: int = -1, freq_axis: int = -2):
    """The inverse short-time Fourier transform `(t, x)` of Zxx, as JAX's `scipy.signal.istft`.

    >>> x = np.array([1.0, 2.0, 3.0, 2.0, 1.0, 0.0, 1.0, 2.0])
    >>> bool(np.allclose(istft(stft(x, nperseg=4)[2])[1], x))
    True
    """
    Z = fnp.asarray(Zxx)
    if Z.ndim < 2:
        raise FuncadValueError(f"istft: input stft must be at least 2d, got shape {Z.shape}")
    freq_axis = canonical_axis(freq_axis, Z.ndim, "istft")
    time_axis = canonical_axis(time_axis, Z.ndim, "istft")
    if freq_axis == time_axis:
        raise FuncadValueError(f"istft: must specify differing time and frequency axes, got both {time_axis}")
    Z = Z.astype(_complex_dtype(Z.dtype))
    n_default = 2 * (Z.shape[freq_axis] - 1) if input_onesided else Z.shape[freq_axis]
    nperseg = _static_int(nperseg or n_default, "nperseg")
    if nperseg < 1:
        raise FuncadValueError(f"nperseg must be a positive integer, got {nperseg}")
    if nfft is None:
        nfft = n_default + (1 if input_onesided and nperseg == n_default + 1 else 0)
    else:
        nfft = _static_int(nfft, "nfft")
    if nfft < nperseg:
        raise FuncadValueError(f"FFT length ({nfft}) must be longer than nperseg ({nperseg}).")
    noverlap = _static_int(noverlap or nperseg // 2, "noverlap")
    if noverlap >= nperseg:
        raise FuncadValueError(f"noverlap must be less than nperseg, got noverlap={noverlap} and "
                               f"nperseg={nperseg}")
    nstep = nperseg - noverlap

    if time_axis != Z.ndim - 1 or freq_axis != Z.ndim - 2:
        outer = tuple(i for i in range(Z.ndim) if i not in (time_axis, freq_axis))
        Z = fnp.transpose(Z, outer + (freq_axis, time_axis))
    inverse = fnp.fft.irfft if input_onesided else fnp.fft.ifft
    xsubs = inverse(Z, axis=-2, n=nfft)[..., :nperseg, :]  # (..., frame length, frames)

    if isinstance(window, (str, tuple)):
        win = _named_window(window, nperseg, xsubs.dtype)
    else:
        win = fnp.asarray(window)
        if win.ndim != 1:
            raise FuncadValueError(f"window must be 1-D, got shape {win.shape}")
        if win.shape[0] != nperseg:
            raise FuncadValueError(f"window must have length of {nperseg}, got {win.shape[0]}")
    xsubs = xsubs * fnp.sum(win)  # undoes stft's 'spectrum' scaling
    win = win[:, None]
    x = _overlap_and_add(fnp.swapaxes(xsubs * win, -2, -1), nstep)
    win_squared = fnp.broadcast_to(win * win, (nperseg, xsubs.shape[-1]))
    norm = _overlap_and_add(fnp.swapaxes(win_squared, -2, -1), nstep)
    if boundary:
        x = x[..., nperseg // 2:-(nperseg // 2)]
        norm = norm[..., nperseg // 2:-(nperseg // 2)]
    x = x / fnp.where(norm > 1e-10, norm, 1.0)

    if x.ndim > 1 and time_axis != Z.ndim - 1:
        x = fnp.moveaxis(x, -1, time_axis - 1 if freq_axis < time_axis else time_axis)
    # JAX counts the times along the first axis of x (SciPy: the last); the same for 1-d signals.
    time = fnp.arange(x.shape[0], dtype=_real_dtype(x.dtype)) / fs
    return time, x
