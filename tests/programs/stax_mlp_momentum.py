"""example_libraries.stax: a small conv net, trained with optimizers.momentum."""
import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import optimizers, stax
from jax.example_libraries.stax import Conv, Dense, Flatten, LogSoftmax, Relu

init_fun, apply_fun = stax.serial(
    Conv(4, (3, 3), padding="SAME"), Relu,
    Flatten, Dense(16), Relu, Dense(3), LogSoftmax)

key = random.PRNGKey(0)
out_shape, params = init_fun(key, (-1, 6, 6, 1))
print("output shape", tuple(int(d) for d in out_shape))
print("param shapes", jax.tree.map(jnp.shape, params))

k1, k2 = random.split(random.PRNGKey(1))
images = random.normal(k1, (12, 6, 6, 1))
labels = jax.nn.one_hot(random.randint(k2, (12,), 0, 3), 3)


def loss(params, batch):
    x, y = batch
    return -jnp.mean(jnp.sum(apply_fun(params, x) * y, axis=1))


opt_init, opt_update, get_params = optimizers.momentum(0.05, mass=0.9)
opt_state = opt_init(params)


@jax.jit
def update(i, opt_state, batch):
    value, grads = jax.value_and_grad(loss)(get_params(opt_state), batch)
    return opt_update(i, grads, opt_state), value


for i in range(25):
    opt_state, value = update(i, opt_state, (images, labels))
print("final loss", value)
preds = jnp.argmax(apply_fun(get_params(opt_state), images), axis=1)
print("train accuracy", jnp.mean(preds == jnp.argmax(labels, axis=1)))
print("grad norm", optimizers.l2_norm(jax.grad(loss)(get_params(opt_state), (images, labels))))
