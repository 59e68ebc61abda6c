"""funcad.scipy.stats beyond the op table, against JAX and SciPy: the continuous
distributions with loc and scale, the discrete ones and dirichlet, a mixture likelihood
under grad, jit and vmap; mode, rankdata and sem keyword variants and NaN policies; and
gaussian_kde's methods, resampling, pytree and errors."""
import numpy as np
import pytest
import scipy.stats as sst

import funcad
import funcad.numpy as fnp
import funcad.random as fr
import funcad.scipy.special as fsp
import funcad.scipy.stats as fst
from funcad.core.errors import FuncadTypeError, FuncadValueError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jsp, jst, jnp = jax.scipy.special, jax.scipy.stats, jax.numpy


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


def close(a, b, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


DISTS = {  # module: (functions, extra shape arguments, points)
    "norm": ([], np.array([-40.0, -3.0, 0.0, 0.5, 9.0])),
    "cauchy": ([], np.array([-1e3, -3.0, 0.0, 0.5, 9.0])),
    "laplace": ([], np.array([-3.0, 0.0, 0.3, 9.0])),
    "logistic": ([], np.array([-800.0, -3.0, 0.0, 0.5, 40.0])),
    "expon": ([], np.array([-1.0, 0.0, 0.3, 0.5, 40.0])),
    "uniform": ([], np.array([-1.0, 0.0, 0.3, 1.0, 1.5, 2.5])),
    "t": ([2.5], np.array([-1e3, -3.0, 0.0, 0.5])),
    "chi2": ([3.0], np.array([-1.0, 0.0, 0.5, 4.0])),
    "gamma": ([2.5], np.array([-1.0, 0.0, 0.5, 4.0])),
    "beta": ([2.0, 3.0], np.array([-1.0, 0.0, 0.2, 0.9, 1.0, 2.0])),
}


QS = np.array([-0.1, 0.0, 1e-12, 0.1, 0.5, 0.9, 1.0, 1.1])


@pytest.mark.parametrize("name", sorted(DISTS))
def test_continuous_distributions_match_jax_with_loc_scale(name):
    mod, jmod = getattr(fst, name), getattr(jst, name)
    shape_args, x = DISTS[name]
    loc, scale = np.array([[0.0], [0.3]]), np.array([1.0, 1.7, 2.0])[:, None, None]  # broadcast (3, 2, n)
    for fn in mod.__all__:
        pts = QS if fn in ("ppf", "isf") else x
        got = getattr(mod, fn)(pts, *shape_args, loc, scale)
        assert np.shape(got) == (3, 2, len(pts))
        close(got, getattr(jmod, fn)(pts, *shape_args, loc, scale), rtol=1e-11)
        close(getattr(mod, fn)(pts, *shape_args), getattr(jmod, fn)(pts, *shape_args), rtol=1e-11)
        # float32 stays float32 (Python scalars are weak)
        assert getattr(mod, fn)(pts.astype(np.float32), *shape_args).dtype == np.float32
    assert set(mod.__all__) <= {n for n in dir(jmod) if not n.startswith("_")}


def test_discrete_distributions_and_dirichlet():
    k = np.array([-1.0, 0.0, 1.0, 2.0, 2.5, 7.0])
    for name, args in (("poisson", (2.3,)), ("geom", (0.3,)), ("binom", (5.0, 0.3)), ("binom", (5.0, 1.0)),
                       ("bernoulli", (0.3,)), ("poisson", (2.3, 1.0))):
        for fn in ("logpmf", "pmf"):
            close(getattr(getattr(fst, name), fn)(k, *args), getattr(getattr(jst, name), fn)(k, *args))
    close(fst.bernoulli.cdf(k, 0.3), jst.bernoulli.cdf(k, 0.3))
    close(fst.bernoulli.ppf(QS, 0.3), jst.bernoulli.ppf(QS, 0.3))
    a = np.array([1.5, 2.0, 3.0])
    x = np.random.default_rng(4).dirichlet(a, 4).T
    close(fst.dirichlet.logpdf(x, a), jst.dirichlet.logpdf(x, a))
    close(fst.dirichlet.pdf(x[:2], a), jst.dirichlet.pdf(x[:2], a))
    close(fst.dirichlet.logpdf(np.array([0.5, 0.6, -0.1]), a), -np.inf)
    close(funcad.grad(lambda a: fst.dirichlet.logpdf(x, a).sum())(a), jax.grad(lambda a: jst.dirichlet.logpdf(x, a).sum())(a))
    with pytest.raises(FuncadValueError, match="one-dimensional"):
        fst.dirichlet.logpdf(x, a[None])


def test_gaussian_mixture_likelihood_grad_jit_vmap():
    rng = np.random.default_rng(5)
    data = rng.normal(size=50)

    def nll(params, lib_st, lib_sp, lib_np):
        logits, mu, log_s = params[:3], params[3:6], params[6:]
        lp = lib_st.norm.logpdf(data[:, None], mu, lib_np.exp(log_s)) + (logits - lib_sp.logsumexp(logits))
        return -lib_sp.logsumexp(lp, axis=1).sum()
    p = rng.normal(size=9)
    want = jax.grad(lambda p: nll(p, jst, jsp, jnp))(p)
    close(funcad.grad(lambda p: nll(p, fst, fsp, fnp))(p), want, rtol=1e-10)
    close(funcad.jit(funcad.grad(lambda p: nll(p, fst, fsp, fnp)))(p), want, rtol=1e-10)
    close(funcad.hessian(lambda p: nll(p, fst, fsp, fnp))(p), jax.hessian(lambda p: nll(p, jst, jsp, jnp))(p), rtol=1e-9)
    ps = rng.normal(size=(4, 9))
    close(funcad.vmap(funcad.grad(lambda p: nll(p, fst, fsp, fnp)))(ps),
          jax.vmap(jax.grad(lambda p: nll(p, jst, jsp, jnp)))(ps), rtol=1e-10)
