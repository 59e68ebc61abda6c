"""flax.linen: an MLP with batch norm and dropout, trained with optax."""
import jax
import jax.numpy as jnp
import flax.linen as nn
import optax


class MLP(nn.Module):
    features: int = 16

    @nn.compact
    def __call__(self, x, train: bool):
        x = nn.Dense(self.features)(x)
        x = nn.BatchNorm(use_running_average=not train)(x)
        x = nn.relu(x)
        x = nn.Dropout(0.2, deterministic=not train)(x)
        return nn.Dense(1)(x)


model = MLP()
key = jax.random.PRNGKey(0)
x = jax.random.normal(key, (32, 4))
y = jnp.sum(x ** 2, axis=1, keepdims=True)
variables = model.init({"params": key, "dropout": key}, x, train=False)
params, batch_stats = variables["params"], variables["batch_stats"]
tx = optax.sgd(0.05, momentum=0.9)
opt_state = tx.init(params)


@jax.jit
def step(params, batch_stats, opt_state, dropout_key):
    def loss_fn(p):
        out, updates = model.apply({"params": p, "batch_stats": batch_stats}, x, train=True,
                                   rngs={"dropout": dropout_key}, mutable=["batch_stats"])
        return jnp.mean((out - y) ** 2), updates["batch_stats"]
    (loss, new_stats), g = jax.value_and_grad(loss_fn, has_aux=True)(params)
    updates, opt_state = tx.update(g, opt_state)
    return optax.apply_updates(params, updates), new_stats, opt_state, loss


for i in range(30):
    params, batch_stats, opt_state, loss = step(params, batch_stats, opt_state, jax.random.fold_in(key, i))
    if i % 10 == 0:
        print(i, loss)
pred = model.apply({"params": params, "batch_stats": batch_stats}, x[:3], train=False)
print("pred", pred.ravel())
print("param count", sum(p.size for p in jax.tree_util.tree_leaves(params)))
