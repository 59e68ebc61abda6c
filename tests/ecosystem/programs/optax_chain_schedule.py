"""optax: a chained transformation with clipping, weight decay and a cosine schedule."""
import jax
import jax.numpy as jnp
import optax

schedule = optax.warmup_cosine_decay_schedule(0.0, 0.05, warmup_steps=5, decay_steps=50)
tx = optax.chain(optax.clip_by_global_norm(1.0), optax.adamw(schedule, weight_decay=1e-3))


def rosenbrock(p):
    return jnp.sum(100.0 * (p[1:] - p[:-1] ** 2) ** 2 + (1.0 - p[:-1]) ** 2)


params = jnp.array([-1.2, 1.0, 0.8, -0.5])
state = tx.init(params)
for i in range(50):
    loss, g = jax.value_and_grad(rosenbrock)(params)
    updates, state = tx.update(g, state, params)
    params = optax.apply_updates(params, updates)
    if i % 10 == 0:
        print(i, loss, schedule(i))
print("params", params)
print("global norm", optax.global_norm(g))
print("softmax xent", optax.softmax_cross_entropy_with_integer_labels(
    jnp.array([[1.0, 2.0, 0.5], [0.1, 0.2, 3.0]]), jnp.array([1, 2])))
