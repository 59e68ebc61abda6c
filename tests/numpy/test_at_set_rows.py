"""`x.at[i].set(v)` with a traced integer `i` (whole trailing rows) against JAX:
values in every mode, derivatives and batching, its lowering (a dynamic_update_slice,
the form XLA gives JAX's one-index scatter), and the reason that form matters: a
jitted loop that writes a row per step computes JAX's bits only when XLA can compile
the loop as one kernel, as it does JAX's (it then contracts multiply-adds across the
loop body's fusions; a sort-based scatter in the loop kept funcad's from that).
"""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.experimental
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy

X = np.arange(20.0, dtype=np.float32).reshape(10, 2)
V = np.array([-1.5, -2.5], np.float32)
INDICES = [0, 3, 9, -1, -10, 10, -11, 100]


def _both(fun):
    """fun(np_module) jitted by funcad and by JAX."""
    return funcad.jit(fun(fnp)), jax.jit(fun(jnp))


@pytest.mark.parametrize("mode", [None, "drop", "fill", "clip", "promise_in_bounds"])
def test_set_row_modes_match_jax(mode):
    if mode == "promise_in_bounds":
        indices = [i for i in INDICES if -10 <= i < 10]  # elsewhere the result is unspecified
    else:
        indices = INDICES
    ours, theirs = _both(lambda m: lambda x, i, v: x.at[i].set(v, mode=mode))
    for i in indices:
        np.testing.assert_array_equal(ours(X, np.int32(i), V), theirs(X, np.int32(i), V), err_msg=str(i))


@pytest.mark.parametrize("index", [
    lambda i: (i,), lambda i: (i, Ellipsis), lambda i: (i, slice(None)), lambda i: (i, 1), lambda i: (2, i)],
    ids=["row", "row_ellipsis", "row_slice", "element", "static_then_traced"])
def test_set_index_forms_match_jax(index):
    ours, theirs = _both(lambda m: lambda x, i: x.at[index(i)].set(7.0))
    for i in (0, 1, -1, 5):
        np.testing.assert_array_equal(ours(X, np.int32(i)), theirs(X, np.int32(i)))


def test_set_row_eagerly_matches_jax():
    for i in (2, -1, 10):
        ours = fnp.asarray(X).at[fnp.asarray(np.int32(i))].set(V)
        np.testing.assert_array_equal(ours, jnp.asarray(X).at[jnp.int32(i)].set(V))


def test_set_row_of_wrong_shape_raises_even_when_dropped():
    # JAX raises ValueError; funcad's broadcast_to raises its TypeError for the same shapes
    with pytest.raises((TypeError, ValueError), match="broadcast"):
        funcad.jit(lambda x, i: x.at[i, 11].set(np.ones(3, np.float32)))(X, np.int32(0))


def test_set_without_wrapping_negatives_drops_them_as_jax():
    ours, theirs = _both(lambda m: lambda x, i, v: x.at[i].set(v, wrap_negative_indices=False))
    for i in (-1, 2):
        np.testing.assert_array_equal(ours(X, np.int32(i), V), theirs(X, np.int32(i), V))


def test_set_row_grad_and_vmap_match_jax():
    def loss(m):
        return lambda x, v, i: m.sum(m.sin(x.at[i].set(v * v)) * m.arange(20.0).reshape(10, 2))
    for i in (4, -3, 12):
        ours = funcad.grad(loss(fnp), argnums=(0, 1))(X, V, np.int32(i))
        theirs = jax.grad(loss(jnp), argnums=(0, 1))(X, V, np.int32(i))
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-6)
    rows = np.array([0, 9, -2, 11], np.int32)
    ours = funcad.vmap(lambda i: fnp.asarray(X).at[i].set(V))(rows)
    theirs = jax.vmap(lambda i: jnp.asarray(X).at[i].set(V))(rows)
    np.testing.assert_array_equal(ours, theirs)


def test_set_row_lowers_to_dynamic_update_slice():
    text = funcad.jit(lambda x, i, v: x.at[i].set(v)).lower(X, np.int32(1), V).as_text()
    assert "dynamic_update_slice" in text
    assert "scatter" not in text and "sort" not in text


def _leapfrog(m, lax):
    """A leapfrog loop that keeps every other step's momentum, as NUTS keeps its U-turn
    checkpoints (blackjax's `r_ckpts.at[idx].set(r)` under a cond)."""
    def run(x, p, eps):
        def step(c):
            k, x, p, ckpt = c
            p = p - 0.5 * eps * x
            x = x + eps * p
            p = p - 0.5 * eps * x
            ckpt = lax.cond(k % 2 == 0, lambda c: c.at[k // 2].set(p), lambda c: c, ckpt)
            return k + 1, x, p, ckpt
        return lax.while_loop(lambda c: c[0] < 9, step, (0, x, p, m.zeros((5, 2), m.float32)))
    return run


def test_loop_writing_rows_compiles_as_one_kernel_as_jax():
    # XLA:CPU compiles a while loop whose body it can emit whole as one kernel (its
    # "small call"); a sort-based scatter in the body kept funcad's loop from that, and
    # the kernel's multiply-adds contract across fusions, so NUTS's numbers moved.
    x, p, eps = np.array([0.3, -1.2], np.float32), np.array([1.1, 0.4], np.float32), np.float32(0.7)
    with funcad.experimental.disable_x64(), jax.enable_x64(False):
        ours = funcad.jit(_leapfrog(fnp, funcad.lax))
        theirs = jax.jit(_leapfrog(jnp, jax.lax))
        kernels = [f.lower(x, p, eps).compile().as_text().count('xla_cpu_small_call="true"')
                   for f in (ours, theirs)]
        assert kernels[1] >= 1, "JAX's loop is no longer one kernel: the premise of this test moved"
        assert kernels[0] == kernels[1]
        for a, b in zip(ours(x, p, eps), theirs(x, p, eps)):
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


# -- add, multiply, min and max on a traced row: old row combined with the values, once --

COMBINING = ["add", "multiply", "min", "max"]


@pytest.mark.parametrize("how", COMBINING)
@pytest.mark.parametrize("mode", [None, "drop", "clip"])
def test_combining_row_updates_match_jax(how, mode):
    ours, theirs = _both(lambda m: lambda x, i, v: getattr(x.at[i], how)(v, mode=mode))
    for i in INDICES:
        np.testing.assert_array_equal(ours(X, np.int32(i), V), theirs(X, np.int32(i), V), err_msg=str(i))
    for i in (3, -1, 12):  # eagerly, on a traced row under vmap, and on integers
        eager = getattr(fnp.asarray(X).at[fnp.asarray(np.int32(i))], how)(V, mode=mode)
        np.testing.assert_array_equal(eager, getattr(jnp.asarray(X).at[jnp.int32(i)], how)(V, mode=mode))
    xi = np.arange(12, dtype=np.int8).reshape(6, 2) * 20
    ours_i, theirs_i = _both(lambda m: lambda x, i: getattr(x.at[i, 1], how)(np.int8(100)))
    for i in (0, 5, 7):
        np.testing.assert_array_equal(ours_i(xi, np.int32(i)), theirs_i(xi, np.int32(i)))
    rows = np.array([0, 9, -2, 11], np.int32)
    np.testing.assert_array_equal(funcad.vmap(lambda i: getattr(fnp.asarray(X).at[i], how)(V))(rows),
                                  jax.vmap(lambda i: getattr(jnp.asarray(X).at[i], how)(V))(rows))


@pytest.mark.parametrize("how", COMBINING)
def test_combining_row_updates_grad_matches_jax(how):
    def loss(m):
        return lambda x, v, i: m.sum(m.sin(getattr(x.at[i], how)(v * v)) * m.arange(20.0).reshape(10, 2))
    x = X + 0.25  # no ties between the row and the values (min/max split their derivative there)
    for i in (4, -3, 12):
        ours = funcad.grad(loss(fnp), argnums=(0, 1))(x, V, np.int32(i))
        theirs = jax.grad(loss(jnp), argnums=(0, 1))(x, V, np.int32(i))
        for a, b in zip(ours, theirs):
            np.testing.assert_allclose(a, b, rtol=1e-5)


def test_combining_row_update_lowers_to_a_dynamic_update_slice():
    text = funcad.jit(lambda x, i, v: x.at[i].add(v)).lower(X, np.int32(1), V).as_text()
    assert "stablehlo.dynamic_update_slice" in text and "stablehlo.scatter" not in text
