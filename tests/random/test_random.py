"""funcad.random against jax.random (x64): keys, bits, samplers, transforms, errors, statistics.

Exact (bit-for-bit) everywhere except where noted: eager calls of samplers run as one
compiled program, as JAX's do, so they match JAX's bits; `cauchy` (funcad's tan is
sin/cos, XLA's is its own) and float32 `maxwell`/`double_sided_maxwell` (XLA fuses the
two programs differently) are compared to a few ulps, as are jitted float32 normals.
"""
import numpy as np
import pytest
import scipy.stats as st

import jax
import jax.random as jr

import funcad
import funcad.random as fr

jax.config.update("jax_enable_x64", True)

SEEDS = [0, 1, 42, 2 ** 31 - 1, 2 ** 63 - 1]
FLOATS = [np.float16, np.float32, np.float64]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    np.testing.assert_array_equal(a, b)


def close(a, b, rtol=None):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    tol = rtol or {2: 4e-3, 4: 3e-6}.get(a.dtype.itemsize, 1e-12)
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=tol, atol=tol)


@pytest.mark.parametrize("seed", SEEDS + [-1, np.int32(-1), np.uint32(7), np.int8(-3)])
def test_key_from_seed(seed):
    same(fr.PRNGKey(seed), jr.PRNGKey(seed))
    if isinstance(seed, int):
        same(funcad.jit(fr.PRNGKey)(np.int64(seed)), jr.PRNGKey(seed))


@pytest.mark.parametrize("seed", SEEDS)
def test_split_fold_in_bits(seed):
    k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
    same(fr.split(k), jr.split(kj))
    same(fr.split(k, (2, 3)), jr.split(kj, (2, 3)))
    same(fr.split(k, 0), jr.split(kj, 0))
    same(fr.fold_in(k, 7), jr.fold_in(kj, 7))
    same(fr.fold_in(k, np.uint32(2 ** 32 - 1)), jr.fold_in(kj, np.uint32(2 ** 32 - 1)))
    for dt in (np.uint8, np.uint16, np.uint32, np.uint64):
        same(fr.bits(k, (3, 5), dt), jr.bits(kj, (3, 5), dt))
    same(fr.bits(k), jr.bits(kj))
    same(funcad.jit(lambda k: fr.split(k, 4))(k), jr.split(kj, 4))
    same(funcad.jit(lambda k, d: fr.fold_in(k, d))(k, np.uint32(9)), jr.fold_in(kj, 9))


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("seed", SEEDS)
def test_uniform_normal_exact(seed, dt):
    k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
    for shape in [(), (7,), (3, 4)]:
        same(fr.uniform(k, shape, dt), jr.uniform(kj, shape, dt))
        same(funcad.jit(lambda k: fr.uniform(k, shape, dt, -2.5, 3.0))(k), jr.uniform(kj, shape, dt, -2.5, 3.0))
        same(fr.uniform(k, shape, dt, -2.5, 3.0), jr.uniform(kj, shape, dt, -2.5, 3.0))
        same(fr.normal(k, shape, dt), jr.normal(kj, shape, dt))
        jitted = np.asarray(funcad.jit(lambda k: fr.normal(k, shape, dt))(k))
        if dt == np.float32:  # XLA's codegen may differ by one ulp between the two programs
            close(jitted, jr.normal(kj, shape, dt), 2e-7)
        else:
            same(jitted, jr.normal(kj, shape, dt))


def test_bfloat16_uniform_normal_eager():
    import jax.numpy as jnp
    k, kj = fr.PRNGKey(3), jr.PRNGKey(3)
    same(fr.uniform(k, (9,), jnp.bfloat16), jr.uniform(kj, (9,), jnp.bfloat16))
    same(fr.normal(k, (9,), jnp.bfloat16), jr.normal(kj, (9,), jnp.bfloat16))


@pytest.mark.parametrize("dt", [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint32, np.uint64])
@pytest.mark.parametrize("seed", SEEDS)
def test_randint_exact(seed, dt):
    k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
    same(fr.randint(k, (11,), 0, 100, dt), jr.randint(kj, (11,), 0, 100, dt))
    same(fr.randint(k, (11,), -1000, 2 ** 40, dt), jr.randint(kj, (11,), -1000, 2 ** 40, dt))
    same(funcad.jit(lambda k: fr.randint(k, (2, 3), 5, 9, dt))(k), jr.randint(kj, (2, 3), 5, 9, dt))


# (name, funcad call, jax call, exact eagerly)
SAMPLERS = [
    ("bernoulli", lambda m, k, d: m.bernoulli(k, 0.3, (50,)), True),
    ("bernoulli_high", lambda m, k, d: m.bernoulli(k, np.asarray(0.3, d), (50,), mode="high"), True),
    ("exponential", lambda m, k, d: m.exponential(k, (50,), d), True),
    ("gumbel", lambda m, k, d: m.gumbel(k, (50,), d), True),
    ("gumbel_high", lambda m, k, d: m.gumbel(k, (50,), d, mode="high"), True),
    ("laplace", lambda m, k, d: m.laplace(k, (50,), d), True),
    ("logistic", lambda m, k, d: m.logistic(k, (50,), d), True),
    ("cauchy", lambda m, k, d: m.cauchy(k, (50,), d), False),
    ("lognormal", lambda m, k, d: m.lognormal(k, 0.5, (50,), d), True),
    ("pareto", lambda m, k, d: m.pareto(k, 3.0, (50,), d), True),
    ("rayleigh", lambda m, k, d: m.rayleigh(k, 2.0, (50,), d), True),
    ("weibull_min", lambda m, k, d: m.weibull_min(k, 1.0, 2.0, (50,), d), True),
    ("triangular", lambda m, k, d: m.triangular(k, 0.0, 0.3, 1.0, (50,), d), True),
    ("wald", lambda m, k, d: m.wald(k, 1.5, (50,), d), True),
    ("truncated_normal", lambda m, k, d: m.truncated_normal(k, -1.0, 2.0, (50,), d), True),
    ("maxwell", lambda m, k, d: m.maxwell(k, (50,), d), False),
    ("double_sided_maxwell", lambda m, k, d: m.double_sided_maxwell(k, 1.0, 2.0, (50,), d), False),
    ("rademacher", lambda m, k, d: m.rademacher(k, (50,)), True),
    ("geometric", lambda m, k, d: m.geometric(k, 0.3, (50,)), True),
    ("categorical", lambda m, k, d: m.categorical(k, np.log(np.array([0.2, 0.5, 0.3], d)), shape=(50,)), True),
    ("categorical_noreplace", lambda m, k, d: m.categorical(k, np.zeros((4, 6), d), axis=-1, shape=(3, 4),
                                                              replace=False), True),
    ("choice", lambda m, k, d: m.choice(k, 10, (20,)), True),
    ("choice_noreplace", lambda m, k, d: m.choice(k, np.arange(10.0), (6,), replace=False), True),
    ("choice_p", lambda m, k, d: m.choice(k, 5, (20,), p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], d)), True),
    ("choice_p_noreplace", lambda m, k, d: m.choice(k, 5, (3,), replace=False,
                                                       p=np.array([0.1, 0.2, 0.3, 0.2, 0.2], d)), True),
    ("permutation", lambda m, k, d: m.permutation(k, 20), True),
    ("permutation_array", lambda m, k, d: m.permutation(k, np.arange(12.0).reshape(3, 4), axis=1), True),
    ("permutation_independent", lambda m, k, d: m.permutation(k, np.arange(12.0).reshape(3, 4), 1, True), True),
]


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name,call,exact", SAMPLERS, ids=[s[0] for s in SAMPLERS])
def test_sampler_matches_jax(name, call, exact, dt):
    for seed in (0, 2 ** 63 - 1):
        k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
        want = call(jr, kj, dt)
        got = call(fr, k, dt)
        jitted = funcad.jit(lambda k: call(fr, k, dt))(k)
        if exact:
            same(got, want)
            if dt == np.float32:  # XLA may fuse a closed-over program differently by one ulp
                close(jitted, want, 2e-7)
            else:
                same(jitted, want)
        else:
            close(got, want, 1e-5 if dt == np.float32 else 1e-10)
            close(jitted, want, 1e-5 if dt == np.float32 else 1e-10)


def test_vmap_over_split_keys_and_scan_carry():
    keys, kj = fr.split(fr.PRNGKey(0), 8), jr.split(jr.PRNGKey(0), 8)
    want = jax.vmap(lambda k: jr.normal(k, (3,)))(kj)
    close(funcad.vmap(lambda k: fr.normal(k, (3,)))(keys), want)
    same(funcad.jit(funcad.vmap(lambda k: fr.normal(k, (3,))))(keys), want)
    same(funcad.vmap(lambda k: fr.randint(k, (4,), 0, 9))(keys), jax.vmap(lambda k: jr.randint(k, (4,), 0, 9))(kj))
    same(funcad.vmap(fr.split)(keys), jax.vmap(jr.split)(kj))

    def body(f, r):
        def step(k, _):
            k, sub = r.split(k)
            return k, r.uniform(sub, (2,))
        return step
    kf, outs = funcad.lax.scan(body(None, fr), fr.PRNGKey(1), None, length=5)
    kj2, outj = jax.lax.scan(body(None, jr), jr.PRNGKey(1), None, length=5)
    same(kf, kj2)
    same(outs, outj)
    same(funcad.lax.fori_loop(0, 4, lambda i, k: fr.fold_in(k, i), fr.PRNGKey(2)),
         jax.lax.fori_loop(0, 4, lambda i, k: jr.fold_in(k, i), jr.PRNGKey(2)))


def test_reparameterised_gradients():
    k, kj = fr.PRNGKey(5), jr.PRNGKey(5)
    f = lambda r, key: lambda lo, hi: (r.uniform(key, (6,), minval=lo, maxval=hi) ** 2).sum()
    close(funcad.grad(f(fr, k), argnums=(0, 1))(0.5, 2.0), jax.grad(f(jr, kj), argnums=(0, 1))(0.5, 2.0), 1e-12)
    g = lambda r, key: lambda mu, s: (mu + s * r.normal(key, (6,))).sum() ** 2
    close(funcad.grad(g(fr, k), argnums=(0, 1))(0.5, 2.0), jax.grad(g(jr, kj), argnums=(0, 1))(0.5, 2.0), 1e-9)


def test_errors_match_jax():
    k = fr.PRNGKey(0)
    with pytest.raises(TypeError, match="unexpected PRNG key type"):
        fr.normal([0, 0], (2,))
    with pytest.raises(TypeError, match="shape to end with"):
        fr.normal(np.zeros(3, np.uint32), (2,))
    with pytest.raises(TypeError, match="dtype = uint32"):
        fr.normal(np.zeros(2, np.int32), (2,))
    with pytest.raises(ValueError, match="single key"):
        fr.normal(fr.split(k), (2,))
    with pytest.raises(ValueError, match="negative"):
        fr.normal(k, (-1,))
    with pytest.raises(ValueError, match="must be a float"):
        fr.uniform(k, (2,), np.int32)
    with pytest.raises(ValueError, match="unsigned"):
        fr.bits(k, (2,), np.int32)
    with pytest.raises(TypeError, match="integer dtypes"):
        fr.randint(k, (2,), 0, 5, np.float32)
    with pytest.raises(OverflowError):
        fr.fold_in(k, -1)
    with pytest.raises(TypeError, match="must be an integer"):
        fr.PRNGKey(2.0)
    with pytest.raises(TypeError, match="scalar seed"):
        fr.PRNGKey(np.zeros(2, int))
    with pytest.raises(ValueError, match="broadcast-compatible"):
        fr.bernoulli(k, np.full(3, 0.5), (2,))
    with pytest.raises(ValueError, match="larger sample"):
        fr.choice(k, 3, (5,), replace=False)


def test_eager_normal_is_vectorised():
    import time
    k = fr.PRNGKey(0)
    t = time.perf_counter()
    x = fr.normal(k, (1_000_000,))
    assert time.perf_counter() - t < 5.0 and x.shape == (1_000_000,)


# ------------------------------------------------------------- statistics ----

DISTS = [
    ("uniform", lambda k: fr.uniform(k, (20000,)), st.uniform()),
    ("normal", lambda k: fr.normal(k, (20000,)), st.norm()),
    ("exponential", lambda k: fr.exponential(k, (20000,)), st.expon()),
    ("gumbel", lambda k: fr.gumbel(k, (20000,)), st.gumbel_r()),
    ("laplace", lambda k: fr.laplace(k, (20000,)), st.laplace()),
    ("logistic", lambda k: fr.logistic(k, (20000,)), st.logistic()),
    ("cauchy", lambda k: fr.cauchy(k, (20000,)), st.cauchy()),
    ("lognormal", lambda k: fr.lognormal(k, 0.5, (20000,)), st.lognorm(0.5)),
    ("pareto", lambda k: fr.pareto(k, 3.0, (20000,)), st.pareto(3.0)),
    ("rayleigh", lambda k: fr.rayleigh(k, 2.0, (20000,)), st.rayleigh(scale=2.0)),
    ("weibull_min", lambda k: fr.weibull_min(k, 1.0, 2.0, (20000,)), st.weibull_min(2.0)),
    ("triangular", lambda k: fr.triangular(k, 0.0, 0.3, 1.0, (20000,)), st.triang(0.3)),
    ("wald", lambda k: fr.wald(k, 1.5, (20000,)), st.invgauss(1.5)),
    ("truncated_normal", lambda k: fr.truncated_normal(k, -1.0, 2.0, (20000,)), st.truncnorm(-1.0, 2.0)),
    ("maxwell", lambda k: fr.maxwell(k, (20000,)), st.maxwell()),
]


@pytest.mark.parametrize("name,draw,dist", DISTS, ids=[d[0] for d in DISTS])
def test_kolmogorov_smirnov(name, draw, dist):
    x = np.asarray(draw(fr.PRNGKey(11)))
    assert st.kstest(x, dist.cdf).pvalue > 1e-3


def test_discrete_moments():
    k = fr.PRNGKey(4)
    assert abs(np.asarray(fr.bernoulli(k, 0.3, (20000,))).mean() - 0.3) < 0.02
    assert abs(np.asarray(fr.geometric(k, 0.3, (20000,))).mean() - 1 / 0.3) < 0.1
    assert abs(np.asarray(fr.rademacher(k, (20000,))).mean()) < 0.03
    c = np.bincount(np.asarray(fr.categorical(k, np.log([0.2, 0.5, 0.3]), shape=(20000,))), minlength=3) / 20000
    np.testing.assert_allclose(c, [0.2, 0.5, 0.3], atol=0.02)
    r = np.asarray(fr.randint(k, (20000,), 0, 10))
    assert r.min() == 0 and r.max() == 9 and abs(r.mean() - 4.5) < 0.1
    assert sorted(np.asarray(fr.permutation(k, 50)).tolist()) == list(range(50))
