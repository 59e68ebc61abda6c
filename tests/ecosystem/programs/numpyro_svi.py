"""numpyro: SVI with an AutoNormal guide and Adam."""
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import SVI, Trace_ELBO
from numpyro.infer.autoguide import AutoNormal
from numpyro.optim import Adam


def model(data):
    mu = numpyro.sample("mu", dist.Normal(0.0, 10.0))
    with numpyro.plate("data", data.shape[0]):
        numpyro.sample("obs", dist.Normal(mu, 1.0), obs=data)


data = jnp.array([1.2, 0.8, 1.5, 0.9, 1.1, 1.3])
guide = AutoNormal(model)
svi = SVI(model, guide, Adam(0.05), Trace_ELBO())
result = svi.run(jax.random.PRNGKey(1), 300, data, progress_bar=False)
print("losses", result.losses[::100])
print("params", result.params)
print("log_prob", dist.Normal(1.0, 2.0).log_prob(jnp.array([0.0, 1.0, 3.0])))
print("sample", dist.Gamma(2.0, 1.0).sample(jax.random.PRNGKey(2), (3,)))
