"""PCA by SVD and by eigh of the covariance; signs fixed so they are comparable."""
import jax.numpy as jnp
from jax import random

key = random.PRNGKey(13)
latent = random.normal(key, (100, 2))
mix = jnp.array([[2.0, 0.5, 0.0, 1.0], [0.0, 1.0, -1.0, 0.5]])
X = latent @ mix + 0.05 * random.normal(random.PRNGKey(14), (100, 4))
Xc = X - X.mean(axis=0)

U, S, Vt = jnp.linalg.svd(Xc, full_matrices=False)
signs = jnp.sign(Vt[:, 0])
Vt = Vt * signs[:, None]
print("singular values", S)
print("explained variance ratio", S ** 2 / jnp.sum(S ** 2))
print("first component", Vt[0])

evals, evecs = jnp.linalg.eigh(Xc.T @ Xc / (X.shape[0] - 1))
print("eigenvalues", evals[::-1])
Z = Xc @ Vt[:2].T
recon = Z @ Vt[:2]
print("rank-2 reconstruction error", jnp.linalg.norm(Xc - recon) / jnp.linalg.norm(Xc))
print("dtype", S.dtype, U.shape)
