"""A tour of jax.random with explicit key splitting; every sampler's first values."""
import jax
import jax.numpy as jnp
from jax import random

key = random.PRNGKey(0)
print("key", key)
key, *subkeys = random.split(key, 12)
print("uniform", random.uniform(subkeys[0], (3,)))
print("normal", random.normal(subkeys[1], (2, 2)))
print("randint", random.randint(subkeys[2], (5,), 0, 10))
print("bernoulli", random.bernoulli(subkeys[3], 0.3, (6,)))
print("categorical", random.categorical(subkeys[4], jnp.log(jnp.array([0.1, 0.2, 0.7])), shape=(6,)))
print("permutation", random.permutation(subkeys[5], 8))
print("choice", random.choice(subkeys[6], 10, (4,), replace=False))
print("gamma", random.gamma(subkeys[7], 2.5, (3,)))
print("beta", random.beta(subkeys[8], 2.0, 3.0, (3,)))
print("exponential", random.exponential(subkeys[9], (3,)))
print("truncated normal", random.truncated_normal(subkeys[10], -1.0, 1.0, (3,)))
new_key = random.key(42)
k1, k2 = random.split(new_key)
print("typed key normal", random.normal(k1, (2,)), random.key_data(k2))
print("fold_in", random.uniform(random.fold_in(key, 7)))
print("poisson", random.poisson(key, 3.0, (4,)))
print("dirichlet", random.dirichlet(k2, jnp.ones(3)))
print("laplace", random.laplace(key, (2,)), "logistic", random.logistic(key, (2,)))
print("multivariate normal", random.multivariate_normal(key, jnp.zeros(2), jnp.array([[1.0, 0.5], [0.5, 2.0]])))
print("vmapped", jax.vmap(lambda k: random.normal(k))(random.split(key, 3)))
