"""The implementation of funcad.image (see its docstring)."""
from __future__ import annotations

import enum
import operator
from typing import Callable, Sequence

import numpy as np

from .. import numpy as fnp
from ..core import x64
from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..lax import Precision
from ..arrays.dtypes import asarray_or_tracer, cast

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]


class ResizeMethod(enum.Enum):
    """Image resize method, as JAX's: NEAREST, LINEAR, LANCZOS3, LANCZOS5, CUBIC (Keys'
    kernel, a = -0.5), CUBIC_PYTORCH (a = -0.75 with the edges repeated, PyTorch's and
    OpenCV's when antialias is off; CUBIC otherwise) and AREA (the mean over each output
    pixel's footprint).

    >>> ResizeMethod.from_string("bilinear")
    <ResizeMethod.LINEAR: 1>
    """

    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        """The method a name stands for (JAX's names and aliases)."""
        for method, names in _NAMES.items():
            if s in names:
                return method
        raise FuncadValueError(f'Unknown resize method "{s}"')


_NAMES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


# -- kernels: weight as a function of the distance x >= 0 (in input pixels) --------------
# Written operation for operation as JAX's, so that rounding agrees.

def _triangle(x):
    return fnp.maximum(0, 1 - fnp.abs(x))


def _keys_cubic(x):
    # Keys' cubic convolution kernel with a = -0.5 (Pillow's, TensorFlow's, PyTorch's with
    # antialiasing).
    out = ((1.5 * x - 2.5) * x) * x + 1.
    out = fnp.where(x >= 1., ((-0.5 * x + 2.5) * x - 4.) * x + 2., out)
    return fnp.where(x >= 2., 0., out)


def _opencv_cubic(x):
    # a = -0.75: OpenCV's kernel, and PyTorch's without antialiasing.
    a = -0.75
    out = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
    out = fnp.where(x >= 1.0, ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a, out)
    return fnp.where(x >= 2.0, 0.0, out)


def _lanczos(radius: float) -> Callable:
    def kernel(x):
        y = radius * fnp.sin(np.pi * x) * fnp.sin(np.pi * x / radius)
        # sin(pi x) sin(pi x / r) / (pi^2 x^2 / r) tends to 1 at 0; the inner where keeps
        # the unused branch (and its derivative) finite there.
        out = fnp.where(x > 1e-3, fnp.divide(y, fnp.where(x != 0, np.pi ** 2 * x ** 2, 1)), 1)
        return fnp.where(x > radius, 0., out)
    return kernel


_AREA = object()  # the area weights are overlaps of intervals, not a kernel of distance

# method: (kernel radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.)),
    ResizeMethod.CUBIC: (2, _keys_cubic),
    ResizeMethod.CUBIC_PYTORCH: (2, _opencv_cubic),
    ResizeMethod.AREA: (1, _AREA),
}

_NEGLIGIBLE = 1000. * float(np.finfo(np.float32).eps)


def _edge_fold(weights, k: int, m: int):
    """Rows of `weights` for input positions -k .. m+k-1 added onto their clamped position
    in [0, m), one after another in index order (as a scatter-add accumulates them)."""
    def run(lo, hi):
        acc = weights[lo:lo + 1]
        for j in range(lo + 1, hi):
            acc = acc + weights[j:j + 1]
        return acc
    if m <= 1:
        return run(0, m + 2 * k) if m else weights[:0]
    return fnp.concatenate([run(0, k + 1), weights[k + 1:k + m - 1], run(k + m - 1, m + 2 * k)], axis=0)


def _normalise(weights):
    total = fnp.sum(weights, axis=0, keepdims=True)
    return fnp.where(fnp.abs(total) > _NEGLIGIBLE,
                     fnp.divide(weights, fnp.where(total != 0, total, 1)), 0)


def _weight_matrix(m: int, n: int, scale, translation, dtype, kernel, antialias: bool,
                   edge_padding: bool, radius: int):
    """The (m, n) matrix taking m input pixels to n output pixels along one dimension."""
    inv_scale = 1. / scale
    # Downsampling widens the kernel to low-pass filter as well as interpolate.
    if antialias:
        kernel_scale = max(inv_scale, 1.) if isinstance(inv_scale, float) else fnp.maximum(inv_scale, 1.)
    else:
        kernel_scale = 1.
    # The point in input coordinates that each output pixel's centre samples.
    sample_f = ((fnp.arange(n, dtype=dtype) + 0.5) * inv_scale - translation * inv_scale - 0.5)
    k = radius if edge_padding else 0
    expanded = fnp.arange(-k, m + k, dtype=dtype)
    if kernel is _AREA:
        left_out = fnp.arange(n, dtype=dtype) * inv_scale - translation * inv_scale
        right_out = left_out + inv_scale
        left_in = fnp.arange(m, dtype=dtype)
        right_in = left_in + 1.0
        # The overlap of output pixel i's footprint with input pixel j.
        weights = fnp.maximum(0.0, fnp.minimum(right_out[np.newaxis, :], right_in[:, np.newaxis])
                              - fnp.maximum(left_out[np.newaxis, :], left_in[:, np.newaxis]))
    else:
        x = fnp.abs(sample_f[np.newaxis, :] - expanded[:, np.newaxis])
        weights = kernel(x / kernel_scale)
    if edge_padding:
        # Weights of positions outside the image move onto the edge pixels (edges repeated).
        return _normalise(_edge_fold(weights, k, m))
    weights = _normalise(weights)
    # Output pixels whose sample point lies outside the image get nothing.
    inside = fnp.logical_and(sample_f >= -0.5, sample_f <= m - 0.5)
    return fnp.where(inside[np.newaxis, :], weights, 0)


def _contract(x, shape, spatial_dims, scales, translations, dtype, kernel, antialias, precision,
              edge_padding, radius):
    if not spatial_dims:
        return x
    nd = len(shape)
    operands = []
    out_indices = list(range(nd))
    for i, d in enumerate(spatial_dims):
        w = _weight_matrix(aval_of(x).shape[d], shape[d], scales[i], translations[i], dtype, kernel,
                           antialias, edge_padding, radius)
        operands += [cast(w, aval_of(x).dtype), [d, nd + i]]
        out_indices[d] = nd + i
    return fnp.einsum(x, list(range(nd)), *operands, out_indices, precision=precision)


def _method(method) -> ResizeMethod:
    if isinstance(method, str):
        return ResizeMethod.from_string(method)
    if isinstance(method, ResizeMethod):
        return method
    name = getattr(method, "name", None)  # JAX's own ResizeMethod values
    if isinstance(name, str) and name in ResizeMethod.__members__:
        return ResizeMethod[name]
    raise FuncadValueError(f"method must be a ResizeMethod or one of its names "
                           f"({', '.join(n for ns in _NAMES.values() for n in ns)}), got {method!r}")


def _inexact_dtype(*dtypes) -> np.dtype:
    """JAX's promotion to an inexact dtype: 64-bit integers to float64, narrower ones and
    booleans to float32 (float32 throughout with x64 off)."""
    dt = np.dtype(fnp.result_type(*dtypes))
    if not fnp.issubdtype(dt, fnp.inexact):
        dt = np.dtype(np.float64 if dt.kind in "iu" and dt.itemsize == 8 else np.float32)
    return x64.canonicalize_dtype(dt)


def _shape(shape, image) -> tuple[int, ...]:
    try:
        shape = tuple(operator.index(s) for s in shape)
    except TypeError:
        raise FuncadValueError(f"shape must be a sequence of integers, got {shape!r}") from None
    if len(shape) != aval_of(image).ndim:
        raise FuncadValueError('shape must have length equal to the number of dimensions of x; '
                               f' {shape} vs {tuple(aval_of(image).shape)}')
    if any(s < 0 for s in shape):
        raise FuncadValueError(f"shape must be non-negative, got {shape}")
    return shape


def _kernel_for(method: ResizeMethod, antialias: bool):
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    return kernel, radius, method == ResizeMethod.CUBIC_PYTORCH


def scale_and_translate(image, shape: Sequence[int], spatial_dims: Sequence[int], scale, translation,
                        method: str | ResizeMethod, antialias: bool = True,
                        precision=Precision.HIGHEST):
    """Resample `image` to `shape` under the map x -> x * scale + translation of the
    `spatial_dims` (pixel centres at half-integers), as `jax.image.scale_and_translate`.

    Output pixels that sample outside the input are zero. `scale` and `translation` are
    arrays of one entry per spatial dimension and may be traced (differentiated, batched).
    Methods: LINEAR, LANCZOS3, LANCZOS5, CUBIC, CUBIC_PYTORCH and AREA, or their names
    (see ResizeMethod); NEAREST is only for `resize`. With `antialias` a downscale
    widens the kernel by 1/scale. `precision` is the einsum's.

    >>> import numpy as np
    >>> scale_and_translate(np.array([1.0, 2.0, 3.0]), (3,), (0,), np.array([1.0]),
    ...                     np.array([1.0]), "linear").tolist()
    [0.0, 1.0, 2.0]
    """
    image = asarray_or_tracer(image)
    shape = _shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise FuncadValueError('Nearest neighbor resampling is not currently supported '
                               'for scale_and_translate.')
    nd = len(shape)
    dims = []
    for d in spatial_dims:
        d = operator.index(d)
        if not -nd <= d < nd:
            raise FuncadValueError(f"scale_and_translate: spatial dimension {d} is out of range for an "
                                   f"image of {nd} dimensions")
        dims.append(d % nd)
    scale, translation = asarray_or_tracer(scale), asarray_or_tracer(translation)
    if aval_of(scale).ndim != 1 or aval_of(translation).ndim != 1 or \
            aval_of(scale).shape[0] != len(dims) or aval_of(translation).shape[0] != len(dims):
        raise FuncadValueError(
            f"scale_and_translate: scale and translation need one entry per spatial dimension "
            f"({len(dims)}), got shapes {tuple(aval_of(scale).shape)} and {tuple(aval_of(translation).shape)}")
    kernel, radius, edge_padding = _kernel_for(method, antialias)
    image = cast(image, _inexact_dtype(aval_of(image).dtype))
    dtype = _inexact_dtype(aval_of(scale).dtype, aval_of(translation).dtype)
    scale, translation = cast(scale, dtype), cast(translation, dtype)
    return _contract(image, shape, tuple(dims), [scale[i] for i in range(len(dims))],
                     [translation[i] for i in range(len(dims))], dtype, kernel, antialias, precision,
                     edge_padding, radius)


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(aval_of(x).shape, shape)):
        if m == n:
            continue
        # float32 as JAX (whose float64 path is off on some backends), so the picks agree.
        offsets = (np.arange(n, dtype=np.float32) + np.float32(0.5)) * np.float32(m) / np.float32(n)
        x = fnp.take(x, np.floor(offsets).astype(np.int32), axis=d)
    return x


def resize(image, shape: Sequence[int], method: str | ResizeMethod, antialias: bool = True,
           precision=Precision.HIGHEST):
    """`image` resampled to `shape` (every dimension: leave batch and channel sizes as they
    are), as `jax.image.resize`.

    Methods (a ResizeMethod or a name): "nearest" (keeps the dtype; antialias and precision
    are ignored), "linear" ("bilinear", "trilinear", "triangle"), "cubic" ("bicubic",
    "tricubic"), "cubic-pytorch", "lanczos3", "lanczos5", "area". The others return a
    floating image (integers become float32, 64-bit ones float64, as in JAX). With `antialias` a downscale
    filters with the kernel widened by the scale factor.

    >>> import numpy as np
    >>> resize(np.array([[1.0, 2.0], [3.0, 4.0]]), (1, 1), "linear").tolist()
    [[2.5]]
    """
    image = asarray_or_tracer(image)
    shape = _shape(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    image = cast(image, _inexact_dtype(aval_of(image).dtype))
    in_shape = aval_of(image).shape
    # Interpolating kernels leave a dimension of unchanged size as it is.
    dims = tuple(d for d in range(len(shape)) if in_shape[d] != shape[d])
    scales = [1.0 if shape[d] == 0 else shape[d] / in_shape[d] for d in dims]
    kernel, radius, edge_padding = _kernel_for(method, antialias)
    return _contract(image, shape, dims, scales, [0.] * len(dims), x64.default_float(), kernel, antialias,
                     precision, edge_padding, radius)
