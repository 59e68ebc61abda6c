"""dot_general's result types against JAX on the CPU: operands of two dtypes (typed by
XLA's precision order, or by preferred_element_type) and a preferred_element_type lower
than the operands' type. Dtype and values bit for bit, eager and jit, grad and vmap;
pairs without a common type are refused as in JAX."""
import ml_dtypes
import numpy as np
import pytest

import funcad
from funcad import lax

jax = pytest.importorskip("jax")
jlax = jax.lax

DN = (((1,), (0,)), ((), ()))
F8A, F8B = np.dtype(ml_dtypes.float8_e5m2), np.dtype(ml_dtypes.float8_e4m3fn)
BF16 = np.dtype(ml_dtypes.bfloat16)

# (lhs dtype, rhs dtype, preferred_element_type)
PAIRS = [(F8A, F8B, None), (F8B, F8A, None), (F8A, F8B, np.float32), (F8B, F8A, BF16),
         (np.float32, np.float16, None), (np.float16, BF16, None), (np.float16, np.float32, np.float16),
         (np.int8, np.float32, None), (np.int8, np.uint8, None), (np.int32, np.uint8, None),
         (np.bool_, np.int32, None), (np.complex64, np.float32, None), (np.uint8, np.int8, np.int32),
         # one dtype, a lower or differently signed result type
         (np.float32, np.float32, BF16), (np.float32, np.float32, np.float16), (np.float32, np.float32, np.int32),
         (BF16, BF16, np.float16), (np.float16, np.float16, BF16), (np.int8, np.int8, np.uint16)]
FLOAT_PAIRS = [p for p in PAIRS if all(np.dtype(d).kind not in "iub" for d in p[:2])]


def _ids(p):
    return "-".join(np.dtype(d).name if d is not None else "none" for d in p)


def _operands(a, b, seed=0):
    rng = np.random.default_rng(seed)
    x, y = 3 * rng.standard_normal((5, 16)), 3 * rng.standard_normal((16, 4))
    if np.dtype(a).kind in "iub":
        x = np.abs(x) if np.dtype(a).kind == "u" else x
    if np.dtype(b).kind in "u":
        y = np.abs(y)
    return x.astype(a), y.astype(b)


def _same(got, want):
    """Bit for bit, but for float32/complex64 sums, whose order NumPy's BLAS and XLA pick
    differently (a few ulps)."""
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    got, want = np.asarray(got), np.asarray(want)
    if want.dtype in (np.float32, np.complex64):
        eps = float(np.finfo(want.dtype).eps)
        np.testing.assert_allclose(got, want, rtol=8 * eps, atol=8 * eps * float(np.abs(want).max()))
    else:
        np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("pair", PAIRS, ids=_ids)
def test_result_type_and_values_eager_and_jit_vs_jax(pair):
    a, b, pref = pair
    x, y = _operands(a, b)
    want = np.asarray(jlax.dot_general(x, y, DN, preferred_element_type=pref))
    f = lambda x, y: lax.dot_general(x, y, DN, preferred_element_type=pref)  # noqa: E731
    _same(np.asarray(f(x, y)), want)
    _same(np.asarray(funcad.jit(f)(x, y)), want)


@pytest.mark.parametrize("pair", [(np.float16, BF16), (np.int8, np.uint8), (F8A, F8B)], ids=_ids)
def test_lax_dot_types_operands_as_dot_general(pair):
    x, y = _operands(*pair[:2])
    want = np.asarray(jlax.dot(x, y))
    _same(np.asarray(lax.dot(x, y)), want)
    _same(np.asarray(funcad.jit(lax.dot)(x, y)), want)


@pytest.mark.parametrize("pair", FLOAT_PAIRS, ids=_ids)
def test_grad_vs_jax(pair):
    a, b, pref = pair
    x, y = _operands(a, b, seed=1)

    def loss(m):
        return lambda x, y: m.dot_general(x, y, DN, preferred_element_type=pref).real.astype(np.float32).sum()
    want = jax.grad(loss(jlax), (0, 1))(x, y)
    for got in (funcad.grad(loss(lax), (0, 1))(x, y), funcad.jit(funcad.grad(loss(lax), (0, 1)))(x, y)):
        for g, w in zip(got, want):
            _same(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("pair", [PAIRS[0], PAIRS[4], PAIRS[7], PAIRS[13]], ids=_ids)
def test_vmap_vs_jax(pair):
    a, b, pref = pair
    x, y = _operands(a, b, seed=2)
    xs = np.stack([x, x[::-1]])
    f = lambda m: lambda x, y: m.dot_general(x, y, DN, preferred_element_type=pref)  # noqa: E731
    want = np.asarray(jax.vmap(f(jlax), (0, None))(xs, y))
    _same(np.asarray(funcad.vmap(f(lax), (0, None))(xs, y)), want)
    _same(np.asarray(funcad.jit(funcad.vmap(f(lax), (None, 1)))(x, np.stack([y, y], 1))),
          np.asarray(jax.vmap(f(jlax), (None, 1))(x, np.stack([y, y], 1))))


def test_pair_without_common_type_is_refused_as_in_jax():
    # e5m2 and e5m2fnuz tie in XLA's order (same range, mantissa and width)
    x = np.ones((2, 2), ml_dtypes.float8_e5m2)
    y = np.ones((2, 2), ml_dtypes.float8_e5m2fnuz)
    with pytest.raises(TypeError, match="argument type error"):
        jlax.dot_general(x, y, DN)
    with pytest.raises(TypeError, match="no common type"):
        lax.dot_general(x, y, DN)


def test_preferred_narrower_than_an_integer_result_is_refused_as_in_jax():
    x, y = np.ones((2, 2), np.int32), np.ones((2, 2), np.uint8)
    with pytest.raises(TypeError, match="must not be narrower"):
        jlax.dot_general(x, y, DN, preferred_element_type=np.int16)
    with pytest.raises(TypeError, match="must not be narrower"):
        lax.dot_general(x, y, DN, preferred_element_type=np.int16)
