"""einsum's preferred_element_type against JAX: each contraction accumulates in it (no
int8 overflow, float16 sums rounded once), and a custom `_dot_general` is asked for the
operands' result type where none is given."""
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
