"""Block-scaled quantized dot products (JAX's `nn.scaled_dot_general` and
`nn.get_scaled_dot_general_config`), as JAX computes them on the CPU.

Each operand is brought to (batch, rows, contracted) shape, cut into blocks of
`block_size` entries along the contracted axis, and each block is quantized to
the config's narrow `data_type` with one scale per block (mxfp8/mxfp4: a power
of two rounded up, stored as float8_e8m0fnu; nvfp4: a float8_e4m3fn scale of
the block after dividing by the global scale). The quantized operands go
through `scaled_matmul`. The derivative is JAX's custom vjp: both transposed
products quantize the cotangent with the third config and the other operand
with its own config (plain products for an nvfp4 cotangent, with the
straight-through estimator zeroing the gradient of clipped inputs).
"""
from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any, Literal

import ml_dtypes
import numpy as np

from ..core.errors import FuncadTypeError, FuncadValueError
from ..lax import (bitcast_convert_type, bitwise_and, dot_general, optimization_barrier,
                   shift_left, shift_right_logical)
from ..numpy import (abs as _abs, asarray, clip, expand_dims, logical_and, logical_not, max as _max,
                     ndim as _ndim, reshape, shape as _shape, squeeze, transpose, where)
from ..transforms.custom import custom_vjp
from ._scaled import scaled_matmul

__all__ = ["BlockScaleConfig", "get_scaled_dot_general_config", "scaled_dot_general"]

_PREFERRED = (np.dtype(np.float32), np.dtype(ml_dtypes.bfloat16), np.dtype(np.float16))


@dataclass(slots=True)
class BlockScaleConfig:
    """How one operand of `scaled_dot_general` is quantized: `mode` ('mxfp8', 'mxfp4'
    or 'nvfp4'), `block_size` entries per scale, the quantized `data_type`, the
    `scale_type` of the block scales, nvfp4's `global_scale` (a float32 array of
    shape (1,), else None) and `infer_only` (kept for JAX's signature).

    >>> get_scaled_dot_general_config('mxfp8').block_size
    32
    """
    mode: str
    block_size: int
    data_type: Any
    scale_type: Any
    global_scale: Any
    infer_only: bool


def get_scaled_dot_general_config(mode: Literal['nvfp4', 'mxfp8', 'mxfp4'],
                                  global_scale=None) -> BlockScaleConfig:
    """The quantization config of one operand of `scaled_dot_general`, as JAX's:
    'mxfp8' (float8_e4m3fn data, e8m0 scales, blocks of 32), 'mxfp4' (float4_e2m1fn
    data, e8m0 scales, blocks of 32) or 'nvfp4' (float4_e2m1fn data, float8_e4m3fn
    scales, blocks of 16, `global_scale` a float32 array of shape (1,), default 1).

    >>> c = get_scaled_dot_general_config('nvfp4')
    >>> c.block_size, c.data_type.__name__, c.global_scale.tolist()
    (16, 'float4_e2m1fn', [1.0])
    """
    if mode == 'nvfp4':
        gs = np.ones((1,), np.float32) if global_scale is None else global_scale
        return BlockScaleConfig('nvfp4', 16, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e4m3fn,
                                gs, False)
    if mode == 'mxfp8':
        return BlockScaleConfig('mxfp8', 32, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu,
                                None, False)
    if mode == 'mxfp4':
        if global_scale is not None:
            raise FuncadValueError("mxfp4 does not use a global_scale; its E8M0 block scales cover "
                                   "the whole range. Call get_scaled_dot_general_config('mxfp4').")
        return BlockScaleConfig('mxfp4', 32, ml_dtypes.float4_e2m1fn, ml_dtypes.float8_e8m0fnu,
                                None, False)
    raise FuncadValueError(f"Unsupported mode: {mode!r}; get_scaled_dot_general_config knows "
                           "'mxfp8', 'mxfp4' and 'nvfp4'")


def _normalize(x, contract, batch):
    """`x` as (batch, rows, cols): batch axes, then the free axes, then the contracted
    ones, each group in the order the axes have in `x` (as JAX flattens them)."""
    shape = _shape(x)
    b = [d for d in range(len(shape)) if d in batch]
    c = [d for d in range(len(shape)) if d in contract]
    r = [d for d in range(len(shape)) if d not in contract and d not in batch]
    size = lambda ax: math.prod(shape[d] for d in ax)
    return reshape(transpose(x, b + r + c), (size(b), size(r), size(c)))


def _out_shape(lhs_shape, rhs_shape, lhs_dn, rhs_dn):
    (lc, lb), (rc, rb) = lhs_dn, rhs_dn
    return (tuple(lhs_shape[i] for i in range(len(lhs_shape)) if i in lb)
            + tuple(lhs_shape[i] for i in range(len(lhs_shape)) if i not in lc and i not in lb)
            + tuple(rhs_shape[i] for i in range(len(rhs_shape)) if i not in rc and i not in rb))


def _e8m0_round_up(x):
    """The biased exponent (uint8) of the smallest power of two >= x > 0."""
    bits = bitcast_convert_type(x.astype(np.float32), np.uint32)
    exp = shift_right_logical(bits, np.uint32(23))
    mant = bitwise_and(bits, np.uint32(0x7FFFFF))
    # A subnormal at most half of 2^-126 still rounds to 2^-127, whose exponent field is 0.
    up = logical_and(logical_and(mant > 0, exp != 0xFE),
                     logical_not(logical_and(exp == 0, mant <= 0x400000)))
    return where(up, exp + np.uint32(1), exp).astype(np.uint8)


def _e8m0_to_f32(e):
    x = bitcast_convert_type(shift_left(e.astype(np.uint32), np.uint32(23)), np.float32)
    return where(x == 0, np.float32(2.0 ** -127), x)


def _quantize(x, config: BlockScaleConfig):
    """(B, M, K) -> quantized (B, M, K) in `data_type` and (B, M, K // block) scales."""
    shape = _shape(x)
    bs = config.block_size
    if not (shape[-1] >= bs and shape[-1] % bs == 0):
        raise FuncadValueError(
            f"scaled_dot_general: the flattened contracting size {shape[-1]} must be a positive "
            f"multiple of the {config.mode} block size {bs}; pad the contracting axes")
    x = reshape(x, shape[:-1] + (shape[-1] // bs, bs))
    top = np.float32(ml_dtypes.finfo(config.data_type).max)

    def block_scales(v):
        return _max(_abs(v), axis=-1, keepdims=True).astype(np.float32) / top

    if config.mode in ("mxfp8", "mxfp4"):
        if config.global_scale is not None or np.dtype(config.scale_type) != np.dtype(ml_dtypes.float8_e8m0fnu):
            raise FuncadValueError(f"a {config.mode} config has float8_e8m0fnu scales and no "
                                   "global_scale; build it with get_scaled_dot_general_config")
        scales = _e8m0_round_up(block_scales(x))
        scaled = x.astype(np.float32) / _e8m0_to_f32(scales)
    elif config.mode == "nvfp4":
        gs = asarray(config.global_scale)
        if np.dtype(config.scale_type) != np.dtype(ml_dtypes.float8_e4m3fn) or gs.dtype != np.float32:
            raise FuncadValueError("an nvfp4 config has float8_e4m3fn scales and a float32 "
                                   "global_scale; build it with get_scaled_dot_general_config")
        scale_top = np.asarray(ml_dtypes.finfo(config.scale_type).max).astype(x.dtype)
        x = x / gs
        scales = clip(block_scales(x), 0, scale_top)
        scales = optimization_barrier(scales.astype(config.scale_type))
        scaled = x / scales.astype(np.float32)
    else:
        raise FuncadValueError(f"Unrecognized mode: {config.mode!r}")
    xq = reshape(clip(scaled, -top, top).astype(config.data_type), shape)
    scales = reshape(scales, _shape(scales)[:-1])
    if scales.dtype != np.dtype(config.scale_type):
        scales = bitcast_convert_type(scales, config.scale_type)
    # Under jit XLA would fold `f32 -> narrow -> f32` into nothing and multiply the
    # unquantized values; the barrier keeps the casts (as JAX does).
    return optimization_barrier((xq, scales))


def _forward(lhs, rhs, dn, pet, configs):
    (lc, rc), (lb, rb) = dn
    l3, r3 = _normalize(lhs, lc, lb), _normalize(rhs, rc, rb)
    lq, ls = _quantize(l3, configs[0])
    rq, rs = _quantize(r3, configs[1])
    nv = configs[0].mode == 'nvfp4'
    out = scaled_matmul(lq, rq, ls, rs, np.float32 if nv else pet)
    if nv:
        out = (out * (asarray(configs[0].global_scale) * asarray(configs[1].global_scale))).astype(pet)
    return reshape(out, _out_shape(_shape(lhs), _shape(rhs), (lc, lb), (rc, rb)))


def _ranges_like(*xs):
    start, out = 0, []
    for x in xs:
        out.append(list(range(start, start + len(x))))
        start += len(x)
    return out


def _transpose_lhs(g, x, y, dn, pet, configs, swap_ans=False):
    """The cotangent of `x` in `dot_general(x, y, dn)`, as a quantized product of `g`
    (config 0) and `y` (config 1), contracted over the axes `y` keeps."""
    (xc, yc), (xb, yb) = dn
    xk = [i for i in range(_ndim(x)) if i not in xc and i not in xb]
    yk = [i for i in range(_ndim(y)) if i not in yc and i not in yb]
    if swap_ans:
        ans_b, ans_y, _ = _ranges_like(xb, yk, xk)
    else:
        ans_b, _, ans_y = _ranges_like(xb, xk, yk)
    xc_by_y = [xc[i] for i in np.argsort(yc)]
    out_axes = tuple(int(i) for i in np.argsort(list(xb) + xk + xc_by_y))
    y3, g3 = _normalize(y, yk, yb), _normalize(g, ans_y, ans_b)
    if configs[0].mode != 'nvfp4':
        gq, gs = _quantize(g3, configs[0])
        yq, ys = _quantize(y3, configs[1])
        out = scaled_matmul(gq, yq, gs, ys, pet)
    else:
        out = dot_general(g3, y3, (((2,), (2,)), ((0,), (0,))), preferred_element_type=pet)
    out = reshape(out, _out_shape(_shape(g), _shape(y), (ans_y, ans_b), (yk, yb)))
    return transpose(out, out_axes)


def _with_scales(configs, scales):
    return [dataclasses.replace(c, global_scale=s) for c, s in zip(configs, scales)]


def _make(dn, pet, configs):
    """The custom-vjp function of (lhs, rhs, global scales); the global scales travel
    as arguments (with no cotangent) so that traced ones are not closed over."""

    @custom_vjp
    def f(lhs, rhs, scales):
        return _forward(lhs, rhs, dn, pet, _with_scales(configs, scales))

    def fwd(lhs, rhs, scales):
        return f(lhs, rhs, scales), (lhs, rhs, scales)

    def bwd(res, g):
        lhs, rhs, scales = res
        cf = _with_scales(configs, scales)
        (lc, rc), (lb, rb) = dn
        g_lhs = _transpose_lhs(g, lhs, rhs, dn, pet, [cf[2], cf[1]])
        g_rhs = _transpose_lhs(g, rhs, lhs, ((rc, lc), (rb, lb)), pet, [cf[2], cf[0]],
                               swap_ans=True)
        if cf[2].mode == "nvfp4":
            # Straight-through estimator: inputs clipped by the forward quantization get
            # no gradient.
            lim = (np.asarray(ml_dtypes.finfo(cf[0].data_type).max).astype(lhs.dtype)
                   * np.asarray(ml_dtypes.finfo(cf[0].scale_type).max).astype(lhs.dtype))
            g_lhs = where(_abs(lhs) <= asarray(cf[0].global_scale) * lim, g_lhs, 0)
            g_rhs = where(_abs(rhs) <= asarray(cf[1].global_scale) * lim, g_rhs, 0)
        # The cotangent has the output's dtype; each input's has the input's (as JAX).
        return g_lhs.astype(lhs.dtype), g_rhs.astype(rhs.dtype), None

    f.defvjp(fwd, bwd)
    return f


def _tuple_dn(dimension_numbers):
    try:
        (lc, rc), (lb, rb) = dimension_numbers
        return (tuple(int(i) for i in lc), tuple(int(i) for i in rc)), \
            (tuple(int(i) for i in lb), tuple(int(i) for i in rb))
    except (TypeError, ValueError):
        raise FuncadTypeError(
            "scaled_dot_general: dimension_numbers must be ((lhs_contracting, rhs_contracting), "
            f"(lhs_batch, rhs_batch)), tuples of axes; got {dimension_numbers!r}") from None


def _check(lhs, rhs, dn):
    (lc, rc), (lb, rb) = dn
    ls, rs = _shape(lhs), _shape(rhs)
    for side, axes, shape in (("lhs", lc + lb, ls), ("rhs", rc + rb, rs)):
        if any(not -len(shape) < a < len(shape) for a in axes) or len(set(axes)) != len(axes):
            raise FuncadTypeError(f"scaled_dot_general: {side} axes {axes} are out of range or "
                                  f"repeated for {side} of shape {shape}")
    if len(lc) != len(rc) or len(lb) != len(rb):
        raise FuncadTypeError("scaled_dot_general: lhs and rhs need as many contracting and as many "
                              f"batch dimensions, got {dn}")
    if [ls[i] for i in lc] != [rs[i] for i in rc] or [ls[i] for i in lb] != [rs[i] for i in rb]:
        raise FuncadTypeError(
            f"scaled_dot_general: contracting and batch dimensions must match in size; lhs "
            f"{ls} and rhs {rs} with dimension_numbers {dn}")


def scaled_dot_general(lhs, rhs, dimension_numbers, preferred_element_type=np.float32,
                       configs: list[BlockScaleConfig] | None = None,
                       implementation: Literal['cudnn'] | None = None):
    """`lax.dot_general` of block-quantized operands, as JAX's `nn.scaled_dot_general`:
    `lhs` is quantized with `configs[0]`, `rhs` with `configs[1]`, the gradient's
    cotangent with `configs[2]`; with `configs=None` it is plain `dot_general`.
    `preferred_element_type` is float32, bfloat16 or float16; `implementation`
    is ignored (deprecated in JAX too).

    >>> import funcad.numpy as fnp
    >>> cfg = [get_scaled_dot_general_config('mxfp8')] * 3
    >>> x = fnp.full((1, 2, 32), 0.1)   # 0.1 quantizes to 0.1015625; 32 * 0.1015625**2
    >>> float(scaled_dot_general(x, x, (((2,), (2,)), ((0,), (0,))), configs=cfg)[0, 0, 0])
    0.330078125
    """
    if implementation is not None:
        warnings.warn("Backend selector, now ignored. The system chooses the backend "
                      "automatically.", DeprecationWarning, stacklevel=2)
    try:
        pet = np.dtype(preferred_element_type)
    except TypeError:
        pet = None
    if pet not in _PREFERRED:
        raise FuncadTypeError("scaled_dot_general: preferred_element_type must be float32, bfloat16 "
                              f"or float16, got {preferred_element_type!r}")
    lhs, rhs = asarray(lhs), asarray(rhs)
    if configs is None:
        return dot_general(lhs, rhs, dimension_numbers, preferred_element_type=pet)
    if len(configs) != 3 or not all(isinstance(c, BlockScaleConfig) for c in configs):
        raise FuncadTypeError("scaled_dot_general: configs must be three BlockScaleConfigs (lhs, rhs, "
                              "gradient), e.g. [get_scaled_dot_general_config('mxfp8')] * 3")
    dn = _tuple_dn(dimension_numbers)
    dn = tuple(tuple(tuple(a % n for a in ax) for ax, n in zip(pair, (_ndim(lhs), _ndim(rhs))))
               for pair in dn)
    _check(lhs, rhs, dn)
    (lc, rc), (lb, rb) = dn
    # A missing batch axis becomes a trailing axis of size 1 (squeezed from the result).
    lhs_b, rhs_b = lhs, rhs
    if lb == ():
        lhs_b, lb = expand_dims(lhs, _ndim(lhs)), (_ndim(lhs),)
    if rb == ():
        rhs_b, rb = expand_dims(rhs, _ndim(rhs)), (_ndim(rhs),)
    dn_b = ((lc, rc), (lb, rb))
    configs = list(configs)
    out = _make(dn_b, pet, configs)(lhs_b, rhs_b, tuple(c.global_scale for c in configs))
    return squeeze(out, 0) if dn_b != dn else out
