"""A RealNVP-style normalizing flow: affine coupling layers, exact log-likelihood."""
import jax
import jax.numpy as jnp
from jax import random
from jax.flatten_util import ravel_pytree


def coupling_init(key, d=2, hidden=16):
    k1, k2 = random.split(key)
    return {"w1": random.normal(k1, (d // 2, hidden)) * 0.3, "b1": jnp.zeros(hidden),
            "w2": random.normal(k2, (hidden, d)) * 0.01, "b2": jnp.zeros(d)}


def coupling_forward(p, x, flip):
    x1, x2 = (x[..., 1:], x[..., :1]) if flip else (x[..., :1], x[..., 1:])
    h = jax.nn.relu(x1 @ p["w1"] + p["b1"])
    s, t = jnp.split(h @ p["w2"] + p["b2"], 2, axis=-1)
    s = jnp.tanh(s)
    y2 = x2 * jnp.exp(s) + t
    y = jnp.concatenate([y2, x1] if flip else [x1, y2], axis=-1)
    return y, jnp.sum(s, axis=-1)


def log_likelihood(layers, x):
    logdet = 0.0
    for i, p in enumerate(layers):
        x, ld = coupling_forward(p, x, flip=i % 2 == 1)
        logdet = logdet + ld
    base = jax.scipy.stats.norm.logpdf(x).sum(-1)
    return jnp.mean(base + logdet)


key = random.PRNGKey(4)
layers = [coupling_init(k) for k in random.split(key, 4)]
data = random.normal(random.PRNGKey(9), (64, 2)) * jnp.array([0.5, 2.0]) + jnp.array([1.0, -1.0])

flat, unravel = ravel_pytree(layers)
print("num params", flat.size)
nll = jax.jit(lambda f: -log_likelihood(unravel(f), data))
grad = jax.jit(jax.grad(lambda f: -log_likelihood(unravel(f), data)))
print("initial nll", nll(flat))
for _ in range(40):
    flat = flat - 0.05 * grad(flat)
print("final nll", nll(flat))
print("first params", flat[:3])
