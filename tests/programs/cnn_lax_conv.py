"""A tiny CNN written with lax.conv_general_dilated and reduce_window pooling."""
import jax
import jax.numpy as jnp
from jax import lax, random


def conv(x, w, b):
    y = lax.conv_general_dilated(x, w, window_strides=(1, 1), padding="SAME",
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return y + b


def maxpool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def model(params, x):
    x = jax.nn.gelu(conv(x, params["c1"], params["b1"]))
    x = maxpool(x)
    x = jax.nn.relu(conv(x, params["c2"], params["b2"]))
    x = jnp.mean(x, axis=(1, 2))
    return x @ params["dense"]


def loss(params, x, y):
    logits = model(params, x)
    return jnp.mean(jax.nn.logsumexp(logits, axis=-1) - jnp.take_along_axis(logits, y[:, None], axis=1)[:, 0])


k1, k2, k3, k4, k5 = random.split(random.key(42), 5)
params = {
    "c1": random.normal(k1, (3, 3, 1, 4)) * 0.3, "b1": jnp.zeros(4),
    "c2": random.normal(k2, (3, 3, 4, 8)) * 0.2, "b2": jnp.zeros(8),
    "dense": random.normal(k3, (8, 3)) * 0.3,
}
images = random.normal(k4, (6, 8, 8, 1))
labels = random.randint(k5, (6,), 0, 3)

grad_fn = jax.jit(jax.grad(loss))
print("initial loss", loss(params, images, labels))
for i in range(15):
    g = grad_fn(params, images, labels)
    params = jax.tree_util.tree_map(lambda p, g: p - 0.5 * g, params, g)
print("final loss", loss(params, images, labels))
print("output shape", model(params, images).shape)
print("grad norm c1", jnp.linalg.norm(g["c1"]))
