"""diffrax: an Ornstein-Uhlenbeck SDE driven by a VirtualBrownianTree, solved with Euler
under vmap over keys, and a gradient through an ODE by BacksolveAdjoint."""
import diffrax
import jax
import jax.numpy as jnp

t0, t1 = 0.0, 1.0
drift = lambda t, y, args: -args * y
diffusion = lambda t, y, args: 0.3 * jnp.diag(jnp.ones_like(y))


def sample(key, theta):
    bm = diffrax.VirtualBrownianTree(t0, t1, tol=1e-3, shape=(2,), key=key)
    terms = diffrax.MultiTerm(diffrax.ODETerm(drift), diffrax.ControlTerm(diffusion, bm))
    sol = diffrax.diffeqsolve(terms, diffrax.Euler(), t0, t1, dt0=0.05, y0=jnp.array([1.0, -0.5]),
                              args=theta, saveat=diffrax.SaveAt(t1=True))
    return sol.ys[0]


keys = jax.random.split(jax.random.PRNGKey(0), 4)
ys = jax.jit(jax.vmap(sample, in_axes=(0, None)))(keys, 1.5)
print("sde y(1)", ys)
print("mean", jnp.mean(ys, axis=0))


def ode_loss(theta):
    sol = diffrax.diffeqsolve(diffrax.ODETerm(lambda t, y, a: -a * y + jnp.cos(t)), diffrax.Dopri5(),
                              t0, t1, dt0=0.1, y0=jnp.array([1.0, 2.0]), args=theta,
                              stepsize_controller=diffrax.PIDController(rtol=1e-6, atol=1e-6),
                              adjoint=diffrax.BacksolveAdjoint())
    return jnp.sum(sol.ys[-1] ** 2)


print("loss", ode_loss(0.8))
print("dloss/dtheta (backsolve)", jax.grad(ode_loss)(0.8))
