"""Unadjusted Langevin dynamics on a 2-d banana density, with lax.scan over keys."""
import jax
import jax.numpy as jnp
from jax import random


def log_density(x):
    return -0.5 * (x[0] ** 2 / 4.0 + (x[1] - 0.5 * x[0] ** 2) ** 2)


score = jax.grad(log_density)


def langevin(x0, key, step=0.05, n=200):
    def body(x, k):
        noise = random.normal(k, x.shape)
        x = x + step * score(x) + jnp.sqrt(2 * step) * noise
        return x, x
    return jax.lax.scan(body, x0, random.split(key, n))


chains = jax.jit(jax.vmap(langevin))(jnp.zeros((8, 2)), random.split(random.PRNGKey(5), 8))
final, traj = chains
print("trajectory shape", traj.shape)
print("final mean", final.mean(axis=0))
print("sample mean", traj[:, 50:].mean(axis=(0, 1)))
print("sample var", traj[:, 50:].var(axis=(0, 1)))
