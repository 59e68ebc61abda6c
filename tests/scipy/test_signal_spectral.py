"""funcad.scipy.signal's spectral functions (stft, istft, welch, csd, detrend) against JAX 0.12
(and SciPy): the option grid, derivatives, jit, vmap, 32-bit dtypes and JAX's errors."""
import warnings

import numpy as np
import pytest
import scipy.signal as ss

import funcad
import funcad.numpy as fnp
from funcad.core.errors import FuncadValueError
from funcad.scipy import signal as fsig

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
js = jax.scipy.signal

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 40))
Y = RNG.normal(size=(2, 40))


def same(a, b, tol=1e-10):
    a, b = (a,) if not isinstance(a, tuple) else a, (b,) if not isinstance(b, tuple) else b
    assert len(a) == len(b)
    for u, v in zip(a, b):
        u, v = np.asarray(u), np.asarray(v)
        assert u.shape == v.shape and u.dtype == v.dtype, (u.shape, v.shape, u.dtype, v.dtype)
        np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


def _quiet(f, *a, **k):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return f(*a, **k)


STFT_OPTIONS = [
    dict(),
    dict(nperseg=16, window="hamming", boundary="even"),
    dict(nperseg=15, boundary="odd", padded=False, detrend="linear"),
    dict(nperseg=16, nfft=20, return_onesided=False, boundary="constant"),
    dict(nperseg=8, noverlap=2, boundary=None, detrend="constant", fs=4.0),
    dict(nperseg=8, window=("tukey", 0.3), axis=0),
    dict(window=np.arange(1.0, 11.0), nperseg=10),
    dict(nperseg=10, detrend=lambda d: d - d.mean(-1, keepdims=True)),
]


@pytest.mark.parametrize("kw", STFT_OPTIONS, ids=range(len(STFT_OPTIONS)))
def test_stft_matches_jax(kw):
    x = X.T if kw.get("axis") == 0 else X
    same(_quiet(fsig.stft, x, **kw), _quiet(js.stft, x, **kw))


PSD_OPTIONS = [
    dict(),
    dict(nperseg=16, scaling="spectrum", average="median"),
    dict(nperseg=15, nfft=17, detrend="linear"),
    dict(nperseg=16, return_onesided=False, window="blackman"),
    dict(nperseg=16, noverlap=12, detrend=False, fs=3.0, axis=0),
    dict(nperseg=40),  # one segment: no averaging
]


@pytest.mark.parametrize("kw", PSD_OPTIONS, ids=range(len(PSD_OPTIONS)))
def test_welch_and_csd_match_jax(kw):
    x, y = (X.T, Y.T) if kw.get("axis") == 0 else (X, Y)
    same(_quiet(fsig.welch, x, **kw), _quiet(js.welch, x, **kw))
    same(_quiet(fsig.csd, x, y, **kw), _quiet(js.csd, x, y, **kw))


def test_values_match_scipy():
    f, p = fsig.welch(X, nperseg=16, detrend="linear", average="median")
    sf, sp = ss.welch(X, nperseg=16, detrend="linear", average="median")
    same((f, p), (sf, sp))
    same(fsig.csd(X, Y, nperseg=8, scaling="spectrum"), ss.csd(X, Y, nperseg=8, scaling="spectrum"))
    same(fsig.stft(X, nperseg=12, boundary="even"), ss.stft(X, nperseg=12, boundary="even"))
    _, _, z = ss.stft(X, nperseg=12)
    same(fsig.istft(z, nperseg=12), ss.istft(z, nperseg=12))


def test_complex_input_is_two_sided_with_jaxs_warning():
    z = X + 1j * Y
    with pytest.warns(UserWarning, match="switching to return_onesided=False"):
        ours = fsig.welch(z, nperseg=16)
    same(ours, _quiet(js.welch, z, nperseg=16))
    same(_quiet(fsig.stft, z, nperseg=16), _quiet(js.stft, z, nperseg=16))


def test_csd_pads_the_shorter_signal_and_broadcasts():
    same(fsig.csd(X, Y[:1, :30], nperseg=8), js.csd(X, Y[:1, :30], nperseg=8))


@pytest.mark.parametrize("kw", [dict(), dict(nperseg=16, noverlap=4), dict(window="hamming"),
                                dict(boundary=False)], ids=range(4))
def test_istft_matches_jax(kw):
    z = np.asarray(js.stft(X, nperseg=16)[2])
    same(fsig.istft(z, **kw), js.istft(z, **kw))


def test_istft_axes_two_sided_and_round_trip():
    z = np.asarray(js.stft(X, nperseg=16)[2])
    zt = np.moveaxis(z, -1, 0)
    same(fsig.istft(zt, time_axis=0, freq_axis=-1), js.istft(zt, time_axis=0, freq_axis=-1))
    z2 = np.asarray(js.stft(X[0], nperseg=16, return_onesided=False)[2])
    same(fsig.istft(z2, input_onesided=False), js.istft(z2, input_onesided=False))
    np.testing.assert_allclose(fsig.istft(fsig.stft(X, nperseg=10)[2])[1], X, atol=1e-12)


def test_detrend_matches_jax_and_scipy():
    same(fsig.detrend(X.T, axis=0, bp=[5, 17]), js.detrend(X.T, axis=0, bp=[5, 17]))
    same(fsig.detrend(X, type="constant"), ss.detrend(X, type="constant"))
    same(fsig.detrend(X, bp=[39]), ss.detrend(X, bp=[39]))  # a one-point piece
    same(fsig.detrend(np.arange(6)), ss.detrend(np.arange(6.0)))  # ints become floats


def test_grads_match_jax():
    f = lambda x: fsig.welch(x, nperseg=16, detrend="linear")[1].sum()  # noqa: E731
    g = jax.jit(lambda x: js.welch(x, nperseg=16, detrend="linear")[1].sum())
    same(funcad.grad(f)(X), jax.grad(g)(X), 1e-12)
    f = lambda x, y: fsig.csd(x, y, nperseg=8, average="median")[1].real.sum()  # noqa: E731
    g = jax.jit(lambda x, y: js.csd(x, y, nperseg=8, average="median")[1].real.sum())
    same(funcad.grad(f, (0, 1))(X, Y), jax.grad(g, (0, 1))(X, Y), 1e-12)
    z = np.asarray(js.stft(X, nperseg=8)[2])
    same(funcad.grad(lambda z: (fsig.istft(z)[1] ** 2).sum())(z),
         jax.grad(lambda z: (js.istft(z)[1] ** 2).sum())(z), 1e-12)
    same(funcad.grad(lambda fs: fsig.welch(X, fs=fs, nperseg=8)[1].sum())(2.0),
         jax.grad(lambda fs: js.welch(X, fs=fs, nperseg=8)[1].sum())(2.0), 1e-12)


def test_jit_and_vmap():
    same(funcad.jit(lambda x, y: fsig.csd(x, y, nperseg=8)[1])(X, Y), js.csd(X, Y, nperseg=8)[1])
    same(funcad.jit(lambda fs: fsig.welch(X, fs=fs, nperseg=8)[0])(2.0), js.welch(X, fs=2.0, nperseg=8)[0])
    same(funcad.vmap(lambda x: fsig.stft(x, nperseg=8)[2])(X), js.stft(X, nperseg=8)[2])
    z = np.asarray(js.stft(X, nperseg=8)[2])
    same(funcad.vmap(lambda z: fsig.istft(z)[1])(z), js.istft(z)[1])
    same(funcad.jit(lambda x: fsig.detrend(x, bp=[7]))(X), js.detrend(X, bp=[7]))


def test_32_bit_dtypes():
    with funcad.enable_x64(False):
        f, p = fsig.welch(X.astype(np.float32), nperseg=16)
        _, _, z = fsig.stft(X.astype(np.float32), nperseg=16)
    assert (f.dtype, p.dtype, z.dtype) == (np.float32, np.float32, np.complex64)
    np.testing.assert_allclose(p, js.welch(X, nperseg=16)[1], rtol=1e-5, atol=1e-6)


def test_errors():
    with pytest.raises(NotImplementedError, match="overwrite_data"):
        fsig.detrend(X, overwrite_data=True)
    with pytest.raises(FuncadValueError, match="'linear' or 'constant'"):
        fsig.detrend(X, type="quadratic")
    with pytest.raises(FuncadValueError, match="[Bb]reakpoints"):
        fsig.detrend(X, bp=[50])
    with pytest.raises(FuncadValueError, match="Unknown boundary option"):
        fsig.stft(X, boundary="wrap")
    with pytest.raises(FuncadValueError, match="Unknown scaling"):
        fsig.welch(X, scaling="power")
    with pytest.raises(FuncadValueError, match="noverlap must be less than nperseg"):
        fsig.welch(X, nperseg=8, noverlap=8)
    with pytest.raises(FuncadValueError, match="nfft must be greater than or equal to nperseg"):
        fsig.welch(X, nperseg=8, nfft=4)
    with pytest.raises(FuncadValueError, match="nperseg must be a positive integer"):
        fsig.welch(X, nperseg=0)
    with pytest.raises(FuncadValueError, match="different from length of window"):
        fsig.stft(X, window=np.ones(10))  # stft's nperseg defaults to 256
    with pytest.raises(FuncadValueError, match="average must be"):
        fsig.welch(X, nperseg=8, average="mode")
    with pytest.raises(FuncadValueError, match="Unsupported detrend type"):
        fsig.welch(X, nperseg=8, detrend=1)
    with pytest.raises(FuncadValueError, match="same rank"):
        fsig.csd(X, Y[0], nperseg=8)
    with pytest.raises(FuncadValueError, match="at least 2d"):
        fsig.istft(np.ones(5))
    with pytest.raises(FuncadValueError, match="differing time and frequency"):
        fsig.istft(np.ones((5, 4)), time_axis=0, freq_axis=0)
    with pytest.raises(FuncadValueError, match="must be longer than nperseg"):
        fsig.istft(np.ones((5, 4)), nperseg=8, nfft=6)
    with pytest.raises(funcad.ConcretizationError):
        funcad.jit(lambda n: fsig.welch(X, nperseg=n))(8)


def test_empty_input():
    f, t, z = fsig.stft(np.zeros((2, 0)))
    assert f.shape == t.shape == z.shape == (2, 0)
    same((f, t, z), js.stft(np.zeros((2, 0))))
    # JAX 0.12 fails here (an internal assertion): the empty (0, 5) spectrum, as its code intends
    f, p = fsig.csd(np.zeros((0, 5)), np.zeros((0, 5)))
    assert f.shape == p.shape == (0, 5) and p.dtype == np.complex128
