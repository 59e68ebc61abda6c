"""Functions that return positions give JAX's index dtype: int32 from searchsorted,
digitize, top_k and argpartition (XLA's TopK and JAX's searchsorted make int32 indices)
even with x64 on, where argsort and argmax give int64. Checked against JAX in both
precision modes, eagerly and under jit and vmap."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as flax
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

X = np.array([[0.3, -1.2, 0.7, 2.5, 0.7], [1.5, 0.1, -0.4, 0.1, 3.0], [np.nan, 0.0, -0.0, 1.0, -2.0]])
EDGES = np.array([-1.0, 0.0, 0.5, 2.0])

CASES = {
    "searchsorted left": lambda L, lax: L.searchsorted(EDGES, X),
    "searchsorted right": lambda L, lax: L.searchsorted(EDGES, X, side="right"),
    "searchsorted scalar": lambda L, lax: L.searchsorted(EDGES, 0.5),
    "searchsorted empty": lambda L, lax: L.searchsorted(np.zeros(0), X),
    "searchsorted sorter": lambda L, lax: L.searchsorted(EDGES[::-1], X, sorter=np.arange(3, -1, -1)),
    "digitize increasing": lambda L, lax: L.digitize(X, EDGES),
    "digitize decreasing right": lambda L, lax: L.digitize(X, EDGES[::-1], right=True),
    "digitize no bins": lambda L, lax: L.digitize(X, np.zeros(0)),
    "top_k": lambda L, lax: L.top_k(X, 3)[1],
    "lax.top_k": lambda L, lax: lax.top_k(X, 2)[1],
    "lax.top_k int8": lambda L, lax: lax.top_k(np.array([3, -1, 7, 7], np.int8), 3)[1],
    "argpartition": lambda L, lax: L.argpartition(np.nan_to_num(X), 2),
    "argsort (int64 with x64)": lambda L, lax: L.argsort(np.nan_to_num(X)),
}


@pytest.mark.parametrize("x64", [True, False], ids=["x64", "x32"])
@pytest.mark.parametrize("name", list(CASES))
def test_index_dtypes_as_jax(name, x64):
    f = CASES[name]
    with funcad.enable_x64(x64), jax.enable_x64(x64):
        want = f(jnp, jax.lax)
        for got in (f(fnp, flax), funcad.jit(lambda: f(fnp, flax))()):
            assert (got.dtype, got.shape) == (want.dtype, want.shape), name
            np.testing.assert_array_equal(got, want)


def test_batched_indices_keep_their_dtype():
    with funcad.enable_x64(True), jax.enable_x64(True):
        got = funcad.vmap(lambda r: fnp.searchsorted(EDGES, r))(X)
        want = jax.vmap(lambda r: jnp.searchsorted(EDGES, r))(X)
        assert got.dtype == want.dtype == np.int32
        np.testing.assert_array_equal(got, want)
        got = funcad.vmap(lambda r: flax.top_k(r, 2)[1])(np.nan_to_num(X))
        assert got.dtype == np.int32
        np.testing.assert_array_equal(got, jax.vmap(lambda r: jax.lax.top_k(r, 2)[1])(np.nan_to_num(X)))


@pytest.mark.parametrize("right", [False, True])
@pytest.mark.parametrize("bins", [EDGES, EDGES[::-1]], ids=["increasing", "decreasing"])
def test_digitize_at_the_edges_as_numpy(bins, right):
    # values on every edge, between and beyond them: the side decides an edge's bin
    x = np.concatenate([bins, bins + 0.25, bins - 0.25, [-0.0, np.inf, -np.inf]])
    np.testing.assert_array_equal(fnp.digitize(x, bins, right=right), np.digitize(x, bins, right=right))


def test_argpartition_splits_at_kth_in_xlas_total_order():
    # JAX's argpartition is top_k of the negated array: XLA orders -0 before +0 and
    # places a NaN by its sign; the rest follow in ascending index order
    x = np.array([1.0, np.nan, -np.nan, 0.0, -0.0, np.inf, -np.inf, 0.0, 2.0])
    for kth in range(len(x)):
        got, want = fnp.argpartition(x, kth), jnp.argpartition(x, kth)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(funcad.jit(lambda v: fnp.argpartition(v, kth))(x), want)
    with pytest.raises(TypeError, match="complex"):
        fnp.argpartition(np.ones(3, complex), 1)
