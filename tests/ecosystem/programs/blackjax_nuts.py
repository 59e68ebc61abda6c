"""blackjax: window adaptation then NUTS, as blackjax's README shows."""
import blackjax
import jax
import jax.numpy as jnp


def logdensity(x):
    return jnp.sum(jax.scipy.stats.norm.logpdf(x, loc=jnp.array([0.5, 2.0]), scale=jnp.array([1.0, 0.3])))


warmup = blackjax.window_adaptation(blackjax.nuts, logdensity)
(state, parameters), _ = warmup.run(jax.random.PRNGKey(1), jnp.zeros(2), num_steps=200)
kernel = blackjax.nuts(logdensity, **parameters).step


def one_step(state, key):
    state, _ = kernel(key, state)
    return state, state.position


_, samples = jax.lax.scan(one_step, state, jax.random.split(jax.random.PRNGKey(2), 200))
print("step size", parameters["step_size"])
print("mean", jnp.mean(samples, axis=0))
print("std", jnp.std(samples, axis=0))
