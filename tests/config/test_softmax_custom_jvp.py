"""The softmax_custom_jvp option (which derivative rule nn.softmax uses) against JAX: the
derivatives in both modes, masked rows, the jaxpr, the option's names and jit key."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import funcad
import funcad.nn as fnn

_x64 = pytest.fixture(autouse=True)(lambda: (yield from _in_x64()))


def _in_x64():
    old = jax.config.jax_enable_x64  # JAX in float64 too, so the derivatives compare to 1e-12
    jax.config.update("jax_enable_x64", True)
    try:
        yield
    finally:
        jax.config.update("jax_enable_x64", old)

# ------------------------------------------------------------ softmax_custom_jvp ----

X = np.array([[0.3, -1.2, 2.0, 0.5], [1.0, 1.0, -0.4, 3.0]])
W = np.array([[True, False, True, True], [True, True, True, False]])
C = np.array([[1.0, -2.0, 0.5, 3.0], [0.25, 1.5, -1.0, 2.0]])


def _cases(nn, where):
    def f(x):
        return (nn.softmax(x, axis=-1, where=where) * C).sum()

    def g(x):  # softmax on the first axis, masked entries give 0 in either mode
        return (nn.softmax(x * x, axis=0, where=where) * C).sum()
    return f, g


@pytest.mark.parametrize("custom", [False, True])
@pytest.mark.parametrize("masked", [False, True])
def test_softmax_derivatives_match_jax_in_both_modes(custom, masked):
    where = W if masked else None
    with jax.softmax_custom_jvp(custom), funcad.softmax_custom_jvp(custom):
        for jf, ff in zip(_cases(jax.nn, where), _cases(fnn, where)):
            np.testing.assert_allclose(funcad.grad(ff)(X), jax.grad(jf)(X), rtol=1e-12, atol=1e-14)
            np.testing.assert_allclose(funcad.hessian(ff)(X), jax.hessian(jf)(X), rtol=1e-10, atol=1e-12)
            t = np.cos(X)
            fo, ft = funcad.jvp(ff, (X,), (t,))
            jo, jt = jax.jvp(jf, (X,), (t,))
            np.testing.assert_allclose([fo, ft], [jo, jt], rtol=1e-12)
            np.testing.assert_allclose(funcad.jit(funcad.grad(ff))(X), jax.grad(jf)(X), rtol=1e-10, atol=1e-14)


def test_softmax_all_masked_row_matches_jax():
    where = np.array([[False, False, False, False], [True, True, True, False]])
    f = lambda nn: lambda x: (nn.softmax(x, where=where) * C).sum()
    for custom in (False, True):
        with jax.softmax_custom_jvp(custom), funcad.softmax_custom_jvp(custom), np.errstate(invalid="ignore"):
            np.testing.assert_allclose(funcad.grad(f(fnn))(X), jax.grad(f(jax.nn))(X), rtol=1e-12)
            np.testing.assert_allclose(fnn.softmax(X, where=where), jax.nn.softmax(X, where=where))


def test_softmax_jaxpr_uses_the_mode():
    f = lambda x: fnn.softmax(x)
    assert "custom_jvp" not in str(funcad.make_jaxpr(f)(X))
    with funcad.softmax_custom_jvp(True):
        assert "custom_jvp" in str(funcad.make_jaxpr(f)(X))


def test_softmax_custom_jvp_option_names_and_jit_key():
    assert funcad.config.softmax_custom_jvp is False and funcad.softmax_custom_jvp.value is False
    traces = []

    def f(x):
        traces.append(1)
        return (fnn.softmax(x, where=W) * C).sum()
    g = funcad.jit(funcad.grad(f))
    want = jax.grad(lambda x: (jax.nn.softmax(x, where=W) * C).sum())(X)
    np.testing.assert_allclose(g(X), want, rtol=1e-12)
    funcad.config.update("jax_softmax_custom_jvp", True)
    try:
        assert funcad.config.read("softmax_custom_jvp") is True and funcad.softmax_custom_jvp.value
        np.testing.assert_allclose(g(X), want, rtol=1e-12)
        assert len(traces) == 2  # traced again: the option is in jit's key, as in JAX's
        assert "custom_jvp" in str(g.lower(X).jaxpr)
    finally:
        funcad.config.update("softmax_custom_jvp", False)
    n = len(traces)
    g(X)
    assert len(traces) == n and "custom_jvp" not in str(g.lower(X).jaxpr)  # the first trace, cached
    with pytest.raises(funcad.FuncadTypeError, match="True or False"):
        funcad.config.update("softmax_custom_jvp", "sometimes")


def test_log_softmax_derivatives_do_not_depend_on_the_mode():
    f = lambda nn: lambda x: (nn.log_softmax(x, where=W) * np.where(W, C, 0)).sum()
    for custom in (False, True):
        with jax.softmax_custom_jvp(custom), funcad.softmax_custom_jvp(custom), np.errstate(invalid="ignore"):
            np.testing.assert_allclose(funcad.hessian(f(fnn))(X), jax.hessian(f(jax.nn))(X), rtol=1e-10,
                                       atol=1e-12)


# ------------------------------------------------------------- compiler_options ----
