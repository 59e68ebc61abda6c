"""funcad.lax's convolutions: conv_general_dilated in JAX's form (padding strings,
dimension-number strings, precision, preferred_element_type) over the one primitive,
and the wrappers conv, conv_with_general_padding and conv_transpose."""
from __future__ import annotations

from typing import Sequence

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadTypeError, FuncadValueError
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..primitives.convolution import ConvDimensionNumbers
from ..primitives.convolution import conv_general_dilated as _bind
from ..primitives.linalg import dot_general
from ..arrays.dtypes import asarray_or_tracer
from ..arrays.precision import _precision, _preferred

__all__ = ["ConvDimensionNumbers", "conv_dimension_numbers", "conv_general_dilated", "conv",
           "conv_with_general_padding", "conv_transpose", "padtype_to_pads", "conv_shape_tuple",
           "conv_general_shape_tuple", "conv_transpose_shape_tuple", "conv_general_permutations",
           "conv_general_dilated_patches", "conv_general_dilated_local", "reduce_window_shape_tuple"]


def _arr(x):
    return asarray_or_tracer(x)


def _spec_perm(spec: str, pair: tuple, rhs_spec: str) -> tuple:
    spatial = sorted((i for i, c in enumerate(spec) if c not in pair), key=lambda i: rhs_spec.index(spec[i]))
    return (spec.index(pair[0]), spec.index(pair[1])) + tuple(spatial)


def conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers) -> ConvDimensionNumbers:
    """`dimension_numbers` (None, three layout strings, or a ConvDimensionNumbers) as a
    ConvDimensionNumbers of axis indices; spatial axes are ordered as in the rhs string.

    >>> conv_dimension_numbers((1, 5, 5, 3), (3, 3, 3, 8), ("NHWC", "HWIO", "NHWC"))
    ConvDimensionNumbers(lhs_spec=(0, 3, 1, 2), rhs_spec=(3, 2, 0, 1), out_spec=(0, 3, 1, 2))
    """
    if isinstance(dimension_numbers, ConvDimensionNumbers):
        return dimension_numbers
    nd = len(lhs_shape)
    if nd != len(rhs_shape):
        raise FuncadTypeError(f"convolution needs lhs and rhs of one rank, got shapes {tuple(lhs_shape)} "
                              f"and {tuple(rhs_shape)}")
    if dimension_numbers is None:
        return ConvDimensionNumbers(*(tuple(range(nd)),) * 3)
    if not isinstance(dimension_numbers, (list, tuple)) or len(dimension_numbers) != 3 or not all(
            isinstance(s, str) for s in dimension_numbers):
        raise FuncadTypeError("convolution dimension_numbers must be None, a ConvDimensionNumbers or "
                              f"three layout strings such as ('NCHW', 'OIHW', 'NCHW'), got {dimension_numbers!r}")
    lhs, rhs, out = dimension_numbers
    pairs = (("N", "C"), ("O", "I"), ("N", "C"))
    for k, (spec, pair) in enumerate(zip(dimension_numbers, pairs)):
        if len(spec) != nd:
            raise FuncadTypeError(f"convolution dimension_numbers[{k}] = {spec!r} must have one letter per "
                                  f"axis ({nd} for shapes {tuple(lhs_shape)} and {tuple(rhs_shape)})")
        if spec.count(pair[0]) != 1 or spec.count(pair[1]) != 1 or len(set(spec)) != len(spec):
            raise FuncadTypeError(f"convolution dimension_numbers[{k}] = {spec!r} must contain "
                                  f"'{pair[0]}' and '{pair[1]}' once each and no letter twice")
    if not set(lhs) - {"N", "C"} == set(rhs) - {"O", "I"} == set(out) - {"N", "C"}:
        raise FuncadTypeError(f"convolution dimension_numbers {tuple(dimension_numbers)} must name the same "
                              "spatial letters in all three strings")
    return ConvDimensionNumbers(_spec_perm(lhs, pairs[0], rhs), _spec_perm(rhs, pairs[1], rhs),
                                _spec_perm(out, pairs[2], rhs))


def conv_general_permutations(dimension_numbers) -> tuple:
    """The (lhs, rhs, out) axis permutations of three layout strings (conv_dimension_numbers
    without the shape checks).

    >>> conv_general_permutations(("NHWC", "HWIO", "NHWC"))
    ((0, 3, 1, 2), (3, 2, 0, 1), (0, 3, 1, 2))
    """
    nd = len(dimension_numbers[0])
    return tuple(conv_dimension_numbers((1,) * nd, (1,) * nd, tuple(dimension_numbers)))


def padtype_to_pads(in_shape, window_shape, window_strides, padding) -> list:
    """Explicit (lo, hi) pairs for 'VALID', 'SAME' (extra padding at the end) or
    'SAME_LOWER' (at the start).

    >>> padtype_to_pads((5,), (3,), (2,), "SAME")
    [(1, 1)]
    """
    kind = padding.upper() if isinstance(padding, str) else getattr(padding, "name", padding)
    if kind == "VALID":
        return [(0, 0)] * len(in_shape)
    if kind not in ("SAME", "SAME_LOWER"):
        raise FuncadValueError(f"padding must be 'VALID', 'SAME' or 'SAME_LOWER', got {padding!r}")
    pads = []
    for n, w, s in zip(in_shape, window_shape, window_strides):
        total = max((-(-n // s) - 1) * s + w - n, 0)
        lo = total // 2 if kind == "SAME" else -(-total // 2)
        pads.append((lo, total - lo))
    return pads


def conv_general_dilated(lhs, rhs, window_strides: Sequence[int], padding, lhs_dilation=None,
                         rhs_dilation=None, dimension_numbers=None, feature_group_count: int = 1,
                         batch_group_count: int = 1, precision=None, preferred_element_type=None,
                         out_sharding=None):
    """General N-d convolution (cross-correlation, as in JAX and XLA) with strides,
    padding ('VALID', 'SAME', 'SAME_LOWER' or (lo, hi) pairs), input (lhs) and kernel
    (rhs) dilation, layouts and feature/batch groups; `out_sharding` the result's sharding,
    needed on Explicit mesh axes where the kernel or the input's features are split.

    >>> import numpy as np
    >>> x, k = np.ones((1, 1, 4, 4)), np.ones((1, 1, 3, 3))
    >>> conv_general_dilated(x, k, (1, 1), "VALID")[0, 0]
    Array([[9., 9.],
           [9., 9.]], dtype=float64)
    """
    x, y = _arr(lhs), _arr(rhs)
    xs, ys = aval_of(x).shape, aval_of(y).shape
    dn = conv_dimension_numbers(xs, ys, dimension_numbers)
    nsp = len(xs) - 2
    lhs_dilation = (1,) * nsp if lhs_dilation is None else tuple(lhs_dilation)
    rhs_dilation = (1,) * nsp if rhs_dilation is None else tuple(rhs_dilation)
    if isinstance(padding, str):
        if any(d != 1 for d in lhs_dilation):
            raise FuncadValueError("conv_general_dilated: string padding with lhs_dilation (a transposed "
                                   "convolution) is ambiguous; pass explicit (lo, hi) pairs or use "
                                   "conv_transpose")
        window = [(ys[a] - 1) * d + 1 for a, d in zip(dn.rhs_spec[2:], rhs_dilation)]
        padding = padtype_to_pads([xs[a] for a in dn.lhs_spec[2:]], window, window_strides, padding)
    else:
        try:
            padding = tuple((int(lo), int(hi)) for lo, hi in padding)
        except (TypeError, ValueError):
            raise FuncadValueError("conv_general_dilated: padding must be a string or a sequence of "
                                   f"(low, high) pairs, got {padding!r}") from None
    x, y = _preferred(x, y, preferred_element_type)
    return _bind(x, y, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                 feature_group_count, batch_group_count, _precision(precision), out_sharding)


def conv(lhs, rhs, window_strides: Sequence[int], padding, precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW layouts and no dilation.

    >>> import numpy as np
    >>> conv(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), "VALID")
    Array([[[2., 2.]]], dtype=float64)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, precision=precision,
                                preferred_element_type=preferred_element_type)


def conv_with_general_padding(lhs, rhs, window_strides: Sequence[int], padding, lhs_dilation,
                              rhs_dilation, precision=None, preferred_element_type=None):
    """conv_general_dilated with NCHW/OIHW layouts.

    >>> import numpy as np
    >>> conv_with_general_padding(np.ones((1, 1, 3)), np.ones((1, 1, 2)), (1,), [(1, 1)], None, None)
    Array([[[1., 2., 2., 1.]]], dtype=float64)
    """
    return conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                                precision=precision, preferred_element_type=preferred_element_type)


def _transpose_padding(k: int, s: int, padding):
    if padding == "SAME":
        total = k + s - 2
        lo = k - 1 if s > k - 1 else -(-total // 2)
    elif padding == "VALID":
        total = k + s - 2 + max(k - s, 0)
        lo = k - 1
    elif isinstance(padding, tuple):
        lo, total = k - padding[0] - 1, 2 * k - padding[0] - padding[1] - 2
    else:
        raise FuncadValueError(f"conv_transpose: padding must be 'SAME', 'VALID' or (lo, hi) pairs, got {padding!r}")
    return lo, total - lo


_TRANSPOSE_LAYOUTS = {2: ("NC", "IO", "NC"), 3: ("NHC", "HIO", "NHC"), 4: ("NHWC", "HWIO", "NHWC"),
                      5: ("NHWDC", "HWDIO", "NHWDC")}


def conv_transpose(lhs, rhs, strides: Sequence[int], padding, rhs_dilation=None, dimension_numbers=None,
                   transpose_kernel: bool = False, precision=None, preferred_element_type=None,
                   use_consistent_padding: bool = False):
    """The "transposed" (fractionally strided) convolution, with JAX's conventions:
    layouts default to TensorFlow's (NHWC, HWIO); 'SAME'/'VALID' (and, with
    use_consistent_padding, pairs) name the forward convolution's padding;
    transpose_kernel flips the kernel and swaps its features, as Keras does.

    >>> import numpy as np
    >>> conv_transpose(np.ones((1, 2, 1)), np.ones((2, 1, 1)), (2,), "VALID")[0, :, 0]
    Array([1., 1., 1., 1.], dtype=float64)
    """
    x, y = _arr(lhs), _arr(rhs)
    xs, ys = aval_of(x).shape, aval_of(y).shape
    if len(xs) != len(ys) or len(xs) < 2:
        raise FuncadTypeError(f"conv_transpose needs lhs and rhs of one rank >= 2, got shapes {xs} and {ys}")
    if dimension_numbers is None:
        if len(xs) not in _TRANSPOSE_LAYOUTS:
            raise FuncadValueError(f"conv_transpose has no default layout for rank {len(xs)}; pass "
                                   "dimension_numbers")
        dimension_numbers = _TRANSPOSE_LAYOUTS[len(xs)]
    dn = conv_dimension_numbers(xs, ys, dimension_numbers)
    ksp = [ys[a] for a in dn.rhs_spec[2:]]
    rhs_dilation = (1,) * len(ksp) if rhs_dilation is None else tuple(rhs_dilation)
    strides = tuple(strides)
    if use_consistent_padding or (isinstance(padding, str) and padding in ("SAME", "VALID")):
        per_dim = [padding] * len(strides) if isinstance(padding, str) else [tuple(p) for p in padding]
        pads = [_transpose_padding((k - 1) * d + 1, s, p) for k, d, s, p in zip(ksp, rhs_dilation, strides, per_dim)]
    else:
        pads = padding
    if transpose_kernel:
        y = S.rev(y, tuple(dn.rhs_spec[2:]))
        perm = list(range(len(ys)))
        perm[dn.rhs_spec[0]], perm[dn.rhs_spec[1]] = dn.rhs_spec[1], dn.rhs_spec[0]
        y = S.transpose(y, tuple(perm))
    return conv_general_dilated(x, y, (1,) * len(strides), pads, strides, rhs_dilation, dn,
                                precision=precision, preferred_element_type=preferred_element_type)


def conv_shape_tuple(lhs_shape, rhs_shape, strides, pads, batch_group_count: int = 1) -> tuple:
    """The output shape of a convolution in NC(spatial)/OI(spatial) layout (pads: pairs or a string).

    >>> conv_shape_tuple((2, 3, 9), (4, 3, 3), (2,), "SAME")
    (2, 4, 5)
    """
    if isinstance(pads, str):
        pads = padtype_to_pads(lhs_shape[2:], rhs_shape[2:], strides, pads)
    space = tuple(max((n + lo + hi - k) // s + 1, 0)
                  for n, k, s, (lo, hi) in zip(lhs_shape[2:], rhs_shape[2:], strides, pads))
    return (lhs_shape[0] // batch_group_count, rhs_shape[0]) + space


def conv_general_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """The output shape of conv_general_dilated (no dilation) in the layout of dimension_numbers.

    >>> conv_general_shape_tuple((1, 5, 5, 3), (3, 3, 3, 8), (1, 1), "VALID", ("NHWC", "HWIO", "NHWC"))
    (1, 3, 3, 8)
    """
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    canon = conv_shape_tuple([lhs_shape[a] for a in lhs_spec], [rhs_shape[a] for a in rhs_spec],
                             window_strides, padding)
    out = [0] * len(canon)
    for ax, n in zip(out_spec, canon):
        out[ax] = n
    return tuple(out)


def conv_transpose_shape_tuple(lhs_shape, rhs_shape, window_strides, padding, dimension_numbers) -> tuple:
    """The output shape of conv_transpose (string padding or pairs, as conv_transpose reads them).

    >>> conv_transpose_shape_tuple((1, 4, 4, 3), (3, 3, 3, 8), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC"))
    (1, 8, 8, 8)
    """
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(lhs_shape, rhs_shape, dimension_numbers)
    lhs_t, rhs_t = [lhs_shape[a] for a in lhs_spec], [rhs_shape[a] for a in rhs_spec]
    if isinstance(padding, str):
        padding = [_transpose_padding(k, s, padding) for k, s in zip(rhs_t[2:], window_strides)]
    space = [(n - 1) * s - k + 2 + lo + hi
             for n, k, s, (lo, hi) in zip(lhs_t[2:], rhs_t[2:], window_strides, padding)]
    canon = [lhs_t[0], rhs_t[0]] + space
    out = [0] * len(canon)
    for ax, n in zip(out_spec, canon):
        out[ax] = n
    return tuple(out)


def _dilated(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def reduce_window_shape_tuple(operand_shape, window_dimensions, window_strides, padding,
                              base_dilation=None, window_dilation=None) -> tuple:
    """The output shape of reduce_window with explicit (lo, hi) padding.

    >>> reduce_window_shape_tuple((4, 6), (2, 3), (2, 1), [(0, 0), (1, 1)])
    (2, 6)
    """
    shape = [_dilated(n, d) for n, d in zip(operand_shape, base_dilation or (1,) * len(operand_shape))]
    window = [_dilated(w, d) for w, d in zip(window_dimensions, window_dilation or (1,) * len(shape))]
    return tuple(max((n + lo + hi - w) // s + 1, 0)
                 for n, w, s, (lo, hi) in zip(shape, window, window_strides, padding))


def conv_general_dilated_patches(lhs, filter_shape: Sequence[int], window_strides: Sequence[int], padding,
                                 lhs_dilation=None, rhs_dilation=None, dimension_numbers=None,
                                 precision=None, preferred_element_type=None):
    """The patches a convolution with a kernel of `filter_shape` would see, as channels:
    output channel c * prod(filter_shape) + p holds input channel c at window position p.

    >>> import numpy as np
    >>> conv_general_dilated_patches(np.arange(4.0).reshape(1, 1, 4), (2,), (1,), "VALID")[0]
    Array([[0., 1., 2.],
           [1., 2., 3.]], dtype=float64)
    """
    x = _arr(lhs)
    xs = aval_of(x).shape
    filter_shape = tuple(int(f) for f in filter_shape)
    dn = conv_dimension_numbers(xs, (1, 1) + filter_shape, dimension_numbers)
    size, channels = int(np.prod(filter_shape, dtype=np.int64)), xs[dn.lhs_spec[1]]
    # One one-hot kernel per (channel, window position): a grouped convolution copies them out.
    eye = np.broadcast_to(np.eye(size, dtype=aval_of(x).dtype), (channels, size, size))
    kernel = np.moveaxis(eye.reshape((channels * size, 1) + filter_shape), (0, 1), dn.rhs_spec[:2])
    return conv_general_dilated(x, kernel, window_strides, padding, lhs_dilation, rhs_dilation, dn,
                                feature_group_count=channels,
                                precision=None if precision is None else (precision, "default"),
                                preferred_element_type=preferred_element_type)


def conv_general_dilated_local(lhs, rhs, window_strides: Sequence[int], padding, filter_shape: Sequence[int],
                               lhs_dilation=None, rhs_dilation=None, dimension_numbers=None, precision=None):
    """A locally connected ("unshared") convolution: like conv_general_dilated, but with a
    different kernel at every output position. `rhs` has the layout of the output with
    its spatial dims sized as the output's, and feature dims (in_channels *
    prod(filter_shape), out_channels) in the places of rhs_spec's O and I, as in JAX:
    the patches of conv_general_dilated_patches contracted with rhs, position by position.

    >>> import numpy as np
    >>> x = np.arange(4.0).reshape(1, 1, 4)
    >>> w = np.ones((1, 2, 3))          # OIW: 1 output channel, 1 * 2 window taps, 3 positions
    >>> conv_general_dilated_local(x, w, (1,), "VALID", (2,)).tolist()
    [[[1.0, 3.0, 5.0]]]
    """
    x = _arr(lhs)
    w = _arr(rhs)
    dtype = np.result_type(aval_of(x).dtype, aval_of(w).dtype)
    x = E.convert_element_type(x, dtype) if aval_of(x).dtype != dtype else x
    w = E.convert_element_type(w, dtype) if aval_of(w).dtype != dtype else w
    if isinstance(precision, (tuple, list)):
        if len(precision) != 2:
            raise FuncadValueError(f"Unsupported precision for conv_general_dilated_local: {precision}")
        lhs_precision = precision[0]
    else:
        lhs_precision = precision
    patches = conv_general_dilated_patches(x, filter_shape, window_strides, padding, lhs_dilation,
                                           rhs_dilation, dimension_numbers, precision=lhs_precision)
    lhs_spec, rhs_spec, out_spec = conv_dimension_numbers(aval_of(x).shape, (1, 1) + tuple(filter_shape),
                                                          dimension_numbers)
    # contract the patches' feature dim with rhs's I; batch over the spatial dims, in order
    out_b = list(out_spec[2:])
    rhs_b = [rhs_spec[2:][i] for i in sorted(range(len(out_b)), key=lambda k: out_b[k])]
    dn = (([out_spec[1]], [rhs_spec[1]]), (sorted(out_b), rhs_b))
    out = dot_general(patches, w, dn)
    # dot_general gives (spatial..., N, O); put N and O where the output layout has them
    nd = len(aval_of(out).shape)
    return _moveaxis(out, (nd - 2, nd - 1), (out_spec[0], out_spec[1]))


def _moveaxis(x, src, dst):
    nd = len(aval_of(x).shape)
    order = [i for i in range(nd) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return S.transpose(x, tuple(order))
