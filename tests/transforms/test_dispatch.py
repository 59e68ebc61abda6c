"""jit's dispatch path: NumPy inputs packed into one transfer, scalars, mixes
with device Arrays, and results that never alias the caller's memory."""
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.lowering import packing


def _inputs(rng):
    return [
        rng.normal(size=(3, 4)).astype(np.float32).T,       # non-contiguous
        np.float32(2.5),                                     # NumPy scalar
        rng.normal(size=()),                                 # 0-d float64 array
        rng.random(5) > 0.5,                                 # bool
        rng.integers(-100, 100, size=(2, 3)).astype(np.int8),
        rng.integers(0, 255, size=(4,)).astype(np.uint8),
        rng.normal(size=(3,)).astype(np.float16),
        rng.integers(-5, 5, size=(2, 2)).astype(np.int32),
        np.int64(7),
        3.0,                                                 # Python float (weak)
        rng.normal(size=(130, 130)),                         # > 64 KiB: sent alone
    ]


def _program(np_):
    def f(a, s, z, m, i8, u8, h, i32, n, w, big):
        return {"a": a * s + z, "m": np_.where(m, 1.0, -1.0) * w,
                "ints": (i8.astype(np_.int32) * 2 + i32.sum(), u8 + np_.uint8(1)),
                "h": h * 2, "n": n * 3, "big": big.sum() + a.sum()}
    return f


def _assert_tree_equal(got, want):
    for k in want:
        g, w = got[k], want[k]
        for gi, wi in zip(g if isinstance(g, tuple) else (g,), w if isinstance(w, tuple) else (w,)):
            gi, wi = np.asarray(gi), np.asarray(wi)
            assert gi.dtype == wi.dtype, (k, gi.dtype, wi.dtype)
            np.testing.assert_allclose(gi, wi, rtol=1e-6)


def test_many_numpy_inputs_match_eager_and_are_packed():
    rng = np.random.default_rng(0)
    xs = _inputs(rng)
    f = funcad.jit(_program(fnp))
    got = f(*xs)
    _assert_tree_equal(got, _program(fnp)(*xs))
    (entry,) = f._cache.values()
    (exe,) = entry.executables.values()
    assert exe.layout is not None and len(exe.layout.slots) == 10  # all but the big one
    assert "%packed: tensor<" in exe.text


def test_caller_may_mutate_inputs_after_the_call():
    rng = np.random.default_rng(1)
    xs = _inputs(rng)
    f = funcad.jit(_program(fnp))
    first = f(*xs)
    snapshot = {k: np.asarray(v).copy() for k, v in first.items() if k != "ints"}
    xs[0][...] = 99.0
    xs[10][...] = -1.0
    for k, v in snapshot.items():
        np.testing.assert_array_equal(np.asarray(first[k]), v)
    again = f(*xs)
    assert float(np.asarray(again["big"])) != float(snapshot["big"])


def test_device_and_numpy_inputs_mix_in_any_order():
    rng = np.random.default_rng(2)
    xs = _inputs(rng)
    f = funcad.jit(_program(fnp))
    want = _program(fnp)(*xs)
    on_device = [funcad.device_put(x) if i % 2 else x for i, x in enumerate(xs)]
    _assert_tree_equal(f(*on_device), want)
    _assert_tree_equal(f(*xs), want)
    flipped = [x if i % 2 else funcad.device_put(x) for i, x in enumerate(xs)]
    _assert_tree_equal(f(*flipped), want)


def test_agrees_with_jax_on_the_same_inputs():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    rng = np.random.default_rng(3)
    xs = _inputs(rng)
    with jax.enable_x64(True) if hasattr(jax, "enable_x64") else __import__(
            "jax.experimental", fromlist=["enable_x64"]).enable_x64():
        want = jax.jit(_program(jnp))(*xs)
        _assert_tree_equal(funcad.jit(_program(fnp))(*xs), {k: want[k] for k in want})


def test_packing_plan_skips_what_cannot_travel_packed():
    from funcad.core.avals import ShapedArray, float0
    avals = [ShapedArray((2,), np.float32), ShapedArray((2,), np.complex64),
             ShapedArray((3,), float0), ShapedArray((0,), np.float32), ShapedArray((), np.int64)]
    host = [packing.packable(a) for a in avals]
    assert host == [True, False, False, False, True]
    assert packing.packable(avals[0], donated=True) is False
    layout = packing.plan(avals, host)
    assert [s.index for s in layout.slots] == [0, 4] and layout.nbytes == 16
    assert packing.plan(avals, [True, False, False, False, False]) is None  # one input: no gain


def test_numpy_scalars_take_the_fast_path_and_keep_their_dtype():
    f = funcad.jit(lambda x, y: x * 2.0 + y)
    out = f(np.float32(1.5), np.float32(0.25))
    assert out.dtype == np.float32 and float(out) == 3.25
    out = f(np.float32(2.0), np.float32(1.0))
    assert float(out) == 5.0
    assert f(np.float64(1.0), np.float64(1.0)).dtype == np.float64


def test_jit_written_inline_traces_once_per_function():
    calls = []

    def f(x):
        calls.append(1)
        return fnp.sin(x) * 2.0

    x = np.ones(3)
    for _ in range(5):
        np.testing.assert_allclose(np.asarray(funcad.jit(f)(x)), np.sin(x) * 2.0)
    assert len(calls) == 1
    funcad.jit(f, static_argnums=())(x)  # same options: same cache
    assert len(calls) == 1
    funcad.jit(f, donate_argnums=0)(np.ones(3))  # other options: a cache of their own
    assert len(calls) == 2
    funcad.clear_caches()
    funcad.jit(f)(x)
    assert len(calls) == 3


def test_bound_methods_and_unhashable_callables_still_jit():
    class Model:
        scale = 3.0

        def apply(self, x):
            return x * self.scale

    m = Model()
    assert float(funcad.jit(m.apply)(2.0)) == 6.0

    class Unhashable:
        __hash__ = None

        def __call__(self, x):
            return x + 1.0

    assert float(funcad.jit(Unhashable())(2.0)) == 3.0


def test_big_stack_thread_returns_results_and_raises_errors():
    from funcad.lowering import xla
    assert xla._on_big_stack(lambda: 41 + 1) == 42
    with pytest.raises(ZeroDivisionError):
        xla._on_big_stack(lambda: 1 / 0)


@pytest.mark.slow
def test_a_thirty_thousand_equation_program_compiles():
    # jaxlib <= 0.10 overflowed the main thread's stack compiling this (segfault).
    def f(x):
        for _ in range(10_000):
            x = fnp.sin(x) * 1.0001 + 0.001
        return x
    x = np.ones(3)
    want = x
    for _ in range(10_000):
        want = np.sin(want) * 1.0001 + 0.001
    np.testing.assert_allclose(np.asarray(funcad.jit(f)(x)), want, rtol=1e-9)


def test_device_put_of_traced_values_and_of_non_arrays_as_jax():
    import jax
    import jax.numpy as jnp
    f = lambda x: jax.device_put(x, jax.devices()[0]) * x
    ff = lambda x: funcad.device_put(x, funcad.devices()[0]) * x
    for t_jax, t_fc in [(jax.jit, funcad.jit), (jax.grad, funcad.grad)]:
        np.testing.assert_allclose(float(t_fc(ff)(3.0)), float(t_jax(f)(3.0)))
    np.testing.assert_allclose(funcad.vmap(ff)(np.arange(3.0)), jax.vmap(f)(jnp.arange(3.0)))
    for bad in ["abc", float, object()]:
        with pytest.raises(TypeError) as want:
            jax.device_put(bad)
        with pytest.raises(TypeError, match="not a valid JAX type"):
            funcad.device_put(bad)
        assert want.type is TypeError
    assert funcad.device_put({"a": 1.0, "b": None})["b"] is None
