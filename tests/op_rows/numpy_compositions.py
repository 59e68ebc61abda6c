"""Op-table rows of funcad.numpy's and funcad.lax's compositions (functions written with other
functions: differences, convolutions, products, quantiles, nan-reductions, pads, ...): each
is checked against NumPy, JAX, finite differences, jit and vmap by the table tests."""
import numpy as np

import funcad.lax as lax
import funcad.numpy as fnp
from tests.op_table import AWAY, DISTINCT, F, FI, U, op


def _jnp():
    import jax.numpy as jnp
    return jnp


def _jlax():
    import jax.lax as jl
    return jl


def _np_interp(x, xp, fp):
    return np.interp(x, xp, fp).astype(x.dtype)


def _np_reduce_window(x, init, fn, window, strides, pads):
    """A plain NumPy reduce_window reference: pad with init, reduce each window."""
    xp = np.pad(x, pads, constant_values=init)
    out_shape = [(n - w) // s + 1 for n, w, s in zip(xp.shape, window, strides)]
    out = np.empty(out_shape, x.dtype)
    for idx in np.ndindex(*out_shape):
        sl = tuple(slice(i * s, i * s + w) for i, s, w in zip(idx, strides, window))
        out[idx] = fn(xp[sl])
    return out


def SORTED_XP(rng, dtype):
    xp = np.cumsum(rng.uniform(0.4, 1.0, 6)).astype(dtype)
    return (rng.uniform(xp[0] - 0.5, xp[-1] + 0.5, 5).astype(dtype), xp, rng.uniform(-2, 2, 6).astype(dtype))


op("more_diff", lambda x: fnp.diff(x, axis=0), lambda x: np.diff(x, axis=0), U((4, 3)),
   lambda x: _jnp().diff(x, axis=0), dtypes=FI)
op("more_diff_n2_prepend", lambda x: fnp.diff(x, 2, prepend=0.5), lambda x: np.diff(x, 2, prepend=0.5).astype(x.dtype),
   U((2, 5)), lambda x: _jnp().diff(x, 2, prepend=0.5))
op("more_ediff1d", lambda x: fnp.ediff1d(x, to_end=1.0), lambda x: np.ediff1d(x, to_end=1.0).astype(x.dtype), U((5,)),
   lambda x: _jnp().ediff1d(x, to_end=1.0))
op("more_gradient", fnp.gradient, lambda x: np.gradient(x, axis=None), U((6,)), lambda x: _jnp().gradient(x))
op("more_gradient_coords", lambda y, x: fnp.gradient(y, fnp.cumsum(x * x + 0.5)),
   lambda y, x: np.gradient(y, np.cumsum(x * x + 0.5)), U((5,), (5,)),
   lambda y, x: _jnp().gradient(y, _jnp().cumsum(x * x + 0.5)), rtol=1e-4)
op("more_trapezoid", lambda y: fnp.trapezoid(y, dx=0.5), lambda y: np.trapezoid(y, dx=0.5), U((3, 5)),
   lambda y: _jnp().trapezoid(y, dx=0.5))
op("more_trapezoid_x", lambda y, x: fnp.trapezoid(y, fnp.cumsum(fnp.abs(x))), lambda y, x: np.trapezoid(y, np.cumsum(np.abs(x))),
   lambda r, d: U((6,))(r, d) + AWAY((6,))(r, d), lambda y, x: _jnp().trapezoid(y, _jnp().cumsum(_jnp().abs(x))))
op("more_interp", fnp.interp, _np_interp, SORTED_XP, lambda x, xp, fp: _jnp().interp(x, xp, fp), rtol=1e-4)
op("more_convolve", fnp.convolve, np.convolve, U((6,), (3,)), lambda a, v: _jnp().convolve(a, v), dtypes=FI)
op("more_convolve_same", lambda a, v: fnp.convolve(a, v, "same"), lambda a, v: np.convolve(a, v, "same"),
   U((6,), (4,)), lambda a, v: _jnp().convolve(a, v, "same"))
op("more_correlate", fnp.correlate, np.correlate, U((6,), (3,)), lambda a, v: _jnp().correlate(a, v))
op("more_correlate_full", lambda a, v: fnp.correlate(a, v, "full"), lambda a, v: np.correlate(a, v, "full"),
   U((3,), (5,)), lambda a, v: _jnp().correlate(a, v, "full"))
op("more_kron", fnp.kron, np.kron, U((2, 3), (2, 2)), lambda a, b: _jnp().kron(a, b), dtypes=FI)
op("more_cross", fnp.cross, np.cross, U((4, 3), (4, 3)), lambda a, b: _jnp().cross(a, b))
op("more_vecdot", fnp.vecdot, lambda a, b: np.sum(a * b, -1), U((2, 3), (2, 3)), lambda a, b: _jnp().vecdot(a, b))
op("more_matvec", fnp.matvec, lambda a, b: np.einsum("...ij,...j->...i", a, b), U((2, 3, 4), (4,)),
   lambda a, b: _jnp().matvec(a, b))
op("more_quantile", lambda x: fnp.quantile(x, np.array([0.2, 0.7]), axis=1),
   lambda x: np.quantile(x, np.array([0.2, 0.7]), axis=1), DISTINCT((3, 5)),
   lambda x: _jnp().quantile(x, np.array([0.2, 0.7]), axis=1))
op("more_median", lambda x: fnp.median(x, axis=0), lambda x: np.median(x, axis=0), DISTINCT((4, 3)),
   lambda x: _jnp().median(x, axis=0))
op("more_percentile_nearest", lambda x: fnp.percentile(x, 35.0, method="nearest"),
   lambda x: np.percentile(x, 35.0, method="nearest"), DISTINCT((7,)),
   lambda x: _jnp().percentile(x, 35.0, method="nearest"))
op("more_nanmean", lambda x: fnp.nanmean(fnp.where(x > 1.2, fnp.nan, x), axis=1),
   lambda x: np.nanmean(np.where(x > 1.2, np.nan, x), axis=1), U((3, 4), lo=-2.0, hi=1.0),
   lambda x: _jnp().nanmean(_jnp().where(x > 1.2, _jnp().nan, x), axis=1))
op("more_nanstd", lambda x: fnp.nanstd(x, ddof=1), lambda x: np.nanstd(x, ddof=1), U((3, 4)),
   lambda x: _jnp().nanstd(x, ddof=1))
op("more_nanmax", lambda x: fnp.nanmax(x, axis=0), lambda x: np.nanmax(x, axis=0), DISTINCT((3, 4)),
   lambda x: _jnp().nanmax(x, axis=0))
op("more_nancumsum", lambda x: fnp.nancumsum(x, axis=1), lambda x: np.nancumsum(x, axis=1), U((2, 4)),
   lambda x: _jnp().nancumsum(x, axis=1))
op("more_average_weights", lambda x, w: fnp.average(x, axis=1, weights=fnp.abs(w)),
   lambda x, w: np.average(x, axis=1, weights=np.abs(w)), lambda r, d: U((3, 4))(r, d) + AWAY((4,))(r, d),
   lambda x, w: _jnp().average(x, axis=1, weights=_jnp().abs(w)))
op("more_cov", fnp.cov, lambda x: np.cov(x).astype(x.dtype), U((3, 5)), lambda x: _jnp().cov(x))
op("more_corrcoef", fnp.corrcoef, lambda x: np.corrcoef(x).astype(x.dtype), U((3, 5)), lambda x: _jnp().corrcoef(x), rtol=1e-4)
op("more_ptp", lambda x: fnp.ptp(x, axis=1), lambda x: np.ptp(x, axis=1), DISTINCT((3, 4)),
   lambda x: _jnp().ptp(x, axis=1), dtypes=FI)
op("more_pad_constant", lambda x: fnp.pad(x, ((1, 2), (0, 1)), constant_values=0.5),
   lambda x: np.pad(x, ((1, 2), (0, 1)), constant_values=0.5), U((2, 3)),
   lambda x: _jnp().pad(x, ((1, 2), (0, 1)), constant_values=0.5), dtypes=F)
op("more_pad_reflect", lambda x: fnp.pad(x, (2, 3), mode="reflect"), lambda x: np.pad(x, (2, 3), mode="reflect"),
   U((3, 4)), lambda x: _jnp().pad(x, (2, 3), mode="reflect"), dtypes=FI)
op("more_pad_symmetric_odd", lambda x: fnp.pad(x, (4, 2), mode="symmetric", reflect_type="odd"),
   lambda x: np.pad(x, (4, 2), mode="symmetric", reflect_type="odd"), U((3,)),
   lambda x: _jnp().pad(x, (4, 2), mode="symmetric", reflect_type="odd"))
op("more_pad_wrap_edge", lambda x: fnp.pad(fnp.pad(x, 2, mode="wrap"), 1, mode="edge"),
   lambda x: np.pad(np.pad(x, 2, mode="wrap"), 1, mode="edge"), U((3, 2)),
   lambda x: _jnp().pad(_jnp().pad(x, 2, mode="wrap"), 1, mode="edge"))
op("more_pad_linear_ramp", lambda x: fnp.pad(x, (2, 3), mode="linear_ramp", end_values=(1.0, -1.0)),
   lambda x: np.pad(x, (2, 3), mode="linear_ramp", end_values=(1.0, -1.0)), U((4,)),
   lambda x: _jnp().pad(x, (2, 3), mode="linear_ramp", end_values=(1.0, -1.0)))
op("more_pad_mean", lambda x: fnp.pad(x, 2, mode="mean"), lambda x: np.pad(x, 2, mode="mean"), U((3, 4)),
   lambda x: _jnp().pad(x, 2, mode="mean"))
op("more_append", lambda x, y: fnp.append(x, y, axis=0), lambda x, y: np.append(x, y, axis=0), U((2, 3), (1, 3)),
   lambda x, y: _jnp().append(x, y, axis=0), dtypes=FI)
op("more_insert", lambda x, v: fnp.insert(x, 1, v, axis=1), lambda x, v: np.insert(x, 1, v, axis=1), U((2, 3), (2,)),
   lambda x, v: _jnp().insert(x, 1, v, axis=1))
op("more_delete", lambda x: fnp.delete(x, np.array([0, 2]), axis=1), lambda x: np.delete(x, [0, 2], axis=1), U((2, 4)),
   lambda x: _jnp().delete(x, np.array([0, 2]), axis=1), dtypes=FI)
op("more_rot90", lambda x: fnp.rot90(x, 3), lambda x: np.rot90(x, 3), U((2, 3)), lambda x: _jnp().rot90(x, 3), dtypes=FI)
op("more_resize", lambda x: fnp.resize(x, (3, 4)), lambda x: np.resize(x, (3, 4)), U((5,)),
   lambda x: _jnp().resize(x, (3, 4)))
op("more_block", lambda a, b: fnp.block([[a, b], [b, a]]), lambda a, b: np.block([[a, b], [b, a]]), U((2, 2), (2, 2)),
   lambda a, b: _jnp().block([[a, b], [b, a]]))
op("more_select", lambda x: fnp.select([x < -0.5, x > 0.5], [x * 2, x ** 2], -1.0),
   lambda x: np.select([x < -0.5, x > 0.5], [x * 2, x ** 2], -1.0), AWAY((2, 4), lo=0.6),
   lambda x: _jnp().select([x < -0.5, x > 0.5], [x * 2, x ** 2], -1.0))
op("more_piecewise", lambda x: fnp.piecewise(x, [x < 0], [lambda t: -t, lambda t: t ** 2]),
   lambda x: np.piecewise(x, [x < 0], [lambda t: -t, lambda t: t ** 2]), AWAY((5,)),
   lambda x: _jnp().piecewise(x, [x < 0], [lambda t: -t, lambda t: t ** 2]))
op("more_meshgrid", lambda x, y: tuple(fnp.meshgrid(x, y)), lambda x, y: tuple(np.meshgrid(x, y)), U((3,), (2,)),
   lambda x, y: tuple(_jnp().meshgrid(x, y)))
op("more_logspace_traced", lambda a: fnp.logspace(a, 1.0, 4, base=2.0), lambda a: np.logspace(a, 1.0, 4, base=2.0),
   U(()), lambda a: _jnp().logspace(a, 1.0, 4, base=2.0))
op("more_vander", lambda x: fnp.vander(x, 3), lambda x: np.vander(x, 3).astype(x.dtype), U((4,)), lambda x: _jnp().vander(x, 3))
op("more_nan_to_num", lambda x: fnp.nan_to_num(fnp.log(x)), lambda x: np.nan_to_num(np.log(x)), U((2, 3), lo=0.5, hi=2),
   lambda x: _jnp().nan_to_num(_jnp().log(x)))
op("more_fmax", fnp.fmax, np.fmax, DISTINCT((2, 3), (2, 3)), lambda a, b: _jnp().fmax(a, b), dtypes=FI)
op("more_ldexp", lambda x: fnp.ldexp(x, np.array([1, -2, 3])), lambda x: np.ldexp(x, np.array([1, -2, 3])), U((2, 3)),
   lambda x: _jnp().ldexp(x, np.array([1, -2, 3])))
op("more_take_sorted_unique", lambda x: fnp.unique(x, size=6), lambda x: np.unique(x), DISTINCT((6,)),
   lambda x: _jnp().unique(x, size=6))
op("more_searchsorted", lambda a, v: fnp.searchsorted(fnp.sort(a), v), lambda a, v: np.searchsorted(np.sort(a), v).astype(np.int32),
   DISTINCT((6,), (4,)), lambda a, v: _jnp().searchsorted(_jnp().sort(a), v), diff=False, dtypes=FI)
op("more_histogram_counts", lambda x: fnp.histogram(x, bins=4, range=(-2.0, 2.0))[0],
   lambda x: np.histogram(x, bins=4, range=(-2.0, 2.0))[0].astype(x.dtype), U((10,)),
   lambda x: _jnp().histogram(x, bins=4, range=(-2.0, 2.0))[0], diff=False)
op("more_bincount_length", lambda x: fnp.bincount(x, length=7), lambda x: np.bincount(x, minlength=7),
   lambda r, d: (r.integers(0, 7, 9).astype(np.int64),), lambda x: _jnp().bincount(x, length=7), diff=False, dtypes=(np.int64,))
op("more_isin", lambda x: fnp.isin(x, np.array([1, 3])), lambda x: np.isin(x, [1, 3]), U((2, 4)),
   lambda x: _jnp().isin(x, np.array([1, 3])), diff=False, dtypes=(np.int64,))
op("more_nonzero_size", lambda x: fnp.nonzero(x > 0, size=5, fill_value=-1)[0],
   lambda x: np.concatenate([np.nonzero(x > 0)[0], -np.ones(5, np.int64)])[:5], U((6,)),
   lambda x: _jnp().nonzero(x > 0, size=5, fill_value=-1)[0], diff=False)
op("more_top_k", lambda x: fnp.top_k(x, 2), lambda x: (-np.sort(-x)[..., :2], np.argsort(-x, kind="stable")[..., :2].astype(np.int32)),
   DISTINCT((3, 5)), lambda x: _jnp().top_k(x, 2))
op("lax_cumlogsumexp", lambda x: lax.cumlogsumexp(x, axis=1),
   lambda x: np.logaddexp.accumulate(x, axis=1), U((2, 5)), lambda x: _jlax().cumlogsumexp(x, axis=1))
op("lax_associative_scan", lambda x: lax.associative_scan(fnp.multiply, x, axis=0),
   lambda x: np.cumprod(x, axis=0), U((5, 2), lo=0.5, hi=1.5),
   lambda x: _jlax().associative_scan(_jnp().multiply, x, axis=0))
op("lax_reduce_window_max", lambda x: lax.reduce_window(x, -np.inf, lax.max, (2, 2), (1, 2), "SAME"),
   lambda x: _np_reduce_window(x, -np.inf, np.max, (2, 2), (1, 2), ((0, 1), (0, 1))), DISTINCT((4, 5)), lambda x: _jlax().reduce_window(x, -np.inf, _jlax().max, (2, 2), (1, 2), "SAME"))
op("lax_reduce_window_sum", lambda x: lax.reduce_window(x, 0.0, lax.add, (3, 2), (2, 1), ((1, 1), (0, 1))),
   lambda x: _np_reduce_window(x, 0.0, np.sum, (3, 2), (2, 1), ((1, 1), (0, 1))), U((5, 4)), lambda x: _jlax().reduce_window(x, 0.0, _jlax().add, (3, 2), (2, 1), ((1, 1), (0, 1))))
op("lax_dynamic_slice_in_dim", lambda x, i: lax.dynamic_slice_in_dim(x, i, 2, axis=1),
   lambda x, i: x[:, int(i):int(i) + 2], lambda r, d: U((3, 5))(r, d) + (np.array(2, np.int64),),
   lambda x, i: _jlax().dynamic_slice_in_dim(x, i, 2, axis=1))
op("lax_dynamic_update_slice_in_dim", lambda x, u, i: lax.dynamic_update_slice_in_dim(x, u, i, axis=0),
   lambda x, u, i: np.concatenate([x[:int(i)], u, x[int(i) + 1:]]),
   lambda r, d: U((4, 3), (1, 3))(r, d) + (np.array(1, np.int64),),
   lambda x, u, i: _jlax().dynamic_update_slice_in_dim(x, u, i, axis=0))
