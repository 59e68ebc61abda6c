"""funcad.scipy.cluster.vq.vq against SciPy and JAX: codes, distances and dtypes."""
import numpy as np
import pytest
import scipy.cluster.vq as svq

import funcad
import funcad.numpy as fnp
import funcad.scipy.cluster.vq as fvq

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.cluster.vq  # noqa: E402,F401


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


def test_vq_matches_scipy_and_jax():
    rng = np.random.default_rng(6)
    obs, cb = rng.normal(size=(7, 3)), rng.normal(size=(4, 3))
    for o, c in [(obs, cb), (obs[:, 0], cb[:, 0]), (obs.astype(np.float32), cb.astype(np.float32))]:
        code, dist = fvq.vq(o, c)
        jcode, jdist = jax.scipy.cluster.vq.vq(o, c)
        scode, sdist = svq.vq(o, c)
        np.testing.assert_array_equal(code, jcode)
        np.testing.assert_array_equal(code, scode)
        assert code.dtype == jcode.dtype and dist.dtype == jdist.dtype
        close(dist, jdist, rtol=1e-6)
        close(dist, sdist, rtol=1e-6)
    close(funcad.vmap(lambda o: fvq.vq(o, cb)[1])(obs[None]), fvq.vq(obs, cb)[1][None])
    close(funcad.grad(lambda o: fnp.sum(fvq.vq(o, cb)[1]))(obs),
          jax.grad(lambda o: jnp.sum(jax.scipy.cluster.vq.vq(o, cb)[1]))(obs))
    with pytest.raises(ValueError, match="same rank"):
        fvq.vq(obs, cb[:, 0])
    with pytest.raises(ValueError, match="1-D or 2-D"):
        fvq.vq(obs[None], cb[None])
