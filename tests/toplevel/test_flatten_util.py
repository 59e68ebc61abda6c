"""funcad.flatten_util.ravel_pytree against jax.flatten_util: promotion of mixed leaves, the
unravel function's dtypes and errors, and ravel_pytree under jit, grad and vmap."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.flatten_util import ravel_pytree

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.flatten_util  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


def test_ravel_pytree_promotes_mixed_leaves_as_jax_and_unravel_restores_dtypes():
    trees = [{"a": np.ones(2, np.float32), "b": np.arange(3, dtype=np.int32)},      # f32 + i32 -> f32
             [np.ones(2, np.float32), np.float64(2.0)],                              # -> f64
             (np.arange(2, dtype=np.int8), np.arange(2, dtype=np.uint8)),            # -> i16
             [np.array([1 + 2j], np.complex64), np.ones(2, np.float64)],             # -> c128
             {"x": np.arange(6.0).reshape(2, 3), "y": (np.ones((2, 1)),)}]           # one dtype
    for tree in trees:
        flat, unravel = ravel_pytree(tree)
        jflat, junravel = jax.flatten_util.ravel_pytree(tree)
        assert flat.dtype == jflat.dtype and flat.shape == jflat.shape, tree
        close(flat, jflat)
        back, jback = unravel(flat), junravel(jflat)
        assert [np.asarray(v).dtype for v in jax.tree_util.tree_leaves(back)] == \
            [v.dtype for v in jax.tree_util.tree_leaves(jback)]
        close(back, jback)
    empty, unravel = ravel_pytree({"a": (), "b": None})
    assert empty.shape == (0,) and empty.dtype == np.float32 and unravel(empty) == {"a": (), "b": None}
    # one dtype: unravel keeps the dtype it is given, as JAX's
    assert unravel_dtype(np.ones(2), np.zeros(2, np.int32)) == np.int32


def unravel_dtype(leaf, vec):
    return np.asarray(ravel_pytree([leaf])[1](vec)[0]).dtype


def test_unravel_errors_on_a_wrong_dtype_or_length():
    _, unravel = ravel_pytree({"a": np.ones(2, np.float32), "b": np.arange(2, dtype=np.int32)})
    with pytest.raises(TypeError, match="unravel function given array of dtype float64, but expected dtype float32"):
        unravel(np.zeros(4))
    with pytest.raises(ValueError, match=r"expected an array of shape \(4,\), got shape \(3,\)"):
        unravel(np.zeros(3, np.float32))
    _, unravel = ravel_pytree([np.ones(2)])
    with pytest.raises(ValueError, match=r"shape \(2,\)"):
        unravel(np.zeros((1, 2)))


def test_ravel_pytree_under_transformations():
    params = {"w": np.arange(6.0).reshape(2, 3) / 7, "b": np.array([0.5, -1.0])}
    flat, unravel = ravel_pytree(params)
    jflat, junravel = jax.flatten_util.ravel_pytree(params)

    def loss(unr, m):
        return lambda v: m.sum(m.tanh(unr(v)["w"]) ** 2) + m.sum(unr(v)["b"] ** 3)
    close(funcad.grad(loss(unravel, fnp))(flat), jax.grad(loss(junravel, jnp))(jflat))
    close(funcad.jit(lambda p: ravel_pytree(p)[0])(params), jflat)
    close(funcad.grad(lambda p: fnp.sum(ravel_pytree(p)[0] ** 2))(params), jax.tree_util.tree_map(lambda x: 2 * x, params))
    batched = funcad.vmap(unravel)(np.stack([flat, 2 * flat]))
    assert batched["w"].shape == (2, 2, 3)
    close(batched["w"][1], 2 * params["w"])
    # unravel is hashable and equal for equal structures (usable as a static argument)
    _, again = ravel_pytree({"w": np.zeros((2, 3)), "b": np.zeros(2)})
    assert again == unravel and hash(again) == hash(unravel)
    assert ravel_pytree({"w": np.zeros((3, 2)), "b": np.zeros(2)})[1] != unravel
