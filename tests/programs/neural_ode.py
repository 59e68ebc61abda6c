"""A neural ODE fitted with jax.experimental.ode.odeint (adjoint gradients)."""
import jax
import jax.numpy as jnp
from jax.experimental.ode import odeint


def dynamics(y, t, params):
    w1, b1, w2 = params
    return jnp.tanh(y @ w1 + b1) @ w2


def loss(params, y0, ts, target):
    ys = odeint(dynamics, y0, ts, params, rtol=1e-6, atol=1e-6)
    return jnp.mean((ys[-1] - target) ** 2)


key = jax.random.PRNGKey(0)
k1, k2 = jax.random.split(key)
params = (jax.random.normal(k1, (2, 8)) * 0.5, jnp.zeros(8), jax.random.normal(k2, (8, 2)) * 0.5)
y0 = jnp.array([1.0, 0.0])
ts = jnp.linspace(0.0, 1.0, 5)
target = jnp.array([0.0, 1.0])

value_and_grad = jax.jit(jax.value_and_grad(loss))
for i in range(5):
    l, g = value_and_grad(params, y0, ts, target)
    params = jax.tree.map(lambda p, g: p - 0.3 * g, params, g)
    print(f"iter {i} loss {l:.6f}")
print("trajectory", odeint(dynamics, y0, ts, params)[:, 0])
