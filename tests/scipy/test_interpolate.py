"""funcad.scipy.interpolate.RegularGridInterpolator against SciPy and JAX: methods, fill
values, the pytree under jit/grad, and errors."""
import numpy as np
import pytest
import scipy.interpolate as sint

import funcad
import funcad.numpy as fnp
import funcad.scipy.interpolate as fint

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.interpolate  # noqa: E402,F401


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


_PTS = (np.array([0.0, 1.0, 2.5, 3.0]), np.array([-1.0, 0.0, 1.0]))


def test_regular_grid_interpolator_matches_scipy_and_jax():
    rng = np.random.default_rng(4)
    vals = rng.normal(size=(4, 3, 2))
    xi = np.stack([rng.uniform(-0.5, 3.5, 9), rng.uniform(-1.2, 1.2, 9)], -1)
    for method in ("linear", "nearest"):
        for fill in (np.nan, None, 0.5):
            got = fint.RegularGridInterpolator(_PTS, vals, method, fill_value=fill)(xi)
            want = jax.scipy.interpolate.RegularGridInterpolator(_PTS, vals, method, fill_value=fill)(xi)
            assert got.shape == want.shape == (9, 2)
            close(got, want)
            close(got, sint.RegularGridInterpolator(_PTS, vals, method, bounds_error=False, fill_value=fill)(xi))
    f = fint.RegularGridInterpolator(_PTS, vals[..., 0])
    jf = jax.scipy.interpolate.RegularGridInterpolator(_PTS, vals[..., 0])
    close(f((xi[:, 0], xi[:, 1])), jf((xi[:, 0], xi[:, 1])))           # a tuple of coordinate arrays
    close(f(xi.reshape(3, 3, 2), method="nearest"), jf(xi.reshape(3, 3, 2), method="nearest"))
    close(f(xi[0]), jf(xi[0]))                                           # one point as a 1-D array
    for v, x in [(vals.astype(np.float32), xi), (vals.astype(np.float32), xi.astype(np.float32)),
                 (np.arange(12).reshape(4, 3), xi)]:
        assert fint.RegularGridInterpolator(_PTS, v)(x).dtype == \
            jax.scipy.interpolate.RegularGridInterpolator(_PTS, v)(x).dtype


def test_regular_grid_interpolator_is_a_pytree_and_differentiates():
    rng = np.random.default_rng(5)
    vals, xi = rng.normal(size=(4, 3)), np.stack([rng.uniform(0.1, 2.9, 5), rng.uniform(-0.9, 0.9, 5)], -1)
    f = fint.RegularGridInterpolator(_PTS, vals)
    assert len(funcad.tree_util.tree_leaves(f)) == len(jax.tree_util.tree_leaves(
        jax.scipy.interpolate.RegularGridInterpolator(_PTS, vals))) == 4
    close(funcad.jit(lambda f, x: f(x))(f, xi), f(xi))
    doubled = funcad.tree_util.tree_map(lambda v: v * 2, f)
    assert isinstance(doubled, fint.RegularGridInterpolator) and doubled.method == "linear"
    close(doubled.values, 2 * vals)
    g = lambda mod, m: lambda v, x: m.sum(mod.RegularGridInterpolator(_PTS, v, fill_value=None)(x) ** 2)  # noqa: E731
    close(funcad.grad(g(fint, fnp), (0, 1))(vals, xi), jax.grad(g(jax.scipy.interpolate, jnp), (0, 1))(vals, xi))


def test_regular_grid_interpolator_errors():
    vals = np.ones((4, 3))
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        fint.RegularGridInterpolator(_PTS, vals, method="cubic")
    with pytest.raises(ValueError, match="method 'cubic' is not defined"):
        fint.RegularGridInterpolator(_PTS, vals)(np.zeros((1, 2)), method="cubic")
    with pytest.raises(NotImplementedError, match="bounds_error=True is not supported"):
        fint.RegularGridInterpolator(_PTS, vals, bounds_error=True)
    with pytest.raises(ValueError, match="there are 2 point arrays, but values has 1 dimensions"):
        fint.RegularGridInterpolator(_PTS, np.ones(4))
    with pytest.raises(ValueError, match="fill_value must be either 'None' or of a type compatible with values"):
        fint.RegularGridInterpolator(_PTS, vals, fill_value=1j)
    with pytest.raises(ValueError, match="sample points xi have dimension 3"):
        fint.RegularGridInterpolator(_PTS, vals)(np.zeros((2, 3)))
