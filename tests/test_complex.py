"""Complex numbers: the wrong numbers of issue 13 (regressions), the complex
primitives (real, imag, conj, complex), numpy's complex functions, promotion,
printing and lowering, and JAX's differentiation conventions for complex
inputs and outputs, checked against JAX and finite differences."""
from __future__ import annotations

import numpy as np
import pytest

import funcad
import funcad.lax as lax
import funcad.numpy as fnp
from funcad.core.errors import FuncadTypeError

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy

X, T = np.complex128(1.1 + 1.2j), np.complex128(0.3 - 0.5j)


# ------------------------------------------------- issue 13's wrong numbers ----

def test_abs_jvp_of_complex_is_re_conj_x_t_over_abs():
    out, tan = funcad.jvp(fnp.abs, (X,), (T,))
    assert out.dtype == np.float64 and tan.dtype == np.float64
    np.testing.assert_allclose(tan, (np.conj(X) * T).real / np.abs(X), rtol=1e-14)
    np.testing.assert_allclose(tan, -0.16585968154516680, rtol=1e-13)


def test_abs_vjp_of_complex_is_conj_x_over_abs():
    g, = funcad.vjp(fnp.abs, X)[1](1.0)
    np.testing.assert_allclose(g, np.conj(X) / np.abs(X), rtol=1e-14)
    np.testing.assert_allclose(g, complex(jax.vjp(jnp.abs, X)[1](1.0)[0]), rtol=1e-14)


def test_abs_of_complex_at_zero_has_zero_derivative_as_jax():
    z = np.complex128(0)
    assert funcad.jvp(fnp.abs, (z,), (T,))[1] == 0.0
    assert funcad.grad(fnp.abs)(z) == 0j == complex(jax.grad(jnp.abs)(z))


def test_norm_of_complex_vector_is_real():
    v = np.array([1j, 1, 2 - 1j])
    n = fnp.linalg.norm(v)
    assert n.dtype == np.float64
    np.testing.assert_allclose(n, np.linalg.norm(v), rtol=1e-15)
    np.testing.assert_allclose(n, 2.6457513110645907, rtol=1e-15)
    m = np.array([[1 + 1j, 2], [3j, -1 - 2j]])
    for kw in ({}, {"axis": 1}, {"ord": "fro"}):
        np.testing.assert_allclose(fnp.linalg.norm(m, **kw), np.linalg.norm(m, **kw), rtol=1e-14)
    g = funcad.grad(fnp.linalg.norm)(v)
    np.testing.assert_allclose(g, np.asarray(jax.grad(jnp.linalg.norm)(v)), rtol=1e-14)
