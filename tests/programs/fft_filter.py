"""Signal processing with jnp.fft: low-pass filtering, a spectral derivative, a 2-d FFT."""
import jax
import jax.numpy as jnp

n = 64
t = jnp.arange(n) / n
signal = jnp.sin(2 * jnp.pi * 3 * t) + 0.5 * jnp.sin(2 * jnp.pi * 20 * t)

spec = jnp.fft.rfft(signal)
freqs = jnp.fft.rfftfreq(n, d=1.0 / n)
filtered = jnp.fft.irfft(jnp.where(freqs < 10, spec, 0), n=n)
print("peak bins", jnp.argsort(jnp.abs(spec))[-2:])
print("filtered err", jnp.max(jnp.abs(filtered - jnp.sin(2 * jnp.pi * 3 * t))))

k = 2j * jnp.pi * jnp.fft.fftfreq(n, d=1.0 / n)
deriv = jnp.fft.ifft(k * jnp.fft.fft(signal)).real
print("spectral derivative", deriv[:3])
print("fft dtype", spec.dtype, jnp.fft.fft(signal).dtype)

img = jnp.outer(jnp.cos(2 * jnp.pi * t[:8] * 2), jnp.ones(8))
print("fft2 energy", jnp.sum(jnp.abs(jnp.fft.fft2(img)) ** 2) / 64)
print("fftshift", jnp.fft.fftshift(jnp.arange(6)))
power = lambda x: jnp.sum(jnp.abs(jnp.fft.rfft(x)[1:5]) ** 2)
print("grad of band power", jax.grad(power)(signal)[:4])
