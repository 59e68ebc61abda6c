"""A PINN for u''(x) = -pi^2 sin(pi x) on [0, 1] with u(0) = u(1) = 0."""
import jax
import jax.numpy as jnp
from jax import random, vmap
from jax.example_libraries import optimizers


def init(key, sizes=(1, 16, 16, 1)):
    params = []
    for k, m, n in zip(random.split(key, len(sizes) - 1), sizes[:-1], sizes[1:]):
        params.append((random.normal(k, (m, n)) * jnp.sqrt(1.0 / m), jnp.zeros(n)))
    return params


def u(params, x):
    h = jnp.array([x])
    for w, b in params[:-1]:
        h = jnp.tanh(h @ w + b)
    w, b = params[-1]
    return (h @ w + b)[0]


def residual(params, x):
    u_xx = jax.grad(jax.grad(u, argnums=1), argnums=1)(params, x)
    return u_xx + jnp.pi ** 2 * jnp.sin(jnp.pi * x)


def loss(params, xs):
    pde = jnp.mean(vmap(residual, in_axes=(None, 0))(params, xs) ** 2)
    bc = u(params, 0.0) ** 2 + u(params, 1.0) ** 2
    return pde + 10.0 * bc


opt_init, opt_update, get_params = optimizers.adam(5e-3)
state = opt_init(init(random.PRNGKey(2)))
xs = jnp.linspace(0.0, 1.0, 24)


@jax.jit
def step(i, state):
    l, g = jax.value_and_grad(loss)(get_params(state), xs)
    return opt_update(i, g, state), l


for i in range(50):
    state, l = step(i, state)
    if i % 25 == 0:
        print(f"step {i} loss {l:.5f}")
params = get_params(state)
print("final loss", loss(params, xs))
print("u(0.5)", u(params, 0.5))
