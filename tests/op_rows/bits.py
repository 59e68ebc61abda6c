"""Op-table rows of the bit primitives (funcad.lax shifts, bitcasts, counts, threefry2x32)."""
import numpy as np

import funcad.lax as lax
from funcad.primitives.bits import threefry2x32
from tests.op_table import op

U32 = (np.uint32,)
IU = (np.int32, np.int64, np.uint32, np.uint64)


def _jlax():
    import jax.lax as jl
    return jl


def _ints(*shapes, hi=None):
    """Integers over the dtype's whole range, and shift amounts in [0, bits + 2)."""
    def gen(rng, dtype):
        info = np.iinfo(dtype)
        x = rng.integers(info.min, info.max, shapes[0], dtype=dtype, endpoint=True)
        if len(shapes) == 1:
            return (x,)
        y = rng.integers(0, (hi or info.bits) + 2, shapes[1]).astype(dtype)
        return x, y
    return gen


def _np_shift(kind):
    def ref(x, y):
        bits = x.dtype.itemsize * 8
        u = np.dtype(f"u{x.dtype.itemsize}")
        n = y.astype(u)
        inside = n < bits
        s = np.where(inside, n, 0).astype(u)
        if kind == "left":
            return np.where(inside, (x.view(u) << s).view(x.dtype), 0).astype(x.dtype)
        if kind == "logical":
            return np.where(inside, (x.view(u) >> s).view(x.dtype), 0).astype(x.dtype)
        sx = x.view(f"i{x.dtype.itemsize}")
        return (sx >> np.minimum(n, bits - 1).astype(sx.dtype)).view(x.dtype)
    return ref


op("shift_left", lax.shift_left, _np_shift("left"), _ints((2, 3), (2, 3)),
   lambda x, y: _jlax().shift_left(x, y), diff=False, dtypes=IU)
op("shift_left_bcast", lax.shift_left, _np_shift("left"), _ints((2, 3), ()),
   lambda x, y: _jlax().shift_left(x, y), diff=False, dtypes=IU)
op("shift_right_logical", lax.shift_right_logical, _np_shift("logical"), _ints((2, 3), (2, 3)),
   lambda x, y: _jlax().shift_right_logical(x, y), diff=False, dtypes=IU)
op("shift_right_arithmetic", lax.shift_right_arithmetic, _np_shift("arith"), _ints((2, 3), (2, 3)),
   lambda x, y: _jlax().shift_right_arithmetic(x, y), diff=False, dtypes=IU)
op("bitcast_same_width", lambda x: lax.bitcast_convert_type(x, np.float32),
   lambda x: x.view(np.float32), lambda rng, dt: (rng.integers(0, 2 ** 30, (2, 3)).astype(dt),),
   lambda x: _jlax().bitcast_convert_type(x, np.float32), diff=False, dtypes=(np.uint32, np.int32))
op("bitcast_narrow", lambda x: lax.bitcast_convert_type(x, np.uint8),
   lambda x: x.reshape(-1).view(np.uint8).reshape(x.shape + (x.dtype.itemsize,)), _ints((2, 3)),
   lambda x: _jlax().bitcast_convert_type(x, np.uint8), diff=False, dtypes=IU)
op("bitcast_widen", lambda x: lax.bitcast_convert_type(x, np.uint64),
   lambda x: x.reshape(-1).view(np.uint64).reshape(x.shape[:-1]), _ints((3, 2)),
   lambda x: _jlax().bitcast_convert_type(x, np.uint64), diff=False, dtypes=U32)
op("population_count", lax.population_count, lambda x: np.bitwise_count(x.view(f"u{x.dtype.itemsize}")).astype(x.dtype), _ints((2, 3)),
   lambda x: _jlax().population_count(x), diff=False, dtypes=IU)
op("clz", lax.clz, lambda x: np.array([x.dtype.itemsize * 8 - int(v).bit_length() for v in
                                       x.view(f"u{x.dtype.itemsize}").ravel()], x.dtype).reshape(x.shape),
   _ints((2, 3)), lambda x: _jlax().clz(x), diff=False, dtypes=IU)


def _np_threefry(k1, k2, x1, x2):
    a, b = np.broadcast_arrays(*(np.asarray(v, np.uint64) for v in (x1, x2)))
    k1, k2 = int(k1), int(k2)
    ks = [k1, k2, k1 ^ k2 ^ 0x1BD11BDA]
    m = 0xFFFFFFFF
    a, b = (a + k1) & m, (b + k2) & m
    for i in range(5):
        for r in ((13, 15, 26, 6), (17, 29, 16, 24))[i % 2]:
            a = (a + b) & m
            b = (((b << r) | (b >> (32 - r))) & m) ^ a
        a = (a + ks[(i + 1) % 3]) & m
        b = (b + ks[(i + 2) % 3] + i + 1) & m
    return a.astype(np.uint32), b.astype(np.uint32)


def _jax_threefry(k1, k2, x1, x2):
    from jax._src.random.threefry2x32 import threefry2x32_p
    return tuple(threefry2x32_p.bind(k1, k2, x1, x2))


op("threefry2x32", lambda k1, k2, x1, x2: tuple(threefry2x32(k1, k2, x1, x2)), _np_threefry,
   lambda rng, dt: (*rng.integers(0, 2 ** 32, (2,), dtype=np.uint32),
                    *rng.integers(0, 2 ** 32, (2, 2, 3), dtype=np.uint32)),
   _jax_threefry, diff=False, dtypes=U32)
