"""custom_jvp for a stable log1pexp, jax.checkpoint, jax.debug.print inside jit."""
import jax
import jax.numpy as jnp


@jax.custom_jvp
def log1pexp(x):
    return jnp.log1p(jnp.exp(x))


@log1pexp.defjvp
def log1pexp_jvp(primals, tangents):
    x, = primals
    t, = tangents
    return log1pexp(x), t * jax.nn.sigmoid(x)


print("naive grad at 100", jax.grad(lambda x: jnp.log1p(jnp.exp(x)))(100.0))
print("custom grad at 100", jax.grad(log1pexp)(100.0))
print("second derivative", jax.grad(jax.grad(log1pexp))(1.0))
print("vmapped", jax.vmap(jax.grad(log1pexp))(jnp.array([-3.0, 0.0, 3.0])))


@jax.custom_vjp
def clip_gradient(x):
    return x


clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))
print("clipped", jax.grad(lambda x: jnp.sum(clip_gradient(x) * jnp.array([0.5, 3.0, -7.0])))(jnp.ones(3)))


@jax.checkpoint
def block(x):
    return jnp.sin(jnp.cos(x) * x)


def deep(x):
    for _ in range(4):
        x = block(x)
    return jnp.sum(x)


print("checkpointed grad", jax.grad(deep)(jnp.array([0.1, 0.5, 1.0])))


@jax.jit
def noisy(x):
    y = jnp.tanh(x) * 2
    jax.debug.print("inside jit y={y}", y=y)
    return y.sum()


print("result", noisy(jnp.array([0.5, -0.25])))
