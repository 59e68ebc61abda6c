"""funcad.scipy.ndimage.map_coordinates against JAX: every order and mode, dtypes,
derivatives, jit and vmap, and errors."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
import funcad.scipy.ndimage as fndi

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402
import jax.scipy.ndimage as jndi  # noqa: E402


def close(a, b, rtol=1e-10, atol=1e-12):
    for x, y in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(x), np.asarray(y), rtol=rtol, atol=atol, equal_nan=True)


def test_map_coordinates_every_order_and_mode_matches_jax():
    rng = np.random.default_rng(3)
    for shape in [(5,), (3, 4), (1, 3)]:
        x = rng.normal(size=shape)
        coords = [np.concatenate([[0.5, -0.5, 1.5, -2.5], rng.uniform(-3, s + 2, 6)]) for s in shape]
        for order in (0, 1):
            for mode in ("constant", "nearest", "wrap", "mirror", "reflect"):
                close(fndi.map_coordinates(x, coords, order, mode, cval=1.5),
                      jndi.map_coordinates(x, coords, order, mode, cval=1.5))


def test_map_coordinates_dtypes_derivatives_and_transforms():
    xi = np.arange(12, dtype=np.int32).reshape(3, 4)
    c = [np.array([0.5, 1.4, 2.6]), np.array([1.5, 2.5, 0.2])]
    got = fndi.map_coordinates(xi, c, order=1)
    assert got.dtype == np.int32
    np.testing.assert_array_equal(got, jndi.map_coordinates(xi, c, order=1))  # rounded half away from zero
    assert fndi.map_coordinates(xi.astype(np.float32), c, 1).dtype == np.float32
    img = np.arange(12.0).reshape(3, 4) ** 1.5
    f = lambda mod, m: lambda x, c: m.sum(mod.map_coordinates(x, c, 1, "mirror") ** 2)  # noqa: E731
    close(funcad.grad(f(fndi, fnp), (0, 1))(img, c), jax.grad(f(jndi, jnp), (0, 1))(img, c))
    close(funcad.jit(lambda x, c: fndi.map_coordinates(x, c, 1, "wrap"))(img, c),
          jndi.map_coordinates(img, c, 1, "wrap"))
    cs = np.stack([np.stack(c), np.stack(c)[::-1] * 0.5])
    close(funcad.vmap(lambda cc: fndi.map_coordinates(img, [cc[0], cc[1]], 1))(cs),
          jax.vmap(lambda cc: jndi.map_coordinates(img, [cc[0], cc[1]], 1))(cs))


def test_map_coordinates_errors():
    x, c = np.ones((2, 2)), [np.zeros(1), np.zeros(1)]
    with pytest.raises(ValueError, match="coordinates must be a sequence of length input.ndim, but 1 != 2"):
        fndi.map_coordinates(x, c[:1], 1)
    with pytest.raises(NotImplementedError, match="order 0 or 1"):
        fndi.map_coordinates(x, c, 3)
    with pytest.raises(NotImplementedError, match="does not support mode 'grid-wrap'"):
        fndi.map_coordinates(x, c, 1, mode="grid-wrap")
