"""A sparse-ish linear solve: 1-d Laplacian as a matvec function, jax.scipy.sparse.linalg.cg."""
import jax
import jax.numpy as jnp
from jax.scipy.sparse.linalg import cg

n = 32


def laplacian(u, k=0.1):
    up = jnp.pad(u, 1)
    return (2 * up[1:-1] - up[:-2] - up[2:]) * (n + 1) ** 2 + k * u


xs = jnp.linspace(0, 1, n + 2)[1:-1]
b = jnp.sin(jnp.pi * xs) * jnp.pi ** 2
u, info = cg(laplacian, b, tol=1e-6, maxiter=200)
print("max error vs sin", jnp.max(jnp.abs(u - jnp.sin(jnp.pi * xs))))
print("converged", jnp.linalg.norm(laplacian(u) - b) / jnp.linalg.norm(b) < 1e-4)
print("u mid", u[n // 2 - 1 : n // 2 + 1])


def solve_mean(k):
    return jnp.mean(cg(lambda v: laplacian(v, k), b, tol=1e-6, maxiter=200)[0])


print("d mean(u) / dk", jax.grad(solve_mean)(0.1))
print("jit solve sum", jax.jit(lambda b: cg(laplacian, b, tol=1e-6)[0].sum())(b))
