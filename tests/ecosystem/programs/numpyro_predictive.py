"""numpyro: Predictive on the hierarchical eight-schools model, as numpyro's docs show."""
import jax
import jax.numpy as jnp
import numpyro
import numpyro.distributions as dist
from numpyro.infer import Predictive, log_likelihood
from numpyro.infer.util import log_density

J = 8
y = jnp.array([28.0, 8.0, -3.0, 7.0, -1.0, 1.0, 18.0, 12.0])
sigma = jnp.array([15.0, 10.0, 16.0, 11.0, 9.0, 11.0, 10.0, 18.0])


def eight_schools(J, sigma, y=None):
    mu = numpyro.sample("mu", dist.Normal(0.0, 5.0))
    tau = numpyro.sample("tau", dist.HalfCauchy(5.0))
    with numpyro.plate("J", J):
        theta = numpyro.sample("theta", dist.Normal(mu, tau))
        numpyro.sample("obs", dist.Normal(theta, sigma), obs=y)


prior = Predictive(eight_schools, num_samples=500)(jax.random.PRNGKey(0), J, sigma)
print("prior mu", jnp.mean(prior["mu"]), jnp.std(prior["mu"]))
print("prior obs mean", jnp.mean(prior["obs"], axis=0))
posterior = {k: prior[k][:100] for k in ("mu", "tau", "theta")}
predictive = Predictive(eight_schools, posterior_samples=posterior, return_sites=["obs"])
print("posterior predictive", jnp.mean(predictive(jax.random.PRNGKey(1), J, sigma)["obs"], axis=0))
ll = log_likelihood(eight_schools, posterior, J, sigma, y)["obs"]
print("log likelihood", ll.shape, jnp.mean(ll, axis=0))
params = {"mu": jnp.array(4.0), "tau": jnp.array(3.0), "theta": y / 2}
print("log density", log_density(eight_schools, (J, sigma, y), {}, params)[0])
