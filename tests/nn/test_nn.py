"""funcad.nn beyond the op table: kinks against JAX, keyword variants, masks, attention, errors."""
import warnings

import numpy as np
import pytest

import funcad
import funcad.nn as nn
import funcad.numpy as fnp
from funcad.core.errors import ConcretizationError, FuncadValueError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnn, jnp = jax.nn, jax.numpy

KINKS = np.array([-6.0, -3.0, -1.0, 0.0, 1.0, 3.0, 6.0])
ACTIVATIONS = ["relu", "relu6", "elu", "selu", "celu", "gelu", "silu", "sigmoid", "log_sigmoid",
               "softplus", "soft_sign", "hard_tanh", "hard_sigmoid", "hard_silu", "leaky_relu",
               "sparse_plus", "sparse_sigmoid", "squareplus", "mish", "tanh", "identity"]


@pytest.mark.parametrize("name", ACTIVATIONS)
def test_derivatives_at_kinks_match_jax(name):
    # The kinks of relu (0), relu6/hard_sigmoid (0, 6, -3, 3), hard_tanh and sparse_* (+-1):
    # grad, second derivative, eager and jitted, vmapped.
    f, jf = getattr(nn, name), getattr(jnn, name)
    g = funcad.vmap(funcad.grad(f))(KINKS)
    np.testing.assert_allclose(g, jax.vmap(jax.grad(jf))(KINKS), rtol=1e-10, atol=1e-13)
    np.testing.assert_allclose(funcad.jit(funcad.vmap(funcad.grad(f)))(KINKS), g, rtol=1e-10, atol=1e-13)
    g2 = [float(funcad.grad(funcad.grad(f))(float(x))) for x in KINKS]
    np.testing.assert_allclose(g2, [float(jax.grad(jax.grad(jf))(x)) for x in KINKS], rtol=1e-10, atol=1e-13)


def test_relu_kink_conventions():
    assert float(funcad.grad(nn.relu)(0.0)) == 0.0
    assert [float(funcad.grad(nn.relu6)(x)) for x in (0.0, 3.0, 6.0)] == [0.0, 1.0, 0.0]
    assert [float(funcad.grad(nn.hard_tanh)(x)) for x in (-1.0, 1.0, 1.5)] == [1.0, 1.0, 0.0]


def test_softplus_and_log_sigmoid_are_stable():
    x = np.array([-1000.0, -30.0, 0.0, 30.0, 1000.0])
    np.testing.assert_allclose(nn.softplus(x), jnn.softplus(x), rtol=1e-15)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(nn.softplus))(x), [0.0, 9.357622968840175e-14, 0.5, 1.0, 1.0])
    np.testing.assert_allclose(nn.log_sigmoid(x), jnn.log_sigmoid(x), rtol=1e-15)
    assert np.isfinite(funcad.vmap(funcad.grad(nn.log_sigmoid))(x)).all()


def test_gelu_exact_and_float32():
    x = np.linspace(-3, 3, 7, dtype=np.float32)
    for approx in (True, False):
        y = nn.gelu(x, approximate=approx)
        assert y.dtype == np.float32
        np.testing.assert_allclose(y, jnn.gelu(x, approximate=approx), rtol=2e-6, atol=1e-7)
        np.testing.assert_allclose(funcad.jit(funcad.vmap(funcad.grad(lambda v: nn.gelu(v, approx))))(x),
                                   jax.vmap(jax.grad(lambda v: jnn.gelu(v, approx)))(x), rtol=2e-5, atol=1e-6)


def _both(f_funcad, f_jax, *args, rtol=1e-12):
    np.testing.assert_allclose(np.asarray(f_funcad(*args)), np.asarray(f_jax(*args)), rtol=rtol, atol=1e-14)


def test_softmax_family_with_where_and_axes():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(3, 4)) * 4
    w = rng.random((3, 4)) > 0.3
    w[0] = False  # a fully masked row
    for axis in (-1, 0, (0, 1), None):
        _both(lambda x: nn.softmax(x, axis=axis, where=w), lambda x: jnn.softmax(x, axis=axis, where=w), x)
        _both(lambda x: nn.logsumexp(x, axis=axis), lambda x: jnn.logsumexp(x, axis=axis), x)
    ls = nn.log_softmax(x, axis=1, where=w)
    assert np.isneginf(np.asarray(ls)[~w]).all()
    np.testing.assert_allclose(np.asarray(ls)[w], np.asarray(jnn.log_softmax(x, axis=1, where=w))[w], rtol=1e-12)
    wt = rng.normal(size=(3, 4))
    for where in (None, w):
        gf = funcad.grad(lambda x: fnp.sum(nn.softmax(x, where=where) * wt))(x)
        gj = jax.grad(lambda x: jnp.sum(jnn.softmax(x, where=where) * wt))(x)
        np.testing.assert_allclose(gf, gj, rtol=1e-10, atol=1e-14)
        hf = funcad.hessian(lambda x: fnp.sum(nn.log_softmax(x[1]) * wt[1]))(x)
        hj = jax.hessian(lambda x: jnp.sum(jnn.log_softmax(x[1]) * wt[1]))(x)
        np.testing.assert_allclose(hf, hj, rtol=1e-10, atol=1e-14)
    _both(lambda x: nn.logmeanexp(x, axis=1, where=w[1:], keepdims=True),
          lambda x: jnn.logmeanexp(x, axis=1, where=w[1:], keepdims=True), x[1:])


def test_softmax_under_vmap_over_where_and_jit():
    rng = np.random.default_rng(1)
    x, w = rng.normal(size=(5, 3)), rng.random((5, 3)) > 0.4
    got = funcad.jit(funcad.vmap(lambda x, w: nn.softmax(x, where=w)))(x, w)
    np.testing.assert_allclose(got, jnn.softmax(x, where=w), rtol=1e-12)


def test_logsumexp_minus_inf_entries_and_gradients():
    x = np.array([0.0, -np.inf, 1.0])
    _both(nn.logsumexp, jnn.logsumexp, x)
    np.testing.assert_allclose(funcad.grad(nn.logsumexp)(x), jax.grad(jnn.logsumexp)(x), rtol=1e-12)
    assert float(nn.logsumexp(np.array([-np.inf, -np.inf]))) == -np.inf


def test_standardize_variants():
    rng = np.random.default_rng(2)
    x = rng.normal(size=(3, 5)) + 10
    w = rng.random((3, 5)) > 0.3
    for kw in (dict(), dict(axis=0), dict(algorithm="stable"), dict(where=w, algorithm="stable"),
               dict(mean=1.0, variance=4.0), dict(axis=None, epsilon=0.1)):
        _both(lambda x: nn.standardize(x, **kw), lambda x: jnn.standardize(x, **kw), x, rtol=1e-9)
    with pytest.raises(FuncadValueError, match="Unknown algorithm"):
        nn.standardize(x, algorithm="bad")


def test_one_hot():
    x = np.array([[0, 2], [5, -1]])
    for kw in (dict(), dict(axis=0), dict(axis=1, dtype=np.float32), dict(dtype=np.int32)):
        got, want = nn.one_hot(x, 3, **kw), jnn.one_hot(x, 3, **kw)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(funcad.jit(lambda x: nn.one_hot(x, 4))(x), jnn.one_hot(x, 4))
    with pytest.raises(ConcretizationError, match="num_classes"):
        funcad.jit(lambda x, n: nn.one_hot(x, n))(x, 3)


def test_glu_and_log1mexp():
    x = np.arange(12.0).reshape(3, 4) / 5
    _both(lambda x: nn.glu(x, axis=0 if x.shape[0] % 2 == 0 else 1), lambda x: jnn.glu(x, axis=1), x)
    with pytest.raises(FuncadValueError, match="even size"):
        nn.glu(x, axis=0)
    y = np.array([1e-8, 0.1, 0.6931, 2.0, 40.0])
    _both(nn.log1mexp, jnn.log1mexp, y)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(nn.log1mexp))(y), jax.vmap(jax.grad(jnn.log1mexp))(y), rtol=1e-12)


ATTN = dict(B=2, T=3, S=4, N=4, K=2, H=5)


def _attn_inputs(dt):
    rng = np.random.default_rng(3)
    B, T, S, N, K, H = ATTN.values()
    q = rng.normal(size=(B, T, N, H)).astype(dt)
    k, v = (rng.normal(size=(B, S, K, H)).astype(dt) for _ in range(2))
    return q, k, v, rng.normal(size=(1, N, T, S)).astype(dt), rng.random((B, 1, T, S)) > 0.2


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_dot_product_attention_matches_jax(dt):
    q, k, v, bias, mask = _attn_inputs(dt)
    ql, kl = np.array([2, 3], np.int32), np.array([4, 2], np.int32)
    for kw in (dict(), dict(bias=bias), dict(mask=mask, is_causal=True), dict(scale=0.3, local_window_size=1),
               dict(query_seq_lengths=ql, key_value_seq_lengths=kl, bias=bias), dict(local_window_size=(2, 0))):
        got = nn.dot_product_attention(q, k, v, **kw)
        assert got.dtype == dt and got.shape == q.shape
        np.testing.assert_allclose(got, jnn.dot_product_attention(q, k, v, **kw), rtol=2e-5, atol=2e-6)
    out, res = nn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
    _, jres = jnn.dot_product_attention(q, k, v, is_causal=True, return_residual=True)
    np.testing.assert_allclose(res, jres, rtol=2e-5, atol=2e-6)
    # unbatched (TNH) inputs; multi-query attention (K = 1)
    np.testing.assert_allclose(nn.dot_product_attention(q[0], k[0], v[0]),
                               jnn.dot_product_attention(q[0], k[0], v[0]), rtol=2e-5, atol=2e-6)
    np.testing.assert_allclose(nn.dot_product_attention(q, k[:, :, :1], v[:, :, :1]),
                               jnn.dot_product_attention(q, k[:, :, :1], v[:, :, :1]), rtol=2e-5, atol=2e-6)


def test_dot_product_attention_gradients_jit_vmap():
    q, k, v, bias, _ = _attn_inputs(np.float32)

    def loss(nn_, q, k, v):
        return (nn_.dot_product_attention(q, k, v, bias=bias, is_causal=True) ** 2).sum()
    want = jax.grad(lambda *a: loss(jnn, *a), (0, 1, 2))(q, k, v)
    for got in (funcad.grad(lambda *a: loss(nn, *a), (0, 1, 2))(q, k, v),
                funcad.jit(funcad.grad(lambda *a: loss(nn, *a), (0, 1, 2)))(q, k, v)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)
    got = funcad.vmap(lambda q: nn.dot_product_attention(q, k[0], v[0]))(q)
    np.testing.assert_allclose(got, jax.vmap(lambda q: jnn.dot_product_attention(q, k[0], v[0]))(q), rtol=2e-5, atol=2e-6)


def test_dot_product_attention_errors():
    q, k, v, _, _ = _attn_inputs(np.float64)
    with pytest.raises(FuncadValueError, match="multiple of key/value heads"):
        nn.dot_product_attention(q[:, :, :3], k, v)
    with pytest.raises(FuncadValueError, match="value dtype"):
        nn.dot_product_attention(q, k, v.astype(np.float32))
    with pytest.raises(FuncadValueError, match="mask dtype"):
        nn.dot_product_attention(q, k, v, mask=np.ones((1, 1, 3, 4)))
    with pytest.raises(FuncadValueError, match="implementation"):
        nn.dot_product_attention(q, k, v, implementation="cudnn")


def test_namespace_is_jax_nn_minus_the_rest():
    import funcad
    assert funcad.nn is nn
    missing = {n for n in dir(jnn) if not n.startswith("_")} - set(nn.__all__) - {"initializers"}
    assert nn.initializers.glorot_normal is not None  # a submodule, as jax.nn.initializers
    assert missing == set()
    with pytest.raises(AttributeError):
        nn.BlockScaleConfig   # private in JAX too (jax._src.cudnn.scaled_matmul_stablehlo)


def test_one_hot_default_dtype_in_32_bit_mode_warns_nothing():
    with funcad.enable_x64(False), warnings.catch_warnings():
        warnings.simplefilter("error")
        hot = funcad.nn.one_hot(np.array([1, 0]), 3)
        assert hot.dtype == np.float32
        np.testing.assert_array_equal(hot, [[0, 1, 0], [1, 0, 0]])
    assert funcad.nn.one_hot(np.array([2]), 3).dtype == np.float64
