"""nn.scaled_dot_general, nn.get_scaled_dot_general_config and lax.scaled_dot against
JAX on the CPU: values bit for bit (eager and jit), JAX's custom vjp bit for bit,
vmap against a loop, and the error cases.

The quantized functions are piecewise constant, so finite differences say nothing
about them; their gradient is JAX's straight-through custom vjp, checked against
jax.grad directly (no op-table rows)."""
from __future__ import annotations

import warnings

import jax
import ml_dtypes
import numpy as np
import pytest

import funcad
import funcad.lax as flax
import funcad.nn as fnn

pytestmark = pytest.mark.skipif(not hasattr(jax.nn, "get_scaled_dot_general_config")
                                or not hasattr(jax.lax, "scaled_dot"),
                                reason="the installed jax (oracle) lacks scaled_dot_general/scaled_dot")

BF16, E4M3, E8M0 = ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e8m0fnu
BMM = (((2,), (2,)), ((0,), (0,)))
MODES = [("mxfp8", None), ("mxfp4", None), ("nvfp4", None), ("nvfp4", 0.5)]


def _bits(x):
    x = np.asarray(x)
    return x.view({1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape, (a.dtype, a.shape, b.dtype, b.shape)
    np.testing.assert_array_equal(_bits(a), _bits(b))


def _configs(mode, gs, lib=fnn):
    g = None if gs is None else np.array([gs], np.float32)
    return [lib.get_scaled_dot_general_config(mode, g)] * 3


def _edgy(shape, seed):
    """Normal values, with some blocks of 16 scaled so that their max is an edge of the
    formats (448, 6, 12, a zero block, subnormals, a power of two)."""
    x = np.random.default_rng(seed).normal(size=shape).astype(np.float32)
    blocks = x.reshape(-1, 16)
    for i, v in enumerate([448.0, 6.0, 12.0, 0.0, 1e-39, 2.0 ** -20, 7.0, 3.0]):
        b = blocks[(7 * i) % len(blocks)]
        b[:] = b / np.abs(b).max() * v
    return blocks.reshape(shape)


def _close(got, ref):
    """Eager results: the quantized operands are JAX's bit for bit, but NumPy's matmul
    sums the (exact) products in another order than XLA's dot, so a float32 sum that
    is not exact may differ in its last bits (at most 4 ulps of the largest entry)."""
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.dtype == ref.dtype and got.shape == ref.shape
    g, r = got.astype(np.float32), ref.astype(np.float32)
    ulp = np.spacing(np.abs(r).max().astype(ref.dtype)).astype(np.float32)
    np.testing.assert_allclose(g, r, rtol=0, atol=4 * ulp)
    assert np.mean(_bits(got) == _bits(ref)) > 0.5   # most entries are exact sums


# ---- nn.get_scaled_dot_general_config ----

@pytest.mark.parametrize("mode,gs", MODES)
def test_config_fields_match_jax(mode, gs):
    f, j = _configs(mode, gs)[0], _configs(mode, gs, jax.nn)[0]
    assert (f.mode, f.block_size, f.infer_only) == (j.mode, j.block_size, j.infer_only)
    assert np.dtype(f.data_type) == np.dtype(j.data_type)
    assert np.dtype(f.scale_type) == np.dtype(j.scale_type)
    if j.global_scale is None:
        assert f.global_scale is None
    else:
        _same(f.global_scale, j.global_scale)
    assert type(f).__name__ == "BlockScaleConfig"


def test_config_errors():
    with pytest.raises(ValueError, match="Unsupported mode: 'fp8'"):
        fnn.get_scaled_dot_general_config("fp8")
    with pytest.raises(ValueError, match="mxfp4 does not use a global_scale"):
        fnn.get_scaled_dot_general_config("mxfp4", np.ones(1, np.float32))


# ---- nn.scaled_dot_general: values ----

@pytest.mark.parametrize("pet", [np.float32, BF16, np.float16], ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("mode,gs", MODES)
def test_values_match_jax(mode, gs, pet):
    a, b = _edgy((2, 3, 64), 0) * 3, _edgy((2, 5, 64), 1)
    ref = jax.nn.scaled_dot_general(a, b, BMM, pet, configs=_configs(mode, gs, jax.nn))
    cfg = _configs(mode, gs)
    with np.errstate(all="ignore"):
        _close(fnn.scaled_dot_general(a, b, BMM, pet, configs=cfg), ref)
    _same(funcad.jit(lambda a, b: fnn.scaled_dot_general(a, b, BMM, pet, configs=cfg))(a, b), ref)


@pytest.mark.parametrize("dn,ls,rs", [
    ((((1,), (0,)), ((), ())), (4, 64), (64, 6)),                    # plain matmul, no batch
    ((((0, 3), (1, 2)), ((1,), (0,))), (8, 3, 2, 4), (3, 8, 4, 5)),   # two contracting axes, batch not first
    ((((2,), (1,)), ((0,), (0,))), (2, 3, 32), (2, 32, 7)),          # rhs contracted on its middle axis
], ids=["matmul", "multi", "middle"])
def test_dimension_numbers_match_jax(dn, ls, rs):
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=ls).astype(np.float32), rng.normal(size=rs).astype(np.float32)
    # (JAX's nn.scaled_dot_general needs jax arrays here: it reads `.aval`.)
    ref = jax.nn.scaled_dot_general(jax.numpy.asarray(a), jax.numpy.asarray(b), dn,
                                    configs=_configs("mxfp8", None, jax.nn))
    _close(fnn.scaled_dot_general(a, b, dn, configs=_configs("mxfp8", None)), ref)
    _same(funcad.jit(lambda a, b: fnn.scaled_dot_general(a, b, dn, configs=_configs("mxfp8", None)))(a, b),
          ref)


def test_mixed_configs_and_bfloat16_inputs_match_jax():
    rng = np.random.default_rng(4)
    a, b = rng.normal(size=(2, 32, 64)).astype(BF16), rng.normal(size=(2, 32, 64)).astype(BF16)
    mix = lambda lib: [lib.get_scaled_dot_general_config("mxfp4")] * 2 + [
        lib.get_scaled_dot_general_config("mxfp8")]
    _same(fnn.scaled_dot_general(a, b, BMM, BF16, configs=mix(fnn)),
          jax.nn.scaled_dot_general(a, b, BMM, BF16, configs=mix(jax.nn)))


def test_no_configs_is_dot_general():
    rng = np.random.default_rng(5)
    a, b = rng.normal(size=(3, 4)).astype(np.float32), rng.normal(size=(4, 2)).astype(np.float32)
    dn = (((1,), (0,)), ((), ()))
    _same(fnn.scaled_dot_general(a, b, dn), jax.nn.scaled_dot_general(a, b, dn))


def test_quantization_is_real():
    # 0.1 is not a float8 value: the result is the product of quantized operands.
    x = np.full((1, 2, 32), 0.1, np.float32)
    out = np.asarray(fnn.scaled_dot_general(x, x, BMM, configs=_configs("mxfp8", None)))
    assert out[0, 0, 0] == np.float32(32 * float(np.float32(0.1).astype(E4M3)) ** 2)
    assert out[0, 0, 0] != np.float32(32 * 0.01)


# ---- nn.scaled_dot_general: derivatives and batching ----

@pytest.mark.parametrize("mode,gs", MODES)
def test_grad_matches_jax(mode, gs):
    a, b = _edgy((2, 32, 64), 6), _edgy((2, 64, 64), 7)
    if gs is not None:
        a[0, 0, :2] = [2000.0, -1000.0]   # beyond gs * 6 * 448: the estimator zeroes the first
    w = np.linspace(-3, 3, 32 * 64, dtype=np.float32).reshape(1, 32, 64)

    def loss(lib, cfg):
        return lambda a, b: (lib.scaled_dot_general(a, b, BMM, configs=cfg) * w).sum()

    ref = jax.grad(loss(jax.nn, _configs(mode, gs, jax.nn)), (0, 1))(a, b)
    f = loss(fnn, _configs(mode, gs))
    with np.errstate(all="ignore"):
        got = funcad.grad(f, (0, 1))(a, b)
    jitted = funcad.jit(funcad.grad(f, (0, 1)))(a, b)
    for r, g, j in zip(ref, got, jitted):
        _close(g, r)  # eager: NumPy's matmul sums in another order (see _close)
        _same(j, r)
    if gs is not None:
        assert np.asarray(got[0])[0, 0, 0] == 0 and np.asarray(got[0])[0, 0, 1] != 0


def test_grad_with_bfloat16_output_matches_jax():
    rng = np.random.default_rng(8)
    a, b = rng.normal(size=(32, 64)).astype(np.float32), rng.normal(size=(64, 32)).astype(np.float32)
    dn = (((1,), (0,)), ((), ()))

    def loss(lib, cfg):
        return lambda a, b: lib.scaled_dot_general(a, b, dn, BF16, configs=cfg).astype(np.float32).sum()

    ref = jax.grad(loss(jax.nn, _configs("mxfp8", None, jax.nn)), (0, 1))(a, b)
    got = funcad.grad(loss(fnn, _configs("mxfp8", None)), (0, 1))(a, b)
    # JAX hands back the bfloat16 cotangents of float32 inputs as they are; funcad's
    # custom_vjp requires the input's dtype, so the same values come back as float32.
    for r, g in zip(ref, got):
        assert np.asarray(r).dtype == BF16
        _same(g, np.asarray(r).astype(np.float32))


def test_vmap_is_the_loop():
    rng = np.random.default_rng(9)
    a, b = rng.normal(size=(3, 4, 64)).astype(np.float32), rng.normal(size=(3, 64, 5)).astype(np.float32)
    dn, cfg = (((1,), (0,)), ((), ())), _configs("mxfp8", None)
    f = lambda a, b: fnn.scaled_dot_general(a, b, dn, configs=cfg)
    _same(funcad.vmap(f)(a, b), np.stack([np.asarray(f(x, y)) for x, y in zip(a, b)]))
    _same(funcad.vmap(f, (0, None))(a, b[0]), np.stack([np.asarray(f(x, b[0])) for x in a]))


def test_traced_global_scale_under_jit():
    rng = np.random.default_rng(10)
    a, b = rng.normal(size=(1, 4, 32)).astype(np.float32), rng.normal(size=(1, 4, 32)).astype(np.float32)
    gs = np.array([0.25], np.float32)
    ref = jax.nn.scaled_dot_general(a, b, BMM, configs=_configs("nvfp4", 0.25, jax.nn))
    f = funcad.jit(lambda a, b, g: fnn.scaled_dot_general(
        a, b, BMM, configs=[fnn.get_scaled_dot_general_config("nvfp4", g)] * 3))
    _same(f(a, b, gs), ref)


# ---- nn.scaled_dot_general: errors ----

def test_scaled_dot_general_errors():
    cfg = _configs("mxfp8", None)
    x = np.ones((1, 2, 32), np.float32)
    with pytest.raises(TypeError, match="preferred_element_type must be float32, bfloat16 or float16"):
        fnn.scaled_dot_general(x, x, BMM, np.int32, configs=cfg)
    with pytest.raises(ValueError, match="multiple of the mxfp8 block size 32"):
        fnn.scaled_dot_general(np.ones((1, 2, 48)), np.ones((1, 2, 48)), BMM, configs=cfg)
    with pytest.raises(TypeError, match="must match in size"):
        fnn.scaled_dot_general(x, np.ones((1, 2, 64)), BMM, configs=cfg)
    with pytest.raises(TypeError, match="three BlockScaleConfigs"):
        fnn.scaled_dot_general(x, x, BMM, configs=cfg[:2])
    with pytest.raises(TypeError, match="dimension_numbers must be"):
        fnn.scaled_dot_general(x, x, (2, 2), configs=cfg)
    with pytest.warns(DeprecationWarning, match="Backend selector"):
        fnn.scaled_dot_general(x, x, BMM, configs=cfg, implementation="cudnn")


# ---- lax.scaled_dot ----

def _fp8_case(seed):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(2, 8, 64)).astype(E4M3)
    b = rng.normal(size=(2, 64, 16)).astype(E4M3)
    sa = rng.uniform(0.1, 8, (2, 8, 2)).astype(E8M0)
    sb = rng.uniform(0.1, 8, (2, 2, 16)).astype(E8M0)
    return a, b, sa, sb


@pytest.mark.parametrize("pet", [None, np.float32, BF16], ids=["default", "f32", "bf16"])
@pytest.mark.parametrize("scales", ["both", "lhs", "none"])
def test_scaled_dot_matches_jax(pet, scales):
    a, b, sa, sb = _fp8_case(11)
    kw = {"both": dict(lhs_scale=sa, rhs_scale=sb), "lhs": dict(lhs_scale=sa), "none": {}}[scales]
    ref = jax.lax.scaled_dot(a, b, preferred_element_type=pet, **kw)
    _same(flax.scaled_dot(a, b, preferred_element_type=pet, **kw), ref)
    _same(funcad.jit(lambda a, b: flax.scaled_dot(a, b, preferred_element_type=pet, **kw))(a, b), ref)


def test_scaled_dot_custom_dimension_numbers_match_jax():
    rng = np.random.default_rng(12)
    a = rng.normal(size=(64, 3, 5)).astype(BF16)
    b = rng.normal(size=(3, 7, 64)).astype(BF16)
    s = np.exp2(rng.integers(-3, 4, (2, 3, 5))).astype(np.float32)
    dn = (((0,), (2,)), ((1,), (0,)))
    ref = jax.lax.scaled_dot(a, b, lhs_scale=s, dimension_numbers=dn)
    assert ref.shape == (3, 5, 7)
    _same(flax.scaled_dot(a, b, lhs_scale=s, dimension_numbers=dn), ref)


def test_scaled_dot_rounding_differs_only_in_summation_order():
    # Full-mantissa bfloat16 products: each product is exact in float32, so only the
    # order of the float32 sum differs from XLA's mixed bf16 x bf16 -> f32 dot (a few ulps).
    rng = np.random.default_rng(13)
    a, b = rng.normal(size=(16, 128)).astype(np.float32), rng.normal(size=(128, 8)).astype(np.float32)
    sa = rng.uniform(0.5, 2, (16, 4)).astype(np.float32)
    ref = np.asarray(jax.lax.scaled_dot(a, b, lhs_scale=sa, preferred_element_type=np.float32))
    got = np.asarray(flax.scaled_dot(a, b, lhs_scale=sa, preferred_element_type=np.float32))
    np.testing.assert_allclose(got, ref, rtol=0, atol=8 * np.spacing(np.abs(ref).max()))


def test_scaled_dot_vmap_and_grad():
    a, b, sa, sb = (np.asarray(v).astype(np.float32) for v in _fp8_case(14))
    f = lambda a, b, sa: flax.scaled_dot(a, b, lhs_scale=sa, preferred_element_type=np.float32)
    _same(funcad.vmap(f)(a, b, sa), np.stack([np.asarray(f(*xs)) for xs in zip(a, b, sa)]))
    # JAX has no derivative for scaled_dot; funcad's composition gives the linear map's
    # transpose (exact here: fp8 values times powers of two are bfloat16 numbers).
    g = funcad.grad(lambda b: f(a, b, sa).sum())(b)
    expected = np.einsum("bmk,bmn->bkn", a * np.repeat(sa, 32, axis=2), np.ones((2, 8, 16), np.float32))
    # (the cotangent of the bfloat16 operand is a bfloat16 sum: within its rounding)
    np.testing.assert_allclose(np.asarray(g), expected, rtol=2.0 ** -8)


@pytest.mark.parametrize("args,kw,match", [
    ((np.ones(4), np.ones(4)), {}, "0-rank and 1-rank"),
    ((np.ones((2, 4)), np.ones((4, 3))), dict(lhs_scale=np.ones((2, 3))), "must be divisible"),
    ((np.ones((2, 4)), np.ones((4, 3))), dict(lhs_scale=np.ones((2, 4))), "at least 2"),
    ((np.ones((2, 4)), np.ones((4, 3))), dict(lhs_scale=np.ones((3, 2))), "does not match scale"),
    ((np.ones((2, 4)), np.ones((6, 3))), {}, "does not match RHS contracting dim"),
    ((np.ones((2, 4)), np.ones((4, 3))), dict(lhs_scale=np.ones((1, 2, 2))), "same rank"),
    ((np.ones((2, 2, 4)), np.ones((3, 4, 3))), {}, "batch dimension size"),
])
def test_scaled_dot_errors_as_jax(args, kw, match):
    with pytest.raises(TypeError):
        jax.lax.scaled_dot(*args, **kw)
    with pytest.raises(TypeError, match=match):
        flax.scaled_dot(*args, **kw)
