"""blackjax: SGLD on a Bayesian linear regression with minibatches, as blackjax's docs show."""
import blackjax
import jax
import jax.numpy as jnp
from blackjax.sgmcmc.gradients import grad_estimator

n, batch = 200, 20
X = jax.random.normal(jax.random.PRNGKey(0), (n, 2))
Y = X @ jnp.array([1.5, -0.7]) + 0.3 + 0.1 * jax.random.normal(jax.random.PRNGKey(1), (n,))


def logprior(p):
    return -0.5 * (jnp.sum(p["w"] ** 2) + p["b"] ** 2)


def loglikelihood(p, data):
    x, y = data
    return -0.5 * jnp.sum((y - x @ p["w"] - p["b"]) ** 2) / 0.01


sgld = blackjax.sgld(grad_estimator(logprior, loglikelihood, n))
step = jax.jit(sgld.step)


def one_step(position, key):
    k_batch, k_step = jax.random.split(key)
    idx = jax.random.choice(k_batch, n, (batch,), replace=False)
    position = step(k_step, position, (X[idx], Y[idx]), 1e-5)
    return position, position


position = sgld.init({"w": jnp.zeros(2), "b": jnp.array(0.0)})
_, trace = jax.lax.scan(one_step, position, jax.random.split(jax.random.PRNGKey(2), 1000))
print("w", jnp.mean(trace["w"][500:], axis=0), jnp.std(trace["w"][500:], axis=0))
print("b", jnp.mean(trace["b"][500:]), jnp.std(trace["b"][500:]))
