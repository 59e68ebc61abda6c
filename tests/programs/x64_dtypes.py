"""dtype rules in JAX's default 32-bit mode and after enabling x64."""
import numpy as np
import jax
import jax.numpy as jnp

x = jnp.arange(4)
print("arange", x.dtype, jnp.arange(4.0).dtype, jnp.linspace(0, 1, 3).dtype)
print("from numpy f64", jnp.asarray(np.ones(2)).dtype, "int64", jnp.asarray(np.arange(2)).dtype)
print("weak scalar", (jnp.ones(2, jnp.float16) * 2.0).dtype, (x * 2.5).dtype)
print("promotion", (jnp.ones(2, jnp.int8) + jnp.ones(2, jnp.uint8)).dtype,
      (jnp.ones(2, jnp.bfloat16) + jnp.ones(2, jnp.float16)).dtype)
print("sum int8", jnp.sum(jnp.ones(3, jnp.int8)).dtype, "mean int", jnp.mean(x).dtype)
print("precision", jnp.float32(1) / 3, jnp.exp(jnp.float32(1.0)))
print("grad dtype", jax.grad(lambda t: t ** 2)(3.0).dtype)
print("random dtype", jax.random.normal(jax.random.PRNGKey(0), (2,)).dtype)

jax.config.update("jax_enable_x64", True)
y = jnp.arange(4.0)
print("x64 arange", jnp.arange(4).dtype, y.dtype, jnp.asarray(np.ones(2)).dtype)
print("x64 weak", (jnp.ones(2, jnp.float32) * 2.0).dtype, (jnp.arange(3) * 1.5).dtype)
print("x64 precision", jnp.float64(1) / 3)
print("x64 grad", jax.grad(lambda t: jnp.sin(t) * t)(1.0))
print("x64 random", jax.random.uniform(jax.random.PRNGKey(0), (2,)))
print("x64 jit", jax.jit(lambda a: a.sum() / 3)(y))
