"""Graph neural network message passing with jax.ops.segment_sum on an edge list."""
import jax
import jax.numpy as jnp
from jax import random

senders = jnp.array([0, 1, 2, 3, 4, 0, 2, 5, 1])
receivers = jnp.array([1, 2, 3, 4, 5, 5, 0, 3, 4])
num_nodes = 6


def gnn_layer(params, h):
    messages = jax.nn.relu(h[senders] @ params["msg"])
    agg = jax.ops.segment_sum(messages, receivers, num_segments=num_nodes)
    deg = jax.ops.segment_sum(jnp.ones_like(receivers, dtype=h.dtype), receivers, num_segments=num_nodes)
    agg = agg / jnp.maximum(deg, 1.0)[:, None]
    return jnp.tanh(h @ params["self"] + agg)


def readout(params_list, h):
    for p in params_list:
        h = gnn_layer(p, h)
    return jnp.sum(h, axis=0)


key = random.PRNGKey(8)
keys = random.split(key, 5)
features = random.normal(keys[0], (num_nodes, 4))
params_list = [{"msg": random.normal(keys[i], (4, 4)) * 0.5,
                "self": random.normal(keys[i + 2], (4, 4)) * 0.5} for i in (1, 2)]
out = jax.jit(readout)(params_list, features)
print("graph embedding", out)
print("max per segment", jax.ops.segment_max(features[:, 0], receivers[:6], num_segments=num_nodes))
g = jax.grad(lambda ps: jnp.sum(readout(ps, features) ** 2))(params_list)
print("grad norms", [float(jnp.linalg.norm(p["msg"])) for p in g])
