"""JAX's top-level configuration scopes and utility names: funcad.errors, funcad.dtypes,
funcad.typing, the option scopes (debug_nans, debug_infs, default_matmul_precision,
numpy_rank_promotion, log_compiles, no_tracing, no_execution, enable_checks) and the
process/array helpers, against JAX where it can be the oracle."""
from __future__ import annotations

import logging

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad import dtypes as fd

# ------------------------------------------------------------------ errors ----

_CONVERSIONS = [
    ("bool", lambda x: 1.0 if x > 0 else 2.0, "TracerBoolConversionError"),
    ("int", lambda x: int(x), "ConcretizationTypeError"),
    ("index", lambda x: [1.0, 2.0][x.astype("int32")], "TracerIntegerConversionError"),
    ("asarray", lambda x: np.asarray(x), "TracerArrayConversionError"),
    ("float", lambda x: float(x), "ConcretizationTypeError"),
]


@pytest.mark.parametrize("case", _CONVERSIONS, ids=[c[0] for c in _CONVERSIONS])
def test_tracer_conversion_errors_are_jaxs_classes(case):
    _, f, name = case
    with pytest.raises(getattr(jax.errors, name)):
        jax.jit(f)(1.0)
    with pytest.raises(getattr(funcad.errors, name)) as info:
        funcad.jit(f)(1.0)
    # funcad's classes keep their old bases, so older `except` clauses still work
    assert isinstance(info.value, funcad.ConcretizationError) and isinstance(info.value, TypeError)
    assert "A concrete value was needed" in str(info.value)


def test_error_class_hierarchy_matches_jax():
    for name in funcad.errors.__all__:
        j, f = getattr(jax.errors, name), getattr(funcad.errors, name)
        for base in (TypeError, IndexError):
            if issubclass(j, base):
                assert issubclass(f, base), (name, base)
    assert issubclass(funcad.errors.TracerBoolConversionError, funcad.errors.ConcretizationTypeError)
    assert issubclass(funcad.errors.ConcretizationTypeError, funcad.errors.JAXTypeError)
    assert issubclass(funcad.errors.UnexpectedTracerError, funcad.TracerLeakError)
    assert issubclass(funcad.errors.UnexpectedTracerError, RuntimeError)
    assert not issubclass(funcad.FuncadTypeError, funcad.ConcretizationError)


def test_vmap_bool_and_boolean_mask_errors():
    with pytest.raises(funcad.errors.TracerBoolConversionError, match="different value in each lane"):
        funcad.vmap(lambda x: x if x > 0 else -x)(np.ones(3))
    with pytest.raises(jax.errors.NonConcreteBooleanIndexError):
        jax.jit(lambda x: x[x > 0])(jnp.ones(3))
    with pytest.raises(funcad.errors.NonConcreteBooleanIndexError, match="boolean mask"):
        funcad.jit(lambda x: x[x > 0])(np.ones(3))


def test_leaked_tracer_is_unexpected_tracer_error():
    leaked = []
    funcad.jit(lambda x: leaked.append(x) or x)(1.0)
    with pytest.raises(funcad.errors.UnexpectedTracerError, match="finished"):
        fnp.sin(leaked[0])


# ------------------------------------------------------------------ dtypes ----

def test_dtypes_names_cover_jax():
    names = {n for n in dir(jax.dtypes) if not n.startswith("_")}
    assert names - set(fd.__all__) == set()
    assert fd.float0 == jax.dtypes.float0 and np.dtype(fd.bfloat16) == np.dtype(jnp.bfloat16)


@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint16, np.float32, np.complex64,
                                ml_dtypes.bfloat16, ml_dtypes.int4, ml_dtypes.float8_e4m3fn,
                                ml_dtypes.float4_e2m1fn, ml_dtypes.int2])
def test_dtype_queries_match_jax(dt):
    assert fd.itemsize_bits(dt) == jax.dtypes.itemsize_bits(dt)
    assert fd.scalar_type_of(np.zeros(2, dt)) is jax.dtypes.scalar_type_of(jnp.zeros(2, dt))
    for abstract in (np.floating, np.integer, np.signedinteger, np.inexact, np.number, np.bool_):
        assert fd.issubdtype(dt, abstract) == jax.dtypes.issubdtype(dt, abstract), abstract
    assert fd.finfo is not None and fd.iinfo is not None
    if dt in (ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float4_e2m1fn, np.float32):
        assert float(fd.finfo(dt).eps) == float(jax.dtypes.finfo(dt).eps)


def test_canonicalize_and_result_type_match_jax_x32_and_x64():
    cases = [(np.float32, 2.0), (np.int8, 3), (np.int8, np.uint8), (np.int32, np.int64), (2.0,),
             (np.bfloat16 if hasattr(np, "bfloat16") else ml_dtypes.bfloat16, 1.0), (np.complex64, np.float64)]
    for x64 in (True, False):
        with jax.enable_x64(x64), funcad.enable_x64(x64):
            for dt in (np.float64, np.int64, np.uint64, np.complex128, np.float16, float, int, bool):
                assert fd.canonicalize_dtype(dt) == jax.dtypes.canonicalize_dtype(dt), (x64, dt)
            for args in cases:
                got = fd.result_type(*args, return_weak_type_flag=True)
                want = jax.dtypes.result_type(*args, return_weak_type_flag=True)
                assert (np.dtype(got[0]), got[1]) == (np.dtype(want[0]), want[1]), (x64, args)
    # promotion is funcad's (NumPy's) where JAX's lattice differs
    assert fd.result_type(np.float16, np.int64) == np.float64
    assert fd.result_type(np.int32, np.float32) == np.float64
    with pytest.raises(jax.dtypes.TypePromotionError):
        jax.dtypes.result_type(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)
    with pytest.raises(fd.TypePromotionError, match="no available implicit dtype promotion"):
        fd.result_type(ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2)
    assert issubclass(fd.TypePromotionError, ValueError)


def test_key_dtypes_are_extended_prng_keys():
    jk, fk = jax.random.key(0), funcad.random.key(0)
    for d, k in ((jax.dtypes, jk), (fd, fk)):
        assert d.issubdtype(k.dtype, d.prng_key) and d.issubdtype(k.dtype, d.extended)
        assert not d.issubdtype(k.dtype, np.integer) and not d.issubdtype(np.float32, d.extended)
        assert d.issubdtype(d.prng_key, d.extended) and not d.issubdtype(d.extended, d.prng_key)
    assert fd.canonicalize_dtype(fk.dtype, allow_extended_dtype=True) == fk.dtype


# ------------------------------------------------------------------ typing ----

def test_typing_arraylike_and_dtypelike():
    from funcad.typing import ArrayLike, DTypeLike
    values = [1.5, 3, True, 1j, np.ones(2), np.float32(1), fnp.ones(2),
              funcad.jit(lambda v: v)(np.ones(2)), [1.0], "a", None]
    got = [isinstance(v, ArrayLike) for v in values]
    want = [isinstance(v, jax.typing.ArrayLike) for v in values[:6]] + [True, True, False, False, False]
    assert got == want
    assert DTypeLike is not None and set(jax.typing.__dict__) >= {"ArrayLike", "DTypeLike"}
    seen = []
    funcad.jit(lambda x: seen.append(isinstance(x, ArrayLike)) or x)(1.0)
    assert seen == [True]


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

@pytest.mark.filterwarnings("ignore:jax.process", "ignore:funcad.host")
def test_process_helpers_match_jax():
    with pytest.warns(UserWarning, match="funcad.host_count has been renamed to funcad.process_count"):
        funcad.host_count()
    assert funcad.host_count() == jax.host_count() == 1  # (both warn: renamed)
    assert funcad.host_id() == jax.host_id() == 0
    assert funcad.host_ids() == jax.host_ids() == [0]
    assert funcad.process_indices() == jax.process_indices() == [0]


def test_device_class_live_arrays_and_copy_to_host_async():
    assert all(isinstance(d, funcad.Device) for d in funcad.devices())
    assert not isinstance("cpu", funcad.Device)
    x = funcad.device_put(np.arange(3.0))
    assert any(a is x for a in funcad.live_arrays()) and any(a is x for a in funcad.live_arrays("cpu"))
    x.delete()
    assert not any(a is x for a in funcad.live_arrays())
    y = funcad.jit(lambda v: v * 2)(np.ones(2))
    tree = {"y": y, "n": 3, "h": np.ones(1)}
    assert funcad.copy_to_host_async(tree) is tree
    np.testing.assert_array_equal(np.asarray(y), [2.0, 2.0])


def test_print_environment_info(capsys):
    assert funcad.print_environment_info() is None
    out = capsys.readouterr().out
    for key in ("funcad:", "jax:", "jaxlib:", "numpy:", "python:", "devices:"):
        assert key in out
    assert funcad.print_environment_info(return_string=True) == out[:-1] or "numpy:" in out


def test_new_names_are_in_dir_and_all():
    new = ["Device", "copy_to_host_async", "debug_infs", "debug_nans", "default_matmul_precision",
           "dtypes", "enable_checks", "errors", "host_count", "host_id", "host_ids", "live_arrays",
           "log_compiles", "no_execution", "no_tracing", "numpy_rank_promotion",
           "print_environment_info", "process_indices", "typing"]
    for name in new:
        assert hasattr(jax, name) and name in dir(funcad) and name in funcad.__all__, name
