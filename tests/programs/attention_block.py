"""A pre-LN transformer block: multi-head self-attention with a causal mask, MLP."""
import jax
import jax.numpy as jnp
from jax import random

D, HEADS, T = 16, 4, 6


def layer_norm(x, scale, bias, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = x.var(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * scale + bias


def attention(p, x):
    q, k, v = jnp.split(x @ p["qkv"], 3, axis=-1)
    split = lambda a: a.reshape(T, HEADS, D // HEADS).transpose(1, 0, 2)
    q, k, v = map(split, (q, k, v))
    scores = jnp.einsum("htd,hsd->hts", q, k) / jnp.sqrt(D // HEADS)
    mask = jnp.tril(jnp.ones((T, T), dtype=bool))
    scores = jnp.where(mask, scores, -1e9)
    weights = jax.nn.softmax(scores, axis=-1)
    out = jnp.einsum("hts,hsd->htd", weights, v).transpose(1, 0, 2).reshape(T, D)
    return out @ p["proj"], weights


def block(p, x):
    h, w = attention(p, layer_norm(x, p["ln1_s"], p["ln1_b"]))
    x = x + h
    h = jax.nn.gelu(layer_norm(x, p["ln2_s"], p["ln2_b"]) @ p["fc1"]) @ p["fc2"]
    return x + h, w


keys = random.split(random.PRNGKey(7), 5)
p = {"qkv": random.normal(keys[0], (D, 3 * D)) / jnp.sqrt(D),
     "proj": random.normal(keys[1], (D, D)) / jnp.sqrt(D),
     "fc1": random.normal(keys[2], (D, 4 * D)) / jnp.sqrt(D),
     "fc2": random.normal(keys[3], (4 * D, D)) / jnp.sqrt(4 * D),
     "ln1_s": jnp.ones(D), "ln1_b": jnp.zeros(D), "ln2_s": jnp.ones(D), "ln2_b": jnp.zeros(D)}
x = random.normal(keys[4], (T, D))

y, w = jax.jit(block)(p, x)
print("out mean/std", y.mean(), y.std())
print("attention row 2", w[0, 2, :3])
batched = jax.vmap(block, in_axes=(None, 0))(p, jnp.stack([x, 2 * x]))[0]
print("batched out sum", batched.sum(axis=(1, 2)))
g = jax.grad(lambda p: jnp.sum(block(p, x)[0] ** 2))(p)
print("grad qkv norm", jnp.linalg.norm(g["qkv"]))
print("grad ln1 scale", g["ln1_s"][:4])
