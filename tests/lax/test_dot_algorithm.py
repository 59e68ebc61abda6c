"""Dot algorithms (`precision=` a DotAlgorithmPreset, its name or a DotAlgorithm) against
JAX on the CPU: values bit for bit or JAX's error, eager and jit, derivatives."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jlax, jnp = jax.lax, jax.numpy

PRESETS = [p.name for p in jlax.DotAlgorithmPreset]
DTYPES = [np.float16, np.float32, np.float64]


def _operands(dtype, seed=0):
    rng = np.random.default_rng(seed)
    return rng.standard_normal((6, 5)).astype(dtype), rng.standard_normal((5, 4)).astype(dtype)


def _run(f, *args):
    try:
        return np.asarray(f(*args))
    except ValueError as e:
        return e


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("preset", PRESETS)
def test_preset_vs_jax(preset, dtype):
    a, b = _operands(dtype)
    want = _run(lambda a, b: jlax.dot(a, b, precision=preset), a, b)
    for mode in ("eager", "jit"):
        f = lambda a, b: lax.dot(a, b, precision=preset)  # noqa: E731
        got = _run(funcad.jit(f) if mode == "jit" else f, a, b)
        if isinstance(want, Exception):
            assert isinstance(got, ValueError), (mode, got)
            assert f"The precision '{preset}' is not supported by dot_general on CPU" in str(got)
        else:
            assert not isinstance(got, Exception), (mode, got)
            assert got.dtype == want.dtype
            # bit for bit on jax 0.12; older XLA sums float64 in another order (ulps)
            eps = float(np.finfo(want.dtype).eps)
            np.testing.assert_allclose(got, want, rtol=8 * eps, atol=8 * eps * float(np.abs(want).max()))


def test_preset_enum_and_name_agree_and_casts_matter():
    a, b = _operands(np.float64)
    by_name = lax.dot(a, b, precision="BF16_BF16_F32")
    by_enum = lax.dot(a, b, precision=lax.DotAlgorithmPreset.BF16_BF16_F32)
    np.testing.assert_array_equal(by_name, by_enum)
    assert np.abs(by_name - a @ b).max() > 1e-4  # the operands were rounded to bfloat16
    np.testing.assert_array_equal(lax.dot(a, b, precision="F64_F64_F64"), a @ b)


@pytest.mark.parametrize("name", ["matmul", "dot", "tensordot", "inner", "einsum"])
def test_numpy_products_take_presets(name):
    a, b = _operands(np.float32)
    calls = {"matmul": lambda m, x, y, p: m.matmul(x, y, precision=p),
             "dot": lambda m, x, y, p: m.dot(x, y, precision=p),
             "tensordot": lambda m, x, y, p: m.tensordot(x, y, 1, precision=p),
             "inner": lambda m, x, y, p: m.inner(x, y.T, precision=p),
             "einsum": lambda m, x, y, p: m.einsum("ij,jk->ik", x, y, precision=p)}
    call = calls[name]
    for p in ("F64_F64_F64", "F16_F16_F16"):
        want = np.asarray(call(jnp, a, b, p))
        np.testing.assert_array_equal(call(fnp, a, b, p), want)
        np.testing.assert_array_equal(funcad.jit(lambda x, y: call(fnp, x, y, p))(a, b), want)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        call(fnp, a, b, "TF32_TF32_F32")


def test_dot_algorithm_value_is_rejected_on_cpu_as_in_jax():
    a, b = _operands(np.float32)
    alg = lax.DotAlgorithm(np.float32, np.float32, np.float32)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        jlax.dot(a, b, precision=jlax.DotAlgorithm(np.float32, np.float32, np.float32))
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        lax.dot(a, b, precision=alg)
    with pytest.raises(ValueError, match="not supported by dot_general on CPU"):
        funcad.jit(lambda x, y: lax.dot(x, y, precision=alg))(a, b)


def test_preferred_element_type_rounds_first_as_jax():
    a, b = _operands(np.float16)
    want = jlax.dot(a, b, precision="BF16_BF16_F32", preferred_element_type=np.float32)
    got = lax.dot(a, b, precision="BF16_BF16_F32", preferred_element_type=np.float32)
    assert np.asarray(got).dtype == np.float32
    np.testing.assert_array_equal(got, np.asarray(want))


def test_lowering_has_the_algorithm_attribute():
    a, b = _operands(np.float64)
    text = funcad.jit(lambda x, y: lax.dot(x, y, precision="BF16_BF16_F32_X3")).lower(a, b).as_text()
    assert "num_primitive_operations = 3" in text and "lhs_precision_type = bf16" in text
    assert "stablehlo.convert" in text  # float64 operands are cast to float32 first
    text = funcad.jit(lambda x, y: lax.dot(x, y, precision=("highest", "high"))).lower(a, b).as_text()
    assert "precision HIGHEST" in text and "precision HIGH>" in text


@pytest.mark.parametrize("preset", ["BF16_BF16_F32", "F16_F16_F16", "F32_F32_F32"])
def test_grad_keeps_the_algorithm(preset):
    a, b = _operands(np.float64)

    want = np.asarray(jax.grad(lambda m: jnp.sum(jnp.tanh(jlax.dot(m, b, precision=preset))))(a))
    f = lambda m: fnp.sum(fnp.tanh(lax.dot(m, b, precision=preset)))  # noqa: E731
    np.testing.assert_allclose(funcad.grad(f)(a), want, rtol=1e-6, atol=1e-6)
    np.testing.assert_allclose(funcad.jit(funcad.grad(f))(a), want, rtol=1e-6, atol=1e-6)
    jaxpr = str(funcad.make_jaxpr(funcad.grad(f))(a))
    assert jaxpr.count(preset) >= 2  # the forward product and the transposed one
    # the cotangent is rounded too: it differs from the plain gradient
    plain = funcad.grad(lambda m: fnp.sum(fnp.tanh(lax.dot(m, b))))(a)
    if preset != "F32_F32_F32":
        assert np.abs(np.asarray(funcad.grad(f)(a)) - plain).max() > 1e-5


def test_vmap_keeps_the_algorithm():
    a, b = _operands(np.float64)
    stack = np.stack([a, 2 * a])
    got = funcad.vmap(lambda m: lax.dot(m, b, precision="BF16_BF16_F32"))(stack)
    want = jax.vmap(lambda m: jlax.dot(m, b, precision="BF16_BF16_F32"))(stack)
    np.testing.assert_array_equal(got, np.asarray(want))


def test_conv_takes_an_algorithm_and_computes_by_default():
    x = np.random.default_rng(1).random((1, 1, 6)).astype(np.float32)
    w = np.random.default_rng(2).random((1, 1, 3)).astype(np.float32)
    for p in ("BF16_BF16_F32", "TF32_TF32_F32"):
        want = np.asarray(jlax.conv(x, w, (1,), "VALID", precision=p))
        np.testing.assert_allclose(lax.conv(x, w, (1,), "VALID", precision=p), want, rtol=1e-6)


def test_bad_precision_names_the_choices():
    a, b = _operands(np.float32)
    with pytest.raises(ValueError, match="DotAlgorithmPreset"):
        lax.dot(a, b, precision="F17_F17_F17")


def test_accuracy_types():
    assert lax.AccuracyMode.HIGHEST.value == 1 and lax.AccuracyMode.DEFAULT.value == 2
    t = lax.Tolerance(atol=1e-5, ulps=2)
    assert (t.atol, t.rtol, t.ulps) == (1e-5, 0.0, 2)
    with pytest.raises(ValueError, match="non-negative"):
        lax.Tolerance(atol=-1.0)
    with pytest.raises(ValueError, match="At least one"):
        lax.Tolerance()
