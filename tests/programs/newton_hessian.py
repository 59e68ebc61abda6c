"""Newton's method with jax.hessian on a smooth convex function."""
import jax
import jax.numpy as jnp


def f(x):
    return jnp.sum(jnp.exp(0.5 * x) - x) + 0.5 * jnp.sum((x[1:] - x[:-1]) ** 2) + 0.1 * jnp.sum(x ** 4)


g = jax.jit(jax.grad(f))
H = jax.jit(jax.hessian(f))
x = jnp.array([1.0, -1.0, 2.0, 0.5])
for it in range(4):
    step = jnp.linalg.solve(H(x), g(x))
    x = x - step
    print(f"iter {it} f={f(x):.6f} |step|={jnp.linalg.norm(step):.3e}")
print("x*", x)
print("hessian diag", jnp.diag(H(x)))
print("jacfwd == jacrev", jnp.allclose(jax.jacfwd(g)(x), jax.jacrev(g)(x), atol=1e-5))
