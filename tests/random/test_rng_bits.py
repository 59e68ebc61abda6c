"""lax.rng_bit_generator / rng_uniform, the rbg and unsafe_rbg PRNG implementations and the
threefry_partitionable option, against JAX's bits."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.random as fr
from funcad import lax
from funcad.primitives._xla_rng import xla_rng_bits

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.random as jr  # noqa: E402
from jax import lax as jlax  # noqa: E402

ALGS = [0, 1, 2]
UINTS = [np.uint8, np.uint16, np.uint32, np.uint64]
SHAPES = [(), (1,), (5,), (4,), (3, 5), (5, 3, 2), (3, 1, 7), (0,)]
IMPLS = ["threefry2x32", "rbg", "unsafe_rbg"]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    np.testing.assert_array_equal(a, b)


def jax_rbg(key, shape, dtype, alg):
    return jlax.rng_bit_generator(key, shape, dtype, jlax.RandomAlgorithm(alg))


# ------------------------------------------------------- rng_bit_generator ----

@pytest.mark.parametrize("alg", ALGS)
@pytest.mark.parametrize("dtype", UINTS, ids=lambda d: np.dtype(d).name)
def test_numpy_algorithm_is_xlas(alg, dtype):
    rs = np.random.RandomState(alg)
    for shape in SHAPES:
        key = rs.randint(0, 2 ** 32, size=4, dtype=np.uint64).astype(np.uint32)
        for got, want in zip(xla_rng_bits(key, shape, dtype, alg), jax_rbg(key, shape, dtype, alg)):
            same(got, want)


def test_philox_counter_carries_into_the_high_word():
    key = np.array([5, 6, 0xFFFFFFFF, 0xFFFFFFFF], np.uint32)  # counter 2**64 - 1
    for got, want in zip(xla_rng_bits(key, (9,), np.uint32, 2), jax_rbg(key, (9,), np.uint32, 2)):
        same(got, want)


@pytest.mark.parametrize("alg", ALGS)
def test_eager_jit_and_jax_agree(alg):
    key = np.array([1, 2, 3, 4], np.uint32)
    for dtype in UINTS:
        want = jax_rbg(key, (3, 5), dtype, alg)
        eager = lax.rng_bit_generator(key, (3, 5), dtype, lax.RandomAlgorithm(alg))
        jitted = funcad.jit(lambda k: lax.rng_bit_generator(k, (3, 5), dtype, alg))(key)
        for e, j, w in zip(eager, jitted, want):
            same(e, w)
            same(j, w)


def test_uint64_state_is_accepted():
    key = np.array([7, 9], np.uint64)
    want = jax_rbg(key, (4,), np.uint32, 1)
    for got in (lax.rng_bit_generator(key, (4,), np.uint32, 1),
                funcad.jit(lambda k: lax.rng_bit_generator(k, (4,), np.uint32, 1))(key)):
        same(got[0], want[0])
        same(got[1], want[1])


@pytest.mark.parametrize("alg", [1, 2])
def test_vmap_is_jaxs_rule(alg):
    keys = np.arange(12, dtype=np.uint32).reshape(3, 4)
    f = lambda k: lax.rng_bit_generator(k, (2,), np.uint32, alg)
    want = jax.vmap(lambda k: jax_rbg(k, (2,), np.uint32, alg))(keys)
    for got in (funcad.vmap(f)(keys), funcad.jit(funcad.vmap(f))(keys)):
        same(got[0], want[0])  # only the first key advances
        same(got[1], want[1])  # every row drawn from the first key
    # batched along another axis
    same(funcad.vmap(f, in_axes=1)(keys.T)[1], want[1])


def test_rng_bit_generator_has_no_derivative_and_prints():
    key = np.array([1, 2, 3, 4], np.uint32)
    f = lambda x: x * lax.rng_bit_generator(key, (3,), np.uint32, 1)[1].astype(np.float64)
    np.testing.assert_array_equal(funcad.jacfwd(f)(2.0), lax.rng_bit_generator(key, (3,), np.uint32, 1)[1])
    src = funcad.to_python(funcad.make_jaxpr(lambda k: lax.rng_bit_generator(k, (2,), np.uint8, 2))(key))
    scope = {}
    exec(src, scope)
    fn = [v for k, v in scope.items() if callable(v) and not k.startswith("_") and k != "np"][-1]
    for got, want in zip(fn(key), jax_rbg(key, (2,), np.uint8, 2)):
        same(got, want)


def test_rng_bit_generator_errors():
    key = np.array([1, 2, 3, 4], np.uint32)
    with pytest.raises(TypeError, match="unsupported dtype int32"):
        lax.rng_bit_generator(key, (2,), np.int32)
    with pytest.raises(TypeError, match="unknown algorithm 7"):
        lax.rng_bit_generator(key, (2,), np.uint32, 7)
    with pytest.raises(TypeError, match=r"uint32\[4\]"):
        lax.rng_bit_generator(np.array([1, 2], np.uint32), (2,))
    assert str(lax.RandomAlgorithm.RNG_PHILOX) == "RNG_PHILOX"
    assert [a.value for a in lax.RandomAlgorithm] == [a.value for a in jlax.RandomAlgorithm]


def test_out_sharding_lays_out_the_bits():
    from funcad.sharding import SingleDeviceSharding
    key = np.array([1, 2, 3, 4], np.uint32)
    s = SingleDeviceSharding(funcad.devices("cpu")[0])
    _, b = funcad.jit(lambda k: lax.rng_bit_generator(k, (4,), np.uint32, 1, out_sharding=s))(key)
    same(b, jax_rbg(key, (4,), np.uint32, 1)[1])


# -------------------------------------------------------------- rng_uniform ----

def test_rng_uniform_draws_in_range_and_differs_per_call():
    for a, b in [(np.float32(-2), np.float32(3)), (0.0, 1.0), (np.int32(3), np.int32(9))]:
        x = np.asarray(lax.rng_uniform(a, b, (2000,)))
        assert x.dtype == np.asarray(a).dtype and x.shape == (2000,)
        assert x.min() >= a and x.max() < b
        assert abs(x.mean() - (a + b - (1 if x.dtype.kind == "i" else 0)) / 2) < 0.2
    f = funcad.jit(lambda a: lax.rng_uniform(a, 1.0, (1000,)))
    x, y = np.asarray(f(0.0)), np.asarray(f(0.0))
    assert not np.array_equal(x, y)  # stateful: never folded or cached into a constant
    assert 0 <= x.min() and x.max() < 1 and abs(x.mean() - 0.5) < 0.05
    g = funcad.jit(lambda: (lax.rng_uniform(0.0, 1.0, (50,)), lax.rng_uniform(0.0, 1.0, (50,))))
    u, v = g()
    assert not np.array_equal(u, v)  # two draws are two draws (not merged)


def test_rng_uniform_vmap_grad_and_errors():
    lo = np.array([0.0, 10.0, 20.0])
    x = np.asarray(funcad.vmap(lambda a: lax.rng_uniform(a, a + 1.0, (500,)))(lo))
    assert x.shape == (3, 500)
    assert (x >= lo[:, None]).all() and (x < lo[:, None] + 1).all()
    xi = np.asarray(funcad.vmap(lambda a: lax.rng_uniform(a, a + 3, (400,)))(np.array([0, 5], np.int64)))
    assert set(np.unique(xi[0])) == {0, 1, 2} and set(np.unique(xi[1])) == {5, 6, 7}
    with pytest.raises(ValueError, match="rng_uniform has no derivative"):
        funcad.grad(lambda a: lax.rng_uniform(a, 2.0, ()))(1.0)
    with pytest.raises(TypeError, match="one dtype"):
        lax.rng_uniform(np.float32(0), np.float64(1), (2,))
    with pytest.raises(TypeError, match="scalars"):
        lax.rng_uniform(np.zeros(2), np.ones(2), (2,))


# ------------------------------------------------------ rbg, unsafe_rbg keys ----

SEEDS = [0, 1, 42, 2 ** 31 - 1, 2 ** 63 - 1]


@pytest.mark.parametrize("impl", IMPLS)
def test_keys_split_fold_in_match_jax(impl):
    for seed in SEEDS:
        fk, jk = fr.key(seed, impl=impl), jr.key(seed, impl=impl)
        assert str(fk.dtype) == str(jk.dtype) and fk.shape == jk.shape
        same(fr.key_data(fk), jr.key_data(jk))
        same(fr.PRNGKey(seed, impl=impl), jr.PRNGKey(seed, impl=impl))
        same(fr.key_data(fr.split(fk, (3, 2))), jr.key_data(jr.split(jk, (3, 2))))
        same(fr.key_data(fr.fold_in(fk, 7)), jr.key_data(jr.fold_in(jk, 7)))
        assert fr.key_impl(fk) == str(jr.key_impl(jk)) == impl


@pytest.mark.parametrize("impl", IMPLS)
def test_bits_match_jax(impl):
    fk, jk = fr.key(3, impl=impl), jr.key(3, impl=impl)
    for dtype in ["uint8", "uint16", "uint32", "uint64"]:
        for shape in [(), (5,), (2, 3)]:
            same(fr.bits(fk, shape, dtype), jr.bits(jk, shape, dtype))


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_samplers_match_jax(impl):
    fk, jk = fr.key(42, impl=impl), jr.key(42, impl=impl)
    same(fr.uniform(fk, (7,)), jr.uniform(jk, (7,)))
    same(fr.uniform(fk, (3, 2), np.float32, -1.0, 2.0), jr.uniform(jk, (3, 2), np.float32, -1.0, 2.0))
    same(fr.normal(fk, (2, 3), np.float32), jr.normal(jk, (2, 3), np.float32))
    same(fr.normal(fk, (4,)), jr.normal(jk, (4,)))
    same(fr.randint(fk, (5,), 0, 100), jr.randint(jk, (5,), 0, 100))
    same(fr.randint(fk, (3,), -5, 5, np.int32), jr.randint(jk, (3,), -5, 5, np.int32))
    same(fr.bernoulli(fk, 0.3, (6,)), jr.bernoulli(jk, 0.3, (6,)))
    same(fr.permutation(fk, 10), jr.permutation(jk, 10))
    same(fr.permutation(fk, np.arange(12.0).reshape(3, 4), axis=1, independent=True),
         jr.permutation(jk, np.arange(12.0).reshape(3, 4), axis=1, independent=True))
    same(fr.gamma(fk, np.array([2.5, 0.3, 1.0]), (3,)), jr.gamma(jk, np.array([2.5, 0.3, 1.0]), (3,)))


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_raw_keys_follow_the_default_impl(impl):
    jax.config.update("jax_default_prng_impl", impl)
    try:
        with funcad.default_prng_impl(impl):
            fk, jk = fr.PRNGKey(5), jr.PRNGKey(5)
            same(fk, jk)
            same(fr.split(fk), jr.split(jk))
            same(fr.normal(fk, (3,)), jr.normal(jk, (3,)))
            assert str(fr.key(0).dtype) == str(jr.key(0).dtype)
        funcad.config.update("jax_default_prng_impl", impl)
        try:
            same(fr.uniform(fr.PRNGKey(1), (2,)), jr.uniform(jr.PRNGKey(1), (2,)))
        finally:
            funcad.config.update("default_prng_impl", "threefry2x32")
    finally:
        jax.config.update("jax_default_prng_impl", "threefry2x32")
    assert fr.PRNGKey(5).shape == (2,)


@pytest.mark.parametrize("impl", ["rbg", "unsafe_rbg"])
def test_transforms_with_rbg_keys(impl):
    fk, jk = fr.key(11, impl=impl), jr.key(11, impl=impl)
    fks, jks = fr.split(fk, 4), jr.split(jk, 4)
    # under jit, bit for bit
    same(funcad.jit(lambda k: fr.normal(k, (3,)))(fk), jr.normal(jk, (3,)))
    same(funcad.jit(lambda k: fr.key_data(fr.split(k, 3)))(fk), jr.key_data(jr.split(jk, 3)))
    # vmap over keys: JAX's rule draws every row from the first key
    want = jax.vmap(lambda k: jr.uniform(k, (3,)))(jks)
    same(funcad.vmap(lambda k: fr.uniform(k, (3,)))(fks), want)
    same(funcad.jit(funcad.vmap(lambda k: fr.uniform(k, (3,))))(fks), want)
    same(funcad.vmap(lambda k: fr.key_data(fr.fold_in(k, 3)))(fks),
         jax.vmap(lambda k: jr.key_data(jr.fold_in(k, 3)))(jks))
    # a scan carry
    def step(k, _):
        k, sub = fr.split(k)
        return k, fr.uniform(sub, ())
    def jstep(k, _):
        k, sub = jr.split(k)
        return k, jr.uniform(sub, ())
    same(lax.scan(step, fk, None, length=4)[1], jax.lax.scan(jstep, jk, None, length=4)[1])
    # a reparameterised gradient
    g = funcad.grad(lambda s: (s * fr.normal(fk, (3,))).sum())(2.0)
    np.testing.assert_array_equal(g, np.asarray(jax.grad(lambda s: (s * jr.normal(jk, (3,))).sum())(2.0)))
    ga = funcad.grad(lambda a: fr.gamma(fk, a, ()))(1.5)
    np.testing.assert_allclose(ga, jax.grad(lambda a: jr.gamma(jk, a, ()))(1.5), rtol=1e-12)
    assert funcad.jit(funcad.grad(lambda a: fr.gamma(fk, a)))(1.5) == pytest.approx(float(ga), rel=1e-12)


def test_impl_errors():
    with pytest.raises(ValueError, match="unrecognized PRNG implementation 'mersenne'"):
        fr.key(0, impl="mersenne")
    with pytest.raises(ValueError, match="did you mean one of 'threefry2x32', 'rbg', 'unsafe_rbg', "
                       "'threefry4x32', 'philox2x32', 'philox4x32'"):
        fr.PRNGKey(0, impl="philox8x64")
    with pytest.raises(TypeError, match=r"end with \(4,\); got shape=\(2,\) for impl='rbg'"):
        fr.wrap_key_data(np.zeros(2, np.uint32), impl="rbg")
    with pytest.raises(TypeError, match=r"end with \(2,\) for impl='threefry2x32'"):
        fr.normal(fr.PRNGKey(0, impl="rbg"), (2,))  # a raw rbg key while threefry is the default
    with pytest.raises(NotImplementedError, match="only implemented for the threefry2x32"):
        fr.poisson(fr.key(0, impl="rbg"), 3.0, (2,))
    with pytest.raises(TypeError, match="different implementations"):
        fr.key(0) == fr.key(0, impl="rbg")
    with pytest.raises(funcad.FuncadTypeError, match="takes one of"):
        funcad.config.update("default_prng_impl", "mt19937")
    with pytest.raises(TypeError, match="needs the value"):
        with funcad.default_prng_impl():
            pass


def test_typed_rbg_keys_are_arrays_of_keys():
    ks = fr.split(fr.key(0, impl="unsafe_rbg"), 6).reshape(2, 3)
    assert ks.shape == (2, 3) and str(ks.dtype) == "key<urbg>" and ks.itemsize == 16
    assert fr.key_data(ks[1, :2]).shape == (2, 4)
    same(fr.key_data(fr.wrap_key_data(fr.key_data(ks), impl="unsafe_rbg")), fr.key_data(ks))
    assert fr.key_dtype("rbg") == jr.key(0, impl="rbg").dtype.name if hasattr(jr.key(0).dtype, "name") \
        else str(fr.key_dtype("rbg")) == "key<rbg>"
    leaves, tree = funcad.tree_util.tree_flatten(ks)
    assert fr.key_impl(funcad.tree_util.tree_unflatten(tree, leaves)) == "unsafe_rbg"


# ------------------------------------------------------- threefry_partitionable ----

@pytest.fixture
def jax_non_partitionable():
    jax.config.update("jax_threefry_partitionable", False)
    yield
    jax.config.update("jax_threefry_partitionable", True)


def test_threefry_partitionable_is_on_by_default():
    assert funcad.config.threefry_partitionable is True and funcad.threefry_partitionable.value
    same(fr.bits(fr.PRNGKey(0), (5,), "uint32"), jr.bits(jr.PRNGKey(0), (5,), "uint32"))


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg"])
def test_non_partitionable_matches_jax(impl, jax_non_partitionable):
    with funcad.threefry_partitionable(False):
        for seed in (0, 42, 2 ** 63 - 1):
            fk, jk = fr.key(seed, impl=impl), jr.key(seed, impl=impl)
            same(fr.key_data(fr.split(fk, 3)), jr.key_data(jr.split(jk, 3)))
            same(fr.key_data(fr.split(fk, (2, 3))), jr.key_data(jr.split(jk, (2, 3))))
            same(fr.key_data(fr.fold_in(fk, 9)), jr.key_data(jr.fold_in(jk, 9)))
            for dtype in ["uint8", "uint16", "uint32", "uint64"]:
                for shape in [(), (1,), (5,), (2, 3), (7, 3)]:
                    same(fr.bits(fk, shape, dtype), jr.bits(jk, shape, dtype))
            same(fr.normal(fk, (5,)), jr.normal(jk, (5,)))
            same(fr.permutation(fk, 9), jr.permutation(jk, 9))
            same(funcad.jit(lambda k: fr.uniform(k, (4,)))(fk), jr.uniform(jk, (4,)))
        if impl == "threefry2x32":
            same(fr.gamma(fr.PRNGKey(1), 0.5, (3,)), jr.gamma(jr.PRNGKey(1), 0.5, (3,)))
            same(fr.randint(fr.PRNGKey(1), (4,), 0, 2 ** 40), jr.randint(jr.PRNGKey(1), (4,), 0, 2 ** 40))


def test_the_option_changes_jitted_programs_too(jax_non_partitionable):
    f = funcad.jit(lambda k: fr.bits(k, (3,), "uint32"))
    key = fr.PRNGKey(3)
    on = np.asarray(f(key))
    funcad.config.update("jax_threefry_partitionable", False)
    try:
        same(f(key), jr.bits(jr.PRNGKey(3), (3,), "uint32"))  # re-traced, not the cached program
    finally:
        funcad.config.update("threefry_partitionable", True)
    same(f(key), on)
    assert not np.array_equal(on, np.asarray(jr.bits(jr.PRNGKey(3), (3,), "uint32")))
