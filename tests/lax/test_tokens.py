"""funcad.lax's tokens (create_token, after_all) through jit, grad and vmap, printed as JAX's,
and dce_sink, which keeps a computation that nothing else uses."""
from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import lax
from funcad.core.errors import FuncadTypeError


# ------------------------------------------------------------------ tokens ----

def _token_program(lib, lx):
    def f(x):
        t = lx.after_all(lx.create_token(), lx.create_token())
        return lib.sin(x) * 2, lx.after_all(t)
    return f


def test_tokens_flow_through_jit_and_print_as_jax():
    f = _token_program(fnp, lax)
    y, t = funcad.jit(f)(0.5)
    jy, jt = jax.jit(_token_program(jnp, jax.lax))(0.5)
    np.testing.assert_allclose(y, jy, rtol=1e-6)
    assert lax.after_all(t).aval == lax.create_token().aval  # a jit output is a token again
    assert funcad.jit(lambda t: lax.after_all(t))(lax.create_token()).aval.str_short() == "Tok"
    text = str(funcad.make_jaxpr(f)(0.5))
    assert "c:Tok = create_token" in text and "after_all" in text, text
    assert repr(lax.create_token()) == "Token()"


def test_tokens_under_grad_and_vmap():
    f = _token_program(fnp, lax)
    g = funcad.grad(lambda x: f(x)[0])(0.5)
    np.testing.assert_allclose(g, 2 * np.cos(0.5))
    np.testing.assert_allclose(funcad.vmap(lambda x: f(x)[0])(np.arange(3.0)), 2 * np.sin(np.arange(3.0)))


def test_after_all_rejects_arrays():
    with pytest.raises(FuncadTypeError, match="must be tokens, got f64"):
        lax.after_all(lax.create_token(), np.float64(1.0))
    with pytest.raises(FuncadTypeError, match="must be tokens"):
        funcad.jit(lambda x: lax.after_all(x))(np.ones(2))


# ---------------------------------------------------------------- dce_sink ----

def test_dce_sink_keeps_the_computation():
    def f(x):
        lax.dce_sink({"a": fnp.sin(x), "b": [x * 3]})
        return x + 1
    closed = funcad.make_jaxpr(f)(1.0)
    sinks = [e for e in closed.eqns if e.primitive.name == "dce_sink"]
    assert len(sinks) == 2 and sinks[0].params == {"prevent_mlir_dce": False}
    opt = funcad.optimize(closed)
    assert {e.primitive.name for e in opt.eqns} >= {"sin", "mul", "dce_sink"}
    assert funcad.jit(f)(2.0) == 3.0
    assert funcad.grad(f)(2.0) == 1.0
    np.testing.assert_allclose(funcad.vmap(f)(np.arange(3.0)), np.arange(3.0) + 1)


def test_dce_sink_prevent_mlir_dce_lowers_to_the_side_effecting_call():
    def f(x):
        lax.dce_sink(x * 2, prevent_mlir_dce=True)
        return x
    from funcad.primitives.tokens import _has_ffi_sink
    text = funcad.jit(f).lower(1.0).as_text()
    # jaxlib's no-op FFI target where it has one (not 0.6: a host call that does nothing)
    assert ('"dce_sink"' in text) == _has_ffi_sink("cpu") and "has_side_effect = true" in text, text
    assert funcad.jit(f)(1.5) == 1.5


# ------------------------------------------------------ compilation cache ----
