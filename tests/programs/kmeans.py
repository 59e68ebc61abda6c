"""k-means with lax.while_loop until the assignments stop changing."""
import jax
import jax.numpy as jnp
from jax import lax, random

key = random.PRNGKey(21)
k1, k2 = random.split(key)
centers_true = jnp.array([[0.0, 0.0], [3.0, 3.0], [-3.0, 2.0]])
labels = random.randint(k1, (90,), 0, 3)
points = centers_true[labels] + 0.5 * random.normal(k2, (90, 2))


def assign(points, centroids):
    d = jnp.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=-1)
    return jnp.argmin(d, axis=1), jnp.min(d, axis=1).sum()


@jax.jit
def kmeans(points, init):
    def cond(state):
        _, _, changed, it = state
        return changed & (it < 50)

    def body(state):
        centroids, assignment, _, it = state
        new_assignment, _ = assign(points, centroids)
        one_hot = jax.nn.one_hot(new_assignment, centroids.shape[0])
        counts = one_hot.sum(0)
        centroids = (one_hot.T @ points) / jnp.maximum(counts, 1)[:, None]
        return centroids, new_assignment, jnp.any(new_assignment != assignment), it + 1

    a0 = jnp.full(points.shape[0], -1)
    centroids, assignment, _, it = lax.while_loop(cond, body, (init, a0, True, 0))
    return centroids, assignment, it


centroids, assignment, iters = kmeans(points, points[:3])
order = jnp.argsort(centroids[:, 0])
print("iterations", iters)
print("centroids", centroids[order])
print("inertia", assign(points, centroids)[1])
print("cluster sizes", jnp.bincount(assignment, length=3)[order])
