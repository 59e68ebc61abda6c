"""Implicit differentiation of a fixed point with custom_vjp, checked against unrolling."""
from functools import partial

import jax
import jax.numpy as jnp


def fixed_point_iter(f, a, x0, n=60):
    return jax.lax.fori_loop(0, n, lambda _, x: f(a, x), x0)


@partial(jax.custom_vjp, nondiff_argnums=(0,))
def fixed_point(f, a, x0):
    return fixed_point_iter(f, a, x0)


def fixed_point_fwd(f, a, x0):
    x_star = fixed_point(f, a, x0)
    return x_star, (a, x_star)


def fixed_point_bwd(f, res, x_bar):
    a, x_star = res
    _, vjp_a = jax.vjp(lambda a: f(a, x_star), a)
    _, vjp_x = jax.vjp(lambda x: f(a, x), x_star)
    w = fixed_point_iter(lambda _, w: x_bar + vjp_x(w)[0], None, x_bar)
    a_bar, = vjp_a(w)
    return a_bar, jnp.zeros_like(x_star)


fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)


def contraction(a, x):
    return 0.5 * jnp.tanh(a @ x) + jnp.array([0.1, -0.2, 0.3])


a = jnp.array([[0.5, 0.1, 0.0], [0.2, -0.4, 0.3], [0.0, 0.3, 0.6]])
x0 = jnp.zeros(3)
x_star = fixed_point(contraction, a, x0)
print("fixed point", x_star)
print("residual", jnp.linalg.norm(contraction(a, x_star) - x_star))
loss = lambda a: jnp.sum(fixed_point(contraction, a, x0) ** 2)
unrolled = lambda a: jnp.sum(fixed_point_iter(contraction, a, x0) ** 2)
print("implicit grad", jax.grad(loss)(a)[0])
print("unrolled grad", jax.grad(unrolled)(a)[0])
print("jit implicit grad", jax.jit(jax.grad(loss))(a)[1])
