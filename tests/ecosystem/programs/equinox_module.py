"""equinox: a custom eqx.Module with a static field, tree_at surgery and filter_grad."""
import equinox as eqx
import jax
import jax.numpy as jnp


class Linear(eqx.Module):
    weight: jax.Array
    bias: jax.Array
    name: str = eqx.field(static=True)

    def __init__(self, n_in, n_out, key, name="lin"):
        self.weight = jax.random.normal(key, (n_out, n_in)) / jnp.sqrt(n_in)
        self.bias = jnp.zeros(n_out)
        self.name = name

    def __call__(self, x):
        return self.weight @ x + self.bias


key = jax.random.PRNGKey(3)
lin = Linear(3, 2, key)
x = jnp.array([1.0, -1.0, 0.5])
print(lin.name, lin(x))


@eqx.filter_grad
def g(model, x):
    return jnp.sum(jnp.tanh(model(x)))


grads = g(lin, x)
print("dW", grads.weight)
print("db", grads.bias)
lin2 = eqx.tree_at(lambda m: m.bias, lin, jnp.ones(2))
print("tree_at", lin2(x))
print("partition", [l.shape for l in jax.tree_util.tree_leaves(eqx.partition(lin, eqx.is_array)[0])])
print("filter_vmap", eqx.filter_vmap(lin)(jnp.stack([x, 2 * x])))
