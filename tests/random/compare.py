"""Helpers comparing funcad.random's values with jax.random's: the seeds both are tried
at, exact equality, and equality to within a few ulps."""
import numpy as np

SEEDS = [0, 1, 42, 2 ** 31 - 1, 2 ** 63 - 1]


def same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    np.testing.assert_array_equal(a, b)


def ulps(a, b, n=8):
    """Equal to within n ulps of the dtype (exact for integer dtypes)."""
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, b.dtype, a.shape, b.shape)
    if a.dtype.kind != "f":
        return np.testing.assert_array_equal(a, b)
    eps = np.finfo(a.dtype).eps
    np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=n * eps, atol=n * eps)
