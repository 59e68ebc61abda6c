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


A = np.array
POLY_CASES = [
    "polyint(A([1,2,3]))", "polyint(A([1.,2,3]), 2, k=A([1.,2.]))", "polyint(A([1.,2,3]), 0)",
    "polyint(A([1.,2,3]), 3, k=2.)", "polyval(A([1,2,3]), A([1.,2.]))", "polyval(A([1,2,3]), 2)",
    "polyval(A([[1,2],[3,4.]]), A([1.,2,3])[:,None])", "polyval(A([]), 2.)",
    "polyval(A([1.,2], np.float32), 2.)", "polydiv(A([1.,3,3,1]), A([1.,1]))",
    "polydiv(A([1,3,3,1]), A([1,1]))", "polydiv(A([1.,2]), A([1.,2,3]))",
    "polydiv(A([1.,3,3,1]), A([2.,1]), trim_leading_zeros=True)", "polyadd(np.ones((2,2)), np.ones(2))",
    "polyadd(A([1,2]), A([1,2,3]))", "polysub(A([1,2]), A([1.,2,3]))", "poly(A([]))",
    "poly(A([1.,2.,3.]))", "poly(A([1,2]))", "poly(A(3.))", "polymul(A([1,2]), A([]))",
    "polymul(A([0.,0]), A([0.,1]), trim_leading_zeros=True)", "polymul(A([0., 1,2]), A([1.,2,3]))",
    "polymul(A([1,2]), A([3,4]))", "polyder(A([1,2,3,4]), 2)", "polyder(A([1.,2,3,4]), 0)",
    "polyder(A([1,2,3]), 5)",
]


@pytest.mark.parametrize("case", POLY_CASES)
def test_polynomials_match_jax(case):
    want, got = eval("jnp." + case), eval("fnp." + case)
    want = want if isinstance(want, tuple) else (want,)
    got = got if isinstance(got, tuple) else (got,)
    for g, w in zip(got, want):
        assert np.asarray(g).shape == w.shape and np.asarray(g).dtype == w.dtype
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-12)


def test_polynomial_derivatives_and_jit():
    r = np.array([1.0, 2.0, 3.0])
    g = funcad.grad(lambda r: fnp.polyval(fnp.poly(r), 0.5))(r)
    np.testing.assert_allclose(g, jax.grad(lambda r: jnp.polyval(jnp.poly(r), 0.5))(r), rtol=1e-12)
    q, rem = funcad.jit(fnp.polydiv)(A([1.0, 3, 3, 1]), A([1.0, 1]))
    np.testing.assert_allclose(q, [1.0, 2.0, 1.0])
    np.testing.assert_allclose(rem, [0.0] * 4, atol=1e-15)


@pytest.mark.parametrize("call, match", [
    (lambda: fnp.polyder(A([1.0, 2]), -1), "Order of derivative must be positive"),
    (lambda: fnp.polyint(A([1.0, 2]), -1), "Order of integral must be positive"),
    (lambda: fnp.polyint(A([1.0, 2, 3]), 2, k=A([1.0, 2, 3])), "length 1 or m"),
    (lambda: fnp.poly(np.ones((2, 3))), "1d or non-empty square"),
    (lambda: fnp.polyval(A(2.0), A(3.0)), "at least one dimension"),
    (lambda: fnp.polyder(np.ones((3, 2))), "1-D coefficient array"),
])
def test_polynomial_errors(call, match):
    with pytest.raises((ValueError, TypeError), match=match):
        call()


_NAN = A([1.0, np.nan])


@pytest.mark.parametrize("name, a, b, kwargs", [
    ("array_equal", A([1.0, 2]), A([1.0, 2]), {}), ("array_equal", _NAN, _NAN, {}),
    ("array_equal", _NAN, _NAN, {"equal_nan": True}), ("array_equal", A([1, 2]), A([1, 2, 3]), {}),
    ("array_equiv", A([[1, 2], [1, 2]]), A([1, 2]), {}), ("array_equiv", A([[1, 2], [1, 3]]), A([1, 2]), {}),
    ("allclose", A([1.0, 2]), A([1.0, 2.0001]), {}), ("allclose", _NAN, _NAN, {"equal_nan": True}),
])
def test_array_comparisons_match_jax_and_trace(name, a, b, kwargs):
    want = bool(getattr(jnp, name)(a, b, **kwargs))
    assert bool(getattr(fnp, name)(a, b, **kwargs)) == want
    assert bool(funcad.jit(lambda a, b: getattr(fnp, name)(a, b, **kwargs))(a, b)) == want


def test_array_equiv_of_unbroadcastable_shapes_is_false_as_numpy():
    assert not bool(fnp.array_equiv(A([1, 2]), A([1, 2, 3])))


def test_linalg_matmul_and_tensordot():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(3, 2, 4)), rng.normal(size=(4, 5))
    np.testing.assert_allclose(fnp.linalg.matmul(a, b), np.matmul(a, b), rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(fnp.linalg.matmul)(a, b), np.matmul(a, b), rtol=1e-12)
    np.testing.assert_allclose(fnp.linalg.tensordot(a, b, axes=1), np.tensordot(a, b, axes=1), rtol=1e-12)
    with pytest.raises(ValueError, match="ndim at least 1"):
        fnp.linalg.matmul(np.ones(()), np.ones(3))


def test_result_type_of_tracers():
    f = lambda x: fnp.zeros(2, fnp.result_type(x, np.float32))
    assert funcad.jit(f)(np.ones(2)).dtype == np.float64
    assert funcad.jit(f)(np.ones(2, np.float32)).dtype == np.float32
    assert funcad.jit(f)(1.0).dtype == np.float32  # a weak Python float does not widen
    assert funcad.jit(lambda x: fnp.zeros(1, np.result_type(x, np.int8)))(np.int16(1)).dtype == np.int16


def test_result_type_with_x64_off_is_canonical_as_jax():
    # equinox's buffers compare result_type(x, buf) with result_type(buf) for a weak buf
    cases = [(1.0,), (1,), (1j,), (np.float32, 1.0), (np.int8, 2), (np.float64,), (np.array(1.0),)]
    with funcad.enable_x64(False), jax.enable_x64(False):
        for args in cases:
            assert fnp.result_type(*args) == jax.numpy.result_type(*args), args
        assert funcad.jit(lambda x: fnp.zeros(1, fnp.result_type(x)))(1.0).dtype == np.float32
