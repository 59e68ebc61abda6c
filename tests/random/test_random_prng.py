"""funcad.random bit for bit with jax.random where XLA's fusion decides the last bit.

threefry2x32 lowers on the CPU to JAX's rolled loop, so XLA fuses a sampler's float
arithmetic apart from the hash exactly as in JAX's program: float32 maxwell, the gamma
family with broadcast parameters and the others below equal JAX's bits, eagerly and under
jit (compared with JAX's jit of the same function: a parameter closed over by jit is a
constant XLA folds, in both). Typed keys under vmap count negative axes as JAX does.
"""
import numpy as np
import pytest

import jax
import jax.random as jr

import funcad
import funcad.random as fr
from funcad.core.errors import FuncadTypeError

jax.config.update("jax_enable_x64", True)

SEEDS = [0, 42, 2 ** 63 - 1]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


# (name, call(module, key, dtype)): all exact in float32 and float64
CASES = [
    ("maxwell", lambda m, k, d: m.maxwell(k, (50,), d)),
    ("double_sided_maxwell", lambda m, k, d: m.double_sided_maxwell(k, 1.0, 2.0, (50,), d)),
    ("gamma_array", lambda m, k, d: m.gamma(k, np.array([[0.3], [1.0], [7.0]], d), (3, 4), d)),
    ("gamma_scalar", lambda m, k, d: m.gamma(k, 2.5, (7,), d)),
    ("gamma_approx", lambda m, k, d: m.gamma(k, np.array([0.01, 0.7, 30.0], d), method="approximate")),
    ("loggamma", lambda m, k, d: m.loggamma(k, np.array([1e-3, 0.4, 5.0], d), (2, 3), d)),
    ("dirichlet", lambda m, k, d: m.dirichlet(k, np.array([0.5, 1.0, 3.0], d), (4,), d)),
    ("beta", lambda m, k, d: m.beta(k, np.array([0.2, 2.0, 5.0], d), np.array(1.5, d))),
    ("t", lambda m, k, d: m.t(k, np.array([1.0, 4.0, 30.0], d), (3,))),
    ("generalized_normal", lambda m, k, d: m.generalized_normal(k, 1.5, (7,), d)),
    ("ball", lambda m, k, d: m.ball(k, 3, 2, (4,), d)),
    ("weibull_min", lambda m, k, d: m.weibull_min(k, 1.0, 2.0, (50,), d)),
]
QUICK = {"maxwell", "gamma_array", "dirichlet", "ball"}


# JAX 0.6 (the oldest supported) builds some of these programs differently (dirichlet's
# softmax, ...): there the values agree to a few ulps; exactness is checked on newer JAX.
OLD_JAX = tuple(int(p) for p in jax.__version__.split(".")[:2]) < (0, 7)


def _same_or_close(a, b):
    if not OLD_JAX:
        return same(a, b)
    a, b = np.asarray(a), np.asarray(b)
    eps = np.finfo(a.dtype).eps
    np.testing.assert_allclose(a, b, rtol=8 * eps, atol=8 * eps)


def _check(call, dt):
    for seed in SEEDS:
        k, kj = fr.PRNGKey(seed), jr.PRNGKey(seed)
        _same_or_close(call(fr, k, dt), call(jr, kj, dt))
    _same_or_close(funcad.jit(lambda k: call(fr, k, dt))(k), jax.jit(lambda k: call(jr, k, dt))(kj))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name,call", [c for c in CASES if c[0] in QUICK],
                         ids=[c[0] for c in CASES if c[0] in QUICK])
def test_float_samplers_bit_exact(name, call, dt):
    _check(call, dt)


@pytest.mark.slow
@pytest.mark.parametrize("dt", [np.float32, np.float64])
@pytest.mark.parametrize("name,call", [c for c in CASES if c[0] not in QUICK],
                         ids=[c[0] for c in CASES if c[0] not in QUICK])
def test_float_samplers_bit_exact_slow(name, call, dt):
    _check(call, dt)


def test_maxwell_float32_under_jit_of_vmap():
    # (an eager funcad.vmap runs the sampler op by op on NumPy, whose log1p/sqrt round apart
    # from XLA's by an ulp; under jit the batched program is XLA's, as JAX's eager vmap is)
    keys, kjs = fr.split(fr.PRNGKey(1), 3), jr.split(jr.PRNGKey(1), 3)
    same(funcad.jit(funcad.vmap(lambda k: fr.maxwell(k, (20,), np.float32)))(keys),
         jax.vmap(lambda k: jr.maxwell(k, (20,), np.float32))(kjs))


def test_threefry_rolled_loop_bits():
    # big, batched (the key words are arrays inside the loop) and jitted-batched draws
    k, kj = fr.PRNGKey(2 ** 31 - 1), jr.PRNGKey(2 ** 31 - 1)
    same(funcad.jit(lambda k: fr.bits(k, (1000, 3), np.uint32))(k), jr.bits(kj, (1000, 3), np.uint32))
    same(funcad.jit(lambda k: fr.bits(k, (5,), np.uint64))(k), jr.bits(kj, (5,), np.uint64))
    keys, kjs = fr.split(k, 4), jr.split(kj, 4)
    same(funcad.jit(funcad.vmap(lambda k: fr.bits(k, (3, 2), np.uint32)))(keys),
         jax.vmap(lambda k: jr.bits(k, (3, 2), np.uint32))(kjs))
    same(funcad.jit(funcad.vmap(fr.split))(keys), jax.vmap(jr.split)(kjs))
    same(funcad.jit(funcad.vmap(lambda k, d: fr.fold_in(k, d)))(keys, np.arange(4, dtype=np.uint32)),
         jax.vmap(jr.fold_in)(kjs, np.arange(4, dtype=np.uint32)))
    same(funcad.jit(lambda k: fr.split(k, (2, 3)))(k), jr.split(kj, (2, 3)))


def test_threefry_lowers_to_a_loop_on_cpu():
    text = funcad.jit(lambda k: fr.uniform(k, (4,))).lower(fr.PRNGKey(0)).as_text()
    assert text.count('"stablehlo.while"') == 1


@pytest.mark.skipif("method" not in __import__("inspect").signature(jr.poisson).parameters,
                    reason="this JAX has no method='approximate'")
def test_poisson_approximate_float32_rate():
    lam = np.array([0.4, 6.9, 7.0, 80.0, 3e6], np.float32)
    for seed in SEEDS:
        same(fr.poisson(fr.PRNGKey(seed), lam, (2, 5), method="approximate"),
             jr.poisson(jr.PRNGKey(seed), lam, (2, 5), method="approximate"))


# ------------------------------------------------------- typed keys under vmap ----

FNS = [("identity", lambda m: lambda k: k),
       ("fold_in", lambda m: lambda k: m.fold_in(k[1], 1)),
       ("split", lambda m: lambda k: m.split(k[0], 2))]


@pytest.mark.parametrize("out_axes", [0, 1, -1, -2])
@pytest.mark.parametrize("in_axes", [0, 1, -1, -2])
@pytest.mark.parametrize("name,fn", FNS, ids=[f[0] for f in FNS])
def test_typed_keys_vmap_axes(name, fn, in_axes, out_axes):
    ks, kjs = fr.split(fr.key(0), (3, 4)), jr.split(jr.key(0), (3, 4))
    try:
        want = jax.vmap(fn(jr), in_axes=in_axes, out_axes=out_axes)(kjs)
    except ValueError:
        with pytest.raises(FuncadTypeError, match="out of range for a key array"):
            funcad.vmap(fn(fr), in_axes=in_axes, out_axes=out_axes)(ks)
        return
    got = funcad.vmap(fn(fr), in_axes=in_axes, out_axes=out_axes)(ks)
    assert got.shape == want.shape and str(got.dtype) == "key<fry>"
    same(fr.key_data(got), jr.key_data(want))


def test_typed_keys_vmap_axes_in_containers_and_errors():
    ks, kjs = fr.split(fr.key(3), (2, 5)), jr.split(jr.key(3), (2, 5))
    x = np.arange(10.0).reshape(2, 5)
    f = lambda m: lambda kx: m.normal(kx[0][0]) + kx[1][0]
    # jitted: an eager funcad.vmap runs normal's erf_inv op by op on NumPy (an ulp apart)
    same(funcad.jit(funcad.vmap(f(fr), in_axes=((-1, -1),)))((ks, x)),
         jax.vmap(f(jr), in_axes=((-1, -1),))((kjs, x)))
    same(funcad.jit(funcad.vmap(f(fr), in_axes=-1))((ks, x)), jax.vmap(f(jr), in_axes=-1)((kjs, x)))
    with pytest.raises(FuncadTypeError, match=r"in_axes=-3 is out of range for a key array of shape \(2, 5\)"):
        funcad.vmap(lambda k: k, in_axes=-3)(ks)
    with pytest.raises(FuncadTypeError, match="in_axes=2 is out of range for a key array"):
        funcad.vmap(lambda k: k, in_axes=2)(ks)
    # raw uint32 keys are plain arrays: their last axis is an ordinary one
    raw = fr.key_data(ks)
    same(funcad.vmap(lambda k: k, in_axes=-1)(raw), jax.vmap(lambda k: k, in_axes=-1)(jr.key_data(kjs)))


def test_key_arrays_are_funcad_arrays_as_in_jax():
    for make, jmake in ((fr.key, jr.key), (fr.PRNGKey, jr.PRNGKey)):
        assert isinstance(make(0), funcad.Array) and isinstance(jmake(0), jax.Array)
    assert isinstance(funcad.jit(fr.split)(fr.key(0)), funcad.Array)
    assert not isinstance(fr.key(0), np.ndarray)
