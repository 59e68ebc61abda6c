"""Issue 16's second batch beyond the op table: edge values and conventions of
the new special functions (against JAX and SciPy), complex wofz, the errors,
gaussian_kde's methods and pytree, mode/rankdata/sem keyword variants, and
conv_general_dilated_local's layouts."""
import numpy as np
import pytest
import scipy.special as sps
import scipy.stats as sst

import funcad
import funcad.lax as flax
import funcad.numpy as fnp
import funcad.random as fr
import funcad.scipy.special as fsp
import funcad.scipy.stats as fst
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


# --------------------------------------------------------------- stats ----

def test_mode_keepdims_axes_and_nan_policy(jx):
    import jax.scipy.stats as jst
    x = np.random.default_rng(3).integers(0, 3, (4, 5, 6))
    for axis in (0, 1, -1, None):
        for keepdims in (False, True):
            got, want = fst.mode(x, axis=axis, keepdims=keepdims), sst.mode(x, axis=axis, keepdims=keepdims)
            np.testing.assert_array_equal(got.mode, want.mode)
            np.testing.assert_array_equal(got.count, want.count)
            assert np.shape(got.count) == np.shape(want.count)
    want = jst.mode(x, axis=1, keepdims=True)
    got = fst.mode(x, axis=1, keepdims=True)
    assert got.mode.dtype == want.mode.dtype and got.count.dtype == want.count.dtype
    np.testing.assert_array_equal(got.count, want.count)
    m, c = funcad.jit(fst.mode)(x.astype(float))
    np.testing.assert_array_equal(m, sst.mode(x, axis=0).mode)
    with pytest.raises(FuncadValueError, match="propagate"):
        fst.mode(x, nan_policy="omit")
    with pytest.raises(FuncadValueError, match="Illegal nan_policy"):
        fst.mode(x, nan_policy="skip")


@pytest.mark.parametrize("method", ["average", "min", "max", "dense", "ordinal"])
def test_rankdata_every_method_matches_scipy(method):
    x = np.random.default_rng(4).integers(0, 5, (6, 7)).astype(float)
    for axis in (None, 0, 1, -1):
        np.testing.assert_array_equal(fst.rankdata(x, method, axis=axis), sst.rankdata(x, method, axis=axis))
    np.testing.assert_array_equal(funcad.jit(lambda v: fst.rankdata(v, method, axis=1))(x),
                                  sst.rankdata(x, method, axis=1))
    np.testing.assert_array_equal(funcad.vmap(lambda v: fst.rankdata(v, method))(x),
                                  sst.rankdata(x, method, axis=1))


def test_rankdata_nan_and_errors():
    x = np.array([[3.0, np.nan, 1.0], [2.0, 2.0, 1.0]])
    out = fst.rankdata(x, axis=1)
    assert np.isnan(out[0]).all()
    np.testing.assert_array_equal(out[1], [2.5, 2.5, 1.0])
    with pytest.raises(FuncadValueError, match="unknown method"):
        fst.rankdata(x, "mean")


def test_sem_policies_ddof_keepdims(jx):
    import jax.scipy.stats as jst
    x = np.random.default_rng(5).normal(size=(4, 6))
    x[1, 2] = np.nan
    for kw in ({}, {"axis": 1}, {"axis": None}, {"ddof": 0, "axis": 1, "keepdims": True},
               {"nan_policy": "omit", "axis": 1}, {"nan_policy": "omit", "axis": None}):
        np.testing.assert_allclose(fst.sem(x, **kw), jst.sem(x, **kw), rtol=1e-13, equal_nan=True)
    with pytest.raises(FuncadValueError, match="nan_policy"):
        fst.sem(x, nan_policy="raise")


@pytest.fixture(scope="module")
def kdes(jx):
    import jax.scipy.stats as jst
    rng = np.random.default_rng(6)
    data, w = rng.normal(size=(2, 25)), rng.uniform(0.2, 1.0, 25)
    return fst.gaussian_kde(data, "silverman", w), jst.gaussian_kde(data, "silverman", w), data, w


def test_kde_methods_match_jax_and_scipy(jx, kdes):
    ours, theirs, data, w = kdes
    ref = sst.gaussian_kde(data, "silverman", w)
    pts = np.random.default_rng(7).normal(size=(2, 8))
    for method in ("evaluate", "pdf", "logpdf", "__call__"):
        np.testing.assert_allclose(getattr(ours, method)(pts), getattr(theirs, method)(pts), rtol=1e-13)
    np.testing.assert_allclose(ours.evaluate(pts), ref.evaluate(pts), rtol=1e-12)
    np.testing.assert_allclose(ours.logpdf(100 * pts), ref.logpdf(100 * pts), rtol=1e-12)  # no underflow
    np.testing.assert_allclose(ours.covariance, ref.covariance, rtol=1e-13)
    assert float(ours.neff) == pytest.approx(ref.neff, rel=1e-13) and (ours.d, ours.n) == (2, 25)
    mean, cov = np.array([0.2, -0.1]), np.array([[1.0, 0.3], [0.3, 0.5]])
    np.testing.assert_allclose(ours.integrate_gaussian(mean, cov), ref.integrate_gaussian(mean, cov), rtol=1e-12)
    other = fst.gaussian_kde(pts)
    np.testing.assert_allclose(ours.integrate_kde(other), ref.integrate_kde(sst.gaussian_kde(pts)), rtol=1e-12)
    one = fst.gaussian_kde(data[0], bw_method=lambda k: 0.5)
    np.testing.assert_allclose(one.integrate_box_1d(-0.5, 1.0),
                               sst.gaussian_kde(data[0], bw_method=0.5).integrate_box_1d(-0.5, 1.0), rtol=1e-12)


def test_kde_resample_is_jaxs_draw(jx, kdes):
    ours, theirs, _, _ = kdes
    for shape in ((), (5,)):
        got = ours.resample(fr.PRNGKey(11), shape)
        want = theirs.resample(jx.random.PRNGKey(11), shape)
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert ours.resample(fr.PRNGKey(0), (3, 4)).shape == (2, 3, 4)


def test_kde_is_a_pytree_under_jit_vmap_grad(jx, kdes):
    ours, theirs, data, _ = kdes
    pts = np.array([[0.1, 0.5], [0.0, -1.0]])
    leaves = funcad.tree_util.tree_leaves(ours)
    assert len(leaves) == 5
    np.testing.assert_allclose(funcad.jit(lambda k, p: k.logpdf(p))(ours, pts), theirs.logpdf(pts), rtol=1e-13)
    g = funcad.grad(lambda d: fst.gaussian_kde(d).logpdf(pts).sum())(data)
    import jax.scipy.stats as jst
    want = jx.grad(lambda d: jst.gaussian_kde(d).logpdf(pts).sum())(data)
    np.testing.assert_allclose(g, want, rtol=1e-10)
    with pytest.raises(AttributeError, match="immutable"):
        ours.neff = 3.0


def test_kde_errors():
    with pytest.raises(FuncadValueError, match="multiple elements"):
        fst.gaussian_kde(np.array([1.0]))
    with pytest.raises(FuncadValueError, match="length"):
        fst.gaussian_kde(np.arange(5.0), weights=np.ones(4))
    with pytest.raises(FuncadValueError, match="bw_method"):
        fst.gaussian_kde(np.arange(5.0), bw_method="wide")
    with pytest.raises(FuncadValueError, match="dimension"):
        fst.gaussian_kde(np.random.default_rng(0).normal(size=(2, 6))).evaluate(np.ones((3, 2)))
    with pytest.raises(FuncadValueError, match="1D"):
        fst.gaussian_kde(np.random.default_rng(0).normal(size=(2, 6))).integrate_box_1d(0.0, 1.0)
    with pytest.raises(FuncadTypeError, match="complex"):
        fst.gaussian_kde(np.arange(4.0) * 1j)


# -------------------------------------------------------------- conv local ----

@pytest.mark.parametrize("dn,strides,padding,lhs_d,rhs_d", [
    (None, (1, 1), "VALID", None, None),
    (("NHWC", "HWIO", "NHWC"), (2, 1), "SAME", None, (1, 2)),
    (("NCHW", "OIHW", "NHWC"), (1, 2), [(1, 0), (2, 1)], (2, 1), None),
])
def test_conv_general_dilated_local_layouts_match_jax(jx, dn, strides, padding, lhs_d, rhs_d):
    jl = jx.lax
    rng = np.random.default_rng(8)
    fs = (3, 2)
    xshape = (2, 9, 8, 3) if dn and dn[0] == "NHWC" else (2, 3, 9, 8)
    x = rng.normal(size=xshape)
    patches = jl.conv_general_dilated_patches(x, fs, strides, padding, lhs_d, rhs_d, dimension_numbers=dn)
    _, rhs_spec, out_spec = jl.conv_dimension_numbers(x.shape, (1, 1) + fs, dn)
    shape = [0] * 4
    shape[rhs_spec[0]], shape[rhs_spec[1]] = 4, patches.shape[out_spec[1]]
    for i, d in enumerate(rhs_spec[2:]):
        shape[d] = patches.shape[out_spec[2 + i]]
    w = rng.normal(size=shape)
    args = (strides, padding, fs, lhs_d, rhs_d, dn)
    got = flax.conv_general_dilated_local(x, w, *args)
    want = jl.conv_general_dilated_local(x, w, *args)
    np.testing.assert_allclose(got, want, rtol=1e-12)
    g = funcad.grad(lambda x, w: fnp.sum(flax.conv_general_dilated_local(x, w, *args) ** 2), (0, 1))(x, w)
    h = jx.grad(lambda x, w: (jl.conv_general_dilated_local(x, w, *args) ** 2).sum(), (0, 1))(x, w)
    for a, b in zip(g, h):
        np.testing.assert_allclose(a, b, rtol=1e-11)
    np.testing.assert_allclose(funcad.jit(lambda x, w: flax.conv_general_dilated_local(x, w, *args))(x, w),
                               want, rtol=1e-12)
    x32 = x.astype(np.float32)
    mixed = flax.conv_general_dilated_local(x32, w, *args)
    assert mixed.dtype == np.float64
    np.testing.assert_allclose(mixed, jl.conv_general_dilated_local(x32, w, *args), rtol=1e-12)
