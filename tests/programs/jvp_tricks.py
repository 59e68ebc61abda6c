"""Forward and reverse mode tricks: jvp, linearize, vjp, HVPs, jacfwd/jacrev, hessian."""
import jax
import jax.numpy as jnp


def f(x):
    return jnp.sum(jnp.sin(x) * jnp.cos(x[::-1]) + x ** 3 / 3.0)


def g(x):
    return jnp.stack([x[0] * x[1], jnp.exp(x[2]) - x[0], jnp.log1p(x[1] ** 2)])


x = jnp.array([0.3, -1.2, 0.7])
v = jnp.array([1.0, 0.5, -2.0])

y, ty = jax.jvp(f, (x,), (v,))
print("jvp", y, ty)
y, f_lin = jax.linearize(g, x)
print("linearize", f_lin(v), f_lin(2 * v))
y, vjp_fn = jax.vjp(g, x)
print("vjp", vjp_fn(jnp.ones(3))[0])


def hvp(f, x, v):
    return jax.jvp(jax.grad(f), (x,), (v,))[1]


print("hvp fwd-over-rev", hvp(f, x, v))
print("hvp rev-over-rev", jax.grad(lambda x: jnp.vdot(jax.grad(f)(x), v))(x))
print("hessian @ v", jax.hessian(f)(x) @ v)
print("jacfwd", jax.jacfwd(g)(x))
print("jacrev", jax.jacrev(g)(x))
print("batched jvp", jax.vmap(lambda t: jax.jvp(g, (x,), (t,))[1])(jnp.eye(3)))
print("grad argnums", jax.grad(lambda a, b: jnp.sum(a * jnp.sin(b)), argnums=(0, 1))(x, v))
