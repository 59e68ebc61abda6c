"""funcad.scipy.fft (dct, idct, dctn, idctn) against SciPy and JAX: types, norms, axes,
dtypes, the complex round trip, derivatives and errors."""
import numpy as np
import pytest
import scipy.fft as sfft

import funcad
import funcad.numpy as fnp
import funcad.scipy.fft as ffft

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.fft as jfft  # noqa: E402


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


@pytest.mark.parametrize("fn", ["dct", "idct"])
def test_dct_idct_match_scipy_and_jax(fn):
    rng = np.random.default_rng(0)
    for shape, axis, n, norm in [((5,), -1, None, None), ((4, 3), 0, 2, "ortho"), ((2, 3, 6), 1, 7, "backward"),
                                 ((2, 3, 6), 1, None, "ortho")]:
        x = rng.normal(size=shape)
        if True:
            if True:
                got = getattr(ffft, fn)(x, n=n, axis=axis, norm=norm)
                close(got, getattr(sfft, fn)(x, n=n, axis=axis, norm=norm))
                close(got, getattr(jfft, fn)(x, n=n, axis=axis, norm=norm))


@pytest.mark.parametrize("fn", ["dctn", "idctn"])
def test_dctn_idctn_match_scipy_and_jax(fn):
    x = np.random.default_rng(1).normal(size=(3, 4, 5))
    for s, axes, norm in [(None, None, None), ((3,), None, "ortho"), (None, (0, 2), None), ((2, 6), (2, 0), "ortho"),
                          ((2, 3, 4), None, None), (None, -1, "ortho"), (5, None, None)]:
        if True:
            got = getattr(ffft, fn)(x, s=s, axes=axes, norm=norm)
            close(got, getattr(sfft, fn)(x, s=s, axes=axes, norm=norm))
            close(got, getattr(jfft, fn)(x, s=s, axes=axes, norm=norm))


def test_dct_dtypes_complex_roundtrip_and_derivatives():
    rng = np.random.default_rng(2)
    x32 = rng.normal(size=(3, 4)).astype(np.float32)
    for fn in ("dct", "idct", "dctn", "idctn"):
        for x in (x32, np.arange(4), x32.astype(np.complex64) * (1 + 2j)):
            got, want = getattr(ffft, fn)(x), getattr(jfft, fn)(x)
            assert got.dtype == want.dtype, (fn, x.dtype)
            close(got, want, rtol=2e-5, atol=2e-5)
    x = rng.normal(size=(4, 5))
    close(ffft.idctn(ffft.dctn(x, norm="ortho"), norm="ortho"), x)
    f = lambda m, mod: lambda x: m.sum(mod.dctn(x, s=(3, 6), norm="ortho") ** 3) + m.sum(mod.idct(x, n=3, axis=0) ** 2)  # noqa: E731
    close(funcad.grad(f(fnp, ffft))(x), jax.grad(f(jnp, jfft))(x))
    close(funcad.jit(lambda x: ffft.idct(x, norm="ortho"))(x), jfft.idct(x, norm="ortho"))
    close(funcad.vmap(lambda r: ffft.dct(r, n=3))(x), jfft.dct(x, n=3))


def test_dct_errors():
    x = np.ones((2, 3))
    for fn in ("dct", "idct", "dctn", "idctn"):
        with pytest.raises(NotImplementedError, match="only DCT type 2"):
            getattr(ffft, fn)(x, type=3)
        with pytest.raises(ValueError, match="norm='forward' is not implemented"):
            getattr(ffft, fn)(x, norm="forward")
    with pytest.raises(ValueError, match=r"s must have at most x.ndim \(2\) elements, got 3"):
        ffft.dctn(x, s=(1, 2, 3))
    with pytest.raises(ValueError, match="out of bounds"):
        ffft.dct(x, axis=2)
