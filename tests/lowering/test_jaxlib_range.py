"""The supported jax/jaxlib range, and jit's device plumbing on each path.

funcad probes two fast private jaxlib calls once and falls back to public ones
when a release changes them; these tests force each fallback and check that
results stay exact (float64 kept, inputs copied, not aliased).
"""
import re
from pathlib import Path

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.lowering import xla

ROOT = Path(__file__).resolve().parents[2]


def _bounds(req: str):
    lo = re.search(r">=\s*([\d.]+)", req).group(1)
    hi = re.search(r"<\s*([\d.]+)", req).group(1)
    return xla._version_tuple(lo), xla._version_tuple(hi)


def test_pyproject_declares_the_range_the_code_checks():
    text = (ROOT / "pyproject.toml").read_text()
    deps = re.findall(r'"([^"]+)"', re.search(r"^dependencies = \[(.*)\]", text, re.M).group(1))
    for name in ("jax", "jaxlib"):
        (req,) = [d for d in deps if re.match(rf"{name}\s*[<>=]", d)]
        lo, hi = _bounds(req)
        assert (lo + (0,) * 3)[:3] == xla.SUPPORTED_JAXLIB[0], req
        assert (hi + (0,) * 3)[:3] == xla.SUPPORTED_JAXLIB[1], req


def test_installed_jaxlib_is_in_the_supported_range():
    v = xla._version_tuple(xla.jaxlib_version())
    lo, hi = xla.SUPPORTED_JAXLIB
    assert lo <= v < hi, (v, xla.SUPPORTED_JAXLIB)


@pytest.fixture
def fresh_plumbing():
    """Forget the probed paths and every compiled program before and after."""
    def reset():
        funcad.clear_caches()
        xla._paths.cache_clear()
    reset()
    yield
    reset()


def _program_results():
    x64 = np.linspace(-1.0, 1.0, 5)
    x32 = np.arange(4, dtype=np.float32)
    f = funcad.jit(lambda a, b, n: (fnp.sin(a) * 2.0, b + 1.0, fnp.sum(a) * n))
    out = f(x64, x32, np.int64(3))
    x32[0] = 100.0  # the device copy must not see a later in-place update
    again = f(x64, np.arange(4, dtype=np.float32), np.int64(3))
    g = funcad.jit(funcad.grad(lambda v: fnp.sum(fnp.tanh(v) ** 2)))(x64)
    return out, again, g


def _check(out, again, g):
    x64 = np.linspace(-1.0, 1.0, 5)
    a, b, c = out
    assert a.dtype == np.float64 and b.dtype == np.float32 and c.dtype == np.float64
    np.testing.assert_array_equal(np.asarray(a), np.sin(x64) * 2.0)
    np.testing.assert_array_equal(np.asarray(b), np.arange(4, dtype=np.float32) + 1)
    for u, v in zip(out, again):
        np.testing.assert_array_equal(np.asarray(u), np.asarray(v))
    np.testing.assert_allclose(np.asarray(g), 2 * np.tanh(x64) / np.cosh(x64) ** 2, rtol=1e-12)


def test_fast_paths_where_this_jaxlib_has_them(fresh_plumbing):
    p = xla.plumbing("cpu")
    if xla._version_tuple(p["jaxlib"]) >= (0, 7, 0):
        assert p["put"] == "batched_device_put"
        assert p["results"].startswith("array_result_handler")
    _check(*_program_results())


def test_public_fallbacks_give_the_same_numbers(fresh_plumbing, monkeypatch):
    """As if a jaxlib release had changed both private calls."""
    def changed(*args, **kwargs):
        raise TypeError("incompatible function arguments")
    monkeypatch.setattr(xla, "_put_private", changed)
    monkeypatch.setattr(xla, "_handler_private_checked", changed)
    monkeypatch.setattr(xla, "_handler_private", changed)
    assert xla.plumbing("cpu")["put"] == "jax.device_put"
    assert xla.plumbing("cpu")["results"] == "disassemble_into_single_device_arrays"
    _check(*_program_results())


def test_a_jaxlib_that_cannot_transfer_raises_backend_error(fresh_plumbing, monkeypatch):
    def changed(*args, **kwargs):
        raise TypeError("incompatible function arguments")
    monkeypatch.setattr(xla, "_put_private", changed)
    monkeypatch.setattr(xla, "_put_public", changed)
    with pytest.raises(funcad.BackendError) as info:
        funcad.jit(lambda x: x + 1.0)(np.ones(2))
    msg = str(info.value)
    assert xla.jaxlib_version() in msg and xla._range_text() in msg and "pip install" in msg


def test_backend_error_names_the_range_when_jax_does_not_import(monkeypatch):
    err = xla._unsupported("its Python API lacks what funcad needs", ImportError("no jax.extend"))
    assert isinstance(err, funcad.BackendError)
    assert xla._range_text() in str(err) and "ImportError" in str(err)


def test_ci_tests_the_oldest_supported_release():
    oldest = re.search(r"^OLDEST_JAX := ([\d.]+)", (ROOT / "Makefile").read_text(), re.M).group(1)
    assert xla._version_tuple(oldest) == xla.SUPPORTED_JAXLIB[0]
    assert "make test-oldest" in (ROOT / ".ci" / "run").read_text()
