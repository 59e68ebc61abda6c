"""Gaussian process regression in float64: kernel hyperparameters by gradient descent."""
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
from jax.scipy.linalg import cho_factor, cho_solve


def rbf(x1, x2, log_ls, log_amp):
    d2 = (x1[:, None] - x2[None, :]) ** 2
    return jnp.exp(2 * log_amp) * jnp.exp(-0.5 * d2 / jnp.exp(2 * log_ls))


def neg_log_marginal(theta, x, y):
    log_ls, log_amp, log_noise = theta
    K = rbf(x, x, log_ls, log_amp) + (jnp.exp(2 * log_noise) + 1e-8) * jnp.eye(x.shape[0])
    c, low = cho_factor(K, lower=True)
    alpha = cho_solve((c, low), y)
    return 0.5 * y @ alpha + jnp.sum(jnp.log(jnp.diag(c))) + 0.5 * x.shape[0] * jnp.log(2 * jnp.pi)


x = jnp.linspace(-3, 3, 20)
y = jnp.sin(x) + 0.1 * jnp.cos(7 * x)
theta = jnp.array([0.0, 0.0, -1.0])
vg = jax.jit(jax.value_and_grad(neg_log_marginal))
print("dtype", theta.dtype)
for i in range(50):
    nll, g = vg(theta, x, y)
    theta = theta - 0.02 * g
print("nll", nll)
print("theta", theta)

log_ls, log_amp, log_noise = theta
K = rbf(x, x, log_ls, log_amp) + jnp.exp(2 * log_noise) * jnp.eye(20)
xs = jnp.array([-1.5, 0.25, 2.0])
Ks = rbf(xs, x, log_ls, log_amp)
mean = Ks @ jnp.linalg.solve(K, y)
var = jnp.exp(2 * log_amp) - jnp.sum(Ks * jnp.linalg.solve(K, Ks.T).T, axis=1)
print("posterior mean", mean)
print("posterior var", var)
