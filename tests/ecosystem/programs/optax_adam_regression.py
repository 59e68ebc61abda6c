"""optax: fit a linear model with Adam, as optax's README shows."""
import jax
import jax.numpy as jnp
import optax

key = jax.random.PRNGKey(0)
kx, kw = jax.random.split(key)
x = jax.random.normal(kx, (64, 3))
w_true = jnp.array([1.5, -2.0, 0.5])
y = x @ w_true + 0.1

params = {"w": jnp.zeros(3), "b": jnp.zeros(())}


def loss_fn(p, x, y):
    return jnp.mean((x @ p["w"] + p["b"] - y) ** 2)


optimizer = optax.adam(learning_rate=0.1)
opt_state = optimizer.init(params)


@jax.jit
def step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


for i in range(100):
    params, opt_state, loss = step(params, opt_state, x, y)
    if i % 25 == 0:
        print(i, loss)
print("w", params["w"], "b", params["b"])
