"""An LSTM over a sequence with lax.scan, trained a few steps to predict a sine."""
import jax
import jax.numpy as jnp
from jax import lax, random

H = 8


def lstm_cell(params, carry, x):
    h, c = carry
    z = x @ params["wx"] + h @ params["wh"] + params["b"]
    i, f, g, o = jnp.split(z, 4, axis=-1)
    c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
    h = jax.nn.sigmoid(o) * jnp.tanh(c)
    return (h, c), h


def predict(params, xs):
    init = (jnp.zeros(H), jnp.zeros(H))
    _, hs = lax.scan(lambda carry, x: lstm_cell(params, carry, x), init, xs)
    return hs @ params["out"]


def loss(params, xs, ys):
    return jnp.mean((predict(params, xs)[:, 0] - ys) ** 2)


key = random.PRNGKey(1)
ks = random.split(key, 3)
params = {"wx": random.normal(ks[0], (1, 4 * H)) * 0.5,
          "wh": random.normal(ks[1], (H, 4 * H)) * 0.3,
          "b": jnp.zeros(4 * H),
          "out": random.normal(ks[2], (H, 1)) * 0.3}
ts = jnp.linspace(0, 4 * jnp.pi, 40)
xs = jnp.sin(ts)[:, None]
ys = jnp.sin(ts + 0.3)

step = jax.jit(lambda p: jax.tree.map(lambda a, g: a - 0.2 * g, p, jax.grad(loss)(p, xs, ys)))
print("loss before", loss(params, xs, ys))
for _ in range(30):
    params = step(params)
print("loss after", loss(params, xs, ys))
print("first predictions", predict(params, xs)[:4, 0])
