"""conv_general_dilated: the N-d convolution primitive (strides, padding, lhs and rhs
dilation, any dimension layout, feature and batch groups), with every rule.

The parameters are canonical: `dimension_numbers` is a ConvDimensionNumbers of
axis indices, `padding` explicit (lo, hi) pairs; funcad.lax turns the user's
strings into these. Both transposes are convolutions again (the gradient of a
convolution is a convolution of the cotangent with the flipped kernel, or of the
input with the cotangent), and vmap folds the batch axis into a batch or feature
axis and its groups, so every derivative and batch of a convolution is one
convolution.
"""
from __future__ import annotations

import inspect
from typing import NamedTuple

import numpy as np

from ..core.avals import ShapedArray
from ..core.avals import aval_of
from ..core.errors import ShardingTypeError
from ..core.sharding import NamedSharding, PartitionSpec
from ..core.trace import batch_rules, lowering_rules, sharding_rules, transpose_rules
from ..core.typed_sharding import explicit_out_sharding, out_spec, spec_of, varying_shape_rule
from ..lowering.stablehlo import i64_array, ints
from ._base import (check_eagerly, defjvp, defpython, is_undefined, new_primitive, shape_of,
                    type_error)
from .sharding import out_sharded
from .structural import moveaxis0, reshape, rev, transpose


class ConvDimensionNumbers(NamedTuple):
    """Axis indices of a convolution's operands and result, as in JAX: each spec is
    (batch, feature, *spatial) for lhs and out and (out feature, in feature, *spatial)
    for rhs; spatial axes are listed in the same order in all three.

    >>> ConvDimensionNumbers((0, 1, 2, 3), (0, 1, 2, 3), (0, 1, 2, 3)).lhs_spec
    (0, 1, 2, 3)
    """
    lhs_spec: tuple
    rhs_spec: tuple
    out_spec: tuple


def _dilate(n: int, d: int) -> int:
    return 0 if n == 0 else (n - 1) * d + 1


def _take(shape, idx):
    return tuple(shape[i] for i in idx)


def _out_spatial(lhs_sp, rhs_sp, strides, padding, lhs_dil, rhs_dil):
    return tuple(max((_dilate(n, ld) + lo + hi - _dilate(k, rd)) // s + 1, 0)
                 for n, k, s, (lo, hi), ld, rd in zip(lhs_sp, rhs_sp, strides, padding, lhs_dil, rhs_dil))


def _conv_aval(x, y, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, precision, out_sharding=None):
    name = "conv_general_dilated"
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    nd, nsp = x.ndim, x.ndim - 2
    if y.ndim != nd or nd < 2:
        raise type_error(name, "lhs and rhs need the same rank, at least 2 (batch and feature axes)", x, y)
    if x.dtype != y.dtype or x.dtype.kind not in "iufc":
        raise type_error(name, "lhs and rhs need one integer, floating or complex dtype; convert one with "
                         "convert_element_type, or pass preferred_element_type", x, y)
    for spec in dimension_numbers:
        if sorted(spec) != list(range(nd)):
            raise type_error(name, f"dimension_numbers {tuple(dimension_numbers)} must each be a "
                             f"permutation of 0..{nd - 1}", x, y)
    if not (len(window_strides) == len(padding) == len(lhs_dilation) == len(rhs_dilation) == nsp):
        raise type_error(name, f"window_strides, padding, lhs_dilation and rhs_dilation need {nsp} "
                         "entries each (one per spatial axis)", x, y)
    if min((*window_strides, *lhs_dilation, *rhs_dilation), default=1) < 1:
        raise type_error(name, "window_strides and dilations must be positive", x, y)
    g, b = feature_group_count, batch_group_count
    if g < 1 or b < 1 or (g > 1 and b > 1):
        raise type_error(name, f"feature_group_count={g} and batch_group_count={b} must be >= 1, "
                         "and at most one of them > 1", x, y)
    n, c = x.shape[lhs_spec[0]], x.shape[lhs_spec[1]]
    o, i = y.shape[rhs_spec[0]], y.shape[rhs_spec[1]]
    if c != i * g or o % g:
        raise type_error(name, f"lhs has {c} features and rhs {i} input features with "
                         f"feature_group_count={g}: need lhs features = rhs input features * "
                         "feature_group_count, and rhs output features divisible by it", x, y)
    if n % b or o % b:
        raise type_error(name, f"batch_group_count={b} must divide the lhs batch size ({n}) and the "
                         f"rhs output features ({o})", x, y)
    sp = _out_spatial(_take(x.shape, lhs_spec[2:]), _take(y.shape, rhs_spec[2:]), window_strides,
                      padding, lhs_dilation, rhs_dilation)
    shape = [0] * nd
    shape[out_spec[0]], shape[out_spec[1]] = n // b, o
    for ax, s in zip(out_spec[2:], sp):
        shape[ax] = s
    return ShapedArray(tuple(shape), x.dtype, x.weak_type and y.weak_type)


def _conv_numpy(x, y, strides, padding, lhs_dilation, rhs_dilation, dimension_numbers, fgc, bgc):
    """A grouped, dilated, padded, strided N-d convolution in NumPy (one einsum over a
    strided window view: no loop over pixels)."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    x = np.transpose(np.asarray(x), lhs_spec)  # (N, C, *spatial)
    y = np.transpose(np.asarray(y), rhs_spec)  # (O, I, *spatial)
    nsp, dtype = x.ndim - 2, x.dtype
    ext = lambda n, d: 0 if n == 0 else (n - 1) * d + 1  # noqa: E731
    # lhs dilation and padding in one buffer; negative padding crops afterwards.
    if any(d != 1 for d in lhs_dilation) or any(p != 0 for pair in padding for p in pair):
        keep = [ext(n, d) for n, d in zip(x.shape[2:], lhs_dilation)]
        buf = np.zeros(x.shape[:2] + tuple(k + max(lo, 0) + max(hi, 0)
                                           for k, (lo, hi) in zip(keep, padding)), dtype)
        buf[(slice(None),) * 2 + tuple(slice(max(lo, 0), max(lo, 0) + k, d) for k, (lo, _), d
                                       in zip(keep, padding, lhs_dilation))] = x
        x = buf[(slice(None),) * 2 + tuple(slice(max(-lo, 0), n - max(-hi, 0)) for n, (lo, hi)
                                           in zip(buf.shape[2:], padding))]
    win = tuple(ext(k, d) for k, d in zip(y.shape[2:], rhs_dilation))
    out_sp = [max((n - w) // s + 1, 0) for n, w, s in zip(x.shape[2:], win, strides)]
    n_out, o = x.shape[0] // bgc, y.shape[0]
    if 0 in out_sp or 0 in x.shape or 0 in y.shape:
        out = np.zeros((n_out, o, *out_sp), dtype)
    else:
        views = np.lib.stride_tricks.sliding_window_view(x, win, axis=tuple(range(2, 2 + nsp)))
        views = views[(slice(None),) * 2 + tuple(slice(None, None, s) for s in strides)
                      + tuple(slice(None, None, d) for d in rhs_dilation)]
        g = fgc * bgc  # at most one of them is > 1
        views = views.reshape((bgc, n_out, fgc, x.shape[1] // fgc) + views.shape[2:])
        kern = y.reshape((bgc, fgc, o // g) + y.shape[1:])
        letters = "defhijklmpqrstuvwxyz"
        sp, kp = letters[:nsp], letters[nsp:2 * nsp]
        out = np.einsum(f"bngc{sp}{kp},bgoc{kp}->nbgo{sp}", views, kern, optimize=True)
        out = out.reshape((n_out, o, *out_sp)).astype(dtype, copy=False)
    return np.transpose(out, np.argsort(out_spec))


def _conv_impl(x, y, *, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
               feature_group_count, batch_group_count, precision, out_sharding=None):
    return _conv_numpy(x, y, window_strides, padding, lhs_dilation, rhs_dilation, dimension_numbers,
                       feature_group_count, batch_group_count)


conv_general_dilated_p = new_primitive("conv_general_dilated", _conv_impl, _conv_aval)
check_eagerly(conv_general_dilated_p)  # NumPy would crop or broadcast some bad calls silently


def conv_general_dilated(lhs, rhs, window_strides, padding, lhs_dilation, rhs_dilation,
                         dimension_numbers, feature_group_count=1, batch_group_count=1,
                         precision=None, out_sharding=None):
    """The primitive's bind with canonical parameters (see funcad.lax for the user's form).
    `out_sharding` (over Explicit mesh axes) is a param only when given, as dot_general's;
    one over no Explicit axis only lays the result out."""
    dn = ConvDimensionNumbers(*(tuple(int(a) for a in spec) for spec in dimension_numbers))
    typed = explicit_out_sharding(out_sharding, "conv_general_dilated")
    out = conv_general_dilated_p.bind(
        lhs, rhs, window_strides=tuple(map(int, window_strides)),
        padding=tuple((int(lo), int(hi)) for lo, hi in padding),
        lhs_dilation=tuple(map(int, lhs_dilation)), rhs_dilation=tuple(map(int, rhs_dilation)),
        dimension_numbers=dn, feature_group_count=int(feature_group_count),
        batch_group_count=int(batch_group_count), precision=precision,
        **({} if typed is None else {"out_sharding": typed}))
    return out if typed is not None else out_sharded(out, out_sharding)


def _conv_sharding(x, y, *, dimension_numbers, out_sharding=None, **params):
    """JAX's rule: `out_sharding` if given; else, with the kernel replicated and the
    input's feature dimension unsplit, the result is split as the input (positionally),
    its changed sizes still divisible; anything else needs `out_sharding=`."""
    if out_sharding is not None:
        return out_spec(out_sharding, x.ndim)
    if all(p is None for p in spec_of(y)) and spec_of(x)[dimension_numbers[0][1]] is None:
        shape = _conv_aval(x, y, dimension_numbers=dimension_numbers, **params).shape
        return varying_shape_rule("conv_general_dilated", lambda *a, **k: shape)(x)
    raise ShardingTypeError("Please specify the output sharding via `out_sharding` parameter of "
                            f"`conv_general_dilated`: got lhs {x.str_short()} and rhs "
                            f"{y.str_short()} (a split kernel or a split feature dimension)")


sharding_rules[conv_general_dilated_p] = _conv_sharding


# ------------------------------------------------------------------- jvp ----
# Bilinear: d(x * y) = dx * y + x * dy, each term the same convolution.
defjvp(conv_general_dilated_p,
       lambda t, ans, x, y, **p: conv_general_dilated_p.bind(t, y, **p),
       lambda t, ans, x, y, **p: conv_general_dilated_p.bind(x, t, **p))


# ------------------------------------------------------------- transpose ----

def _swap(spec):
    return (spec[1], spec[0]) + tuple(spec[2:])


def _regroup(x, src, dst, n):
    """Move the major factor `n` of axis src into axis dst, as its major factor."""
    shp = list(shape_of(x))
    split = shp[:src] + [n, shp[src] // n] + shp[src + 1:]
    x = reshape(x, tuple(split))
    perm = [a for a in range(len(split)) if a != src]
    perm.insert(perm.index(dst if dst < src else dst + 1), src)
    x = transpose(x, tuple(perm))
    shp[src] //= n
    shp[dst] *= n
    return reshape(x, tuple(shp))


def _transpose_lhs(ct, y, lhs_shape, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   out_sharding=None):
    # The input's cotangent: the cotangent, dilated by the strides, correlated with the
    # spatially flipped kernel whose in/out features are swapped (groups moved along).
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    groups = max(feature_group_count, batch_group_count)
    kern = _regroup(y, rhs_spec[0], rhs_spec[1], groups) if groups > 1 else y
    kern = rev(kern, tuple(rhs_spec[2:]))
    pads = []
    for n, k, o, s, (lo, _), ld, rd in zip(_take(lhs_shape, lhs_spec[2:]),
                                           _take(shape_of(y), rhs_spec[2:]),
                                           _take(shape_of(ct), out_spec[2:]), window_strides,
                                           padding, lhs_dilation, rhs_dilation):
        before = _dilate(k, rd) - 1 - lo
        pads.append((before, _dilate(n, ld) + _dilate(k, rd) - 1 - _dilate(o, s) - before))
    out = conv_general_dilated(
        ct, kern, lhs_dilation, pads, window_strides, rhs_dilation,
        (out_spec, _swap(rhs_spec), lhs_spec), groups, 1, precision, out_sharding)
    if batch_group_count > 1:
        out = _regroup(out, lhs_spec[1], lhs_spec[0], batch_group_count)
    return out


def _transpose_rhs(ct, x, rhs_shape, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   out_sharding=None):
    # The kernel's cotangent: the input correlated with the cotangent, batch and feature
    # axes swapped; feature groups become batch groups and vice versa.
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    pads = []
    for n, k, o, s, (lo, _), ld, rd in zip(_take(shape_of(x), lhs_spec[2:]),
                                           _take(rhs_shape, rhs_spec[2:]),
                                           _take(shape_of(ct), out_spec[2:]), window_strides,
                                           padding, lhs_dilation, rhs_dilation):
        pads.append((lo, _dilate(o, s) - _dilate(n, ld) + _dilate(k, rd) - 1 - lo))
    return conv_general_dilated(
        x, ct, rhs_dilation, pads, lhs_dilation, window_strides,
        (_swap(lhs_spec), _swap(out_spec), _swap(rhs_spec)), batch_group_count, feature_group_count,
        precision, out_sharding)


def _cotangent_sharding(primal, *others):
    """The sharding a cotangent takes: its primal's type (JAX's transposes pass it as
    `out_sharding`), replicated where the primal has none but the others are typed."""
    if primal.aval._sharding is not None:
        return primal.aval._sharding
    typed = [a._sharding for a in map(aval_of, others) if a._sharding is not None]
    return NamedSharding(typed[0].mesh, PartitionSpec()) if typed else None


def _conv_transpose(ct, x, y, *, out_sharding=None, **params):
    cx = cy = None
    if is_undefined(x):
        cx = _transpose_lhs(ct, y, shape_of(x), **params, out_sharding=_cotangent_sharding(x, ct, y))
    if is_undefined(y):
        cy = _transpose_rhs(ct, x, shape_of(y), **params, out_sharding=_cotangent_sharding(y, ct, x))
    return [cx, cy]


transpose_rules[conv_general_dilated_p] = _conv_transpose


# -------------------------------------------------------------- batching ----

def _fold0(x, dst, groups):
    """Fold axis 0 of x into axis dst (an index among the other axes), inside the
    `groups` major groups of dst: dst of size g*r becomes (g, batch, r) flattened."""
    shp = tuple(shape_of(x))
    b, rest = shp[0], shp[1:]
    r = rest[dst] // groups
    x = reshape(x, (b,) + rest[:dst] + (groups, r) + rest[dst + 1:])
    perm = tuple(range(1, dst + 2)) + (0,) + tuple(range(dst + 2, len(rest) + 2))
    x = transpose(x, perm)
    return reshape(x, rest[:dst] + (groups * b * r,) + rest[dst + 1:])


def _unfold0(x, axis, b, groups):
    """The inverse of _fold0: axis (g, b, r) flattened gives b back as axis 0."""
    shp = tuple(shape_of(x))
    r = shp[axis] // (groups * b)
    x = reshape(x, shp[:axis] + (groups, b, r) + shp[axis + 1:])
    perm = (axis + 1,) + tuple(a for a in range(len(shp) + 2) if a != axis + 1)
    x = transpose(x, perm)
    return reshape(x, (b,) + shp[:axis] + (groups * r,) + shp[axis + 1:])


def _conv_batch(vals, dims, *, axis_size, **params):
    x, y = vals
    dx, dy = dims
    lhs_spec, rhs_spec, out_spec = params["dimension_numbers"]
    fgc, bgc = params["feature_group_count"], params["batch_group_count"]
    bind = conv_general_dilated_p.bind
    if dx is not None and dy is not None:
        # One convolution per batch member: a group each (of batch groups if those are used).
        x, y = moveaxis0(x, dx, axis_size), moveaxis0(y, dy, axis_size)
        y = _fold0(y, rhs_spec[0], 1)
        if bgc > 1:
            out = bind(_fold0(x, lhs_spec[0], 1), y, **{**params, "batch_group_count": bgc * axis_size})
        else:
            out = bind(_fold0(x, lhs_spec[1], 1), y, **{**params, "feature_group_count": fgc * axis_size})
        return _unfold0(out, out_spec[1], axis_size, 1), 0
    if dx is not None:
        # More images: the batch axis joins lhs's batch (inside its batch groups).
        x = moveaxis0(x, dx, axis_size)
        out = bind(_fold0(x, lhs_spec[0], bgc), y, **params)
        return _unfold0(out, out_spec[0], axis_size, 1), 0
    # More kernels: the batch axis joins rhs's output features (inside their groups).
    groups = max(fgc, bgc)
    y = moveaxis0(y, dy, axis_size)
    out = bind(x, _fold0(y, rhs_spec[0], groups), **params)
    return _unfold0(out, out_spec[1], axis_size, groups), 0


batch_rules[conv_general_dilated_p] = _conv_batch


# -------------------------------------------------------------- lowering ----

def _layout(spec, first, second):
    chars = [""] * len(spec)
    chars[spec[0]], chars[spec[1]] = first, second
    for i, ax in enumerate(spec[2:]):
        chars[ax] = str(i)
    return "[" + ", ".join(chars) + "]"


def _emit_conv(ctx, x, y, out_aval, window_strides, padding, lhs_dilation, rhs_dilation,
               dimension_numbers, feature_group_count, batch_group_count, precision):
    lhs_spec, rhs_spec, out_spec = dimension_numbers
    dn = (f"#stablehlo.conv<{_layout(lhs_spec, 'b', 'f')}x{_layout(rhs_spec, 'o', 'i')}"
          f"->{_layout(out_spec, 'b', 'f')}>")
    prec = ", ".join(f"#stablehlo<precision {p}>" for p in (precision or ("DEFAULT", "DEFAULT")))
    pad = f"dense<{ints(ints(p) for p in padding)}> : tensor<{len(padding)}x2xi64>"
    attrs = [f"batch_group_count = {batch_group_count} : i64", f"dimension_numbers = {dn}",
             f"feature_group_count = {feature_group_count} : i64",
             f"lhs_dilation = {i64_array(lhs_dilation)}", f"padding = {pad}",
             f"rhs_dilation = {i64_array(rhs_dilation)}", f"window_strides = {i64_array(window_strides)}",
             f"precision_config = [{prec}]"]
    return ctx.op1("stablehlo.convolution", [x, y], out_aval, ", ".join(attrs))


def _conv_lowering(ctx, x, y, *, window_strides, padding, lhs_dilation, rhs_dilation,
                   dimension_numbers, feature_group_count, batch_group_count, precision,
                   out_sharding=None):
    groups = (feature_group_count, batch_group_count, precision)
    if window_strides:
        return _emit_conv(ctx, x, y, ctx.out_aval, window_strides, padding, lhs_dilation, rhs_dilation,
                          dimension_numbers, *groups)
    # No spatial axes: give each operand a trailing one of size 1 (XLA's CPU backend in
    # jaxlib 0.6 computes grouped convolutions without spatial axes wrongly).
    def grow(v):
        return ctx.op1("stablehlo.reshape", [v], ShapedArray(v.aval.shape + (1,), v.aval.dtype))
    out_aval = ctx.out_aval
    dn = tuple(tuple(spec) + (2,) for spec in dimension_numbers)
    out = _emit_conv(ctx, grow(x), grow(y), ShapedArray(out_aval.shape + (1,), out_aval.dtype), (1,), ((0, 0),),
                     (1,), (1,), dn, *groups)
    return ctx.op1("stablehlo.reshape", [out], out_aval)


lowering_rules[conv_general_dilated_p] = _conv_lowering
defpython(conv_general_dilated_p,
          lambda eqn, a: (f"_conv_numpy({a[0]}, {a[1]}, {eqn.params['window_strides']}, "
                          f"{eqn.params['padding']}, {eqn.params['lhs_dilation']}, "
                          f"{eqn.params['rhs_dilation']}, {tuple(map(tuple, eqn.params['dimension_numbers']))}, "
                          f"{eqn.params['feature_group_count']}, {eqn.params['batch_group_count']})"),
          inspect.getsource(_conv_numpy))
