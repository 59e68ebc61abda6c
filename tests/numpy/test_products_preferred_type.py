"""preferred_element_type of the NumPy products against JAX: einsum accumulates each
contraction in it (no int8 overflow, float16 sums rounded once) and asks a custom
`_dot_general` for the operands' result type where none is given; a result type lower
than the operands' one (bfloat16, int32 of float32 operands) is lax.dot_general's,
values and gradients bit for bit."""
import ml_dtypes
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

jax = pytest.importorskip("jax")
jnp = jax.numpy


@pytest.mark.parametrize("dtype,pref", [(np.int8, np.int32), (np.float16, np.float32)])
def test_contractions_accumulate_in_preferred_type(dtype, pref):
    rng = np.random.default_rng(0)
    x = (rng.standard_normal((3, 64, 5)) * 40).astype(dtype)
    y = (rng.standard_normal((5, 64)) * 40).astype(dtype)
    want = np.asarray(jnp.einsum("ijk,kj->i", x, y, preferred_element_type=pref))
    for f in (fnp.einsum, funcad.jit(fnp.einsum, static_argnums=0, static_argnames="preferred_element_type")):
        got = np.asarray(f("ijk,kj->i", x, y, preferred_element_type=pref))
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6 * float(np.abs(want).max()))


def test_custom_dot_general_is_asked_for_the_result_type():
    asked = {}

    def record(m):
        def dot_general(a, b, dn, precision=None, preferred_element_type=None):
            asked.setdefault(m.__name__, []).append(np.dtype(preferred_element_type))
            return m.lax.dot_general(a, b, dn, precision, preferred_element_type=preferred_element_type)
        return dot_general
    a, b = np.ones((2, 3), np.float16), np.ones((3, 4), np.float32)
    for m in (jax, funcad):
        m.numpy.einsum("ij,jk->ik", a, b, _dot_general=record(m))
        m.numpy.einsum("ij,jk->ik", a, b, preferred_element_type=np.float32, _dot_general=record(m))
    assert asked["funcad"] == asked["jax"] == [np.dtype(np.float32)] * 2


PRODUCTS = {"matmul": lambda m, a, b, p: m.matmul(a, b, preferred_element_type=p),
            "matmul_vec": lambda m, a, b, p: m.matmul(b[:, 0], b, preferred_element_type=p),
            "dot": lambda m, a, b, p: m.dot(a, b, preferred_element_type=p),
            "dot_scalar": lambda m, a, b, p: m.dot(a[0, 0, 0], b, preferred_element_type=p),
            "inner": lambda m, a, b, p: m.inner(a, b[:, 0], preferred_element_type=p),
            "tensordot": lambda m, a, b, p: m.tensordot(a, b, 1, preferred_element_type=p),
            "vdot": lambda m, a, b, p: m.vdot(b, b, preferred_element_type=p),
            "einsum": lambda m, a, b, p: m.einsum("ijk,kl->ijl", a, b, preferred_element_type=p)}


@pytest.mark.parametrize("pref", [ml_dtypes.bfloat16, np.int32], ids=["bfloat16", "int32"])
@pytest.mark.parametrize("name", PRODUCTS)
def test_lower_result_type_vs_jax(name, pref):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 4, 5)).astype(np.float32)
    b = rng.standard_normal((5, 2)).astype(np.float32)
    call = PRODUCTS[name]
    want = np.asarray(call(jnp, a, b, pref))
    for got in (call(fnp, a, b, pref), funcad.jit(lambda a, b: call(fnp, a, b, pref))(a, b)):
        assert np.asarray(got).dtype == want.dtype
        np.testing.assert_array_equal(np.asarray(got).astype(np.float64), want.astype(np.float64))
    if pref is ml_dtypes.bfloat16:
        # The cotangents are products in bfloat16; XLA may skip a rounding of them (its
        # excess precision) where NumPy rounds, so they agree to a bfloat16 ulp.
        loss = lambda m: lambda a, b: call(m, a, b, pref).astype(np.float32).sum()  # noqa: E731
        for g, w in zip(funcad.grad(loss(fnp), (0, 1))(a, b), jax.grad(loss(jnp), (0, 1))(a, b)):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2 ** -7, atol=2 ** -7)
