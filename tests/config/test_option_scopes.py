"""The option scopes debug_nans, debug_infs, default_matmul_precision, numpy_rank_promotion,
log_compiles, no_tracing, no_execution and enable_checks against JAX's: names, values, and
what each does."""
from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp

# ---------------------------------------------------------- option scopes ----

_SCOPES = ["debug_nans", "debug_infs", "default_matmul_precision", "numpy_rank_promotion",
           "log_compiles", "no_tracing", "no_execution", "enable_checks"]
_VALUES = {"default_matmul_precision": "float32", "numpy_rank_promotion": "raise"}


@pytest.mark.parametrize("name", _SCOPES)
def test_option_scopes_and_jax_names(name):
    value = _VALUES.get(name, True)
    assert hasattr(jax, name)
    scope = getattr(funcad, name)
    before = scope.value
    with scope(value):
        assert scope.value == value == funcad.config.read(name) == funcad.config.read("jax_" + name)
    assert scope.value == before
    funcad.config.update("jax_" + name, value)
    try:
        assert getattr(funcad.config, name) == value
    finally:
        funcad.config.update(name, before)
    with pytest.raises(funcad.FuncadTypeError, match=name):
        funcad.config.update(name, "nonsense")


def test_debug_nans_and_debug_infs_raise_floating_point_errors():
    with funcad.debug_nans(True):
        with pytest.raises(FloatingPointError, match="primitive `log` produced a NaN"):
            fnp.log(-1.0)
        assert float(fnp.log(0.0)) == -np.inf  # an inf is not a NaN
        with pytest.raises(funcad.NaNError, match="jit"):
            funcad.jit(lambda x: fnp.sqrt(x) * 2)(-1.0)
    assert np.isnan(fnp.log(-1.0))
    with funcad.debug_infs(True):
        with pytest.raises(funcad.InfError, match="debug_infs: primitive `log` produced an inf"):
            fnp.log(0.0)
        with pytest.raises(FloatingPointError, match="primitive `div`"):
            funcad.jit(lambda x: 1.0 / x)(np.zeros(1))
        assert np.isnan(fnp.log(-1.0))  # a NaN is not an inf
    with jax.debug_infs(True):
        with pytest.raises(FloatingPointError):
            jax.jit(lambda x: 1.0 / x)(jnp.zeros(1))
    with funcad.debug_nans(True), funcad.debug_infs(True):
        with pytest.raises(funcad.InfError):
            fnp.exp(1000.0)
    assert fnp.exp(1000.0) == np.inf


def test_default_matmul_precision_reaches_dot_einsum_and_conv():
    a = np.ones((2, 2), np.float32)
    f = lambda a: (a @ a, fnp.einsum("ij,jk->ik", a, a), fnp.dot(a, a))  # noqa: E731
    assert "precision" not in str(funcad.make_jaxpr(f)(a))
    with funcad.default_matmul_precision("float32"):
        text = str(funcad.make_jaxpr(f)(a))
        assert text.count("HIGHEST") >= 3, text
        assert "HIGHEST" in funcad.jit(lambda a: a @ a).lower(a).as_text()
        conv = funcad.make_jaxpr(lambda x: funcad.lax.conv(x, x, (1, 1), "SAME"))(np.ones((1, 1, 3, 3)))
        assert "HIGHEST" in str(conv)
        # an explicit precision wins
        assert "HIGHEST" not in str(funcad.make_jaxpr(lambda a: fnp.matmul(a, a, precision="default"))(a))
    with jax.default_matmul_precision("float32"):
        assert "HIGHEST" in jax.jit(lambda a: a @ a).lower(a).as_text()
    with funcad.default_matmul_precision("BF16_BF16_F32"):
        assert "BF16_BF16_F32" in str(funcad.make_jaxpr(lambda a: a @ a)(a))
    # jit's cache keys on the setting: the same function traces again
    g = funcad.jit(lambda a: a @ a)
    g(a)
    with funcad.default_matmul_precision("highest"):
        g(a)
    assert g._cache_size() == 2
    np.testing.assert_allclose(np.asarray(g(a)), a @ a)


def test_numpy_rank_promotion_warn_and_raise_like_jax():
    x, y = np.ones((2, 3)), np.ones(3)
    for mod, scope in ((jnp, jax.numpy_rank_promotion), (fnp, funcad.numpy_rank_promotion)):
        with scope("raise"):
            with pytest.raises(ValueError, match=r"Operands could not be broadcast together for add on "
                               r"shapes \(2, 3\) \(3,\) and with the config option "
                               r"jax_numpy_rank_promotion='raise'"):
                mod.add(x, y)
            assert mod.multiply(x, 2.0).shape == (2, 3)  # scalars are not rank promotion
            assert mod.add(x, np.ones((1, 3))).shape == (2, 3)  # equal ranks broadcast
        with scope("warn"):
            with pytest.warns(UserWarning, match="Following NumPy automatic rank promotion for"):
                mod.subtract(x, y)
    with funcad.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError, match="broadcast"):
            funcad.jit(lambda a, b: a * b)(x, y)
    np.testing.assert_array_equal(funcad.jit(lambda a, b: a * b)(x, y), x * y)


def test_log_compiles_logs_traces_and_compilations(caplog):
    f = funcad.jit(lambda x: x * 3.0)
    with caplog.at_level(logging.WARNING, logger="funcad"):
        f(np.ones(2))
        assert not caplog.records
        with funcad.log_compiles(True):
            f(np.ones(2))  # cached: nothing to log
            assert not caplog.records
            f(np.ones(4, np.float32))
    msgs = [r.getMessage() for r in caplog.records]
    assert any(m.startswith("Finished tracing + transforming <lambda> for jit") for m in msgs), msgs
    assert any("Compiling jit(<lambda>) with global shapes and types [f32[4]]" in m for m in msgs), msgs
    assert any(m.startswith("Finished XLA compilation of jit(<lambda>)") for m in msgs), msgs


def test_no_tracing_and_no_execution():
    f = funcad.jit(lambda x: x + 1.0)
    f(np.ones(2))
    with funcad.no_tracing(True):
        np.testing.assert_array_equal(f(np.ones(2)), 2.0)  # cached: fine
        with pytest.raises(RuntimeError, match="re-tracing function <lambda> for `jit`, but 'no_tracing' is set"):
            f(np.ones(3))
    with funcad.no_execution(True):
        with pytest.raises(RuntimeError, match="no_execution"):
            f(np.ones(2))  # the fast path is off too
        assert "add" in f.lower(np.ones(5)).as_text()  # tracing and lowering still work
        with pytest.raises(RuntimeError, match="no_execution"):
            funcad.grad(lambda x: funcad.jit(fnp.sin)(x))(1.0)
    np.testing.assert_array_equal(f(np.ones(2)), 2.0)
    jf = jax.jit(lambda x: x + 1.0)
    jf(jnp.ones(2))
    with jax.no_tracing(True):
        with pytest.raises(RuntimeError, match="no_tracing"):
            jf(jnp.ones(3))


def test_enable_checks_type_checks_each_trace():
    from funcad.core.trace import Primitive, abstract_eval_rules, impl_rules
    from funcad.core.avals import ShapedArray
    calls = []
    p = Primitive("fickle")  # a shape rule that changes its mind: a buggy rule

    def rule(a):
        calls.append(1)
        return ShapedArray((len(calls),), a.dtype)
    abstract_eval_rules[p] = rule
    impl_rules[p] = lambda x: np.ones(1)
    funcad.make_jaxpr(lambda x: p.bind(x))(1.0)  # unchecked: not noticed
    with funcad.enable_checks(True):
        with pytest.raises(funcad.errors.JaxprTypeError, match="equation `fickle` outputs"):
            funcad.make_jaxpr(lambda x: p.bind(x))(1.0)
        assert funcad.jit(lambda x: fnp.sin(x) * 2)(1.0) == pytest.approx(2 * np.sin(1.0))


# ---------------------------------------------------------------- helpers ----
