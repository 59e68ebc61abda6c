"""MAML on sine regression: an inner SGD step, the meta-gradient through it (grad of grad)."""
import jax
import jax.numpy as jnp
from jax import random, vmap


def net(params, x):
    w1, b1, w2, b2 = params
    return jnp.tanh(x[:, None] * w1 + b1) @ w2 + b2


def mse(params, x, y):
    return jnp.mean((net(params, x) - y) ** 2)


def inner_update(params, x, y, alpha=0.05):
    g = jax.grad(mse)(params, x, y)
    return [p - alpha * gp for p, gp in zip(params, g)]


def maml_loss(params, xs_tr, ys_tr, xs_te, ys_te):
    def task_loss(x_tr, y_tr, x_te, y_te):
        return mse(inner_update(params, x_tr, y_tr), x_te, y_te)
    return jnp.mean(vmap(task_loss)(xs_tr, ys_tr, xs_te, ys_te))


def sample_tasks(key, n_tasks=4, n=10):
    ka, kp, kx = random.split(key, 3)
    amp = random.uniform(ka, (n_tasks, 1), minval=0.5, maxval=2.0)
    phase = random.uniform(kp, (n_tasks, 1), maxval=jnp.pi)
    x = random.uniform(kx, (n_tasks, 2 * n), minval=-3.0, maxval=3.0)
    y = amp * jnp.sin(x + phase)
    return x[:, :n], y[:, :n], x[:, n:], y[:, n:]


key = random.PRNGKey(0)
k1, k2, key = random.split(key, 3)
params = [random.normal(k1, (20,)) * 0.5, jnp.zeros(20), random.normal(k2, (20,)) * 0.2, jnp.array(0.0)]
meta_step = jax.jit(jax.value_and_grad(maml_loss))
for it in range(20):
    key, sub = random.split(key)
    loss, g = meta_step(params, *sample_tasks(sub))
    params = [p - 0.01 * gp for p, gp in zip(params, g)]
    if it % 5 == 0:
        print(f"meta iter {it} loss {loss:.5f}")
hess_vec = jax.jvp(jax.grad(lambda p: maml_loss(p, *sample_tasks(key))), (params,),
                   ([jnp.ones_like(p) for p in params],))[1]
print("hvp norms", [float(jnp.linalg.norm(h)) for h in hess_vec])
