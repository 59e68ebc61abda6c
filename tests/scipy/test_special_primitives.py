"""The special-function primitives beyond the op table: the a-derivatives,
the errors for the arguments JAX does not differentiate, edge values, jit in
float32, and agreement with JAX on wide grids."""
import numpy as np
import pytest
import scipy.special as sps

import funcad
import funcad.lax as flax
import funcad.scipy.special as fsp
from funcad.core.errors import FuncadTypeError, FuncadValueError


@pytest.fixture(scope="module")
def jx():
    import jax
    jax.config.update("jax_enable_x64", True)
    return jax


A_GRID = np.array([0.3, 0.9, 1.5, 3.0, 7.5, 20.0, 60.0])
X_GRID = np.array([0.05, 0.5, 1.0, 2.5, 6.0, 18.0, 75.0])


def _grid():
    a, x = np.meshgrid(A_GRID, X_GRID)
    return a.ravel(), x.ravel()


@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
def test_gamma_family_matches_jax_on_a_grid_eager_and_jit(jx, name):
    a, x = _grid()
    want = np.asarray(jx.jit(getattr(jx.lax, name))(a, x))
    eager = np.asarray(getattr(flax, name)(a, x))
    jitted = np.asarray(funcad.jit(getattr(flax, name))(a, x))
    np.testing.assert_allclose(eager, want, rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(jitted, want, rtol=1e-9, atol=1e-300)


@pytest.mark.slow  # test_small_shapes_keep_their_digits checks float32 in the default run
@pytest.mark.parametrize("name", ["igamma", "igammac", "igamma_grad_a", "random_gamma_grad"])
def test_gamma_family_float32_under_jit(jx, name):
    a, x = _grid()
    want = np.asarray(jx.jit(getattr(jx.lax, name))(a, x))
    got = funcad.jit(getattr(flax, name))(a.astype(np.float32), x.astype(np.float32))
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_allclose(np.asarray(got), want, rtol=2e-4, atol=1e-30)


def test_igamma_edges_eager_and_jit():
    a = np.array([2.0, 2.0, -1.0, 2.0, np.nan, 2.0])
    x = np.array([0.0, np.inf, 1.0, -1.0, 1.0, np.nan])
    p = np.array([0.0, 1.0, np.nan, np.nan, np.nan, np.nan])
    for f in (flax.igamma, funcad.jit(flax.igamma)):
        np.testing.assert_array_equal(np.asarray(f(a, x)), p)
    for f in (flax.igammac, funcad.jit(flax.igammac)):
        np.testing.assert_array_equal(np.asarray(f(a, x)), 1 - p)
    for f in (flax.igamma_grad_a, funcad.jit(flax.igamma_grad_a)):
        np.testing.assert_array_equal(np.asarray(f(a, x)), [0.0, 0.0, np.nan, np.nan, np.nan, np.nan])


def test_gammainc_a_derivative_first_order_matches_jax_and_differences(jx):
    a, x = 1.7, np.array([0.4, 1.2, 3.5, 9.0])
    ours = funcad.vmap(funcad.grad(fsp.gammainc), (None, 0))(a, x)
    theirs = jx.vmap(jx.grad(jx.scipy.special.gammainc), (None, 0))(a, x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-9)
    fd = (sps.gammainc(a + 1e-6, x) - sps.gammainc(a - 1e-6, x)) / 2e-6
    np.testing.assert_allclose(ours, fd, rtol=1e-6)
    jitted = funcad.jit(funcad.vmap(funcad.grad(fsp.gammaincc), (None, 0)))(a, x)
    np.testing.assert_allclose(jitted, -theirs, rtol=1e-9)


def test_second_a_derivative_and_other_arguments_raise_clearly():
    with pytest.raises(FuncadValueError, match="igamma_grad_a: the derivative with respect to a"):
        funcad.grad(funcad.grad(fsp.gammainc))(1.5, 2.0)
    with pytest.raises(FuncadValueError, match="random_gamma_grad: the derivative with respect to x"):
        funcad.grad(flax.random_gamma_grad, 1)(1.5, 2.0)
    with pytest.raises(FuncadValueError, match="betainc: the derivative with respect to a and b"):
        funcad.grad(fsp.betainc, 1)(1.5, 2.0, 0.3)
    with pytest.raises(FuncadValueError, match="zeta: the derivative with respect to x"):
        funcad.grad(flax.zeta)(2.5, 1.0)
    with pytest.raises(FuncadTypeError, match="Riemann zeta"):
        fsp.zeta(2.0)


def test_lax_operands_must_share_a_float_dtype():
    with pytest.raises(FuncadTypeError, match="igamma"):
        flax.igamma(np.float32(1.0), np.float64(1.0))
    with pytest.raises(FuncadTypeError, match="regularized_incomplete_beta"):
        flax.betainc(np.int32(1), np.int32(1), np.int32(0))


def test_betainc_matches_scipy_jit_both_sides_and_edges():
    rng = np.random.default_rng(1)
    a, b = rng.uniform(0.2, 40, 200), rng.uniform(0.2, 40, 200)
    x = rng.uniform(0, 1, 200)
    want = sps.betainc(a, b, x)
    np.testing.assert_allclose(fsp.betainc(a, b, x), want, rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(fsp.betainc)(a, b, x), want, rtol=1e-9, atol=1e-300)
    edges = (np.array([2.0, 2.0, -1.0, 2.0]), np.array([3.0, 3.0, 1.0, 3.0]), np.array([0.0, 1.0, 0.5, 1.5]))
    for f in (fsp.betainc, funcad.jit(fsp.betainc)):
        np.testing.assert_array_equal(np.asarray(f(*edges)), [0.0, 1.0, np.nan, np.nan])


def test_betainc_vmap_over_every_argument(jx):
    a, b, x = np.array([0.5, 2.0, 4.0]), np.array([1.5, 3.0, 0.7]), np.array([0.2, 0.5, 0.9])
    got = funcad.vmap(funcad.grad(fsp.betainc, 2))(a, b, x)
    want = jx.vmap(jx.grad(jx.scipy.special.betainc, 2))(a, b, x)
    np.testing.assert_allclose(got, want, rtol=1e-9)
    got = funcad.vmap(fsp.betainc, (0, None, None))(a, 2.0, 0.3)
    np.testing.assert_allclose(got, sps.betainc(a, 2.0, 0.3), rtol=1e-12)


def test_bessel_wide_range_jit_and_derivatives_at_zero(jx):
    x = np.concatenate([-np.geomspace(1e-8, 800, 60), [0.0], np.geomspace(1e-8, 800, 60)])
    for ours, ref in ((flax.bessel_i0e, sps.i0e), (flax.bessel_i1e, sps.i1e)):
        np.testing.assert_allclose(funcad.jit(ours)(x), ref(x), rtol=1e-13, atol=1e-300)
        np.testing.assert_allclose(funcad.jit(ours)(x.astype(np.float32)), ref(x), rtol=2e-6, atol=1e-30)
    assert float(funcad.grad(flax.bessel_i1e)(0.0)) == 0.5
    assert float(funcad.grad(fsp.i1)(0.0)) == 0.5
    for ours, theirs in ((fsp.i0, jx.scipy.special.i0), (fsp.i1, jx.scipy.special.i1),
                         (fsp.i0e, jx.scipy.special.i0e), (fsp.i1e, jx.scipy.special.i1e)):
        for at in (0.3, -1.7, 4.0):
            np.testing.assert_allclose(funcad.grad(funcad.grad(ours))(at),
                                       jx.grad(jx.grad(theirs))(at), rtol=1e-8)


def test_zeta_derivatives_in_both_arguments_against_differences():
    # (The op table compares them with JAX's at orders 1 and 2.)
    x, q, h = np.array([2.5, 4.0, 1.7]), np.array([1.3, 0.6, 5.0]), 1e-4
    fd_x = (sps.zeta(x + h, q) - sps.zeta(x - h, q)) / (2 * h)
    fd_xx = (sps.zeta(x + h, q) - 2 * sps.zeta(x, q) + sps.zeta(x - h, q)) / h ** 2
    np.testing.assert_allclose(funcad.vmap(funcad.grad(fsp.zeta))(x, q), fd_x, rtol=1e-7)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(funcad.grad(fsp.zeta)))(x, q), fd_xx, rtol=1e-5)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(fsp.zeta, 1))(x, q), -x * sps.zeta(x + 1, q), rtol=1e-12)
    assert np.isnan(float(funcad.grad(fsp.zeta)(0.5, 1.0)))  # outside the domain, as the value


def test_to_python_of_the_special_primitives_runs():
    f = lambda a, x: flax.igamma(a, x) + flax.igamma_grad_a(a, x) + flax.bessel_i0e(x)
    src = funcad.to_python(funcad.make_jaxpr(f)(1.5, 2.0))
    ns = {}
    exec(src, ns)
    np.testing.assert_allclose(ns["f"](1.5, 2.0), f(1.5, 2.0), rtol=1e-12)


def test_polygamma_is_binary_with_traced_orders(jx):
    x, n = np.array([0.3, 1.0, 4.5, 2.0]), np.array([0, 2, 3, 1])
    want = jx.scipy.special.polygamma(n, x)
    np.testing.assert_allclose(funcad.jit(fsp.polygamma)(n, x), want, rtol=1e-10)
    np.testing.assert_allclose(funcad.vmap(fsp.polygamma)(n, x), want, rtol=1e-10)
    np.testing.assert_allclose(flax.polygamma(np.float64(2.0), x), jx.lax.polygamma(2.0, x), rtol=1e-10)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(fsp.polygamma, 1))(n, x),
                               jx.vmap(jx.grad(jx.scipy.special.polygamma, 1))(n, x), rtol=1e-10)
    with pytest.raises(FuncadValueError, match="polygamma gradient with respect to m"):
        funcad.grad(flax.polygamma)(1.0, 0.7)
    with pytest.raises(FuncadValueError, match="integer type"):
        fsp.polygamma(1.5, x)


def test_erfcx_over_its_range_and_bernoulli(jx):
    x = np.concatenate([-np.geomspace(1e-3, 26, 30), np.geomspace(1e-3, 1e5, 60)])
    for f in (fsp.erfcx, funcad.jit(fsp.erfcx)):
        np.testing.assert_allclose(f(x), sps.erfcx(x), rtol=1e-14)
    xf = x[x > -9].astype(np.float32)
    np.testing.assert_allclose(funcad.jit(fsp.erfcx)(xf), sps.erfcx(xf.astype(np.float64)), rtol=2e-6)
    # erfcx' = 2 x erfcx - 2 / sqrt(pi), which cancels for large x: compare there with the series' own.
    moderate = x[np.abs(x) < 3]
    np.testing.assert_allclose(funcad.vmap(funcad.grad(fsp.erfcx))(moderate),
                               2 * moderate * sps.erfcx(moderate) - 2 / np.sqrt(np.pi), rtol=1e-12, atol=1e-15)
    big = np.array([20.0, 100.0, 1e4])
    np.testing.assert_allclose(funcad.vmap(funcad.grad(fsp.erfcx))(big),
                               -1 / (np.sqrt(np.pi) * big ** 2) * (1 - 1.5 / big ** 2 + 3.75 / big ** 4
                                                                   - 13.125 / big ** 6), rtol=1e-8)
    # JAX truncates zeta's sum (its B_4 is -0.03333324870879); funcad's are exact to rounding.
    from fractions import Fraction
    from funcad.scipy.special._incomplete import _bernoulli_even
    exact = np.zeros(61)
    exact[:2] = [1.0, -0.5]
    exact[2::2] = [float(b) for b in _bernoulli_even(30)]
    assert _bernoulli_even(2) == [Fraction(1, 6), Fraction(-1, 30)]
    np.testing.assert_allclose(fsp.bernoulli(60), exact, rtol=1e-14, atol=0)
    np.testing.assert_allclose(fsp.bernoulli(60), sps.bernoulli(60), rtol=1e-11, atol=1e-15)
    np.testing.assert_allclose(fsp.bernoulli(60), jx.scipy.special.bernoulli(60), rtol=3e-6)
    assert fsp.bernoulli(1).tolist() == [1.0, -0.5]
    with pytest.raises(FuncadValueError, match="non-negative"):
        fsp.bernoulli(-1)


def test_edge_values_match_jax_and_scipy(jx):
    a = np.array([0.0, 0.0, 1.0, np.inf, np.inf, 1e-300, 3.0, -1.0])
    x = np.array([0.0, 1.0, np.inf, 1.0, np.inf, 1.0, 1e-300, 1.0])
    # SciPy's values, and JAX's since 0.7 (0.6 gave NaN for a = inf).
    p = np.array([np.nan, 1.0, 1.0, 0.0, np.nan, 1.0, 0.0, np.nan])
    q = np.array([np.nan, 0.0, 0.0, 1.0, np.nan, 2.1938393439552e-301, 1.0, np.nan])
    for name, want in (("igamma", p), ("igammac", q)):
        for f in (getattr(flax, name), funcad.jit(getattr(flax, name))):
            np.testing.assert_allclose(np.asarray(f(a, x)), want, rtol=1e-12, atol=0)
    # dP/da is 0 where P is flat (x = inf, a = inf); JAX gives NaN there, funcad the limit.
    want = np.array([np.nan, np.nan, 0.0, 0.0, 0.0, -0.2193839343955203, -0.0, np.nan])
    for f in (flax.igamma_grad_a, funcad.jit(flax.igamma_grad_a)):
        np.testing.assert_allclose(np.asarray(f(a, x)), want, rtol=1e-12, atol=0)
    vals = [0.0, 1.0, np.inf, -1.0]
    A, B, X = map(np.array, zip(*[(p, q, t) for p in vals for q in vals for t in (0.0, 0.5, 1.0, 1.5)]))
    for f in (fsp.betainc, funcad.jit(fsp.betainc)):
        np.testing.assert_array_equal(np.asarray(f(A, B, X)), sps.betainc(A, B, X))


def test_small_shapes_keep_their_digits(jx):
    # The gamma sampler's gradient at small alpha: series with lgamma(a + 1), no 1/a cancellation.
    a, x = np.meshgrid([1e-8, 1e-4, 1e-2, 0.1], [1e-30, 1e-10, 1e-3, 0.5, 1.0, 1.5, 5.0])
    a, x = a.ravel(), x.ravel()
    for name in ("igamma_grad_a", "random_gamma_grad"):
        want = np.asarray(jx.jit(getattr(jx.lax, name))(a, x))
        np.testing.assert_allclose(funcad.jit(getattr(flax, name))(a, x), want, rtol=1e-10)
        got32 = funcad.jit(getattr(flax, name))(a.astype(np.float32), x.astype(np.float32))
        np.testing.assert_allclose(np.asarray(got32), want, rtol=1e-4, atol=1e-30)


def test_multivariate_normal_shapes_jit_grad_and_errors(jx):
    import funcad.scipy.stats as fst
    jst = jx.scipy.stats
    rng = np.random.default_rng(0)
    A = rng.normal(size=(2, 3, 3))
    covs = A @ np.swapaxes(A, -1, -2) + np.eye(3)
    x, m = rng.normal(size=(4, 1, 3)), rng.normal(size=3)
    for cov in (covs, covs[0], 2.5):
        want = jst.multivariate_normal.logpdf(x, m, cov)
        np.testing.assert_allclose(fst.multivariate_normal.logpdf(x, m, cov), want, rtol=1e-12)
        np.testing.assert_allclose(funcad.jit(fst.multivariate_normal.pdf)(x, m, cov),
                                   jst.multivariate_normal.pdf(x, m, cov), rtol=1e-12)
    np.testing.assert_allclose(fst.multivariate_normal.logpdf(0.3, 0.1, 2.0),
                               jst.multivariate_normal.logpdf(0.3, 0.1, 2.0), rtol=1e-14)
    g = funcad.grad(lambda c: fst.multivariate_normal.logpdf(x, m, c).sum())(covs[0])
    np.testing.assert_allclose(g, jx.grad(lambda c: jst.multivariate_normal.logpdf(x, m, c).sum())(covs[0]),
                               rtol=1e-10, atol=1e-12)
    with pytest.raises(FuncadValueError, match=r"incompatible shapes: mean has 3 entries but cov has shape \(2, 2\)"):
        fst.multivariate_normal.logpdf(x, m, np.eye(2))
    with pytest.raises(FuncadTypeError, match="allow_singular"):
        fst.multivariate_normal.logpdf(x, m, covs[0], allow_singular=True)
