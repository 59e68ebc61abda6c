"""A small gravitational n-body simulation: pairwise forces with vmap, leapfrog with fori_loop."""
import jax
import jax.numpy as jnp
from jax import vmap


def pairwise_acc(pos, masses, soft=0.1):
    def acc_on(xi):
        d = pos - xi
        r2 = jnp.sum(d ** 2, axis=-1) + soft ** 2
        return jnp.sum((masses / r2 ** 1.5)[:, None] * d, axis=0)
    return vmap(acc_on)(pos)


def energy(pos, vel, masses, soft=0.1):
    kinetic = 0.5 * jnp.sum(masses * jnp.sum(vel ** 2, -1))
    d = pos[:, None, :] - pos[None, :, :]
    r = jnp.sqrt(jnp.sum(d ** 2, -1) + soft ** 2)
    pot = -0.5 * jnp.sum(jnp.triu(masses[:, None] * masses[None, :] / r, k=1)) * 2
    return kinetic + pot


@jax.jit
def simulate(pos, vel, masses, dt=0.01, steps=100):
    def body(_, state):
        pos, vel = state
        vel = vel + 0.5 * dt * pairwise_acc(pos, masses)
        pos = pos + dt * vel
        vel = vel + 0.5 * dt * pairwise_acc(pos, masses)
        return pos, vel
    return jax.lax.fori_loop(0, steps, body, (pos, vel))


key = jax.random.PRNGKey(17)
kp, kv, km = jax.random.split(key, 3)
pos = jax.random.normal(kp, (5, 2))
vel = 0.3 * jax.random.normal(kv, (5, 2))
masses = jax.random.uniform(km, (5,), minval=0.5, maxval=1.5)
e0 = energy(pos, vel, masses)
pos1, vel1 = simulate(pos, vel, masses)
print("energy before", e0)
print("energy after", energy(pos1, vel1, masses))
print("center of mass", jnp.sum(masses[:, None] * pos1, 0) / masses.sum())
print("dE/dpos0", jax.grad(energy)(pos, vel, masses)[0])
