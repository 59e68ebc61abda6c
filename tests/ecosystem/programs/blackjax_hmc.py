"""blackjax: an HMC chain on a 2-d Gaussian, run with lax.scan as blackjax's docs show."""
import blackjax
import jax
import jax.numpy as jnp


def logdensity(x):
    return -0.5 * jnp.sum((x - jnp.array([1.0, -1.0])) ** 2 / jnp.array([1.0, 0.25]))


hmc = blackjax.hmc(logdensity, step_size=0.2, inverse_mass_matrix=jnp.ones(2), num_integration_steps=10)
state = hmc.init(jnp.zeros(2))


def one_step(state, key):
    state, info = hmc.step(key, state)
    return state, (state.position, info.acceptance_rate)


keys = jax.random.split(jax.random.PRNGKey(0), 300)
_, (positions, acc) = jax.lax.scan(jax.jit(one_step), state, keys)
print("mean", jnp.mean(positions[100:], axis=0))
print("std", jnp.std(positions[100:], axis=0))
print("acceptance", jnp.mean(acc))
