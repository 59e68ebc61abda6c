"""The check_tracer_leaks option (and checking_leaks) against JAX's: leaks named with their trace
and holder under each transformation, no false positives, the option's names."""
from __future__ import annotations

import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
from funcad.core.errors import TracerLeakError  # noqa: E402

_TRANSFORMS = {
    "grad": (funcad.grad, 1.0, "JVPTrace"),
    "jit": (funcad.jit, 1.0, "StagingTrace"),
    "vmap": (funcad.vmap, np.ones(3), "BatchTrace"),
    "jacrev": (funcad.jacrev, 1.0, "JVPTrace"),
    "hessian": (funcad.hessian, 1.0, "JVPTrace"),
}

stash: list = []


def _leaky(x):
    stash.append(fnp.sin(x) * 2.0)
    return x * x


@pytest.mark.parametrize("name", sorted(_TRANSFORMS))
def test_a_leak_is_reported_naming_the_trace_and_its_holder(name):
    transform, arg, trace = _TRANSFORMS[name]
    stash.clear()
    with funcad.checking_leaks():
        with pytest.raises(TracerLeakError) as info:
            transform(_leaky)(arg)
    msg = str(info.value)
    assert msg.startswith(f"Leaked trace {trace}. Leaked tracer(s):")
    assert f"a list ({__name__}.stash)" in msg and "has_aux=True" in msg
    stash.clear()
    transform(lambda x: _leaky(x))(arg)  # off (the default): no check, as in JAX
    assert len(stash) == 1
    stash.clear()


def test_jax_reports_the_same_leaks():
    leaks = []

    def f(x):
        leaks.append(x * 2)
        return x

    for transform in (jax.jit,):  # (JAX collects garbage per trace: one transform is enough)
        leaks.clear()
        with jax.checking_leaks(), pytest.raises(Exception, match="Leaked trace"):
            transform(f)(1.0)
        leaks.clear()
        with funcad.checking_leaks(), pytest.raises(TracerLeakError, match="Leaked trace"):
            getattr(funcad, transform.__name__)(f)(1.0)
    leaks.clear()


def test_a_leak_into_an_object_attribute_and_a_closure():
    class Box:
        pass

    box, cells = Box(), []

    def f(x):
        y = x + 1.0
        box.value = y
        cells.append(lambda: y)
        return y

    with funcad.check_tracer_leaks(True), pytest.raises(TracerLeakError, match="Leaked trace JVPTrace"):
        funcad.grad(f)(1.0)
    del box.value
    cells.clear()
    with funcad.check_tracer_leaks(True), pytest.raises(TracerLeakError, match="Leaked trace JVPTrace"):
        funcad.grad(f)(1.0)


def test_no_false_positives_in_ordinary_programs():
    g = lambda x: fnp.sum(fnp.tanh(x) ** 2)  # noqa: E731
    x = np.linspace(0.1, 0.9, 3)
    with funcad.checking_leaks():
        assert funcad.check_tracer_leaks.value and funcad.config.check_tracer_leaks
        np.testing.assert_allclose(funcad.hessian(g)(x), jax.hessian(lambda x: jnp.sum(jnp.tanh(x) ** 2))(x),
                                   rtol=1e-6)  # JAX computes in float32
        funcad.jit(funcad.grad(g))(x)
        funcad.vmap(funcad.grad(g))(np.ones((2, 3)))
        _, pullback = funcad.vjp(g, x)
        pullback(1.0)
        _, lin = funcad.linearize(g, x)
        lin(x)
        funcad.lax.scan(lambda c, v: (c + v, c * v), 0.0, fnp.arange(3.0))
        assert float(funcad.grad(lambda x: funcad.lax.fori_loop(0, 3, lambda i, c: c * x, x))(2.0)) == 32.0
        funcad.jit(funcad.vmap(funcad.jacfwd(lambda x: fnp.cos(x) * x)))(np.ones((2, 3)))
        funcad.checkpoint(g)(x)
        funcad.grad(funcad.checkpoint(g))(x)
    assert not funcad.check_tracer_leaks.value


def test_option_names_and_environment_variable():
    funcad.config.update("jax_check_tracer_leaks", True)
    try:
        assert funcad.config.check_tracer_leaks is True
    finally:
        funcad.config.update("check_tracer_leaks", False)
    assert "FUNCAD_CHECK_TRACER_LEAKS" in funcad.config.__doc__
    with pytest.raises(funcad.FuncadTypeError, match="True or False"):
        funcad.config.update("check_tracer_leaks", "maybe")
