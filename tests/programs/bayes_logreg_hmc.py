"""Bayesian logistic regression sampled with HMC (leapfrog in fori_loop, MH step)."""
import jax
import jax.numpy as jnp
from jax import lax, random

key = random.PRNGKey(11)
kx, kw, key = random.split(key, 3)
X = random.normal(kx, (50, 3))
true_w = jnp.array([1.5, -2.0, 0.5])
y = (random.uniform(kw, (50,)) < jax.nn.sigmoid(X @ true_w)).astype(jnp.float32)


def log_prob(w):
    logits = X @ w
    return jnp.sum(y * logits - jnp.logaddexp(0.0, logits)) - 0.5 * jnp.sum(w ** 2)


grad_lp = jax.grad(log_prob)


def leapfrog(w, p, eps, n):
    p = p + 0.5 * eps * grad_lp(w)
    def body(i, state):
        w, p = state
        w = w + eps * p
        p = p + eps * grad_lp(w)
        return w, p
    w, p = lax.fori_loop(0, n - 1, body, (w, p))
    w = w + eps * p
    p = p + 0.5 * eps * grad_lp(w)
    return w, p


@jax.jit
def hmc_step(w, key):
    kp, ku = random.split(key)
    p0 = random.normal(kp, w.shape)
    w1, p1 = leapfrog(w, p0, 0.05, 10)
    h0 = -log_prob(w) + 0.5 * p0 @ p0
    h1 = -log_prob(w1) + 0.5 * p1 @ p1
    accept = jnp.log(random.uniform(ku)) < h0 - h1
    return lax.cond(accept, lambda: w1, lambda: w), accept


w = jnp.zeros(3)
samples, accepts = [], 0
for k in random.split(key, 60):
    w, acc = hmc_step(w, k)
    samples.append(w)
    accepts += int(acc)
samples = jnp.stack(samples[20:])
print("acceptance", accepts / 60)
print("posterior mean", samples.mean(0))
print("posterior std", samples.std(0))
