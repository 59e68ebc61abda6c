"""The promise, tested directly: JAX programs print the same numbers with funcad.

Each file in tests/programs/ is a small JAX program written as a JAX user
writes it. It runs once with real JAX and once unmodified under funcad's drop-in
(`funcad.as_jax`; tests/programs/_run.py: the library is imported once per side, each
program runs in a forked child so config updates cannot leak); the numbers
both print are parsed and compared, float32 tolerance unless a program's
TOLERANCE entry says why it needs more, and the text between the numbers
(dtypes, shapes, labels) must be the same.

funcad's own default is x64 on; JAX's is off. Both runs get
JAX_ENABLE_X64=0 (JAX's default anyway), so the programs see JAX's 32-bit
mode unless they switch x64 on themselves.

Only the programs of the selected tests run, so the lead's `SLOW` list in
conftest.py takes heavy programs out of the default run.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PROGRAMS = Path(__file__).resolve().parents[1] / "programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py") if not p.stem.startswith("_"))

# name -> (rtol, atol, why)
TOLERANCE: dict[str, tuple[float, float, str]] = {}

# name -> why funcad cannot run it yet (strict: the test fails once it passes)
XFAIL: dict[str, str] = {}

_NUMBER = re.compile(r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?|[-+]?\b(?:nan|inf)\b")


def numbers(text: str) -> tuple[np.ndarray, str]:
    """The numbers printed in `text` and the text around them without whitespace (NumPy
    pads array elements to a common width, which depends on the digits)."""
    values = np.array([float(m) for m in _NUMBER.findall(text)], dtype=np.float64)
    skeleton = "".join(_NUMBER.sub("#", text).split())
    return values, skeleton


def _run_side(lib: str, out: Path, names: list[str]) -> subprocess.Popen:
    env = dict(os.environ, JAX_ENABLE_X64="0", JAX_PLATFORMS="cpu", PYTHONHASHSEED="0")
    env.pop("FUNCAD_ENABLE_X64", None)
    return subprocess.Popen([sys.executable, str(PROGRAMS / "_run.py"), lib, str(out), *names],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)


@pytest.fixture(scope="module")
def outputs(request, tmp_path_factory):
    """Run the selected programs with both libraries, both sides at once."""
    selected = sorted({item.callspec.params["name"] for item in request.session.items
                       if item.fspath == request.fspath and hasattr(item, "callspec")
                       and "name" in item.callspec.params})
    out = tmp_path_factory.mktemp("programs")
    procs = {lib: _run_side(lib, out / lib, selected) for lib in ("jax", "funcad")}
    for lib, proc in procs.items():
        log, _ = proc.communicate(timeout=1800)
        assert proc.returncode == 0, f"the {lib} runner failed:\n{log.decode()}"
    return out


def _read(out: Path, lib: str, name: str) -> tuple[int, str, str]:
    rc = int((out / lib / f"{name}.rc").read_text().split()[0])
    return rc, (out / lib / f"{name}.out").read_text(), (out / lib / f"{name}.err").read_text()


@pytest.mark.parametrize("name", [
    pytest.param(n, marks=pytest.mark.xfail(reason=XFAIL[n], strict=True)) if n in XFAIL else n
    for n in NAMES])
def test_program_prints_what_jax_prints(name, outputs):
    rc, jax_out, jax_err = _read(outputs, "jax", name)
    assert rc == 0 and jax_out, f"{name} fails with JAX itself:\n{jax_err}"
    rc, out, err = _read(outputs, "funcad", name)
    assert rc == 0, f"{name} fails with funcad:\n{err[-4000:]}"
    want, want_text = numbers(jax_out)
    got, got_text = numbers(out)
    assert got_text == want_text, f"{name} prints other text:\nJAX:\n{jax_out}\nfuncad:\n{out}"
    assert got.shape == want.shape, f"{name} prints {got.size} numbers, JAX {want.size}"
    rtol, atol, _ = TOLERANCE.get(name, (1e-4, 1e-5, ""))
    np.testing.assert_allclose(got, want, rtol=rtol, atol=atol,
                               err_msg=f"{name}:\nJAX:\n{jax_out}\nfuncad:\n{out}")


def test_numbers_parses_jax_array_printing():
    values, text = numbers("loss 1.5e-03 [ 1. -2.  nan] int32 (3, 4)\nArray([ 0.5 , -1.], dtype=float32)")
    np.testing.assert_array_equal(values[[0, 1, 2, 4, 5, 6, 7, 8, 9]], [1.5e-3, 1, -2, 32, 3, 4, .5, -1, 32])
    assert np.isnan(values[3]) and text == "loss#[###]int#(#,#)Array([#,#],dtype=float#)"
