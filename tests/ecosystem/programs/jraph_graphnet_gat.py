"""jraph: a GraphNetwork and a GAT layer over padded graphs, trained with optax,
as jraph's README and examples show (segment sums, softmax and max over edges)."""
import jax
import jax.numpy as jnp
import jraph
import optax

# Two small directed graphs, batched and padded to a fixed size as jraph's docs advise.
g1 = jraph.GraphsTuple(nodes=jnp.array([[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]),
                       edges=jnp.array([[1.0], [0.5], [-1.0]]),
                       senders=jnp.array([0, 1, 2]), receivers=jnp.array([1, 2, 0]),
                       n_node=jnp.array([3]), n_edge=jnp.array([3]), globals=jnp.array([[0.1]]))
g2 = jraph.GraphsTuple(nodes=jnp.array([[0.5, -0.5], [2.0, 0.0]]), edges=jnp.array([[0.2], [0.3]]),
                       senders=jnp.array([0, 1]), receivers=jnp.array([1, 0]),
                       n_node=jnp.array([2]), n_edge=jnp.array([2]), globals=jnp.array([[-0.2]]))
graph = jraph.pad_with_graphs(jraph.batch([g1, g2]), n_node=7, n_edge=8, n_graph=3)
node_mask = jraph.get_node_padding_mask(graph)
graph_mask = jraph.get_graph_padding_mask(graph)
print("masks", node_mask.astype(jnp.int32), graph_mask.astype(jnp.int32))

key = jax.random.PRNGKey(0)
k1, k2, k3, k4 = jax.random.split(key, 4)
params = {
    "edge": jax.random.normal(k1, (1 + 2 + 2 + 1, 4)) * 0.3,
    "node": jax.random.normal(k2, (2 + 4 + 4 + 1, 3)) * 0.3,
    "glob": jax.random.normal(k3, (3 + 4 + 1, 1)) * 0.3,
    "att": jax.random.normal(k4, (6, 1)) * 0.3,
}


def network(p, g):
    @jraph.concatenated_args
    def update_edge(features):
        return jnp.tanh(features @ p["edge"])

    @jraph.concatenated_args
    def update_node(features):
        return jax.nn.relu(features @ p["node"])

    @jraph.concatenated_args
    def update_global(features):
        return features @ p["glob"]

    gn = jraph.GraphNetwork(update_edge_fn=update_edge, update_node_fn=update_node,
                            update_global_fn=update_global,
                            aggregate_edges_for_nodes_fn=jraph.segment_sum,
                            aggregate_nodes_for_globals_fn=jraph.segment_mean,
                            aggregate_edges_for_globals_fn=jraph.segment_max)
    g = gn(g)

    def logits(sent, received, edges):
        return jax.nn.leaky_relu(jnp.concatenate([sent, received], -1) @ p["att"])

    gat = jraph.GAT(attention_query_fn=lambda n: n, attention_logit_fn=logits,
                    node_update_fn=jnp.tanh)
    return gat(g)


out = network(params, graph)
print("nodes", jnp.where(node_mask[:, None], out.nodes, 0.0))
print("globals", jnp.where(graph_mask[:, None], out.globals, 0.0))
print("segment_softmax", jraph.segment_softmax(graph.edges[:, 0], graph.receivers, 7))
print("segment_max", jraph.segment_max_or_constant(graph.edges[:, 0], graph.receivers, 7))

targets = jnp.array([[1.0], [-1.0], [0.0]])


def loss(p):
    g = network(p, graph)
    err = jnp.where(graph_mask[:, None], g.globals - targets, 0.0)
    return jnp.sum(err ** 2) / jnp.sum(graph_mask)


opt = optax.adam(0.05)
state = opt.init(params)


@jax.jit
def step(p, s):
    value, grads = jax.value_and_grad(loss)(p)
    updates, s = opt.update(grads, s, p)
    return optax.apply_updates(p, updates), s, value


for i in range(30):
    params, state, value = step(params, state)
    if i % 10 == 0:
        print("step", i, "loss", value)
print("final loss", loss(params))
print("vmap over graphs' globals", jax.vmap(lambda t: jnp.sum(t ** 2))(targets))
