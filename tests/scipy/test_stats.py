"""funcad.scipy.stats beyond the op table: mode, rankdata and sem keyword variants and NaN
policies, and gaussian_kde's methods, resampling, pytree and errors, against SciPy and JAX."""
import numpy as np
import pytest
import scipy.stats as sst

import funcad
import funcad.random as fr
import funcad.scipy.stats as fst
from funcad.core.errors import FuncadTypeError, FuncadValueError


@pytest.fixture(scope="module")
def jx():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


def _same(got, want, rtol=1e-12):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype, got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


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
