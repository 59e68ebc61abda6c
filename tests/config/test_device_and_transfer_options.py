"""JAX's remaining configuration scopes: default_device, transfer_guard (and its three
directions), explain_cache_misses, numpy_dtype_promotion; against JAX where it can be the
oracle. The multi-device checks run in a child process with 8 simulated CPU devices."""
from __future__ import annotations

import logging
import os
import sys

import jax
import jax.experimental
import jax.numpy as jnp
import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
import funcad  # noqa: E402
import funcad.numpy as fnp  # noqa: E402
from funcad.core.errors import TransferGuardError  # noqa: E402
from tests.multidevice import CHILD, run_in_child  # noqa: E402

# funcad writes JAX 0.12's texts; older JAX words some messages differently
JAX_TEXTS = tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 12)
child = pytest.mark.skipif(not CHILD, reason="runs in test_multidevice_suite's subprocess")
main = pytest.mark.skipif(CHILD, reason="one-device tests run in the main process")

_NEW = ["default_device", "explain_cache_misses", "numpy_dtype_promotion", "transfer_guard",
        "transfer_guard_host_to_device", "transfer_guard_device_to_device",
        "transfer_guard_device_to_host"]
_VALUES = {"explain_cache_misses": True, "numpy_dtype_promotion": "strict", "default_device": "cpu"}


@main
def test_multidevice_suite():
    run_in_child(__file__)


# ------------------------------------------------------------ the names ----

@main
@pytest.mark.parametrize("name", _NEW)
def test_scopes_config_names_and_validation(name):
    assert hasattr(jax, name) and name in funcad.__all__ and name in dir(funcad)
    value = _VALUES.get(name, "disallow")
    scope = getattr(funcad, name)
    before = funcad.config.read(name)
    with scope(value):
        assert scope.value == value == funcad.config.read("jax_" + name)
    assert scope.value == before
    funcad.config.update("jax_" + name, value)
    try:
        assert getattr(funcad.config, name) == value
    finally:
        funcad.config.update(name, before)
    if name != "explain_cache_misses":  # a bool option takes "0"/"1" strings
        with pytest.raises(funcad.FuncadTypeError, match=name):
            funcad.config.update(name, "nonsense")
    assert name in funcad.config.describe()


@main
def test_transfer_guard_sets_each_direction_and_restores_each():
    with funcad.transfer_guard_device_to_host("log"):
        with funcad.transfer_guard("disallow"):
            assert [funcad.config.read(f"transfer_guard_{d}") for d in
                    ("host_to_device", "device_to_device", "device_to_host")] == ["disallow"] * 3
        assert funcad.transfer_guard_device_to_host.value == "log"
        assert funcad.transfer_guard_host_to_device.value == "allow"
    funcad.config.update("jax_transfer_guard", "log")
    try:
        assert funcad.transfer_guard_device_to_device.value == "log"
    finally:
        funcad.config.update("jax_transfer_guard", "allow")
    assert funcad.transfer_guard_device_to_device.value == "allow"


# ------------------------------------------------------- transfer guards ----

def _jax_error(fn) -> str:
    with pytest.raises(Exception) as info:
        fn()
    return str(info.value)


@main
def test_host_to_device_guard_matches_jax():
    x = np.ones(3, np.float32)
    with jax.transfer_guard("disallow"):
        want = _jax_error(lambda: jax.jit(lambda a: a * 2)(x))
        jax.device_put(x)  # explicit: allowed
    f = funcad.jit(lambda a: a * 2)
    f(x)  # the fast path now knows this signature: the guard must still see the call
    with funcad.transfer_guard("disallow"):
        with pytest.raises(TransferGuardError) as info:
            f(x)
        assert str(info.value) == want
        assert isinstance(info.value, RuntimeError)
        y = funcad.device_put(x)  # explicit: allowed
        np.testing.assert_array_equal(f(y), 2 * x)  # a device argument: no transfer
        np.testing.assert_array_equal(np.asarray(f(y)), 2 * x)  # CPU memory: no transfer
        with pytest.raises(TransferGuardError, match="host-to-device"):
            funcad.grad(funcad.jit(lambda a: a * 3.0))(2.0)  # the jitted call under grad too
    np.testing.assert_array_equal(f(x), 2 * x)
    with funcad.transfer_guard("disallow_explicit"), jax.transfer_guard("disallow_explicit"):
        want = _jax_error(lambda: jax.device_put(x))
        with pytest.raises(TransferGuardError) as info:
            funcad.device_put(x)
        assert str(info.value) == want
        np.testing.assert_array_equal(funcad.device_get(y), x)  # CPU: no transfer


@main
def test_python_scalar_argument_is_a_weak_transfer_as_in_jax():
    # both libraries in 32-bit mode (other test files turn JAX's x64 on for the process)
    jax_x32 = jax.enable_x64(False) if hasattr(jax, "enable_x64") else jax.experimental.disable_x64()
    with funcad.enable_x64(False), jax_x32, jax.transfer_guard("disallow"), \
            funcad.transfer_guard("disallow"):
        want = _jax_error(lambda: jax.jit(lambda a: a * 2)(1.0))
        with pytest.raises(TransferGuardError) as info:
            funcad.jit(lambda a: a * 2)(1.0)
        assert "aval=ShapedArray(float32[], weak_type=True)" in str(info.value)
        if JAX_TEXTS:
            assert str(info.value) == want


@main
@pytest.mark.parametrize("level,implicit,explicit", [("log", True, False), ("log_explicit", True, True)])
def test_log_levels(caplog, level, implicit, explicit):
    x = np.ones(3, np.float32)
    f = funcad.jit(lambda a: a + 1)
    with caplog.at_level(logging.WARNING, logger="funcad"), funcad.transfer_guard_host_to_device(level):
        np.testing.assert_array_equal(f(x), x + 1)
        funcad.device_put(x)
    msgs = [r.getMessage() for r in caplog.records if r.name == "funcad"]
    kind = funcad.devices()[0].default_memory().kind  # 'device' (jaxlib 0.6: 'unpinned_host')
    line = ("host-to-device transfer: aval=ShapedArray(float32[3]), "
            f"dst_sharding=SingleDeviceSharding(device=CpuDevice(id=0), memory_kind={kind})")
    assert msgs == [line] * (int(implicit) + int(explicit))
    assert all(r.levelno == logging.WARNING for r in caplog.records)


class _FakeGpu:
    """A stand-in device whose buffers are not host memory (the guard reads `.platform`)."""
    platform, id = "gpu", 0

    def __repr__(self):
        return "CudaDevice(id=0)"


@main
def test_device_to_host_guard_implicit_and_explicit():
    from funcad.lowering.array import Array
    x = np.arange(3.0, dtype=np.float32)
    real = funcad.device_put(x)

    def on_gpu():  # a device Array as one on a GPU: reading it copies
        return Array(real._buf, real.aval, _FakeGpu())
    text = ("INVALID_ARGUMENT: Disallowed device-to-host transfer: aval=ShapedArray(float32[3]), "
            "sharding=SingleDeviceSharding(device=CudaDevice(id=0), memory_kind=device)")
    with funcad.transfer_guard_device_to_host("disallow"):
        for read in (np.asarray, lambda a: a.tolist(), lambda a: float(a[0]), fnp.sin, str):
            with pytest.raises(TransferGuardError) as info:
                read(on_gpu())
            assert str(info.value) == text
        np.testing.assert_array_equal(funcad.device_get(on_gpu()), x)  # explicit: allowed
        np.testing.assert_array_equal(np.asarray(real), x)  # CPU: never a transfer (as JAX)
    with funcad.transfer_guard_device_to_host("disallow_explicit"):
        with pytest.raises(TransferGuardError, match="device-to-host"):
            funcad.device_get({"a": on_gpu()})
    np.testing.assert_array_equal(np.asarray(on_gpu()), x)
    with jax.transfer_guard_device_to_host("disallow"):  # JAX on CPU: no transfer either
        np.asarray(jnp.ones(3) + 0)


# ---------------------------------------------------------- default_device ----

@main
def test_default_device_on_one_device_and_validation():
    cpu = funcad.devices("cpu")[0]
    g = funcad.jit(lambda a: a * 2)
    g(np.ones(2))
    for dev in (cpu, "cpu"):
        with funcad.default_device(dev):
            out = g(np.ones(2))
            assert out.devices() == {cpu} and funcad.device_put(np.ones(2)).devices() == {cpu}
    assert g._cache_size() == 3  # the setting keys jit's cache (None, the Device, 'cpu')
    with pytest.raises(funcad.FuncadTypeError, match="Device object"):
        funcad.config.update("jax_default_device", 3)
    with pytest.raises(funcad.FuncadTypeError, match="default_device"):
        funcad.config.update("default_device", "tpu7")


@child
def test_default_device_places_jit_results_and_device_put():
    devs = funcad.devices()
    assert len(devs) == 8
    f = funcad.jit(lambda a, b: fnp.sin(a) * b)
    x = np.linspace(0.0, 1.0, 5)
    base = f(x, 2.0)
    assert base.devices() == {devs[0]}
    with funcad.default_device(devs[3]):
        y = f(x, 2.0)
        assert y.devices() == {devs[3]} and y.sharding == funcad.sharding.SingleDeviceSharding(devs[3])
        assert funcad.device_put(x).devices() == {devs[3]}
        assert funcad.device_put(x, devs[5]).devices() == {devs[5]}  # an explicit device wins
        g = funcad.grad(funcad.jit(lambda a: fnp.sum(fnp.sin(a) ** 2)))(x)  # jit under a transform
        np.testing.assert_allclose(g, np.sin(2 * x))
        z = f(y, 3.0)  # its own device's result: no transfer
        assert z.devices() == {devs[3]}
    np.testing.assert_allclose(np.asarray(y), np.asarray(base))
    assert f(x, 2.0).devices() == {devs[0]}
    with jax.default_device(jax.devices()[3]):  # JAX: the same placement
        assert jax.jit(lambda a: a + 1)(x).devices() == {jax.devices()[3]}
        assert jax.device_put(x).devices() == {jax.devices()[3]}


@child
def test_device_to_device_guard_matches_jax():
    devs, jdevs = funcad.devices(), jax.devices()
    x = np.ones(3, np.float32)
    jy = jax.device_put(x, jdevs[1])
    y = funcad.device_put(x, devs[1])
    with jax.default_device(jdevs[1]):
        loose = jax.device_put(x)  # uncommitted on device 1: JAX moves it to the committed one
    on0 = jax.device_put(x, jdevs[0])
    with jax.transfer_guard("disallow"):
        want = _jax_error(lambda: jax.jit(lambda a, b: a + b)(loose, on0))
    with funcad.transfer_guard("disallow"):
        with pytest.raises(TransferGuardError) as info:
            funcad.jit(lambda a: a + 1)(y)  # compiled for device 0: y comes over
        assert str(info.value) == want
        funcad.device_put(y, devs[2])  # explicit: allowed
        with funcad.default_device(devs[1]):
            np.testing.assert_array_equal(funcad.jit(lambda a: a + 1)(y), x + 1)  # no transfer
    with jax.transfer_guard("disallow_explicit"):
        want = _jax_error(lambda: jax.device_put(jy, jdevs[2]))
    with funcad.transfer_guard("disallow_explicit"):
        with pytest.raises(TransferGuardError) as info:
            funcad.device_put(y, devs[2])
        assert str(info.value) == want


# ---------------------------------------------------- explain_cache_misses ----

def _misses(caplog, logger, run) -> list[str]:
    """The explanation lines of each TRACING CACHE MISS record, without the call site
    and function-id lines (which differ between the two libraries' calls)."""
    caplog.clear()
    with caplog.at_level(logging.WARNING, logger=logger):
        run()
    out = []
    for r in caplog.records:
        msg = r.getMessage()
        if msg.startswith("TRACING CACHE MISS"):
            lines = msg.split("\n")[1:]
            out.append("\n".join(l for l in lines if " id=" not in l and "defined at" not in l))
    return out


def _scenario(lib, np_mod):
    def run():
        @lib.jit
        def f(x, y):
            return x
        f(np.ones(3, np.float32), {"a": 1.0})
        f(np.ones(3, np.float32), {"a": 1.0})  # a hit: nothing logged
        f(np.ones(3, np.int32), {"a": 1.0})
        f(np.ones(3, np.int32), {"b": 1.0})
        f(np.ones(3, np.int32), [1.0])
        f(np.float32(1.0), {"a": 1.0})
        with lib.default_matmul_precision("float32"):
            f(np.ones(3, np.float32), {"a": 1.0})
        f(np.ones(3, np.float32), {"a": np.float32(1.0)})
    return run


@main
def test_explain_cache_misses_in_jaxs_words(caplog):
    with jax.explain_cache_misses(True):
        want = _misses(caplog, "jax", _scenario(jax, jnp))
    with funcad.explain_cache_misses(True), funcad.enable_x64(False):
        got = _misses(caplog, "funcad", _scenario(funcad, fnp))
    assert len(got) == 7 and got[0] == "  never seen function:"
    if JAX_TEXTS:
        assert got == want
    assert got[2].endswith("different input pytree:\n  * at input path [0][1], now <class 'dict'> with "
                           "pytree metadata ('b',) and before <class 'dict'> with pytree metadata "
                           "('a',), so the pytree node metadata does not match")
    assert got[1].endswith("different input types:\n  * at x, now i32[3] and before f32[3]")
    with funcad.enable_x64(False):  # off: nothing logged
        assert _misses(caplog, "funcad", _scenario(funcad, fnp)) == []


@main
def test_explain_static_arguments_and_keyword_names(caplog):
    g = funcad.jit(lambda x, n, *rest, scale=1.0: x * n, static_argnums=1)
    with funcad.explain_cache_misses(True):
        got = _misses(caplog, "funcad", lambda: (g(1.0, 2), g(1.0, 3), g(1.0, 3, np.ones(2), scale=2.0),
                                                  g(1.0, 3, np.ones(3), scale=np.ones(2))))
    assert got[1].endswith("different static arguments:\n  * at argument 1, now 3 and before 2")
    assert "* at input path [0], now tuple of length 2 and before tuple of length 1" in got[2]
    h = funcad.jit(lambda x, *rest, scale=1.0: x)
    with funcad.explain_cache_misses(True):
        got = _misses(caplog, "funcad", lambda: (h(1.0, np.ones(2), scale=2.0),
                                                  h(1.0, np.ones(3), scale=np.ones(2))))
    assert got[1].endswith("different input types:\n  * at rest[0], now f64[3] and before f64[2]\n"
                           "  * at scale, now f64[2]{weak_type=False} and before f64[]{weak_type=True}"
                           "https://docs.jax.dev/en/latest/101/type_promotion.html#weak-types")
    with funcad.explain_cache_misses(True):
        assert _misses(caplog, "funcad", lambda: funcad.jit(fnp.sin)(1.0)) == []  # funcad's own


# --------------------------------------------------- numpy_dtype_promotion ----

_PROMOTIONS = [
    ("f32+f16", lambda m: m.add(m.ones(2, np.float32), np.ones(2, np.float16))),
    ("i32+f32", lambda m: m.ones(2, np.int32) + m.ones(2, np.float32)),
    ("f32+py_float", lambda m: m.ones(2, np.float32) + 1.0),
    ("i32+py_float", lambda m: m.ones(2, np.int32) + 1.0),
    ("i8+py_int", lambda m: m.ones(2, np.int8) * 3),
    ("c64+py_float", lambda m: m.ones(2, np.complex64) * 2.0),
    ("f32*True", lambda m: m.ones(2, np.float32) * True),
    ("u8+i8", lambda m: m.ones(2, np.uint8) + m.ones(2, np.int8)),
    ("result_type", lambda m: m.result_type(np.float32, np.int32)),
    ("result_type_weak", lambda m: m.result_type(np.float32, 1.0)),
    ("promote_types", lambda m: m.promote_types(np.float32, np.float64)),
    ("where", lambda m: m.where(True, m.ones(2, np.float32), m.ones(2, np.int32))),
    ("where_scalar", lambda m: m.where(m.ones(2) > 0, m.ones(2, np.float32), 0.0)),
    ("concatenate", lambda m: m.concatenate([m.ones(2, np.float32), m.ones(2, np.int32)])),
    ("matmul", lambda m: m.ones(2, np.float32) @ m.ones(2, np.int32)),
    ("astype", lambda m: m.ones(2, np.float32).astype(np.int32)),
    ("mean", lambda m: m.mean(m.ones(3, np.float32) ** 2)),
    ("at_set", lambda m: m.ones(3, np.float32).at[0].set(2.0)),
    ("i32/py_int", lambda m: m.ones(3, np.int32) / 2),
]


@main
@pytest.mark.parametrize("case", _PROMOTIONS, ids=[c[0] for c in _PROMOTIONS])
def test_strict_promotion_matches_jax(case):
    _, fn = case
    outcome = []
    for lib, m in ((jax, jnp), (funcad, fnp)):
        with lib.numpy_dtype_promotion("strict"), funcad.enable_x64(False):
            try:
                r = fn(m)
                outcome.append(("ok", np.dtype(getattr(r, "dtype", r))))
            except Exception as e:  # noqa: BLE001
                outcome.append((type(e).__name__, None))
    assert outcome[0] == outcome[1]
    with funcad.numpy_dtype_promotion("standard"):
        fn(fnp)  # standard: always promotes


@main
def test_strict_promotion_error_text_and_jit_key():
    with funcad.numpy_dtype_promotion("strict"):
        with pytest.raises(funcad.dtypes.TypePromotionError) as info:
            fnp.ones(2, np.int32) + 1.5
        with pytest.raises(funcad.dtypes.TypePromotionError):
            funcad.dtypes.result_type(np.int8, np.uint8)
    assert str(info.value) == (
        "Input dtypes ('int32', \"<class 'float'>\") have no available implicit dtype promotion "
        "path when jax_numpy_dtype_promotion=strict. Try explicitly casting inputs to the desired "
        "output type, or set jax_numpy_dtype_promotion=standard.")
    assert isinstance(info.value, ValueError)
    g = funcad.jit(lambda a, b: a + b)
    a, b = np.ones(2, np.float32), np.ones(2, np.int32)
    assert g(a, b).dtype == np.float64  # traced and cached under 'standard'
    with funcad.numpy_dtype_promotion("strict"):
        with pytest.raises(funcad.dtypes.TypePromotionError):
            g(a, b)  # the cache keys on the setting: traced again, and refused
        np.testing.assert_array_equal(g(a, a), 2 * a)
    assert g(a, b).dtype == np.float64
