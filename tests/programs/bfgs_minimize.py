"""jax.scipy.optimize.minimize with BFGS on Rosenbrock and on a logistic regression.

In float64, as JAX's docs advise for minimize (in float32 its line search gives up early).
"""
import jax

jax.config.update("jax_enable_x64", True)

import jax.numpy as jnp
from jax.scipy.optimize import minimize


def rosenbrock(x):
    return jnp.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


res = minimize(rosenbrock, jnp.array([-1.2, 1.0, 0.8]), method="BFGS")
print("success", res.success, res.nit, res.status)
print("x", res.x)
print("fun", res.fun)

X = jax.random.normal(jax.random.PRNGKey(0), (40, 3))
y = (X @ jnp.array([1.0, -1.0, 0.5]) > 0).astype(X.dtype)


def nll(w):
    z = X @ w
    return jnp.mean(jnp.logaddexp(0.0, z) - y * z) + 0.05 * w @ w


res = minimize(nll, jnp.zeros(3), method="BFGS", options={"maxiter": 50})
print("logreg w", res.x)
print("logreg loss", res.fun)
print("iterations", res.nit, "status", res.status)
