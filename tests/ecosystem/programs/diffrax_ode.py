"""diffrax: solve an ODE with Tsit5 and a PID controller, and differentiate through it."""
import diffrax
import jax
import jax.numpy as jnp


def vector_field(t, y, args):
    k = args
    return -k * y + jnp.sin(t)


term = diffrax.ODETerm(vector_field)
solver = diffrax.Tsit5()
saveat = diffrax.SaveAt(ts=jnp.linspace(0.0, 2.0, 5))
controller = diffrax.PIDController(rtol=1e-6, atol=1e-6)


def solve(k):
    sol = diffrax.diffeqsolve(term, solver, t0=0.0, t1=2.0, dt0=0.1, y0=jnp.array([1.0, 0.5]),
                              args=k, saveat=saveat, stepsize_controller=controller)
    return sol.ys


ys = solve(0.7)
print("ys", ys)
print("dloss/dk", jax.grad(lambda k: jnp.sum(solve(k)[-1]))(0.7))
