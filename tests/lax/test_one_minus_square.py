"""lax.one_minus_square is a primitive (as in JAX): 1 - x² evaluated as (1 + x)(1 - x),
with derivative -2x. tanh's derivative uses it, so tanh's higher derivatives stay exact
near 0 (the product rule of (1 + x)(1 - x) would cancel to 0 there) and stage as many
equations as JAX's.
"""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _nth(grad, f, n):
    for _ in range(n):
        f = grad(f)
    return f


@pytest.mark.parametrize("n", [2, 3, 4])
@pytest.mark.parametrize("x", [1e-300, 1e-9, 0.3, -2.5])
def test_tanh_derivatives_match_jax_eager_and_jit(n, x):
    want = float(_nth(jax.grad, jnp.tanh, n)(x))
    f = _nth(funcad.grad, fnp.tanh, n)
    np.testing.assert_allclose(float(f(x)), want, rtol=1e-13, atol=0)
    np.testing.assert_allclose(float(funcad.jit(f)(x)), want, rtol=1e-13, atol=0)
    if x == 1e-300 and n == 2:
        assert float(f(x)) == -2e-300  # -2 tanh(x)(1 - tanh²x), not a cancelled 0


def test_tanh_derivative_jaxprs_as_long_as_jax():
    for n in (1, 2, 5):
        ours = funcad.make_jaxpr(_nth(funcad.grad, fnp.tanh, n))(0.3)
        theirs = jax.make_jaxpr(_nth(jax.grad, jnp.tanh, n))(0.3)
        assert len(ours.jaxpr.eqns) == len(theirs.jaxpr.eqns)
    assert "one_minus_square" in str(funcad.make_jaxpr(funcad.grad(fnp.tanh))(0.3))


def test_one_minus_square_values_vmap_and_python_source():
    x = np.array([-1 + 2**-30, -0.5, 0.0, 1e-200, 0.75, 1 - 2**-40])
    want = np.asarray(jax.lax.one_minus_square(x))
    np.testing.assert_array_equal(np.asarray(lax.one_minus_square(x)), want)
    np.testing.assert_array_equal(np.asarray(funcad.jit(lax.one_minus_square)(x)), want)
    np.testing.assert_array_equal(np.asarray(funcad.vmap(lax.one_minus_square)(x)), want)
    np.testing.assert_allclose(np.asarray(funcad.vmap(funcad.grad(lax.one_minus_square))(x)),
                               np.asarray(jax.vmap(jax.grad(jax.lax.one_minus_square))(x)), rtol=1e-15)
    src = funcad.to_python(funcad.make_jaxpr(lax.one_minus_square)(0.5))
    assert "(1 + " in src and "(1 - " in src
