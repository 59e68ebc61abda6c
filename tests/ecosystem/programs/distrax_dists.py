"""distrax: distributions and bijectors, log-probs and samples."""
import distrax
import jax
import jax.numpy as jnp

key = jax.random.PRNGKey(0)
normal = distrax.Normal(loc=jnp.array([0.0, 1.0]), scale=jnp.array([1.0, 0.5]))
x = jnp.array([0.3, 0.7])
print("log_prob", normal.log_prob(x))
print("entropy", normal.entropy())
print("sample", normal.sample(seed=key, sample_shape=(2,)))
mvn = distrax.MultivariateNormalDiag(jnp.zeros(2), jnp.array([1.0, 2.0]))
print("mvn log_prob", mvn.log_prob(x))
print("kl", normal.kl_divergence(distrax.Normal(0.5, 1.5)))
cat = distrax.Categorical(logits=jnp.array([0.1, 0.5, -1.0]))
print("cat", cat.probs, cat.log_prob(1), cat.entropy())
bij = distrax.Chain([distrax.ScalarAffine(shift=1.0, scale=2.0), distrax.Tanh()])
y, ldj = bij.forward_and_log_det(x)
print("chain", y, ldj)
flow = distrax.Transformed(distrax.Normal(0.0, 1.0), distrax.Lambda(jnp.exp))
print("lognormal", flow.log_prob(jnp.array([0.5, 2.0])))
print("grad", jax.grad(lambda m: distrax.Normal(m, 1.0).log_prob(0.3))(0.1))
