"""The default_device and transfer_guard options (and transfer_guard's three directions)
against JAX: names and validation, each guard's errors and log levels, where results are
placed. The multi-device checks run in a child process with 8 simulated CPU devices."""
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
from tests.multidevice import on_eight_devices, on_one_device, run_in_child  # noqa: E402

# funcad writes JAX 0.12's texts; older JAX words some messages differently
JAX_TEXTS = tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 12)

_OPTIONS = ["default_device", "explain_cache_misses", "numpy_dtype_promotion", "transfer_guard",
        "transfer_guard_host_to_device", "transfer_guard_device_to_device",
        "transfer_guard_device_to_host"]
_VALUES = {"explain_cache_misses": True, "numpy_dtype_promotion": "strict", "default_device": "cpu"}


@on_one_device
def test_multidevice_suite():
    run_in_child(__file__)


# ------------------------------------------------------------ the names ----

@on_one_device
@pytest.mark.parametrize("name", _OPTIONS)
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


@on_one_device
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


@on_one_device
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


@on_one_device
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


@on_one_device
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


@on_one_device
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

@on_one_device
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


@on_eight_devices
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


@on_eight_devices
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


# --------------------------------------------------- numpy_dtype_promotion ----
