"""Per-example gradients with vmap(grad), clipping and noise as in DP-SGD."""
import jax
import jax.numpy as jnp
from jax import random, vmap
from jax.flatten_util import ravel_pytree


def predict(params, x):
    return jnp.tanh(x @ params["w"] + params["b"]) @ params["v"]


def loss(params, x, y):
    return (predict(params, x) - y) ** 2


key = random.PRNGKey(31)
ks = random.split(key, 5)
params = {"w": random.normal(ks[0], (3, 5)), "b": jnp.zeros(5), "v": random.normal(ks[1], (5,))}
X = random.normal(ks[2], (16, 3))
Y = jnp.sin(X[:, 0]) + X[:, 1]

per_ex = jax.jit(vmap(jax.grad(loss), in_axes=(None, 0, 0)))(params, X, Y)
print("per-example shapes", jax.tree.map(jnp.shape, per_ex))
flat = vmap(lambda g: ravel_pytree(g)[0])(per_ex)
norms = jnp.linalg.norm(flat, axis=1)
print("grad norms", norms[:5])
clipped = flat / jnp.maximum(1.0, norms / 1.0)[:, None]
noisy = clipped.mean(0) + 0.1 * random.normal(ks[3], clipped.shape[1:]) / 16
print("clipped mean grad", noisy[:6])
batch_grad = ravel_pytree(jax.grad(lambda p: jnp.mean(vmap(loss, (None, 0, 0))(p, X, Y)))(params))[0]
print("mean of per-example == batch grad", jnp.allclose(flat.mean(0), batch_grad, atol=1e-5))
