"""JAX's ecosystem on funcad: programs written the way each library's README and
docs show (tests/ecosystem/programs/, named <library>_<topic>.py) print the same
numbers under JAX and under the drop-in (`python -m funcad.as_jax`).

Both sides run in JAX's 32-bit mode (JAX_ENABLE_X64=0). Needs the libraries of
requirements.txt: `make ecosystem` installs them in .venv-eco and runs this file;
without them every test skips, naming the missing library.
"""
from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.as_jax.test_programs import numbers  # noqa: E402  (the corpus' own comparison)

pytestmark = pytest.mark.ecosystem

PROGRAMS = Path(__file__).resolve().parent / "programs"
NAMES = sorted(p.stem for p in PROGRAMS.glob("*.py"))

# name -> (rtol, atol, why)
TOLERANCE: dict[str, tuple[float, float, str]] = {}
# Programs whose library fails under the pinned JAX itself: name -> why. They run (and
# must pass) again as soon as JAX runs them.
JAX_FAILS: dict[str, str] = {
    "distrax_dists": "tensorflow_probability 0.25's JAX substrate fails to import under JAX 0.12 "
                     "(it writes jax.interpreters.xla.pytype_aval_mappings, gone from JAX); "
                     "see docs/ecosystem/distrax.md",
}


def _run(args: list[str]) -> subprocess.CompletedProcess:
    env = dict(os.environ, JAX_ENABLE_X64="0", JAX_PLATFORMS="cpu", PYTHONHASHSEED="0")
    env.pop("FUNCAD_ENABLE_X64", None)
    return subprocess.run([sys.executable, *args], env=env, capture_output=True, text=True,
                          timeout=900, cwd=PROGRAMS)


@pytest.mark.parametrize("name", NAMES)
def test_program_prints_what_jax_prints(name):
    library = name.split("_")[0]
    if importlib.util.find_spec(library) is None:
        pytest.skip(f"{library} is not installed (make ecosystem installs it)")
    ref = _run([f"{name}.py"])
    if ref.returncode != 0 and name in JAX_FAILS:
        pytest.xfail(JAX_FAILS[name])
    assert ref.returncode == 0 and ref.stdout, f"{name} fails with JAX itself:\n{ref.stderr[-4000:]}"
    got = _run(["-m", "funcad.as_jax", f"{name}.py"])
    assert got.returncode == 0, f"{name} fails on funcad:\n{got.stderr[-4000:]}"
    want, want_text = numbers(ref.stdout)
    have, have_text = numbers(got.stdout)
    assert have_text == want_text, f"{name} prints other text:\nJAX:\n{ref.stdout}\nfuncad:\n{got.stdout}"
    assert have.shape == want.shape, f"{name} prints {have.size} numbers, JAX {want.size}"
    rtol, atol, _ = TOLERANCE.get(name, (1e-4, 1e-5, ""))
    np.testing.assert_allclose(have, want, rtol=rtol, atol=atol,
                               err_msg=f"{name}:\nJAX:\n{ref.stdout}\nfuncad:\n{got.stdout}")
