"""jraph: a GCN layer over a batched GraphsTuple, as jraph's README shows."""
import jax
import jax.numpy as jnp
import jraph

g1 = jraph.GraphsTuple(nodes=jnp.array([[1.0], [2.0], [3.0]]), edges=jnp.ones((2, 1)),
                       senders=jnp.array([0, 1]), receivers=jnp.array([1, 2]),
                       n_node=jnp.array([3]), n_edge=jnp.array([2]), globals=jnp.zeros((1, 1)))
g2 = jraph.GraphsTuple(nodes=jnp.array([[0.5], [-1.0]]), edges=jnp.ones((1, 1)),
                       senders=jnp.array([1]), receivers=jnp.array([0]),
                       n_node=jnp.array([2]), n_edge=jnp.array([1]), globals=jnp.zeros((1, 1)))
batch = jraph.batch([g1, g2])
w = jnp.array([[0.7, -0.3]])
gcn = jraph.GraphConvolution(update_node_fn=lambda n: jnp.tanh(n @ w), add_self_edges=True)
out = gcn(batch)
print("nodes", out.nodes)
padded = jraph.pad_with_graphs(batch, n_node=8, n_edge=6, n_graph=3)
print("padded n_node", padded.n_node)
print("segment_sum", jraph.segment_sum(batch.nodes[:, 0], jraph.get_node_padding_mask(padded)[:5].astype(jnp.int32), 2))
loss = lambda w: jnp.sum(jraph.GraphConvolution(lambda n: jnp.tanh(n @ w))(batch).nodes ** 2)
print("grad", jax.grad(loss)(w))
unb = jraph.unbatch(out)
print("unbatched", [u.nodes.shape for u in unb])
