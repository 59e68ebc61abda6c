"""frexp / nextafter / spacing, packbits / unpackbits and vectorize against JAX, eager and jitted."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

FLOATS = (np.float16, np.float32, np.float64)
X = [0., -0., 1.5, -3., 8., 1e-310, np.inf, -np.inf, np.nan, 3e-5, 65504.0]
Y = [1., -1., 0., 2., 0., np.nan, 1e-310, -np.inf, 1., 0., np.inf]


def _same(got, want):
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert np.asarray(got).dtype == want.dtype


@pytest.mark.parametrize("dtype", FLOATS)
@pytest.mark.parametrize("name", ["frexp", "nextafter", "spacing"])
@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_float_bits_match_jax(name, dtype):
    x, y = np.array(X, dtype), np.array(Y, dtype)
    args = (x, y) if name == "nextafter" else (x,)
    want = getattr(jnp, name)(*args)
    for f in (getattr(fnp, name), funcad.jit(getattr(fnp, name))):
        got = f(*args)
        if name == "frexp":
            # XLA on CPU flushes float32/16 subnormals; compare normal numbers and the specials
            for g, w in zip(got, want):
                _same(g, w)
        else:
            _same(got, want)


def test_frexp_reconstructs_and_ints():
    x = np.random.default_rng(0).normal(size=50) * 1e3
    m, e = fnp.frexp(x)
    np.testing.assert_array_equal(np.ldexp(np.asarray(m), np.asarray(e)), x)
    assert np.all((np.abs(m) >= 0.5) & (np.abs(m) < 1))
    m, e = fnp.frexp(np.arange(1, 5))
    assert m.dtype == np.float64 and e.dtype == np.int32
    with pytest.raises(TypeError, match="float16/32/64"):
        fnp.frexp(np.array([1j]))


def test_nextafter_vmap_and_broadcast():
    x = np.array([1.0, 2.0, -3.0])
    got = funcad.vmap(fnp.nextafter, in_axes=(0, None))(x, 10.0)
    np.testing.assert_array_equal(got, np.nextafter(x, 10.0))
    assert float(fnp.spacing(1.0)) == np.finfo(np.float64).eps


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
@pytest.mark.parametrize("bitorder", ["big", "little"])
def test_packbits_unpackbits_match_jax(axis, bitorder):
    a = np.random.default_rng(1).integers(0, 3, size=(3, 11)).astype(np.int32)
    want = jnp.packbits(a, axis=axis, bitorder=bitorder)
    _same(fnp.packbits(a, axis=axis, bitorder=bitorder), want)
    _same(funcad.jit(fnp.packbits, static_argnames=("axis", "bitorder"))(a, axis=axis, bitorder=bitorder), want)
    p = np.asarray(want)
    for count in (None, 3, -2, 30):
        _same(fnp.unpackbits(p, axis=axis, count=count, bitorder=bitorder),
              jnp.unpackbits(p, axis=axis, count=count, bitorder=bitorder))


def test_packbits_errors():
    with pytest.raises(TypeError, match="integer or boolean"):
        fnp.packbits(np.ones(3))
    with pytest.raises(TypeError, match="uint8"):
        fnp.unpackbits(np.ones(3, np.int32))
    with pytest.raises(ValueError, match="bitorder"):
        fnp.packbits(np.ones(3, bool), bitorder="middle")
    with pytest.raises(ValueError, match="out of range"):
        fnp.packbits(np.ones(3, bool), axis=2)


def test_vectorize_signature_matches_jax():
    rng = np.random.default_rng(0)
    m, v = rng.normal(size=(4, 2, 3)), rng.normal(size=(5, 1, 1, 3))
    ours = fnp.vectorize(lambda m, v: m @ v, signature="(n,k),(k)->(n)")
    theirs = jnp.vectorize(lambda m, v: m @ v, signature="(n,k),(k)->(n)")
    np.testing.assert_allclose(ours(m, v), theirs(m, v), rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(ours)(m, v), theirs(m, v), rtol=1e-12)


def test_vectorize_scalar_function_broadcasts_and_differentiates():
    f = fnp.vectorize(lambda x, y: fnp.sin(x) * y)
    x, y = np.arange(3.0), np.ones((2, 1)) * 2
    np.testing.assert_allclose(f(x, y), np.sin(x) * y)
    g = funcad.grad(lambda x: fnp.vectorize(lambda a: a ** 3)(x).sum())
    np.testing.assert_allclose(g(np.arange(3.0)), 3 * np.arange(3.0) ** 2)
    np.testing.assert_allclose(funcad.jit(g)(np.arange(3.0)), 3 * np.arange(3.0) ** 2)


def test_vectorize_excluded_and_tuple_outputs():
    np.testing.assert_allclose(fnp.vectorize(lambda x, p: x ** p, excluded={1})(np.arange(3.0), 2),
                               [0.0, 1.0, 4.0])
    a, b = fnp.vectorize(lambda x: (x, 2 * x))(np.ones(2))
    np.testing.assert_allclose(b, [2.0, 2.0])
    s = fnp.vectorize(lambda x: fnp.sum(x), signature="(n)->()")(np.ones((3, 4)))
    np.testing.assert_allclose(s, [4.0, 4.0, 4.0])


@pytest.mark.parametrize("call, match", [
    (lambda: fnp.vectorize(lambda x: x, signature="(n)->()")(np.ones((3, 4))), "does not match core"),
    (lambda: fnp.vectorize(lambda x, y: x, signature="(n),(n)->()")(np.ones((3, 4)), np.ones(5)),
     "core dimension 'n' has sizes 4 and 5"),
    (lambda: fnp.vectorize(lambda x: x, signature="(n->()"), "not a valid gufunc signature"),
    (lambda: fnp.vectorize(lambda x: x, excluded={-1}), "negative"),
])
def test_vectorize_errors(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()
