"""Monte Carlo pricing of a European call and an Asian option; pathwise delta by grad."""
from functools import partial

import jax
import jax.numpy as jnp
from jax import random


@partial(jax.jit, static_argnums=(4,))
def price_paths(s0, sigma, r, key, n_steps):
    T = 1.0
    dt = T / n_steps
    z = random.normal(key, (4096, n_steps))
    log_paths = jnp.log(s0) + jnp.cumsum((r - 0.5 * sigma ** 2) * dt + sigma * jnp.sqrt(dt) * z, axis=1)
    return jnp.exp(log_paths)


def european_call(s0, sigma, r, key, strike=100.0):
    paths = price_paths(s0, sigma, r, key, 16)
    return jnp.exp(-r) * jnp.mean(jnp.maximum(paths[:, -1] - strike, 0.0))


def asian_call(s0, sigma, r, key, strike=100.0):
    paths = price_paths(s0, sigma, r, key, 16)
    return jnp.exp(-r) * jnp.mean(jnp.maximum(paths.mean(axis=1) - strike, 0.0))


key = random.PRNGKey(2024)
s0, sigma, r = 100.0, 0.2, 0.05
print("european", european_call(s0, sigma, r, key))
print("asian", asian_call(s0, sigma, r, key))
delta, vega = jax.grad(european_call, argnums=(0, 1))(s0, sigma, r, key)
print("delta", delta, "vega", vega)
d1 = (jnp.log(s0 / 100.0) + r + 0.5 * sigma ** 2) / sigma
bs = s0 * jax.scipy.stats.norm.cdf(d1) - 100.0 * jnp.exp(-r) * jax.scipy.stats.norm.cdf(d1 - sigma)
print("black-scholes", bs)
