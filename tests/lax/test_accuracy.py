"""`accuracy=` on the transcendental lax ops (JAX's result_accuracy): same values,
derivatives (the tangent rules that use the accuracy too) and batching as JAX; the
attribute in the lowered program; clear errors."""
import numpy as np
import pytest

import funcad
from funcad import lax as fl

jax = pytest.importorskip("jax")
jl = jax.lax
needs_jax_accuracy = pytest.mark.skipif(not hasattr(jl, "AccuracyMode"), reason="jax < 0.7 has no accuracy=")

OPS = "exp exp2 expm1 log log2 log1p tanh logistic sin cos tan sqrt rsqrt cbrt".split()
X = np.linspace(0.1, 2.0, 7).astype(np.float32)


def _pairs():
    return [(fl.AccuracyMode.HIGHEST, "HIGHEST"), (fl.AccuracyMode.DEFAULT, "DEFAULT"),
            (fl.Tolerance(atol=1e-5), ("tol", 1e-5, 0.0, 0)), (fl.Tolerance(rtol=1e-6, ulps=2), ("tol", 0.0, 1e-6, 2))]


def _jax_acc(spec):
    if isinstance(spec, str):
        return getattr(jl.AccuracyMode, spec)
    return jl.Tolerance(atol=spec[1], rtol=spec[2], ulps=spec[3])


@needs_jax_accuracy
@pytest.mark.parametrize("name", OPS)
def test_values_grads_and_vmap_match_jax(name):
    for facc, spec in _pairs():
        jacc = _jax_acc(spec)
        jf = lambda v: getattr(jl, name)(v, accuracy=jacc)  # noqa: E731
        ff = lambda v: getattr(fl, name)(v, accuracy=facc)  # noqa: E731
        np.testing.assert_array_equal(funcad.jit(ff)(X), jax.jit(jf)(X))
        np.testing.assert_allclose(ff(X), jax.jit(jf)(X), rtol=3e-7)  # eager: NumPy's libm
        np.testing.assert_array_equal(funcad.jit(funcad.vmap(ff))(X), jax.jit(jax.vmap(jf))(X))
        gf = funcad.jit(funcad.grad(lambda v: ff(v).sum()))(X)
        gj = jax.jit(jax.grad(lambda v: jf(v).sum()))(X)
        # log2 is log(x)·(1/ln 2) in funcad, a primitive with its own jvp in JAX: 1 ulp apart
        np.testing.assert_allclose(gf, gj, rtol=0 if name != "log2" else 3e-7)


@needs_jax_accuracy
@pytest.mark.parametrize("name", ["tanh", "logistic", "sin", "cos", "expm1"])
def test_second_derivative_with_highest_matches_jax(name):
    jf = lambda v: getattr(jl, name)(v, accuracy=jl.AccuracyMode.HIGHEST)  # noqa: E731
    ff = lambda v: getattr(fl, name)(v, accuracy=fl.AccuracyMode.HIGHEST)  # noqa: E731
    x = np.float32(0.7)
    np.testing.assert_allclose(funcad.jit(funcad.grad(funcad.grad(ff)))(x), jax.jit(jax.grad(jax.grad(jf)))(x),
                               rtol=1e-6)


def test_accuracy_is_a_param_only_when_given():
    plain = str(funcad.make_jaxpr(fl.sin)(X))
    assert "accuracy" not in plain
    acc = str(funcad.make_jaxpr(lambda v: fl.sin(v, accuracy=fl.Tolerance(ulps=2)))(X))
    assert "sin[accuracy=Tolerance(atol=0.0, rtol=0.0, ulps=2)]" in acc


def test_lowered_program_carries_result_accuracy():
    text = funcad.jit(lambda v: fl.exp(v, accuracy=fl.AccuracyMode.HIGHEST)).lower(X).as_text()
    assert "result_accuracy = #stablehlo.result_accuracy<mode = #stablehlo.result_accuracy_mode<HIGHEST>>" in text
    text = funcad.jit(lambda v: fl.cbrt(v, accuracy=fl.Tolerance(atol=1e-3))).lower(X).as_text()
    assert "atol = 1.000000e-03" in text and "TOLERANCE" in text
    assert "result_accuracy" not in funcad.jit(fl.exp).lower(X).as_text()


def test_fd_derivatives_with_accuracy():
    for name in ("tanh", "logistic", "sin", "cos", "expm1", "sqrt"):
        f = lambda v: getattr(fl, name)(v, accuracy=fl.AccuracyMode.HIGHEST)  # noqa: E731
        x, h = 0.6, 1e-6
        fd = (f(np.float64(x + h)) - f(np.float64(x - h))) / (2 * h)
        np.testing.assert_allclose(funcad.grad(f)(np.float64(x)), fd, rtol=1e-7)


def test_bad_accuracy_is_a_clear_error():
    with pytest.raises(funcad.FuncadError, match="accuracy must be None, a lax.AccuracyMode or a lax.Tolerance"):
        fl.exp(X, accuracy="high")
    with pytest.raises(funcad.FuncadError, match="non-negative"):
        fl.Tolerance(atol=-1.0)
