"""MLP classifier on two moons-ish data: init, jit train step, accuracy."""
import jax
import jax.numpy as jnp
from jax import random


def init_params(key, sizes):
    keys = random.split(key, len(sizes) - 1)
    params = []
    for k, (m, n) in zip(keys, zip(sizes[:-1], sizes[1:])):
        wk, bk = random.split(k)
        params.append({"w": random.normal(wk, (m, n)) * jnp.sqrt(2.0 / m),
                       "b": jnp.zeros(n)})
    return params


def forward(params, x):
    for layer in params[:-1]:
        x = jax.nn.relu(x @ layer["w"] + layer["b"])
    last = params[-1]
    return x @ last["w"] + last["b"]


def loss_fn(params, x, y):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * jax.nn.one_hot(y, 2), axis=-1))


@jax.jit
def update(params, x, y, lr=0.1):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    params = jax.tree.map(lambda p, g: p - lr * g, params, grads)
    return params, loss


key = random.PRNGKey(0)
key, dkey, nkey = random.split(key, 3)
t = random.uniform(dkey, (128,), minval=0.0, maxval=jnp.pi)
labels = (jnp.arange(128) % 2).astype(jnp.int32)
x = jnp.stack([jnp.cos(t) + labels, jnp.sin(t) * (1 - 2 * labels) + 0.5 * labels], axis=1)
x = x + 0.1 * random.normal(nkey, x.shape)

params = init_params(key, [2, 16, 16, 2])
for step in range(60):
    params, loss = update(params, x, labels)
    if step % 20 == 0:
        print(f"step {step:3d} loss {loss:.5f}")
acc = jnp.mean(jnp.argmax(forward(params, x), axis=-1) == labels)
print("final loss", loss_fn(params, x, labels))
print("accuracy", acc)
print("param count", sum(p.size for p in jax.tree.leaves(params)))
