"""numpyro: NUTS on a linear regression model, as numpyro's README shows."""
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import MCMC, NUTS


def model(x, y=None):
    a = numpyro.sample("a", dist.Normal(0.0, 5.0))
    b = numpyro.sample("b", dist.Normal(0.0, 5.0))
    sigma = numpyro.sample("sigma", dist.HalfNormal(1.0))
    numpyro.sample("y", dist.Normal(a + b * x, sigma), obs=y)


x = jnp.linspace(-1.0, 1.0, 20)
y = 0.5 + 2.0 * x + 0.1 * jnp.sin(7.0 * x)
mcmc = MCMC(NUTS(model), num_warmup=200, num_samples=200, progress_bar=False)
mcmc.run(jax.random.PRNGKey(0), x, y)
samples = mcmc.get_samples()
for k in ("a", "b", "sigma"):
    print(k, jnp.mean(samples[k]), jnp.std(samples[k]))
