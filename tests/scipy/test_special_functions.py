"""funcad.scipy.special's expi, exp1, expn, dawsn, sici, fresnel, spence, owens_t, the
hypergeometric functions, bessel_jn, sph_harm_y and wofz beyond the op table: edge values,
wide grids and float32 against JAX and SciPy, derivative conventions, and the errors."""
import numpy as np
import pytest
import scipy.special as sps

import funcad
import funcad.scipy.special as fsp
from funcad.core.errors import ConcretizationError, FuncadTypeError, FuncadValueError


@pytest.fixture(scope="module")
def jx():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _same(got, want, rtol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


# ------------------------------------------------------- edge values vs JAX ----

EDGES = {
    "expi": (np.array([0.0, -0.0, 1e-300, -1e-3, 2.0, 4.0, 64.0, 700.0, 720.0, -750.0,
                       np.inf, -np.inf, np.nan]),),
    "exp1": (np.array([0.0, 1e-3, 1.0, 1.0 + 1e-9, 700.0, 720.0, -1.0, np.inf, np.nan]),),
    "dawsn": (np.array([0.0, -0.0, 3.25, -6.25, 1e3, -1e10, np.inf, np.nan]),),
    "spence": (np.array([0.0, 1.0, 0.5, 1.5, 2.0, 2.0 + 1e-12, 1e8, -1.0, np.nan]),),
    "sici": (np.array([0.0, 4.0, 4.0 + 1e-9, 8.0, 1e9, 2e9, -3.0, np.inf, -np.inf]),),
    "fresnel": (np.array([0.0, 1.6, 1.6 + 1e-9, 36974.0, 40000.0, -2.5, np.inf, -np.inf]),),
    "expn": (np.array([0.0, 0.0, 1.0, 2.0, -1.0, 3.0, 6000.0, 1.5, 2.7]),
             np.array([0.0, 1.0, 0.0, 0.0, 1.0, -1.0, 2.0, 800.0, 0.5])),
    "owens_t": (np.array([0.0, 0.5, -0.5, 1.0, 2.0, 0.0, np.nan, 3.0]),
                np.array([0.7, 0.0, 1.0, -1.0, 5.0, 0.0, 1.0, 1e3])),
    "hyp1f1": (np.array([0.0, 1.0, 1.0, 0.0, 2.5, 0.5]), np.array([0.0, 1.0, 0.0, 1.0, 1.5, 0.5]),
               np.array([3.0, 2.0, 1.0, -1.0, -120.0, 150.0])),
    "hyp2f1": (np.array([1.0, 0.0, 1.0, 1.0, 0.5, -2.0, 1.5, 1.0]),
               np.array([1.0, 1.0, 2.0, 1.0, 1.0, 1.0, 1.2, 3.0]),
               np.array([2.0, 0.0, -1.0, 3.5, 0.5, 1.5, 2.7, 1.0]),
               np.array([0.0, 0.5, 0.5, 1.0, 0.4, 0.99, 0.97, -0.5])),
}


@pytest.mark.parametrize("name", sorted(EDGES))
def test_edge_values_match_jax(jx, name):
    import jax.scipy.special as jsp
    args = EDGES[name]
    got, want = getattr(fsp, name)(*args), getattr(jsp, name)(*args)
    if isinstance(want, tuple):
        for g, w in zip(got, want):
            _same(g, w, rtol=1e-13)
    else:
        _same(got, want, rtol=1e-13)


@pytest.mark.parametrize("name,ref", [("expi", sps.expi), ("exp1", sps.exp1), ("dawsn", sps.dawsn),
                                      ("spence", sps.spence)])
def test_wide_grid_matches_scipy(name, ref):
    x = np.concatenate([np.geomspace(1e-6, 700.0, 200), -np.geomspace(1e-6, 700.0, 200)])
    if name in ("exp1", "spence"):
        x = np.abs(x)
    np.testing.assert_allclose(getattr(fsp, name)(x), ref(x), rtol=2e-14)


def test_float32_stays_float32_and_agrees_with_jax(jx):
    import jax.scipy.special as jsp
    x = np.linspace(0.1, 20.0, 37).astype(np.float32)
    for name in ("expi", "exp1", "dawsn", "spence"):
        got, want = getattr(fsp, name)(x), getattr(jsp, name)(x)
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, want, rtol=4e-6)
    for name in ("sici", "fresnel"):
        for g, w in zip(getattr(fsp, name)(x), getattr(jsp, name)(x)):
            assert g.dtype == np.float32
            np.testing.assert_allclose(g, w, rtol=2e-5, atol=2e-7)


# -------------------------------------------------------------------- wofz ----

def test_wofz_complex_plane_matches_scipy_and_jax(jx):
    import jax.scipy.special as jsp
    re, im = np.meshgrid(np.linspace(-8, 8, 33), np.linspace(-5, 8, 27))
    z = re + 1j * im
    got = funcad.jit(fsp.wofz)(z)
    np.testing.assert_allclose(np.asarray(got), sps.wofz(z), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(got), np.asarray(jsp.wofz(z)), rtol=1e-13)
    real = fsp.wofz(np.array([0.0, 1.0, -3.0], np.float32))
    assert real.dtype == np.complex64
    np.testing.assert_allclose(real, sps.wofz(np.array([0.0, 1.0, -3.0])), rtol=1e-5)


def test_wofz_derivative_is_holomorphic(jx):
    import jax.scipy.special as jsp
    z = np.array(0.7 - 0.4j)
    got = funcad.grad(fsp.wofz, holomorphic=True)(z)
    want = jx.grad(jsp.wofz, holomorphic=True)(z)
    h = 1e-6
    fd = (sps.wofz(z + h) - sps.wofz(z - h)) / (2 * h)
    np.testing.assert_allclose(got, want, rtol=1e-13)
    np.testing.assert_allclose(got, fd, rtol=1e-8)
    # second derivative: w'' = -2 w - 2 z w'
    g2 = funcad.grad(funcad.grad(fsp.wofz, holomorphic=True), holomorphic=True)(z)
    np.testing.assert_allclose(g2, -2 * sps.wofz(z) - 2 * z * got, rtol=1e-12)


def test_wofz_of_integers_is_complex128():
    out = fsp.wofz(np.array([1, 2]))
    assert out.dtype == np.complex128
    np.testing.assert_allclose(out, sps.wofz(np.array([1.0, 2.0])), rtol=1e-12)


# ------------------------------------------------------------- derivatives ----

def test_derivative_conventions_match_jax(jx):
    import jax.scipy.special as jsp
    cases = [("expi", (-1.3,), 0), ("expi", (2.5,), 0), ("exp1", (0.7,), 0), ("expn", (3.0, 0.8), 1),
             ("expn", (0.0, 0.8), 1), ("dawsn", (4.0,), 0), ("owens_t", (0.4, 2.5), 0),
             ("owens_t", (0.4, 2.5), 1), ("hyp1f1", (0.3, 1.7, 150.0), 2), ("hyp1f1", (0.3, 1.7, 2.0), 0),
             ("hyp1f1", (0.3, 1.7, 2.0), 1), ("hyp2f1", (0.3, 0.6, 1.7, 0.4), 2)]
    for name, args, i in cases:
        got = funcad.grad(getattr(fsp, name), i)(*args)
        want = jx.grad(getattr(jsp, name), i)(*args)
        np.testing.assert_allclose(got, want, rtol=1e-11, err_msg=f"{name} d/d{i}")


def test_expn_is_not_differentiable_in_n_but_gives_zero(jx):
    assert float(funcad.grad(fsp.expn, 0)(2.0, 0.5)) == 0.0


def test_sici_fresnel_derivatives():
    x = np.array([0.5, 3.0, 9.0])
    dsi, dci = funcad.jacfwd(fsp.sici)(x)
    np.testing.assert_allclose(np.diag(dsi), np.sin(x) / x, rtol=1e-14)
    np.testing.assert_allclose(np.diag(dci), np.cos(x) / x, rtol=1e-14)
    ds, dc = funcad.jacrev(fsp.fresnel)(x)
    # (the argument is reduced exactly: sin(pi 81/2) is 1e-14 in NumPy, 0 here)
    np.testing.assert_allclose(np.diag(ds), np.sin(np.pi * x ** 2 / 2), atol=2e-13)
    np.testing.assert_allclose(np.diag(dc), np.cos(np.pi * x ** 2 / 2), atol=2e-13)


def test_spence_second_derivative_is_finite_where_jax_gives_nan():
    # against central differences of SciPy's spence
    for x in (1.2, 1.7):
        h = 1e-4
        fd = (sps.spence(x + h) - 2 * sps.spence(x) + sps.spence(x - h)) / h ** 2
        np.testing.assert_allclose(funcad.grad(funcad.grad(fsp.spence))(x), fd, rtol=1e-6)


def test_hyp_second_derivatives_in_parameters_under_jit(jx):
    import jax.scipy.special as jsp
    f = funcad.jit(funcad.grad(funcad.grad(fsp.hyp1f1, 0), 0))
    want = jx.jacfwd(jx.grad(jsp.hyp1f1, 0), 0)(0.6, 1.4, 1.1)
    np.testing.assert_allclose(f(0.6, 1.4, 1.1), want, rtol=1e-10)


# --------------------------------------------------------- bessel, sph_harm ----

def test_bessel_jn_shapes_orders_and_errors(jx):
    import jax.scipy.special as jsp
    z = np.linspace(1.0, 25.0, 12).reshape(3, 4)
    got = fsp.bessel_jn(z, v=5, n_iter=80)
    assert got.shape == (6, 3, 4)
    np.testing.assert_allclose(got, np.stack([sps.jv(k, z) for k in range(6)]), atol=1e-13)
    np.testing.assert_allclose(got, jsp.bessel_jn(z, v=5, n_iter=80), rtol=1e-12)
    np.testing.assert_allclose(funcad.vmap(lambda t: fsp.bessel_jn(t, v=2))(z[0]),
                               np.moveaxis(np.asarray(jsp.bessel_jn(z[0], v=2)), 0, 1), rtol=1e-12)
    with pytest.raises(FuncadTypeError, match="real"):
        fsp.bessel_jn(np.array([1j]), v=1)
    with pytest.raises(ConcretizationError, match="v"):
        funcad.jit(lambda v: fsp.bessel_jn(1.0, v=v))(2)


def test_sph_harm_y_matches_scipy_and_needs_static_n_max(jx):
    n = np.array([0, 1, 1, 2, 3, 5, 4])
    m = np.array([0, 1, -1, -2, 3, -4, 0])
    theta = np.array([0.0, 0.3, 1.2, 2.0, 3.1, np.pi, 1.0])
    phi = np.array([0.0, 1.0, 6.0, 2.0, 3.0, 0.5, 4.0])
    got = fsp.sph_harm_y(n, m, theta, phi)
    np.testing.assert_allclose(got, sps.sph_harm_y(n, m, theta, phi), atol=1e-14)
    # n above n_max is clipped to it, as in JAX
    clipped = fsp.sph_harm_y(np.array([7]), np.array([1]), np.array([0.4]), np.array([0.2]), n_max=3)
    np.testing.assert_allclose(clipped, sps.sph_harm_y(3, 1, 0.4, 0.2), atol=1e-14)
    with pytest.raises(ConcretizationError, match="n_max"):
        funcad.jit(lambda n: fsp.sph_harm_y(n, m, theta, phi))(n)
    jitted = funcad.jit(lambda n: fsp.sph_harm_y(n, m, theta, phi, n_max=5))(n)
    np.testing.assert_allclose(jitted, got, atol=1e-14)
    with pytest.raises(FuncadValueError, match="diff_n"):
        fsp.sph_harm_y(n, m, theta, phi, diff_n=1)


# -------------------------------------------------------------- conv local ----
