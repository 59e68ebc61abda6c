"""Pytree utilities and functional updates: tree_util, jax.tree, .at[] set/add/min."""
from typing import NamedTuple

import jax
import jax.numpy as jnp
from jax import tree_util


class State(NamedTuple):
    params: dict
    step: jnp.ndarray


params = {"layer1": {"w": jnp.ones((2, 3)), "b": jnp.zeros(3)}, "layer2": [jnp.arange(3.0), 2.0]}
state = State(params, jnp.array(0))
leaves, treedef = tree_util.tree_flatten(state)
print("num leaves", len(leaves), treedef.num_leaves)
print("leaf sums", [float(jnp.sum(l)) for l in leaves])
print("paths", [tree_util.keystr(p) for p, _ in tree_util.tree_flatten_with_path(params)[0]])
doubled = jax.tree.map(lambda x: x * 2, state)
print("doubled step", doubled.step, "layer2", doubled.params["layer2"][0])
total = jax.tree.reduce(lambda a, b: a + jnp.sum(b), params, 0.0)
print("total", total)
print("structure equal", jax.tree.structure(state) == jax.tree.structure(doubled))


@jax.jit
def sgd(state, grads, lr=0.1):
    new = jax.tree.map(lambda p, g: p - lr * g, state.params, grads)
    return State(new, state.step + 1)


grads = jax.tree.map(jnp.ones_like, params)
state = sgd(state, grads)
print("after sgd", state.params["layer1"]["w"][0], state.step)

x = jnp.zeros(6)
x = x.at[1].set(3.0).at[jnp.array([0, 2, 2])].add(1.5).at[4:].set(-1.0)
print("at updates", x)
print("at min/max/mul", x.at[2].min(0.5), x.at[0].max(7.0), x.at[1].multiply(2))
print("at get out of bounds fill", x.at[10].get(mode="fill", fill_value=-9.0))
m = jnp.zeros((3, 3)).at[jnp.diag_indices(3)].set(jnp.array([1.0, 2.0, 3.0]))
print("diag set", m.sum(), jnp.trace(m))
print("grad through at", jax.grad(lambda v: jnp.sum(jnp.zeros(4).at[1:3].add(v ** 2)))(jnp.array([1.0, 2.0])))
