"""Op-table rows of funcad.scipy.fft (the DCT), funcad.scipy.ndimage, funcad.scipy.interpolate
and funcad.scipy.sparse.linalg, checked against SciPy and JAX.

Interpolation coordinates stay away from grid nodes (fractional parts in [0.2, 0.8]),
where linear interpolation has its kinks, so finite differences are meaningful. The
Krylov rows use a well-conditioned SPD matrix and a tight tolerance: their derivatives
come from one more solve (custom_linear_solve), exact once the solves converge.
"""
import numpy as np
import scipy.fft as sfft
import scipy.interpolate as sint
import scipy.ndimage as sndi

import funcad.numpy as fnp
import funcad.scipy.fft as ffft
import funcad.scipy.interpolate as fint
import funcad.scipy.ndimage as fndi
import funcad.scipy.sparse.linalg as fsl
from tests.op_table import U, op


def _jsp():
    import jax.scipy as jsp
    import jax.scipy.fft  # noqa: F401
    import jax.scipy.interpolate  # noqa: F401
    import jax.scipy.ndimage  # noqa: F401
    import jax.scipy.sparse.linalg  # noqa: F401
    return jsp


def _off_grid(n_points, size):
    """Image values (3, size) and coordinates strictly inside the grid, off its nodes."""
    def gen(rng, dtype):
        img = rng.uniform(-2, 2, (3, size)).astype(dtype)
        rows = rng.integers(0, 2, n_points) + rng.uniform(0.2, 0.8, n_points)
        cols = rng.integers(0, size - 1, n_points) + rng.uniform(0.2, 0.8, n_points)
        return img, rows.astype(dtype), cols.astype(dtype)
    return gen


def _spd(n):
    def gen(rng, dtype):
        q = rng.standard_normal((n, n))
        return (q @ q.T / n + np.eye(n)).astype(dtype), rng.standard_normal(n).astype(dtype)
    return gen


op("dct_ortho_n", lambda x: ffft.dct(x, n=5, axis=0, norm="ortho"),
   lambda x: sfft.dct(x, n=5, axis=0, norm="ortho"), U((4, 3)),
   jax_fun=lambda x: _jsp().fft.dct(x, n=5, axis=0, norm="ortho"))
op("idctn_s", lambda x: ffft.idctn(x, s=(3, 4)), lambda x: sfft.idctn(x, s=(3, 4)), U((2, 3, 5)),
   jax_fun=lambda x: _jsp().fft.idctn(x, s=(3, 4)))
op("map_coordinates_linear", lambda x, r, c: fndi.map_coordinates(x, [r, c], order=1),
   lambda x, r, c: sndi.map_coordinates(x, [r, c], order=1), _off_grid(5, 4),
   jax_fun=lambda x, r, c: _jsp().ndimage.map_coordinates(x, [r, c], order=1))
_GRID = (np.array([0.0, 1.0, 2.5]), np.array([-1.0, 0.0, 0.5, 2.0]))
op("regular_grid_interpolator", lambda v, r, c: fint.RegularGridInterpolator(_GRID, v)(fnp.stack([r, c], -1)),
   lambda v, r, c: sint.RegularGridInterpolator(_GRID, v)(np.stack([r, c], -1)),
   lambda rng, dt: (rng.uniform(-2, 2, (3, 4)).astype(dt), rng.uniform(0.1, 2.4, 6).astype(dt),
                    rng.choice([-0.7, -0.3, 0.2, 0.4, 1.0, 1.5], 6).astype(dt)),
   jax_fun=lambda v, r, c: _jsp().interpolate.RegularGridInterpolator(_GRID, v)(_jnp_stack(r, c)))
op("sparse_cg", lambda a, b: fsl.cg(a, b, tol=1e-13)[0], np.linalg.solve, _spd(4),
   jax_fun=lambda a, b: _jsp().sparse.linalg.cg(a, b, tol=1e-13)[0], dtypes=(np.float64,))


def _jnp_stack(r, c):
    import jax.numpy as jnp
    return jnp.stack([r, c], -1)
