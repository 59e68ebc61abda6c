"""Image ops: jax.image.resize in several methods, a Gaussian blur with convolve2d."""
import jax
import jax.numpy as jnp
from jax.scipy.signal import convolve2d

yy, xx = jnp.mgrid[0:8, 0:8]
img = jnp.sin(xx / 2.0) * jnp.cos(yy / 3.0)

up = jax.image.resize(img, (16, 16), method="bilinear")
down = jax.image.resize(img, (4, 4), method="linear")
cubic = jax.image.resize(img, (12, 10), method="cubic")
nearest = jax.image.resize(img, (5, 5), method="nearest")
print("bilinear up", up.shape, up[5, :4])
print("linear down", down[1])
print("cubic", cubic.shape, cubic.sum())
print("nearest", nearest[2])

k = jnp.exp(-0.5 * (jnp.arange(-2, 3) / 1.0) ** 2)
kernel = jnp.outer(k, k) / jnp.sum(k) ** 2
blurred = convolve2d(img, kernel, mode="same")
print("blur", blurred[3, 2:6])
rgb = jnp.stack([img, img.T, -img], axis=-1)
print("rgb resize", jax.image.resize(rgb, (4, 6, 3), method="lanczos3").mean(axis=(0, 1)))
print("grad through resize", jax.grad(lambda im: jnp.sum(jax.image.resize(im, (5, 5), "linear") ** 2))(img)[0, :4])
