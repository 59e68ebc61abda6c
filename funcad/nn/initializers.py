"""funcad.nn.initializers: JAX's weight initializers, on funcad.random, with JAX's
values for the same key.

An initializer is a function `init(key, shape, dtype=None) -> array`; the
functions here (`normal(0.1)`, `glorot_uniform()`, ...) build them. As
everywhere in funcad the default dtype is float64 (NumPy's), where JAX's is
float32 unless x64 is on; pass `dtype` for float32.

>>> import funcad.random as fr
>>> from funcad.nn import initializers
>>> w = initializers.glorot_normal()(fr.PRNGKey(0), (3, 4), "float32")
>>> w.shape, str(w.dtype)
((3, 4), 'float32')
"""

import math as _math
import operator as _operator
from typing import Protocol as _Protocol, runtime_checkable as _runtime_checkable

import numpy as _np

from .. import numpy as _fnp
from .. import random as _random
from ..core import x64 as _x64
from ..core.errors import FuncadValueError as _FuncadValueError
from ..primitives import elementwise as _E
from ..primitives.sharding import out_sharded as _out_sharded

__all__ = ["Initializer", "constant", "delta_orthogonal", "glorot_normal", "glorot_uniform", "he_normal",
           "he_uniform", "kaiming_normal", "kaiming_uniform", "lecun_normal", "lecun_uniform", "normal",
           "ones", "orthogonal", "truncated_normal", "uniform", "variance_scaling", "xavier_normal",
           "xavier_uniform", "zeros"]


@_runtime_checkable
class Initializer(_Protocol):
    """What the functions of this module return: `init(key, shape, dtype=None) -> array`."""

    def __call__(self, key, shape, dtype=None):
        ...


def _dtype(dtype):
    # the default is the default float (float32 with x64 off, no truncation warning); an
    # explicit float64 with x64 off warns where it is used, as in JAX
    return _x64.default_float() if dtype is None else _np.dtype(dtype)


def _shape(shape):
    if isinstance(shape, int) or _np.ndim(shape) == 0:
        return (_operator.index(shape),)
    return tuple(_operator.index(d) for d in shape)


def zeros(key, shape, dtype=None, out_sharding=None):
    """An array of zeros (the key is unused), laid out as `out_sharding` if given.

    >>> zeros(None, (2,)).tolist()
    [0.0, 0.0]
    """
    return _out_sharded(_fnp.zeros(_shape(shape), _dtype(dtype)), out_sharding)


def ones(key, shape, dtype=None, out_sharding=None):
    """An array of ones (the key is unused), laid out as `out_sharding` if given.

    >>> ones(None, (2,)).tolist()
    [1.0, 1.0]
    """
    return _out_sharded(_fnp.ones(_shape(shape), _dtype(dtype)), out_sharding)


def constant(value, dtype=None) -> Initializer:
    """An initializer filling with `value`.

    >>> constant(0.5)(None, (2,)).tolist()
    [0.5, 0.5]
    """
    def init(key, shape, dtype=dtype):
        return _fnp.full(_shape(shape), value, dtype=_dtype(dtype))
    return init


def uniform(scale=1e-2, dtype=None) -> Initializer:
    """An initializer drawing uniformly from [0, scale).

    >>> import funcad.random as fr
    >>> bool((uniform(2.0)(fr.PRNGKey(0), (5,)) < 2.0).all())
    True
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return _random.uniform(key, _shape(shape), dtype) * _fnp.array(scale, dtype)
    return init


def _scaled_normal(key, shape, dtype, scale):
    # As JAX: sqrt(2) erfinv(u) of one uniform draw on (-1, 1), scaled, for real dtypes.
    if dtype.kind == "f":
        lo = _np.nextafter(_np.array(-1.0, dtype), _np.array(0.0, dtype), dtype=dtype)
        u = _random.uniform(key, shape, dtype, lo, _np.array(1.0, dtype))
        return _fnp.array(_np.sqrt(2), dtype) * scale * _E.erf_inv(u)
    return _random.normal(key, shape, dtype) * scale


def normal(stddev=1e-2, dtype=None) -> Initializer:
    """An initializer drawing from N(0, stddev^2).

    >>> import funcad.random as fr
    >>> normal(1.0)(fr.PRNGKey(0), (2, 3)).shape
    (2, 3)
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return _scaled_normal(key, _shape(shape), dtype, _fnp.array(stddev, dtype))
    return init


def truncated_normal(stddev=1e-2, dtype=None, lower=-2.0, upper=2.0) -> Initializer:
    """An initializer drawing stddev times a standard normal truncated to (lower, upper).

    >>> import funcad.random as fr
    >>> bool((abs(truncated_normal(1.0)(fr.PRNGKey(0), (100,))) < 2.0).all())
    True
    """
    def init(key, shape, dtype=dtype):
        dtype = _dtype(dtype)
        return _random.truncated_normal(key, lower, upper, _shape(shape), dtype) * _fnp.array(stddev, dtype)
    return init


def _size(shape, axis):
    return shape[axis] if isinstance(axis, int) else _math.prod(shape[i] for i in axis)


def _compute_fans(shape, in_axis=-2, out_axis=-1, batch_axis=()):
    """(fan_in, fan_out): the in and out sizes times the receptive field (the other axes)."""
    if isinstance(in_axis, int) and in_axis == -2 and len(shape) <= 1:
        raise _FuncadValueError(
            f"Can't compute input and output sizes of a {len(shape)}-dimensional weights tensor "
            "with default in_axis. Must be at least 2D or specify in_axis explicitly.")
    in_size, out_size = _size(shape, in_axis), _size(shape, out_axis)
    denominator = in_size * out_size * _size(shape, batch_axis)
    receptive = _math.prod(shape) / denominator if denominator != 0 else 0
    return in_size * receptive, out_size * receptive


def _complex_uniform(key, shape, dtype):
    # Uniform on the unit disc scaled to variance 1: radius sqrt(2u), uniform angle.
    key_r, key_theta = _random.split(key)
    real = _np.finfo(dtype).dtype
    r = _fnp.sqrt(2 * _random.uniform(key_r, shape, real)).astype(dtype)
    theta = 2 * _np.pi * _random.uniform(key_theta, shape, real).astype(dtype)
    return r * _fnp.exp(1j * theta)


def _complex_truncated_normal(key, upper, shape, dtype):
    # A complex normal with its modulus truncated to `upper`, by inverting the modulus' CDF.
    key_r, key_theta = _random.split(key)
    real = _np.finfo(dtype).dtype
    t = (1 - _fnp.exp(_fnp.array(-upper ** 2, dtype))) * _random.uniform(key_r, shape, real).astype(dtype)
    r = _fnp.sqrt(-_fnp.log(1 - t))
    theta = 2 * _np.pi * _random.uniform(key_theta, shape, real).astype(dtype)
    return r * _fnp.exp(1j * theta)


_MODES = ("fan_in", "fan_out", "fan_avg", "fan_geo_avg")
_DISTRIBUTIONS = ("truncated_normal", "normal", "uniform")


def variance_scaling(scale, mode: str, distribution: str, in_axis=-2, out_axis=-1, batch_axis=(),
                     dtype=None) -> Initializer:
    """An initializer with variance scale / n, n the fan chosen by `mode` ("fan_in",
    "fan_out", "fan_avg", "fan_geo_avg"), drawn from `distribution` ("truncated_normal"
    (within 2 standard deviations, rescaled), "normal", "uniform").

    >>> import funcad.random as fr
    >>> variance_scaling(2.0, "fan_in", "uniform")(fr.PRNGKey(0), (4, 3)).shape
    (4, 3)
    """
    if mode not in _MODES:
        raise _FuncadValueError(f"invalid mode for variance scaling initializer: {mode!r}; "
                                f"use one of {', '.join(_MODES)}")
    if distribution not in _DISTRIBUTIONS:
        raise _FuncadValueError(f"invalid distribution for variance scaling initializer: {distribution!r}; "
                                f"use one of {', '.join(_DISTRIBUTIONS)}")

    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        fan_in, fan_out = _compute_fans(shape, in_axis, out_axis, batch_axis)
        denominator = {"fan_in": fan_in, "fan_out": fan_out, "fan_avg": (fan_in + fan_out) / 2,
                       "fan_geo_avg": (fan_in * fan_out) ** 0.5}[mode]
        variance = _fnp.array(scale / denominator if denominator != 0 else 0, dtype=dtype)
        if distribution == "truncated_normal":
            if dtype.kind == "f":
                # 0.8796... is the standard deviation of a standard normal truncated to (-2, 2).
                stddev = _fnp.sqrt(variance) / _fnp.array(0.8796256610342398, dtype)
                return _random.truncated_normal(key, -2, 2, shape, dtype) * stddev
            stddev = _fnp.sqrt(variance) / _fnp.array(0.9531116438049121, dtype)
            return _complex_truncated_normal(key, 2, shape, dtype) * stddev
        if distribution == "normal":
            return _scaled_normal(key, shape, dtype, _fnp.sqrt(variance))
        if dtype.kind == "f":
            return _random.uniform(key, shape, dtype, -1) * _fnp.sqrt(3 * variance)
        return _complex_uniform(key, shape, dtype) * _fnp.sqrt(variance)
    return init


def _preset(name, scale, mode, distribution, doc):
    def build(in_axis=-2, out_axis=-1, batch_axis=(), dtype=None) -> Initializer:
        return variance_scaling(scale, mode, distribution, in_axis=in_axis, out_axis=out_axis,
                                batch_axis=batch_axis, dtype=dtype)
    build.__name__ = build.__qualname__ = name
    build.__doc__ = (f"{doc}: variance_scaling({scale}, {mode!r}, {distribution!r}).\n\n"
                     f"    >>> import funcad.random as fr\n"
                     f"    >>> {name}()(fr.PRNGKey(0), (4, 3)).shape\n    (4, 3)\n    ")
    return build


glorot_uniform = _preset("glorot_uniform", 1.0, "fan_avg", "uniform", "Glorot (Xavier) uniform")
glorot_normal = _preset("glorot_normal", 1.0, "fan_avg", "truncated_normal", "Glorot (Xavier) normal")
lecun_uniform = _preset("lecun_uniform", 1.0, "fan_in", "uniform", "LeCun uniform")
lecun_normal = _preset("lecun_normal", 1.0, "fan_in", "truncated_normal", "LeCun normal")
he_uniform = _preset("he_uniform", 2.0, "fan_in", "uniform", "He (Kaiming) uniform")
he_normal = _preset("he_normal", 2.0, "fan_in", "truncated_normal", "He (Kaiming) normal")
xavier_uniform, xavier_normal = glorot_uniform, glorot_normal
kaiming_uniform, kaiming_normal = he_uniform, he_normal


def _orthogonal_matrix(key, n, m, dtype):
    """An n x m matrix with orthonormal columns (or rows, if n < m), uniform over such
    matrices: the QR factor of a normal draw with R's diagonal made positive (Mezzadri
    2007), with JAX's draw for the key."""
    z = _random.normal(key, (max(n, m), min(n, m)), dtype)
    q, r = _fnp.linalg.qr(z)
    q = q * _fnp.expand_dims(_fnp.sign(_fnp.diagonal(r)), -2)
    return q.T if n < m else q


def orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer of (scaled) orthogonal matrices: the weights, flattened to
    (everything else, shape[column_axis]), have orthonormal columns or rows.

    >>> import numpy as np, funcad.random as fr
    >>> w = orthogonal()(fr.PRNGKey(0), (3, 3))
    >>> bool(np.allclose(w.T @ w, np.eye(3)))
    True
    """
    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) < 2:
            raise _FuncadValueError(f"orthogonal initializer requires at least a 2D shape, got {shape}")
        if any(d == 0 for d in shape):
            return _fnp.zeros(shape, dtype)
        n_cols = shape[column_axis]
        n_rows = _math.prod(shape) // n_cols
        q = _orthogonal_matrix(key, n_rows, n_cols, dtype)
        rest = tuple(_np.delete(_np.array(shape), column_axis))
        q = _fnp.moveaxis(_fnp.reshape(q, rest + (n_cols,)), -1, column_axis)
        return _fnp.array(scale, dtype) * q
    return init


def delta_orthogonal(scale=1.0, column_axis=-1, dtype=None) -> Initializer:
    """An initializer for convolution kernels of 3, 4 or 5 dimensions (spatial axes, then
    in and out channels): an orthogonal (in, out) matrix at the spatial centre, zeros
    elsewhere (Xiao et al. 2018); needs in <= out.

    >>> import funcad.random as fr
    >>> w = delta_orthogonal()(fr.PRNGKey(0), (3, 3, 2, 4))
    >>> float(abs(w[0, 0]).sum()), w.shape
    (0.0, (3, 3, 2, 4))
    """
    def init(key, shape, dtype=dtype):
        shape, dtype = _shape(shape), _dtype(dtype)
        if len(shape) not in (3, 4, 5):
            raise _FuncadValueError(f"Delta orthogonal initializer requires a 3D, 4D or 5D shape, got {shape}")
        if shape[-1] < shape[-2]:
            raise _FuncadValueError(f"`fan_in` must be less or equal than `fan_out`, got shape {shape} "
                                    f"({shape[-2]} in > {shape[-1]} out channels)")
        centre = orthogonal(scale=scale, column_axis=column_axis, dtype=dtype)(key, shape[-2:])
        spatial = shape[:-2]
        # The centre entry at index (k - 1) // 2 of every spatial axis, zeros padded around it.
        widths = [((k - 1) // 2, k - 1 - (k - 1) // 2) for k in spatial] + [(0, 0), (0, 0)]
        return _fnp.pad(_fnp.reshape(centre, (1,) * len(spatial) + shape[-2:]), widths)
    return init
