"""chex: a test written with chex.variants (jit, no jit, device), frozen and mappable
dataclasses, Dimensions, assert_max_traces and fake_jit, as chex's README shows."""
import io
import unittest

import chex
import jax
import jax.numpy as jnp


@chex.dataclass(frozen=True)
class Layer:
    w: chex.Array
    b: chex.Array

    def __call__(self, x):
        return jnp.tanh(x @ self.w + self.b)


dims = chex.Dimensions(B=4, I=3, O=2)
layer = Layer(w=jnp.linspace(-1.0, 1.0, 6).reshape(dims["IO"]), b=jnp.array([0.1, -0.2]))
x = jnp.arange(12.0).reshape(dims["BI"]) / 10.0
chex.assert_shape(layer(x), dims["BO"])
print("layer", layer(x))
print("replace", layer.replace(b=jnp.zeros(2))(x)[0])
print("leaves", [l.shape for l in jax.tree_util.tree_leaves(layer)])
doubled = jax.tree_util.tree_map(lambda a: 2 * a, layer)
print("tree_map keeps the class", type(doubled).__name__, doubled.b)

results = []


class LayerTest(chex.TestCase):

    @chex.variants(with_jit=True, without_jit=True, with_device=True)
    def test_layer_and_grad(self):
        @self.variant
        def loss(l, x):
            return jnp.sum(l(x) ** 2)

        value = loss(layer, x)
        grads = jax.grad(loss)(layer, x)
        chex.assert_tree_all_finite(grads)
        chex.assert_trees_all_equal_shapes(grads, layer)
        results.append((float(value), float(jnp.sum(grads.w)), float(jnp.sum(grads.b))))


suite = unittest.TestLoader().loadTestsFromTestCase(LayerTest)
outcome = unittest.TextTestRunner(stream=io.StringIO(), verbosity=0).run(suite)
print("variants run", outcome.testsRun, "failures", len(outcome.failures) + len(outcome.errors))
for value, gw, gb in sorted(results):
    print("variant value", value, "grad sums", gw, gb)
chex.assert_trees_all_close(results[0], results[-1], rtol=1e-5)


@jax.jit
@chex.assert_max_traces(n=1)
def scaled(v):
    return v * 3.0


print("traced once", scaled(jnp.ones(2)), scaled(jnp.zeros(2)))
try:
    scaled(jnp.ones(3))  # a new shape means a second trace
except AssertionError:
    print("second trace refused")

with chex.fake_jit():
    seen = []
    f = jax.jit(lambda v: seen.append(isinstance(v, jax.core.Tracer)) or v + 1)
    print("fake_jit", f(jnp.ones(2)), "traced:", seen)
seen = []
jax.jit(lambda v: seen.append(isinstance(v, jax.core.Tracer)) or v)(1.0)
print("real jit traced:", seen)

try:
    chex.assert_trees_all_close(layer, doubled)
except AssertionError:
    print("trees differ")
chex.assert_equal_shape_prefix([x, layer(x)], 1)
chex.assert_rank([x, layer.b], {1, 2})
print("dims", dims["BIO"])
