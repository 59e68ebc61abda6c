"""flax.linen: a small CNN with Conv, avg_pool and a scan-free forward pass, its gradient."""
import jax
import jax.numpy as jnp
import flax.linen as nn


class CNN(nn.Module):
    @nn.compact
    def __call__(self, x):
        x = nn.Conv(features=4, kernel_size=(3, 3))(x)
        x = nn.relu(x)
        x = nn.avg_pool(x, window_shape=(2, 2), strides=(2, 2))
        x = x.reshape((x.shape[0], -1))
        x = nn.Dense(features=3)(x)
        return nn.log_softmax(x)


key = jax.random.PRNGKey(1)
x = jax.random.normal(key, (2, 8, 8, 1))
labels = jnp.array([0, 2])
model = CNN()
params = model.init(key, x)["params"]
print(jax.tree_util.tree_map(jnp.shape, params))


def loss(params):
    logp = model.apply({"params": params}, x)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


l, g = jax.jit(jax.value_and_grad(loss))(params)
print("loss", l)
print("grad norms", jax.tree_util.tree_map(lambda a: jnp.linalg.norm(a), g))
