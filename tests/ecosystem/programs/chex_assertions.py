"""chex: assertions, dataclasses and variants on a small function."""
import chex
import jax
import jax.numpy as jnp


@chex.dataclass
class Params:
    w: chex.Array
    b: chex.Array


def f(p: Params, x):
    chex.assert_rank(x, 1)
    chex.assert_equal_shape([p.w, x])
    return jnp.dot(p.w, x) + p.b


p = Params(w=jnp.array([1.0, 2.0, 3.0]), b=jnp.array(0.5))
x = jnp.array([0.1, 0.2, 0.3])
print("f", f(p, x))
print("jit f", jax.jit(f)(p, x))
chex.assert_trees_all_close(jax.grad(f)(p, x).w, x)
chex.assert_shape(jax.vmap(f, in_axes=(None, 0))(p, jnp.stack([x, x])), (2,))
chex.assert_type(x, float)
try:
    chex.assert_rank(jnp.ones((2, 2)), 1)
except AssertionError:
    print("rank assertion raised")
g = chex.chexify(lambda x: (chex.assert_tree_all_finite(x), x * 2)[1])
print("chexify", g(x))
chex.block_until_chexify_assertions_complete()
print("tree leaves", [l.tolist() for l in jax.tree_util.tree_leaves(p)])
