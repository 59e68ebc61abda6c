"""A VAE with the reparameterisation trick; value_and_grad(has_aux=True) and Adam."""
import jax
import jax.numpy as jnp
from jax import random
from jax.example_libraries import optimizers

X_DIM, Z_DIM, HID = 6, 2, 12


def dense_init(key, m, n):
    return random.normal(key, (m, n)) * jnp.sqrt(1.0 / m), jnp.zeros(n)


def init(key):
    k = random.split(key, 4)
    return {"enc": dense_init(k[0], X_DIM, HID), "mu": dense_init(k[1], HID, Z_DIM),
            "logvar": dense_init(k[2], HID, Z_DIM), "dec": dense_init(k[3], Z_DIM, X_DIM)}


def apply(layer, x):
    w, b = layer
    return x @ w + b


def elbo_loss(params, x, key):
    h = jnp.tanh(apply(params["enc"], x))
    mu, logvar = apply(params["mu"], h), apply(params["logvar"], h)
    eps = random.normal(key, mu.shape)
    z = mu + jnp.exp(0.5 * logvar) * eps
    recon = apply(params["dec"], z)
    rec = jnp.sum((recon - x) ** 2, axis=-1).mean()
    kl = -0.5 * jnp.sum(1 + logvar - mu ** 2 - jnp.exp(logvar), axis=-1).mean()
    return rec + kl, {"rec": rec, "kl": kl}


key = random.PRNGKey(3)
key, dk, pk = random.split(key, 3)
data = random.normal(dk, (32, Z_DIM)) @ random.normal(pk, (Z_DIM, X_DIM))
opt_init, opt_update, get_params = optimizers.adam(1e-2)
state = opt_init(init(key))


@jax.jit
def step(i, state, key):
    (loss, aux), g = jax.value_and_grad(elbo_loss, has_aux=True)(get_params(state), data, key)
    return opt_update(i, g, state), loss, aux


for i in range(40):
    key, sub = random.split(key)
    state, loss, aux = step(i, state, sub)
    if i % 10 == 0:
        print(f"{i} loss={loss:.4f} rec={aux['rec']:.4f} kl={aux['kl']:.4f}")
print("final loss", loss)
