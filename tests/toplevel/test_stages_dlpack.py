"""funcad.stages (jit(f).trace/lower/compile, their signatures, compile's compiler_options),
funcad.dlpack, funcad.version and the legacy_prng_key option, against JAX 0.12 where it is
the oracle."""
from __future__ import annotations

import re
import warnings
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import stages

ROOT = Path(__file__).resolve().parents[2]


def _f(x, y=1.0):
    return {"a": x * y, "b": x.sum()}


# ------------------------------------------------------------------ stages ----

def test_stages_names_are_jaxs():
    names = {n for n in dir(jax.stages) if not n.startswith("_")}
    assert names == set(stages.__all__)
    f = funcad.jit(_f)
    t = f.trace(np.ones(3), y=2.0)
    lo = t.lower()
    c = lo.compile()
    assert isinstance(f, stages.Wrapped) and not isinstance(_f, stages.Wrapped)
    assert isinstance(t, stages.Traced) and isinstance(lo, stages.Lowered)
    assert isinstance(c, stages.Compiled)
    assert isinstance(f.lower(np.ones(3)), stages.Lowered)


def test_signature_matches_jax():
    x = np.ones(3, np.float32)
    jt = jax.jit(_f).trace(x, y=np.float32(2.0))
    t = funcad.jit(_f).trace(x, y=np.float32(2.0))
    for a, b in ((t, jt), (t.lower(), jt.lower()), (t.lower().compile(), jt.lower().compile())):
        assert str(a.in_tree) == str(b.in_tree) == "PyTreeDef(((*,), {'y': *}))"
        assert str(a.out_tree) == str(b.out_tree)
        got = jax.tree.leaves(a.args_info, is_leaf=lambda v: isinstance(v, stages.ArgInfo))
        want = jax.tree.leaves(b.args_info)
        assert [(i.shape, i.dtype, i.donated) for i in got] == [(i.shape, i.dtype, i.donated) for i in want]
        assert a.donate_argnums == b.donate_argnums == ()
        out = a.out_info
        assert {k: (v.shape, v.dtype) for k, v in out.items()} == \
            {k: (v.shape, v.dtype) for k, v in b.out_info.items()}
    avals = t.in_avals
    assert avals[0][0].shape == (3,) and avals[1]["y"].dtype == np.float32


def test_traced_jaxpr_call_and_weak_out_info():
    t = funcad.jit(lambda x: x + 1.0).trace(np.ones(2))
    assert str(t.jaxpr) == str(funcad.make_jaxpr(lambda x: x + 1.0)(np.ones(2)))
    assert "add a 1.0" in str(t.jaxpr)
    assert t.fun_name == "<lambda>"
    np.testing.assert_array_equal(t(np.array([1.0, 2.0])), [2.0, 3.0])
    weak = funcad.jit(lambda: 1.0).trace()
    assert weak.out_info.weak_type and weak.out_avals.weak_type
    with pytest.raises(funcad.FuncadTypeError, match="structure"):
        t(np.ones(2), np.ones(2))


def test_static_and_donated_arguments():
    f = funcad.jit(lambda x, n, z: x * n + z, static_argnums=1, donate_argnums=2)
    lo = f.lower(np.ones(2), 3, np.ones(2))
    assert str(lo.in_tree) == "PyTreeDef(((*, *), {}))"  # the static argument is left out
    assert lo.donate_argnums == (1,)
    assert [i.donated for i in lo.args_info[0]] == [False, True]
    c = lo.compile()
    np.testing.assert_array_equal(c(np.ones(2), 3, np.ones(2)), [4.0, 4.0])
    assert c.donate_argnums == (1,)


def test_lowered_text_dialects():
    lo = funcad.jit(lambda x: x * 2.0).lower(np.ones(3, np.float32))
    assert lo.as_text().startswith("module @") and lo.as_text("stablehlo") == lo.as_text()
    hlo = lo.as_text("hlo")
    assert hlo.startswith("HloModule") and "f32[3]" in hlo and "multiply" in hlo
    with pytest.raises(ValueError, match="unknown dialect"):
        lo.as_text("llvm")


def test_lowered_compiler_ir_is_jaxs_kinds_of_object():
    lo = funcad.jit(lambda x: x * 2.0).lower(np.ones(3, np.float32))
    want = jax.jit(lambda x: x * 2.0).lower(np.ones(3, np.float32))
    for dialect in (None, "stablehlo", "hlo"):
        assert type(lo.compiler_ir(dialect)) is type(want.compiler_ir(dialect))
    module = lo.compiler_ir()
    assert [op.operation.name for op in module.body.operations] == ["func.func"]
    assert "f32[3]" in lo.compiler_ir(dialect="hlo").as_hlo_text()
    with pytest.raises(ValueError, match="unknown dialect"):
        lo.compiler_ir("llvm")


def test_compiled_introspection():
    c = funcad.jit(_f).lower(np.ones(4)).compile()
    assert c.as_text().startswith("HloModule")
    assert c.cost_analysis()["flops"] > 0
    assert c.memory_analysis().argument_size_in_bytes == 4 * 8
    assert c.runtime_executable() is not None
    dev = funcad.devices()[0]
    ins, outs = c.input_shardings, c.output_shardings
    assert ins[0][0].device_set == {dev} and set(outs) == {"a", "b"}
    assert outs["a"].device_set == {dev}
    np.testing.assert_array_equal(c(np.arange(4.0))["a"], np.arange(4.0))
    with pytest.raises(funcad.FuncadTypeError, match="lowered for other argument types"):
        c(np.ones(5))


# ------------------------------------------------------------------ dlpack ----

def test_from_dlpack_numpy_jax_funcad():
    a = np.arange(6.0).reshape(2, 3)
    x = funcad.dlpack.from_dlpack(a)
    assert type(x) is funcad.Array and x.devices() == {funcad.devices()[0]}
    np.testing.assert_array_equal(x, a)
    j = funcad.dlpack.from_dlpack(jnp.arange(4, dtype=jnp.int32))
    assert j.dtype == np.int32 and j.tolist() == [0, 1, 2, 3]
    y = funcad.jit(lambda v: v + 1.0)(np.arange(3.0, dtype=np.float32))
    z = funcad.dlpack.from_dlpack(y, copy=False)  # a device buffer: aligned, no copy needed
    np.testing.assert_array_equal(z, [1.0, 2.0, 3.0])
    assert funcad.jit(lambda v: v * 2)(z).tolist() == [2.0, 4.0, 6.0]
    e = funcad.dlpack.from_dlpack(fnp.sin(np.zeros(2)))  # an eager result
    np.testing.assert_array_equal(e, [0.0, 0.0])


def test_funcad_arrays_export():
    y = funcad.jit(lambda v: v * 2.0)(np.arange(3.0))
    assert y.__dlpack_device__() == (1, 0)
    np.testing.assert_array_equal(np.from_dlpack(y), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(jax.dlpack.from_dlpack(y), [0.0, 2.0, 4.0])
    np.testing.assert_array_equal(jnp.from_dlpack(y), [0.0, 2.0, 4.0])
    y.delete()
    with pytest.raises(RuntimeError, match="deleted"):
        np.from_dlpack(y)


def test_from_dlpack_errors_and_devices():
    with pytest.raises(TypeError, match="__dlpack__ and __dlpack_device__"):
        funcad.dlpack.from_dlpack([1.0, 2.0])
    a = np.arange(3.0)
    # the same refusal as JAX's for an unaligned host buffer with copy=False
    aligned = a.ctypes.data % 64 == 0
    if not aligned:
        with pytest.raises(ValueError, match="requires a copy"):
            jax.dlpack.from_dlpack(a, copy=False)
        with pytest.raises(ValueError, match="requires a copy"):
            funcad.dlpack.from_dlpack(a, copy=False)
    dev = funcad.devices()[0]
    sh = funcad.sharding.SingleDeviceSharding(dev)
    for d in (dev, sh):
        assert funcad.dlpack.from_dlpack(np.ones(2), device=d).devices() == {dev}


def _aligned(n):
    raw = np.zeros(n * 8 + 64, np.uint8)
    off = (-raw.ctypes.data) % 64
    a = raw[off:off + n * 8].view(np.float64)
    a[:] = np.arange(n)
    return a


def test_from_dlpack_shares_unless_copied():
    a = _aligned(4)  # XLA's CPU client adopts 64-byte aligned host memory as it is
    shared, copied = funcad.dlpack.from_dlpack(a, copy=False), funcad.dlpack.from_dlpack(a, copy=True)
    a[0] = 9.0
    assert float(shared[0]) == 9.0 and float(copied[0]) == 0.0  # (JAX 0.12 with x64 shares both)


def test_from_dlpack_x64_off_canonicalizes():
    with funcad.enable_x64(False):
        x = funcad.dlpack.from_dlpack(np.arange(3.0))
        assert x.dtype == np.float32
    with jax.enable_x64(False):
        assert jax.dlpack.from_dlpack(np.arange(3.0)).dtype == np.float32


@pytest.mark.parametrize("dt", ["int8", "uint64", "float16", "bfloat16", "float64", "complex64",
                                "bool", "int4", "float8_e4m3fn", "float0"])
def test_is_supported_dtype(dt):
    import ml_dtypes
    d = jax.dtypes.float0 if dt == "float0" else getattr(ml_dtypes, dt, None) or np.dtype(dt)
    assert funcad.dlpack.is_supported_dtype(d) == jax.dlpack.is_supported_dtype(d)


def test_is_supported_dtype_none():
    with pytest.raises(TypeError, match="dtype-like"):
        funcad.dlpack.is_supported_dtype(None)


# ----------------------------------------------------------------- version ----

def test_version_module():
    assert set(funcad.version.__all__) <= set(dir(jax.version))
    assert funcad.version.__version__ == funcad.__version__
    assert funcad.__version_info__ == funcad.version.__version_info__ == (0, 1, 0)
    assert hasattr(jax, "__version_info__")
    want = re.search(r'^version = "(.+)"', (ROOT / "pyproject.toml").read_text(), re.M).group(1)
    assert funcad.__version__ == want
    assert funcad.version._version_as_tuple("0.12.0.dev2024") == jax.version._version_as_tuple(
        "0.12.0.dev2024") == (0, 12, 0)
    from funcad.lowering.xla import SUPPORTED_JAXLIB
    assert funcad.version._minimum_jaxlib_version_info == SUPPORTED_JAXLIB[0]


# --------------------------------------------------------- legacy_prng_key ----

def _record(fn):
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        fn()
    return [str(x.message) for x in w if "Legacy uint32 key" in str(x.message)]


def test_legacy_prng_key_warn_and_error_like_jax():
    r = funcad.random
    raw, typed = r.PRNGKey(0), r.key(0)
    with funcad.legacy_prng_key("warn"):
        assert _record(lambda: r.normal(raw, (2,))) and _record(lambda: r.split(raw))
        assert len(_record(lambda: r.beta(raw, 2.0, 3.0))) == 1  # once, for the user's key
        assert _record(lambda: funcad.jit(lambda k: r.uniform(k))(raw))
        for call in (lambda: r.normal(typed, (2,)), lambda: r.split(typed), lambda: r.gamma(typed, 2.0),
                     lambda: r.fold_in(typed, 3)):
            assert _record(call) == []
    with jax.legacy_prng_key("warn"):
        assert len(_record(lambda: jax.random.beta(jax.random.PRNGKey(0), 2.0, 3.0))) == 1
    with funcad.legacy_prng_key("error"):
        with pytest.raises(ValueError) as info:
            r.fold_in(raw, 1)
        with pytest.raises(ValueError) as jinfo, jax.legacy_prng_key("error"):
            jax.random.fold_in(jax.random.PRNGKey(0), 1)
        assert str(info.value) == str(jinfo.value).replace("jax.random", "funcad.random")
        np.testing.assert_array_equal(r.key_data(r.split(typed)), jax.random.key_data(
            jax.random.split(jax.random.key(0))))
    assert funcad.config.legacy_prng_key == "allow"
    funcad.config.update("jax_legacy_prng_key", "error")
    try:
        with pytest.raises(ValueError):
            r.uniform(raw)
    finally:
        funcad.config.update("jax_legacy_prng_key", "allow")
    with pytest.raises(funcad.FuncadTypeError, match="legacy_prng_key"):
        funcad.config.update("legacy_prng_key", "sometimes")


def _cancel(np_):
    return lambda x: (x + np_.float32(1e8)) - np_.float32(1e8)


def test_compiler_options_fast_math_takes_effect_for_that_compile_only():
    x = np.array([1.0, 2.0, 3.0], np.float32)
    f = funcad.jit(_cancel(np))
    lowered, jlowered = f.lower(x), jax.jit(_cancel(jnp)).lower(x)
    # IEEE float32: x + 1e8 rounds x away (zeros); fast math lets LLVM reassociate it
    # back (x). jaxlib 0.12's XLA keeps IEEE by default; older ones fold it either way.
    want_plain = jlowered.compile()(x)
    want_fast = jlowered.compile({"xla_cpu_enable_fast_math": True})(x)
    fast = lowered.compile({"xla_cpu_enable_fast_math": True})
    np.testing.assert_array_equal(fast(x), want_fast)
    np.testing.assert_array_equal(fast(x), x)
    np.testing.assert_array_equal(lowered.compile()(x), want_plain)
    np.testing.assert_array_equal(f(x), want_plain)  # the jit cache has the plain executable
    np.testing.assert_array_equal(lowered.compile({"xla_cpu_enable_fast_math": False})(x), want_plain)
    if tuple(map(int, jax.__version__.split(".")[:2])) >= (0, 12):
        np.testing.assert_array_equal(want_plain, np.zeros(3, np.float32))  # so the option did act


def test_compiler_options_errors_are_jaxs():
    lowered = funcad.jit(lambda x: x * 2.0).lower(np.ones(2, np.float32))
    with pytest.raises(jax.errors.JaxRuntimeError) as want:
        jax.jit(lambda x: x * 2.0).lower(jnp.ones(2)).compile({"xla_no_such_option": True})
    with pytest.raises(jax.errors.JaxRuntimeError) as got:
        lowered.compile({"xla_no_such_option": True})
    assert str(got.value) == str(want.value) and "No such compile option" in str(got.value)
    with pytest.raises(jax.errors.JaxRuntimeError, match="not a valid bool"):
        lowered.compile({"xla_cpu_enable_fast_math": "maybe"})
    with pytest.raises(ValueError, match="CompilerEffortLevel"):
        lowered.compile({"optimization_level": 3})
    with pytest.raises(TypeError, match="dict"):
        lowered.compile([("xla_cpu_enable_fast_math", True)])
    np.testing.assert_array_equal(lowered.compile({"optimization_level": 9})(np.ones(2, np.float32)), [2.0, 2.0])
    np.testing.assert_array_equal(lowered.compile()(np.ones(2, np.float32)), [2.0, 2.0])  # nothing left over
