"""funcad.scipy beyond the op table: special functions' edge values, derivatives and keyword
forms, trapezoid and the namespaces."""
import numpy as np
import pytest
import scipy.special as sps

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
import funcad.scipy.special as fsp
import funcad.scipy.stats as fst
from funcad.core.errors import FuncadValueError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jsp, jst, jnp = jax.scipy.special, jax.scipy.stats, jax.numpy


def close(a, b, rtol=1e-12, atol=1e-14):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=atol, equal_nan=True)


# ------------------------------------------ derivatives and keyword forms ----

def test_hypot_second_derivative_is_right_at_x_equal_y():
    f = lambda x: fnp.hypot(x, 2.0)  # noqa: E731
    exact = 2.0 ** 2 / np.hypot(2.0, 2.0) ** 3  # y^2 / r^3 = 0.17678
    assert abs(float(funcad.grad(funcad.grad(f))(2.0)) - exact) < 1e-14
    eps = 1e-4
    fd = (np.hypot(2 + eps, 2) - 2 * np.hypot(2, 2) + np.hypot(2 - eps, 2)) / eps ** 2
    assert abs(float(funcad.jit(funcad.grad(funcad.grad(f)))(2.0)) - fd) < 1e-6
    # away from the tie, and at the edges, the first derivative is JAX's
    pts = [(0.0, 2.0), (3.0, 0.0), (-3.0, 4.0), (np.inf, 1.0)]
    for x, y in pts:
        close(funcad.grad(fnp.hypot, (0, 1))(x, y), jax.grad(jnp.hypot, (0, 1))(x, y))
    close(funcad.hessian(fnp.hypot, (0, 1))(0.0, 2.0), jax.hessian(jnp.hypot, (0, 1))(0.0, 2.0))
    # at the origin: the balanced subgradient 1/2 per argument (JAX 0.12 gives NaN)
    close(funcad.grad(fnp.hypot, (0, 1))(0.0, 0.0), (0.5, 0.5))


def test_grad_digamma_of_a_python_float():
    assert abs(float(funcad.grad(lax.digamma)(0.7)) - sps.polygamma(1, 0.7)) < 1e-12
    assert abs(float(funcad.grad(funcad.grad(lax.lgamma))(0.7)) - sps.polygamma(1, 0.7)) < 1e-12
    assert lax.polygamma(2, np.float32(0.7)).dtype == np.float32


def test_numpy_logsumexp_takes_b_return_sign_where():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 4)), rng.normal(size=(4,))
    w = rng.random((3, 4)) > 0.3
    for kw in (dict(b=b), dict(b=b, return_sign=True), dict(axis=1, b=b, keepdims=True),
               dict(axis=0, where=w), dict(axis=1, b=np.abs(b), where=w, return_sign=True)):
        got = fnp.logsumexp(a, **kw)
        if "where" not in kw:  # SciPy's logsumexp has no where
            for g, wnt in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, sps.logsumexp(a, **kw)))):
                close(g, wnt)
        for g, wnt in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, jsp.logsumexp(a, **kw)))):
            close(g, wnt)
    gb = funcad.grad(lambda b: fnp.logsumexp(a, b=fnp.abs(b)))(b)
    close(gb, jax.grad(lambda b: jsp.logsumexp(a, b=jnp.abs(b)))(b))
    close(funcad.jit(lambda a, b: fnp.logsumexp(a, 1, b, return_sign=True)[1])(a, b),
          sps.logsumexp(a, 1, b, return_sign=True)[1])


# ------------------------------------------------------------ edge values ----

def test_logsumexp_with_minus_inf():
    x = np.array([[-np.inf, 0.0, 1.0], [-np.inf, -np.inf, -np.inf]])
    close(fsp.logsumexp(x, axis=1), jsp.logsumexp(x, axis=1))
    g = funcad.grad(lambda x: fsp.logsumexp(x[0]))(x)
    close(g, jax.grad(lambda x: jsp.logsumexp(x[0]))(x))
    assert np.isfinite(g).all()


def test_xlogy_family_at_zero():
    assert float(fsp.xlogy(0.0, 0.0)) == 0.0 and float(fsp.xlog1py(0.0, -1.0)) == 0.0
    assert np.isnan(fsp.xlogy(0.0, np.nan))
    for f, jf, pt in ((fsp.xlogy, jsp.xlogy, (0.0, 0.0)), (fsp.xlogy, jsp.xlogy, (0.0, 2.0)),
                      (fsp.xlog1py, jsp.xlog1py, (0.0, -0.5))):
        close(funcad.grad(f, (0, 1))(*pt), jax.grad(jf, (0, 1))(*pt))
    x = np.array([0.0, 0.5, 2.0, -1.0])
    close(fsp.entr(x), jsp.entr(x))
    close(funcad.vmap(funcad.grad(fsp.entr))(x[1:3]), jax.vmap(jax.grad(jsp.entr))(x[1:3]))
    p = np.array([0.0, 0.0, 1.0, 1.0, -1.0, 2.0, 1.0, np.nan, 1.0])
    q = np.array([0.0, 2.0, 0.0, np.inf, 1.0, 2.0 + 1e-9, 3.0, 1.0, -1.0])
    for f, jf in ((fsp.kl_div, jsp.kl_div), (fsp.rel_entr, jsp.rel_entr)):
        close(f(p, q), jf(p, q))
        close(funcad.vmap(funcad.grad(f, (0, 1)))(p, q), jax.vmap(jax.grad(jf, (0, 1)))(p, q))
    close(fsp.kl_div(p, q)[5], sps.kl_div(2.0, 2.0 + 1e-9), rtol=1e-6)


def test_log_ndtr_deep_in_the_tails():
    for dt, xs in ((np.float64, [-1e3, -100.0, -40.0, -20.5, -19.5, -5.0, 0.0, 7.5, 8.5, 30.0]),
                   (np.float32, [-100.0, -20.0, -10.5, -9.5, 0.0, 4.5, 5.5, 12.0])):
        x = np.array(xs, dt)
        got = fsp.log_ndtr(x)
        assert got.dtype == dt
        close(got, jsp.log_ndtr(x), rtol=1e-12 if dt == np.float64 else 1e-5, atol=1e-30)
        # SciPy's own algorithm differs from JAX's series by ~1e-9 at -20 and where log(ndtr) ~ -1e-14
        close(got, sps.log_ndtr(x.astype(np.float64)), rtol=2e-3, atol=1e-30)
        close(funcad.vmap(funcad.grad(fsp.log_ndtr))(x), jax.vmap(jax.grad(jsp.log_ndtr))(x),
              rtol=1e-10 if dt == np.float64 else 1e-5, atol=1e-30)
    close(fsp.log_ndtr(np.array([-30.0]), series_order=6), jsp.log_ndtr(np.array([-30.0]), series_order=6))
    with pytest.raises(FuncadValueError):
        fsp.log_ndtr(1.0, series_order=31)


def test_ndtri_tails_edges_and_derivatives():
    p = np.array([1e-300, 1e-100, 1e-20, 1e-8, 0.02, 0.3, 0.5, 0.7, 1 - 1e-9])
    close(fsp.ndtri(p), sps.ndtri(p), rtol=1e-13, atol=1e-15)
    close(fsp.ndtri(np.array([0.0, 1.0, -0.1, 1.1, np.nan])), [-np.inf, np.inf, np.nan, np.nan, np.nan])
    q = p[3:-1]
    close(funcad.vmap(funcad.grad(fsp.ndtri))(q), jax.vmap(jax.grad(jsp.ndtri))(q), rtol=1e-10)
    close(funcad.vmap(funcad.grad(funcad.grad(fsp.ndtri)))(q),
          jax.vmap(jax.grad(jax.grad(jsp.ndtri)))(q), rtol=1e-9)
    p32 = np.array([1e-30, 1e-6, 0.1, 0.5, 0.9], np.float32)
    close(fsp.ndtri(p32), jsp.ndtri(p32), rtol=2e-6, atol=1e-6)
    close(funcad.jit(fsp.ndtri)(p), sps.ndtri(p), rtol=1e-13, atol=1e-15)
    close(fsp.erfcinv(np.array([1e-200, 0.5, 1.0, 1.5, 2.0])), sps.erfcinv(np.array([1e-200, 0.5, 1.0, 1.5, 2.0])),
          rtol=1e-13, atol=1e-15)


def test_gamma_family_near_poles_and_negative():
    x = np.array([-2.5, -1.0 - 1e-9, -0.5, 1e-10, -1e-10, 0.0, -0.0, -3.0, 171.5])
    close(fsp.gammaln(x), jsp.gammaln(x), rtol=1e-9)
    close(fsp.gammasgn(x), jsp.gammasgn(x))
    close(fsp.gamma(x[:-1]), jsp.gamma(x[:-1]), rtol=1e-9)
    close(fsp.gamma(x[:-1]), sps.gamma(x[:-1]), rtol=1e-9)
    xg = np.array([-2.5, -1.0 - 1e-6, -0.5, 1e-3, 0.3])
    close(funcad.vmap(funcad.grad(fsp.gammaln))(xg), jax.vmap(jax.grad(jsp.gammaln))(xg), rtol=1e-9)
    close(funcad.vmap(funcad.grad(funcad.grad(fsp.gammaln)))(xg), jax.vmap(jax.grad(jax.grad(jsp.gammaln)))(xg),
          rtol=1e-9)
    close(fsp.loggamma(x), jsp.loggamma(x), rtol=1e-9)
    a, b = np.array([1e-3, 0.5, 10.0, 1e6, 30.0]), np.array([2.0, 1e7, 20.0, 1e6, 1e-2])
    close(fsp.betaln(a, b), jsp.betaln(a, b), rtol=1e-12)
    close(fsp.betaln(a, b), sps.betaln(a, b), rtol=1e-8)  # SciPy has one more asymptotic branch
    close(fsp.beta(np.array([-0.5, 2.5]), np.array([1.5, -1.5])), sps.beta(np.array([-0.5, 2.5]), np.array([1.5, -1.5])),
          rtol=1e-12)


def test_polygamma_orders_and_errors():
    x = np.array([0.3, 1.0, 4.5])
    n = np.array([0, 2, 3])
    close(fsp.polygamma(n, x), jsp.polygamma(n, x), rtol=1e-10)
    close(funcad.grad(lambda x: fsp.polygamma(1, x).sum())(x), jax.grad(lambda x: jsp.polygamma(1, x).sum())(x),
          rtol=1e-10)
    with pytest.raises(FuncadValueError, match="integer type"):
        fsp.polygamma(1.5, x)


def test_combinatorics():
    N, k = np.array([5.0, 5.0, 3.0, -1.0, 4.0]), np.array([2.0, 0.0, 4.0, 1.0, -1.0])
    close(fsp.comb(N, k), jsp.comb(N, k))
    close(fsp.comb(N, k, repetition=True), jsp.comb(N, k, repetition=True))
    close(fsp.factorial(np.array([-1.0, 0.0, 4.0, 4.5])), jsp.factorial(np.array([-1.0, 0.0, 4.0, 4.5])))
    with pytest.raises(FuncadValueError, match="exact"):
        fsp.factorial(3, exact=True)
    close(fsp.multigammaln(np.array([2.0, 3.5]), 2), sps.multigammaln(np.array([2.0, 3.5]), 2))
    close(fsp.poch(np.array([2.0, 0.5]), np.array([0.0, 3.0])), sps.poch(np.array([2.0, 0.5]), np.array([0.0, 3.0])))


def test_boxcox_and_logit_edges():
    close(fsp.boxcox(np.array([2.0, 2.0]), np.array([0.0, 0.5])), sps.boxcox(np.array([2.0, 2.0]), np.array([0.0, 0.5])))
    close(fsp.boxcox1p(np.array([1.0, 1.0]), np.array([0.0, 0.5])),
          sps.boxcox1p(np.array([1.0, 1.0]), np.array([0.0, 0.5])))
    close(fsp.logit(np.array([0.0, 1.0, 0.5])), [-np.inf, np.inf, 0.0])
    close(funcad.grad(fsp.logit)(0.25), 1 / (0.25 * 0.75))


# --------------------------------------------------------------- stats ----


def test_trapezoid_variants():
    import jax.scipy.integrate as jint
    import funcad.scipy.integrate as fint
    y = np.sin(np.linspace(0, 3, 12)).reshape(3, 4)
    x = np.linspace(0, 1, 4) ** 2
    close(fint.trapezoid(y), jint.trapezoid(y))
    close(fint.trapezoid(y, x), jint.trapezoid(y, x))
    close(fint.trapezoid(y, dx=0.3, axis=0), jint.trapezoid(y, dx=0.3, axis=0))
    close(fint.trapezoid(y, np.linspace(0, 1, 3), axis=0), jint.trapezoid(y, np.linspace(0, 1, 3), axis=0))
    close(funcad.grad(lambda x: fint.trapezoid(y, x).sum())(x), jax.grad(lambda x: jint.trapezoid(y, x).sum())(x))


def test_namespaces():
    import funcad
    assert funcad.scipy.special is fsp and funcad.scipy.stats is fst
    assert callable(fsp.wofz) and callable(fst.gaussian_kde)
    with pytest.raises(AttributeError):
        fsp.sph_harm  # JAX 0.12 has only sph_harm_y
    with pytest.raises(AttributeError):
        fst.kstest  # not in JAX either
