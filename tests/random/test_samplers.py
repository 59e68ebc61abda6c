"""funcad.random's samplers against jax.random (x64): the gamma family and the counting samplers.

Values are compared bit for bit, except float32 `gamma`-based draws with a broadcast
scalar parameter (XLA fuses the rejection loop's float32 arithmetic differently in the
two programs: a few ulps) and float32 `maxwell`-like fusions, noted where they occur.
"""
import inspect

import numpy as np
import pytest
import scipy.stats as st

import jax
import jax.numpy as jnp
import jax.random as jr

import funcad
import funcad.numpy as fnp
import funcad.random as fr
from tests.random.compare import SEEDS, same, ulps

jax.config.update("jax_enable_x64", True)


# ------------------------------------------------------- samplers, bit for bit ----

# (name, call(module, key, dtype) -> sample, exact?): exact cases equal JAX's bits in both
# dtypes; the others agree to a few ulps (XLA fuses the loops' float arithmetic differently in
# the two programs, so a last bit can differ; a draw never takes another branch).
CASES = [
    ("gamma", lambda m, k, d: m.gamma(k, 2.5, (7,), d), False),
    ("gamma_small_a", lambda m, k, d: m.gamma(k, np.array([0.05, 0.5, 0.99], d)), False),
    ("gamma_array", lambda m, k, d: m.gamma(k, np.array([[0.3], [1.0], [7.0]], d), (3, 4), d), False),
    ("gamma_approx", lambda m, k, d: m.gamma(k, np.array([0.01, 0.7, 30.0], d), method="approximate"), False),
    ("loggamma", lambda m, k, d: m.loggamma(k, np.array([1e-3, 0.4, 5.0], d), (2, 3), d), False),
    ("loggamma_approx", lambda m, k, d: m.loggamma(k, np.array([1e-3, 0.4, 5.0], d), dtype=d,
                                                   method="approximate"), False),
    ("beta", lambda m, k, d: m.beta(k, np.array([0.2, 2.0, 5.0], d), np.array(1.5, d)), False),
    ("dirichlet", lambda m, k, d: m.dirichlet(k, np.array([0.5, 1.0, 3.0], d), (4,), d), False),
    ("chisquare", lambda m, k, d: m.chisquare(k, np.array([1.0, 3.0, 10.0], d)), False),
    ("f", lambda m, k, d: m.f(k, np.array([2.0, 5.0], d), np.array([3.0, 8.0], d)), False),
    ("t", lambda m, k, d: m.t(k, np.array([1.0, 4.0, 30.0], d), (3,)), False),  # jax 0.6 needs shape
    ("generalized_normal", lambda m, k, d: m.generalized_normal(k, 1.5, (7,), d), False),
    ("ball", lambda m, k, d: m.ball(k, 3, 2, (4,), d), False),
    ("poisson", lambda m, k, d: m.poisson(k, np.array([0.0, 0.7, 4.0, 9.99, 10.0, 60.0, 5e4], d), (3, 7)),
     True),
    ("poisson_approx", lambda m, k, d: m.poisson(k, np.array([0.4, 6.9, 7.0, 80.0, 3e6], d), (2, 5),
                                                 method="approximate"), True),
    ("binomial", lambda m, k, d: m.binomial(k, np.array([3.0, 25.0, 200.0, 4000.0]),
                                            np.array([[0.05], [0.5], [0.93]], d)), True),
    ("binomial_edges", lambda m, k, d: m.binomial(k, np.array([np.nan, -1.0, np.inf, 3.0, 3.0]),
                                                  np.array([0.5, 0.5, 0.5, np.nan, -0.1], d)), True),
    ("cauchy", lambda m, k, d: m.cauchy(k, (9,), d), True),
]
IDS = [c[0] for c in CASES]
# Samplers whose loops compile slowly: their jit/vmap checks run with -m slow.
QUICK = {"gamma", "loggamma", "gamma_approx", "poisson", "binomial", "cauchy", "t"}


# The oldest supported JAX (0.6) has no method='approximate' to compare with.
HAS_METHOD = "method" in inspect.signature(jr.gamma).parameters


def check(got, want, exact):
    if exact:
        same(got, want)
    else:
        ulps(got, want)


F32_QUICK = {"gamma", "gamma_approx", "poisson", "binomial", "cauchy"}


@pytest.mark.parametrize("dt", [np.float64, pytest.param(np.float32, marks=pytest.mark.slow),
                                pytest.param("f32", id="float32-quick")])
@pytest.mark.parametrize("name,call,exact", CASES, ids=IDS)
def test_sampler_bits_match_jax(name, call, exact, dt):
    if "approx" in name and not HAS_METHOD:
        pytest.skip("this JAX has no method='approximate'")
    if dt == "f32":  # a quick float32 subset by default; every sampler with -m slow
        if name not in F32_QUICK:
            pytest.skip("float32 of this sampler runs with -m slow")
        dt = np.float32
    for seed in SEEDS:
        check(call(fr, fr.PRNGKey(seed), dt), call(jr, jr.PRNGKey(seed), dt), exact)


def test_multinomial_matches_jax():
    p = np.array([0.1, 0.6, 0.3])
    # jax 0.6's multinomial cannot broadcast n to a batch shape: compare one draw there
    kw = dict(n=np.array([5.0, 300.0]), shape=(3, 2)) if HAS_METHOD else dict(n=300.0)
    for seed in SEEDS:
        k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
        same(fr.multinomial(k, p=p, **kw), jr.multinomial(kj, p=p, **kw))
    same(fr.poisson(k, 3.0, (9,), np.int32), jr.poisson(kj, 3.0, (9,), np.int32))


def _jit_vmap(call, exact):
    dt = np.float64
    k, kj = fr.PRNGKey(42), jr.PRNGKey(42)
    check(funcad.jit(lambda k: call(fr, k, dt))(k), call(jr, kj, dt), exact)
    keys, kjs = fr.split(k, 3), jr.split(kj, 3)
    # the batched programs may round last bits apart (jax 0.6's cauchy, t's gamma loop)
    ulps(funcad.vmap(lambda k: call(fr, k, dt))(keys), jax.vmap(lambda k: call(jr, k, dt))(kjs))


@pytest.mark.parametrize("name,call,exact", [c for c in CASES if c[0] in QUICK],
                         ids=[c[0] for c in CASES if c[0] in QUICK])
def test_sampler_jit_and_vmap_match_jax(name, call, exact):
    if "approx" in name and not HAS_METHOD:
        pytest.skip("this JAX has no method='approximate'")
    _jit_vmap(call, exact)


@pytest.mark.slow
@pytest.mark.parametrize("name,call,exact", [c for c in CASES if c[0] not in QUICK],
                         ids=[c[0] for c in CASES if c[0] not in QUICK])
def test_sampler_jit_and_vmap_match_jax_slow(name, call, exact):
    if "approx" in name and not HAS_METHOD:
        pytest.skip("this JAX has no method='approximate'")
    _jit_vmap(call, exact)


@pytest.mark.slow
@pytest.mark.parametrize("shape", [(), (1,), (5, 2)])
@pytest.mark.parametrize("dt", [np.float16, np.float32, np.float64])
def test_sampler_shapes_and_dtypes_sweep(shape, dt):
    for seed in SEEDS:
        k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
        for m_call in [lambda m, k: m.gamma(k, 0.7, shape, dt), lambda m, k: m.loggamma(k, 3.0, shape, dt),
                       lambda m, k: m.beta(k, 0.5, 0.5, shape, dt), lambda m, k: m.t(k, 3.0, shape, dt),
                       lambda m, k: m.chisquare(k, 2.0, shape, dt), lambda m, k: m.f(k, 2.0, 3.0, shape, dt),
                       lambda m, k: m.poisson(k, 12.0, shape), lambda m, k: m.binomial(k, 50, 0.2, shape, dt),
                       lambda m, k: m.cauchy(k, shape, dt),
                       lambda m, k: m.generalized_normal(k, 3.0, shape, dt)]:
            ulps(m_call(fr, k), m_call(jr, kj), 8 if dt != np.float64 else 0)


# ------------------------------------------------------------- gradients ----

@pytest.mark.parametrize("name,fn", [
    ("gamma", lambda m, k: lambda a: m.gamma(k, a).sum()),
    ("gamma_shape", lambda m, k: lambda a: (m.gamma(k, a, (4, 3)) ** 2).sum()),
    ("loggamma", lambda m, k: lambda a: m.loggamma(k, a).sum()),
    ("beta", lambda m, k: lambda a: m.beta(k, a, 2.0 * a).sum()),
    ("dirichlet", lambda m, k: lambda a: (m.dirichlet(k, a) * np.arange(3.0)).sum()),
    ("chisquare", lambda m, k: lambda a: m.chisquare(k, 2 * a).sum()),
    ("t", lambda m, k: lambda a: m.t(k, 2 * a, (3,)).sum()),
    ("generalized_normal", lambda m, k: lambda a: m.generalized_normal(k, a[0] + 1.0, (3,)).sum()),
])
def test_reparameterised_gradients_match_jax(name, fn):
    a = np.array([0.03, 0.8, 4.0])
    for seed in (0, 2 ** 63 - 1):
        got = funcad.grad(fn(fr, fr.PRNGKey(seed)))(a)
        want = jax.grad(fn(jr, jr.PRNGKey(seed)))(a)
        np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-12)


def test_gamma_gradient_under_jit_vmap_and_edges():
    k, kj = fr.PRNGKey(1), jr.PRNGKey(1)
    f = lambda m, key: lambda a: m.gamma(key, a, (5,)).sum()
    np.testing.assert_allclose(funcad.jit(funcad.grad(f(fr, k)))(1.3), jax.grad(f(jr, kj))(1.3), rtol=1e-10)
    a = np.array([0.5, 2.0, 90.0])
    np.testing.assert_allclose(funcad.vmap(funcad.grad(lambda a: fr.gamma(k, a)))(a),
                               jax.vmap(jax.grad(lambda a: jr.gamma(kj, a)))(a), rtol=1e-10)
    np.testing.assert_allclose(funcad.jvp(lambda a: fr.gamma(k, a), (a,), (np.ones(3),))[1],
                               jax.jvp(lambda a: jr.gamma(kj, a), (a,), (np.ones(3),))[1], rtol=1e-10)
    # float32 gradients, and the implicit gradient against its definition -dF/da / dF/dx
    g32 = funcad.grad(lambda a: fr.gamma(k, a, (), np.float32))(np.float32(2.5))
    assert g32.dtype == np.float32
    np.testing.assert_allclose(g32, jax.grad(lambda a: jr.gamma(kj, a, (), np.float32))(np.float32(2.5)),
                               rtol=1e-5)
    x, h = float(fr.gamma(k, 2.5)), 1e-6
    dfa = (st.gamma.cdf(x, 2.5 + h) - st.gamma.cdf(x, 2.5 - h)) / (2 * h)
    np.testing.assert_allclose(float(funcad.grad(lambda a: fr.gamma(k, a))(2.5)), -dfa / st.gamma.pdf(x, 2.5),
                               rtol=1e-6)


def test_integer_samplers_have_no_gradient():
    with pytest.raises(Exception, match="float|integer|int"):
        funcad.grad(lambda lam: fr.poisson(fr.PRNGKey(0), lam, (3,)).sum())(3.0)


# ------------------------------------------------------------ errors ----

def test_errors_match_jax():
    k = fr.PRNGKey(0)
    with pytest.raises(ValueError, match="method argument to `gamma`"):
        fr.gamma(k, 1.0, method="fast")
    with pytest.raises(ValueError, match="must be a float"):
        fr.gamma(k, 1.0, (2,), np.int32)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        fr.gamma(k, np.ones(3), (2,))
    with pytest.raises(ValueError, match="alpha.ndim >= 1"):
        fr.dirichlet(k, 1.0)
    with pytest.raises(ValueError, match="lam shape must be broadcastable"):
        fr.poisson(k, np.ones(3), (2,), method="approximate")
    with pytest.raises(ValueError, match="method argument to `poisson`"):
        fr.poisson(k, 1.0, method="x")
    with pytest.raises(TypeError, match="integer dtypes"):
        fr.poisson(k, 1.0, (2,), np.float32)
    with pytest.raises(ValueError, match="must be a float"):
        fr.binomial(k, 3, 0.5, (2,), np.int32)
    with pytest.raises(ValueError, match="broadcast-compatible"):
        fr.multinomial(k, 3.0, np.ones((2, 3)) / 3, shape=(4,))


# ------------------------------------------------------------- statistics ----

N = 20000
M = 5000  # draws for the moment checks of the loop-heavy counting samplers
DISTS = [
    ("gamma_small", lambda k: fr.gamma(k, 0.3, (N,)), st.gamma(0.3)),
    ("gamma", lambda k: fr.gamma(k, 4.0, (N,)), st.gamma(4.0)),
    ("gamma_approx", lambda k: fr.gamma(k, 2.0, (N,), method="approximate"), st.gamma(2.0)),
    ("loggamma", lambda k: np.exp(np.asarray(fr.loggamma(k, 0.8, (N,)))), st.gamma(0.8)),
    ("beta", lambda k: fr.beta(k, 0.5, 2.0, (N,)), st.beta(0.5, 2.0)),
    ("dirichlet_marginal", lambda k: np.asarray(fr.dirichlet(k, np.array([1.0, 2.0, 3.0]), (N,)))[:, 2],
     st.beta(3.0, 3.0)),
    ("chisquare", lambda k: fr.chisquare(k, 3.0, (N,)), st.chi2(3.0)),
    ("f", lambda k: fr.f(k, 4.0, 7.0, (N,)), st.f(4.0, 7.0)),
    ("t", lambda k: fr.t(k, 5.0, (N,)), st.t(5.0)),
    ("generalized_normal", lambda k: fr.generalized_normal(k, 1.5, (N,)), st.gennorm(1.5)),
    ("ball_radius", lambda k: np.linalg.norm(np.asarray(fr.ball(k, 3, 2, (N,))), axis=-1) ** 3, st.uniform()),
    ("cauchy", lambda k: fr.cauchy(k, (N,)), st.cauchy()),
]


@pytest.mark.parametrize("name,draw,dist", DISTS, ids=[d[0] for d in DISTS])
def test_kolmogorov_smirnov(name, draw, dist):
    x = np.asarray(draw(fr.PRNGKey(11)))
    assert st.kstest(x, dist.cdf).pvalue > 1e-3


def test_counting_moments():
    k = fr.PRNGKey(5)
    lam = np.array([[0.5], [6.0], [40.0]])
    for method in ("exact", "approximate"):
        x = np.asarray(fr.poisson(k, lam, (3, M), method=method))
        assert np.all(np.abs(x.mean(1) - lam[:, 0]) < 4 * np.sqrt(lam[:, 0] / M))
        assert np.all(np.abs(x.var(1) / lam[:, 0] - 1) < 0.1)
    n, p = np.array([[10.0], [500.0]]), np.array([[0.3], [0.7]])
    x = np.asarray(fr.binomial(k, n, p, (2, M)))
    n, p = n[:, 0], p[:, 0]
    assert np.all(x >= 0) and np.all(x <= n[:, None]) and np.all(x == np.round(x))
    assert np.all(np.abs(x.mean(1) - n * p) < 4 * np.sqrt(n * p * (1 - p) / M))
    assert np.all(np.abs(x.var(1) / (n * p * (1 - p)) - 1) < 0.1)
    m = np.asarray(fr.multinomial(k, 20.0, np.array([0.2, 0.3, 0.5]), shape=(M,)))
    assert np.all(m.sum(-1) == 20)
    np.testing.assert_allclose(m.mean(0), [4.0, 6.0, 10.0], atol=0.2)
    b = np.asarray(fr.ball(k, 4, 1.0, (1000,)))
    assert np.all(np.abs(b).sum(-1) <= 1.0)


def test_typed_keys_in_every_sampler():
    k, kj = fr.key(9), jr.key(9)
    for call in [lambda m, k: m.poisson(k, 3.0, (3,)), lambda m, k: m.binomial(k, 9, 0.4, (3,)),
                 lambda m, k: m.cauchy(k, (3,))]:
        same(call(fr, k), call(jr, kj))
    ulps(fr.gamma(k, 0.5, (3,)), jr.gamma(kj, 0.5, (3,)))


def test_tan_primitive_matches_xla():
    x = np.linspace(-1.5, 1.5, 101)
    same(funcad.jit(fnp.tan)(x), jax.jit(jnp.tan)(x))
    same(funcad.jit(fnp.tan)(x.astype(np.float32)), jax.jit(jnp.tan)(x.astype(np.float32)))
    np.testing.assert_allclose(funcad.grad(fnp.tan)(0.7), 1 / np.cos(0.7) ** 2, rtol=1e-14)
    np.testing.assert_allclose(funcad.grad(funcad.grad(fnp.tan))(0.7), 2 * np.tan(0.7) / np.cos(0.7) ** 2,
                               rtol=1e-13)


# ------------------------------------------------ samplers on decompositions ----

COV = np.array([[2.0, 0.3, 0.1], [0.3, 1.0, 0.2], [0.1, 0.2, 0.5]])


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_orthogonal_and_multivariate_normal_match_jax(dt):
    for seed in SEEDS:
        k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
        same(fr.orthogonal(k, 4, (2,), dt), jr.orthogonal(kj, 4, (2,), dt))
        same(fr.orthogonal(k, 2, (), dt, m=5), jr.orthogonal(kj, 2, (), dt, m=5))
        same(fr.orthogonal(k, 5, (), dt, m=2), jr.orthogonal(kj, 5, (), dt, m=2))
        for method in ("cholesky", "eigh", "svd"):
            ulps(fr.multivariate_normal(k, np.ones(3, dt), COV.astype(dt), (4,), method=method),
                 jr.multivariate_normal(kj, np.ones(3, dt), COV.astype(dt), (4,), method=method))
    k, kj = fr.PRNGKey(1), jr.PRNGKey(1)
    ulps(funcad.jit(lambda k: fr.multivariate_normal(k, np.ones(3), COV, (2,)))(k),
         jr.multivariate_normal(kj, np.ones(3), COV, (2,)))
    ulps(funcad.vmap(lambda k: fr.orthogonal(k, 3))(fr.split(k, 3)),
         jax.vmap(lambda k: jr.orthogonal(k, 3))(jr.split(kj, 3)))
    g = lambda m, key: lambda c: m.multivariate_normal(key, np.zeros(3), c @ c.T, (2,)).sum()
    np.testing.assert_allclose(funcad.grad(g(fr, k))(np.linalg.cholesky(COV)),
                               jax.grad(g(jr, kj))(np.linalg.cholesky(COV)), rtol=1e-12, atol=1e-14)


def test_orthogonal_and_multivariate_normal_statistics():
    k = fr.PRNGKey(2)
    q = np.asarray(fr.orthogonal(k, 4, (50,)))
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(4), (50, 4, 4)), atol=1e-12)
    # Haar: a fixed vector maps to a uniform point of the sphere, so its first coordinate
    # squared is Beta(1/2, 3/2) in dimension 4.
    x = np.asarray(fr.orthogonal(k, 4, (4000,)))[:, 0, 0] ** 2
    assert st.kstest(x, st.beta(0.5, 1.5).cdf).pvalue > 1e-3
    s = np.asarray(fr.multivariate_normal(k, np.array([1.0, -1.0, 0.0]), COV, (N,), method="eigh"))
    np.testing.assert_allclose(s.mean(0), [1.0, -1.0, 0.0], atol=0.05)
    np.testing.assert_allclose(np.cov(s.T), COV, atol=0.06)
    z = (s[:, 0] - 1.0) / np.sqrt(COV[0, 0])
    assert st.kstest(z, st.norm().cdf).pvalue > 1e-3
    with pytest.raises(ValueError, match="method must be one of"):
        fr.multivariate_normal(k, np.zeros(2), np.eye(2), method="qr")
    with pytest.raises(ValueError, match=r"cov.shape == \(..., n, n\)"):
        fr.multivariate_normal(k, np.zeros(2), np.eye(3))


def test_samplers_do_not_warn_about_their_own_dtypes_with_x64_off():
    import warnings
    with funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        k = funcad.random.key(0)
        c = funcad.random.choice(k, fnp.asarray([5, 10, 20]), p=fnp.asarray([0.1, 0.8, 0.1]))
        r = funcad.random.randint(k, (3,), 0.0, 5.0)
        g = funcad.random.binomial(k, 5, fnp.asarray([0, 1]), (2,))
    import jax.experimental  # older JAX has the scope only there
    with jax.enable_x64(False) if hasattr(jax, "enable_x64") else jax.experimental.disable_x64():
        jk = jax.random.key(0)
        np.testing.assert_array_equal(c, jax.random.choice(jk, jnp.asarray([5, 10, 20]), p=jnp.asarray([0.1, 0.8, 0.1])))
    assert r.dtype == np.int32 and g.dtype == np.float32
