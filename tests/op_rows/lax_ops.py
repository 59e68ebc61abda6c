"""Op-table rows of funcad.lax's operations: bit and rounding ops,
polynomial, approx top-k, ragged_dot, general gather/scatter with dimension numbers,
custom_linear_solve and custom_root. Each is checked against NumPy, JAX, finite
differences, jit and vmap by the table tests."""
import numpy as np

import funcad.lax as lax
import funcad.numpy as fnp
from tests.op_table import DISTINCT, U, op

IU = (np.int8, np.int32, np.int64, np.uint16, np.uint32, np.uint64)


def _jlax():
    import jax.lax as jl
    return jl


def _ints(shape):
    def gen(rng, dtype):
        info = np.iinfo(dtype)
        return tuple(rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True) for _ in range(2))
    return gen


def _np_mulhi(x, y):
    bits = 8 * x.dtype.itemsize
    prod = [int(a) * int(b) for a, b in zip(x.ravel(), y.ravel())]
    hi = [(p >> bits) & ((1 << bits) - 1) for p in prod]
    u = np.array(hi, dtype=f"u{x.dtype.itemsize}").reshape(x.shape)
    return u.view(x.dtype)


op("lax_mulhi", lax.mulhi, _np_mulhi, _ints((2, 3)), lambda x, y: _jlax().mulhi(x, y),
   diff=False, dtypes=IU)
op("lax_nextafter", lax.nextafter, np.nextafter, U((2, 3), (2, 3)),
   lambda x, y: _jlax().nextafter(x, y), diff=False)
op("lax_round_away", lax.round, lambda x: np.where(x >= 0, np.floor(x + 0.5), np.ceil(x - 0.5)).astype(x.dtype),
   lambda rng, dt: (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.3, -0.7], dt),),
   lambda x: _jlax().round(x), diff=False)
op("lax_round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), np.rint,
   lambda rng, dt: (np.array([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 0.3, -0.7], dt),),
   lambda x: _jlax().round(x, _jlax().RoundingMethod.TO_NEAREST_EVEN), diff=False)
op("lax_one_minus_square", lax.one_minus_square, lambda x: 1 - x * x, U((2, 3)),
   lambda x: _jlax().one_minus_square(x))
op("lax_polynomial", lambda x, a, b, c: lax.polynomial(x, [a, b, c]),
   lambda x, a, b, c: a + x * (b + x * c), U((2, 3), (2, 3), (1, 3), ()),
   lambda x, a, b, c: _jlax().polynomial(x, [a, b, c]))
op("lax_reduce_precision", lambda x: lax.reduce_precision(x * 3.0, 5, 10),
   lambda x: (x * 3.0).astype(np.float16).astype(x.dtype), U((2, 3)),
   lambda x: _jlax().reduce_precision(x * 3.0, 5, 10), diff=False)  # derivative: tests/lax/test_lax_ops.py
op("lax_approx_max_k", lambda x: lax.approx_max_k(x, 2)[0],
   lambda x: -np.sort(-x, -1)[..., :2], DISTINCT((3, 5)),
   lambda x: _jlax().approx_max_k(x, 2)[0])
op("lax_approx_min_k_axis0", lambda x: lax.approx_min_k(x, 2, reduction_dimension=0)[0],
   lambda x: np.sort(x, 0)[:2], DISTINCT((4, 3)),
   lambda x: _jlax().approx_min_k(x, 2, reduction_dimension=0)[0])
op("lax_broadcast_like", lambda x, y: lax.broadcast_like(x, y) * y, lambda x, y: x * y, U((3,), (2, 3)),
   lambda x, y: _jlax().broadcast_like(x, y) * y)
op("lax_dot_general_precision",
   lambda x, y: lax.dot_general(x, y, (((1,), (0,)), ((), ())), precision=lax.Precision.HIGHEST),
   np.dot, U((2, 3), (3, 4)),
   lambda x, y: _jlax().dot_general(x, y, (((1,), (0,)), ((), ())), precision=_jlax().Precision.HIGHEST))

_GS = np.array([2, 0, 3], np.int64)


def _np_ragged(x, r):
    out, start = np.zeros((x.shape[0], r.shape[2]), x.dtype), 0
    for g, n in enumerate(_GS):
        out[start:start + n] = x[start:start + n] @ r[g]
        start += n
    return out


# JAX 0.12 cannot vmap or reverse-differentiate ragged_dot here: its values are compared
# with JAX in tests/lax/test_lax_ops.py.
op("lax_ragged_dot", lambda x, r: lax.ragged_dot(x, r, _GS), _np_ragged, U((6, 4), (3, 4, 2)))

# ---------------------------------------------------- gather and scatter ----
_GDN = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1))
_GIDX = np.array([[1, 0], [3, 1], [0, 2], [5, 0]])  # the last is out of bounds: clamped / filled


def _jgdn():
    return _jlax().GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0, 1))


def _np_gather_clip(x):
    return np.stack([x[min(i, 3), min(j, 1):min(j, 1) + 2] for i, j in _GIDX])


op("lax_gather_dn", lambda x: lax.gather(x, _GIDX, _GDN, (1, 2), mode="clip"), _np_gather_clip, U((4, 3)),
   lambda x: _jlax().gather(x, _GIDX, _jgdn(), (1, 2), mode="clip"))
op("lax_gather_fill", lambda x: lax.gather(x, _GIDX, _GDN, (1, 2), mode="fill", fill_value=-1.0),
   lambda x: np.where(np.array([[1], [1], [0], [0]], bool), _np_gather_clip(x), -1.0).astype(x.dtype), U((4, 3)),
   lambda x: _jlax().gather(x, _GIDX, _jgdn(), (1, 2), mode="fill", fill_value=-1.0))

_SDN = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                   scatter_dims_to_operand_dims=(0,))
_SIDX = np.array([[1], [3], [1], [7]])  # repeated index 1; 7 is out of bounds (dropped)


def _jsdn():
    return _jlax().ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                           scatter_dims_to_operand_dims=(0,))


_SIDX_U = np.array([[1], [3], [0], [7]])  # no repeats (JAX differentiates scatter_mul only then)


def _np_scatter(kind, sidx=_SIDX):
    def ref(x, u):
        out = x.copy()
        for k, (i,) in enumerate(sidx):
            if i < x.shape[0]:
                out[i] = {"set": u[k], "add": out[i] + u[k], "sub": out[i] - u[k], "mul": out[i] * u[k],
                          "min": np.minimum(out[i], u[k]), "max": np.maximum(out[i], u[k])}[kind]
        return out
    return ref


for _kind, _name in [("set", "scatter"), ("add", "scatter_add"), ("sub", "scatter_sub"),
                     ("min", "scatter_min"), ("max", "scatter_max")]:
    op(f"lax_{_name}_dn", (lambda n: lambda x, u: getattr(lax, n)(x, _SIDX, u, _SDN))(_name),
       _np_scatter(_kind), DISTINCT((5, 3), (4, 3)) if _kind in ("min", "max") else U((5, 3), (4, 3)),
       (lambda n: lambda x, u: getattr(_jlax(), n)(x, _SIDX, u, _jsdn()))(_name))

op("lax_scatter_mul_dn", lambda x, u: lax.scatter_mul(x, _SIDX_U, u, _SDN), _np_scatter("mul", _SIDX_U),
   U((5, 3), (4, 3)), lambda x, u: _jlax().scatter_mul(x, _SIDX_U, u, _jsdn(), unique_indices=True))
op("lax_scatter_mul_repeated", lambda x, u: lax.scatter_mul(x, _SIDX, u, _SDN), _np_scatter("mul"),
   U((5, 3), (4, 3)))  # JAX has no derivative with repeated indices; finite differences check ours
op("lax_scatter_clip", lambda x, u: lax.scatter(x, _SIDX[:2] + 3, u[:2], _SDN, mode="clip"),
   lambda x, u: np.concatenate([x[:4], u[1:2]]), U((5, 3), (4, 3)),
   lambda x, u: _jlax().scatter(x, _SIDX[:2] + 3, u[:2], _jsdn(), mode="clip"))

# ------------------------------------------------------ implicit solvers ----


def _spd(a):
    """A symmetric positive definite matrix built from a (3, 3) input."""
    return a @ a.T + 3.0 * np.eye(3, dtype=a.dtype) if isinstance(a, np.ndarray) else \
        a @ fnp.swapaxes(a, 0, 1) + 3.0 * np.eye(3, dtype=a.dtype)


def _lin_solve(a, b):
    A = _spd(a)
    return lax.custom_linear_solve(lambda x: A @ x, b, lambda mv, r: fnp.linalg.solve(A, r), symmetric=True)


def _jax_lin_solve(a, b):
    import jax.numpy as jnp
    A = a @ a.T + 3.0 * jnp.eye(3, dtype=a.dtype)
    return _jlax().custom_linear_solve(lambda x: A @ x, b, lambda mv, r: jnp.linalg.solve(A, r), symmetric=True)


op("lax_custom_linear_solve", _lin_solve, lambda a, b: np.linalg.solve(_spd(a), b), U((3, 3), (3,)),
   _jax_lin_solve)


def _newton(f, x):
    return lax.fori_loop(0, 30, lambda i, s: s - f(s) / (3.0 * s * s), x)


def _cbrt_root(a):
    return lax.custom_root(lambda x: x ** 3 - a, fnp.ones_like(a), _newton, lambda g, y: y / g(fnp.ones_like(y)))


def _jax_cbrt_root(a):
    import jax.numpy as jnp

    def newton(f, x):
        return _jlax().fori_loop(0, 30, lambda i, s: s - f(s) / (3.0 * s * s), x)
    return _jlax().custom_root(lambda x: x ** 3 - a, jnp.ones_like(a), newton, lambda g, y: y / g(jnp.ones_like(y)))


op("lax_custom_root", _cbrt_root, np.cbrt, U((2, 3), lo=0.5, hi=3.0), _jax_cbrt_root)
