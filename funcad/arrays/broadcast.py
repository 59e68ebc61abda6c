"""Broadcasting arrays to a shape (NumPy's rules, checked with the shapes in the error)."""
from __future__ import annotations

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError
from ..primitives._base import broadcast_shapes as broadcast_shapes_of, broadcast_to as _broadcast_to
from .dtypes import asarray_or_tracer
from .placement import place


def broadcast_to(array, shape, *, out_sharding=None):
    a = asarray_or_tracer(array)
    shape = (int(shape),) if np.ndim(shape) == 0 else tuple(shape)
    src = aval_of(a).shape
    if len(src) > len(shape) or any(n != 1 and n != m for n, m in zip(src[::-1], shape[::-1])):
        raise FuncadTypeError(f"broadcast_to got {aval_of(a).str_short()}: it cannot be broadcast to "
                              f"shape {shape} (each dimension must be 1 or match, from the right)")
    out = _broadcast_to(a, shape)
    return out if out_sharding is None else place(out, out_sharding=out_sharding, name="broadcast_to")


def broadcast_arrays(*args):
    args = [asarray_or_tracer(a) for a in args]
    s = broadcast_shapes_of(*[aval_of(a).shape for a in args])
    return [broadcast_to(a, s) for a in args]
