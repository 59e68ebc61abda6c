"""Reverse mode through a checkpoint whose body calls a jitted function or a loop: the jvp
of the inner call returns recomputed primal values beside tangents, and the checkpoint's
transpose splits that recomputation off before it transposes (as JAX's remat does)."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.lax as fl
import funcad.numpy as fnp

jax.config.update("jax_enable_x64", True)


def bodies(np_, lax, jit):
    inner = jit(lambda x: np_.sin(x) * x)
    return {
        "jit": lambda x: np_.sum(inner(x) ** 2),
        "scan": lambda x: np_.sum(lax.scan(lambda c, _: (np_.sin(c) * c, None), x, None, length=3)[0]),
        "cond": lambda x: np_.sum(lax.cond(np_.sum(x) > 0, lambda v: np_.exp(v) * v, lambda v: v, x)),
        "jit in scan": lambda x: np_.sum(lax.scan(lambda c, _: (inner(c) + c, None), x, None, length=2)[0]),
    }


F = bodies(fnp, fl, funcad.jit)
J = bodies(jnp, jax.lax, jax.jit)
X = np.array([0.5, -0.3, 1.1])


@pytest.mark.parametrize("name", sorted(F))
@pytest.mark.parametrize("prevent_cse", [True, False])
def test_grad_of_checkpoint_matches_jax(name, prevent_cse):
    f = funcad.checkpoint(F[name], prevent_cse=prevent_cse)
    j = jax.checkpoint(J[name], prevent_cse=prevent_cse)
    want = np.asarray(jax.grad(j)(X))
    np.testing.assert_allclose(funcad.grad(f)(X), want, rtol=1e-12)
    np.testing.assert_allclose(funcad.jit(funcad.grad(f))(X), want, rtol=1e-12)
    np.testing.assert_allclose(funcad.vmap(funcad.grad(f))(np.stack([X, -X])),
                               jax.vmap(jax.grad(j))(jnp.stack([X, -X])), rtol=1e-12)


@pytest.mark.parametrize("name", sorted(F))
def test_second_order_matches_jax_and_finite_differences(name):
    f = funcad.checkpoint(F[name])
    h = funcad.hessian(f)(X)
    np.testing.assert_allclose(h, jax.hessian(jax.checkpoint(J[name]))(X), rtol=1e-10, atol=1e-12)
    eps, g = 1e-6, funcad.grad(f)
    fd = np.stack([(g(X + eps * e) - g(X - eps * e)) / (2 * eps) for e in np.eye(3)])
    np.testing.assert_allclose(h, fd, rtol=1e-5, atol=1e-7)
