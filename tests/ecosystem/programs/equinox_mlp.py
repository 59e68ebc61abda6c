"""equinox: an eqx.nn.MLP trained with filter_jit / filter_value_and_grad and optax."""
import equinox as eqx
import jax
import jax.numpy as jnp
import optax

key = jax.random.PRNGKey(0)
mkey, dkey = jax.random.split(key)
model = eqx.nn.MLP(in_size=2, out_size=1, width_size=16, depth=2, key=mkey)
x = jax.random.normal(dkey, (64, 2))
y = jnp.sin(x[:, :1]) * jnp.cos(x[:, 1:])


@eqx.filter_value_and_grad
def loss_fn(model, x, y):
    pred = jax.vmap(model)(x)
    return jnp.mean((pred - y) ** 2)


optim = optax.adam(1e-2)
opt_state = optim.init(eqx.filter(model, eqx.is_array))


@eqx.filter_jit
def step(model, opt_state, x, y):
    loss, grads = loss_fn(model, x, y)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    return eqx.apply_updates(model, updates), opt_state, loss


for i in range(60):
    model, opt_state, loss = step(model, opt_state, x, y)
    if i % 20 == 0:
        print(i, loss)
print("pred", jax.vmap(model)(x[:3]).ravel())
