"""JAX's check_tracer_leaks / checking_leaks, effects_barrier, Shard and enable_custom_prng."""
from __future__ import annotations

import os
import sys
import threading

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


def test_effects_barrier_waits_for_callbacks_and_raises_their_errors():
    seen = []
    lock = threading.Lock()

    def record(x):
        with lock:
            seen.append(float(x))

    @funcad.jit
    def f(x):
        funcad.debug.callback(record, x)
        return x + 1.0

    outs = [f(float(i)) for i in range(5)]
    funcad.effects_barrier()
    assert seen == [0.0, 1.0, 2.0, 3.0, 4.0] and [float(o) for o in outs] == [1, 2, 3, 4, 5]
    funcad.effects_barrier()  # nothing pending: returns at once

    def bad(x):
        raise ValueError("boom")

    g = funcad.jit(lambda x: funcad.debug.callback(bad, x) or x)
    with pytest.raises(Exception, match="boom"):  # as JAX's CPU client: the call raises
        g(1.0)
        funcad.effects_barrier()
    funcad.effects_barrier()  # the failure is not reported twice


def test_shard_is_jax_shard_shaped():
    a = funcad.device_put(fnp.arange(6.0).reshape(2, 3))
    (s,) = a.addressable_shards
    assert isinstance(s, funcad.Shard)
    assert s.replica_id == 0 and s.device == funcad.devices()[0]
    assert s.index == (slice(None), slice(None))
    np.testing.assert_array_equal(np.asarray(s.data), np.arange(6.0).reshape(2, 3))
    (j,) = jax.device_put(jnp.arange(6.0).reshape(2, 3)).addressable_shards
    assert (j.replica_id, j.index) == (s.replica_id, s.index)
    assert set(vars(type(j)).keys()) >= {"device", "index", "replica_id", "data"}


def test_enable_custom_prng_types_keys_as_jax_does():
    import warnings
    import funcad.random as fr

    def run(lib, flag):
        r = lib.random
        with flag(True), warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            k = r.PRNGKey(7)
            out = {"PRNGKey": str(k.dtype), "split": str(r.split(k, 3).dtype),
                   "fold_in": str(r.fold_in(k, 2).dtype), "clone": str(r.clone(k).dtype)}
            raw = r.key_data(k)
            out["split(raw)"] = str(r.split(raw).dtype)
            bits = np.asarray(r.bits(raw, (4,), dtype=np.uint32))
            out["normal"] = np.asarray(r.normal(k, (3,), dtype=np.float32)).tolist()
        out["warned"] = sorted({(w.category.__name__, "deprecated" in str(w.message)) for w in caught})
        return out, bits

    ours, our_bits = run(funcad, funcad.enable_custom_prng)
    theirs, their_bits = run(jax, jax.enable_custom_prng)
    np.testing.assert_array_equal(ours.pop("normal"), theirs.pop("normal"))
    assert ours == theirs and ours["PRNGKey"] == "key<fry>" and ours["warned"] == [("FutureWarning", True)]
    np.testing.assert_array_equal(our_bits, their_bits)
    assert fr.PRNGKey(7).dtype == np.uint32 and not funcad.enable_custom_prng.value  # off again
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fr.normal(fr.PRNGKey(7), (2,))  # off: raw keys do not warn
