"""Lazily loaded namespaces (a fast cold start).

`import funcad, funcad.numpy` leaves the heavier namespaces and primitive families
unloaded; they load on first attribute access (PEP 562 module __getattr__), and to
a user they look the same as eagerly imported ones: `dir()` lists them,
`from funcad.numpy import linalg` and `import funcad.numpy.linalg` work, and every
name of their `__all__` resolves. Each check runs in a fresh interpreter, since the
test process itself has long since loaded everything.
"""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

# Modules a bare `import funcad, funcad.numpy` must not load.
LAZY = ["funcad.numpy.fft", "funcad.numpy.linalg", "funcad.lax.linalg", "funcad.random", "funcad.nn",
        "funcad.scipy", "funcad.viz", "funcad.ops", "funcad.image", "funcad.profiler", "funcad.transforms.sparsity", "funcad.primitives.decompositions",
        "funcad.primitives.eig", "funcad.primitives.schur", "funcad.primitives.tridiagonal",
        "jax", "jaxlib"]
# (parent, child): namespaces reached as attributes of their parent.
CHILDREN = [("funcad", "random"), ("funcad", "nn"), ("funcad", "scipy"), ("funcad", "viz"),
            ("funcad", "ops"), ("funcad", "image"), ("funcad", "profiler"),
            ("funcad.numpy", "fft"), ("funcad.numpy", "linalg"), ("funcad.lax", "linalg")]

_PROBE = r"""
import importlib, json, sys
import funcad, funcad.numpy
out = {"loaded": sorted(m for m in sys.modules if m.split(".")[0] in ("funcad", "jax", "jaxlib"))}
children = %(children)r
out["dir_before"] = {p + "." + c: c in dir(importlib.import_module(p)) for p, c in children}
from funcad.numpy import linalg                      # from-import of a lazy child
from funcad.numpy.fft import rfft                    # a name inside one
import funcad.lax.linalg as lla                      # import statement of one
out["from_import"] = [linalg.__name__, rfft.__module__.startswith("funcad.numpy.fft"), lla.__name__]
out["same_object"] = funcad.numpy.linalg is sys.modules["funcad.numpy.linalg"]
out["unresolved"] = {}
for p, c in children:
    mod = getattr(importlib.import_module(p), c)
    out["unresolved"][p + "." + c] = [n for n in mod.__all__ if not hasattr(mod, n)]
out["dir_after"] = {p + "." + c: c in dir(importlib.import_module(p)) for p, c in children}
try:
    funcad.numpy.no_such_function
except AttributeError as e:
    out["missing"] = str(e)
print(json.dumps(out))
"""


def _fresh(code: str) -> str:
    env = {k: v for k, v in __import__("os").environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(ROOT)
    res = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True,
                         text=True, timeout=300)
    assert res.returncode == 0, res.stderr[-3000:]
    return res.stdout


@pytest.fixture(scope="module")
def probe() -> dict:
    return json.loads(_fresh(_PROBE % {"children": CHILDREN}).splitlines()[-1])


def test_import_leaves_the_lazy_modules_unloaded(probe):
    loaded = set(probe["loaded"])
    assert "funcad.numpy" in loaded and "funcad.lax" in loaded
    eager = [m for m in LAZY if m in loaded]
    assert not eager, f"`import funcad, funcad.numpy` loaded {eager}"


def test_dir_lists_lazy_children_before_and_after_loading(probe):
    assert all(probe["dir_before"].values()), probe["dir_before"]
    assert all(probe["dir_after"].values()), probe["dir_after"]


def test_imports_of_lazy_children_work(probe):
    assert probe["from_import"] == ["funcad.numpy.linalg", True, "funcad.lax.linalg"]
    assert probe["same_object"]


def test_every_exported_name_of_a_lazy_namespace_resolves(probe):
    assert set(probe["unresolved"]) == {f"{p}.{c}" for p, c in CHILDREN}
    assert not any(probe["unresolved"].values()), probe["unresolved"]


def test_unknown_names_still_raise_attribute_error(probe):
    assert "no_such_function" in probe["missing"]


def test_lazy_namespaces_work_under_jit_in_a_fresh_process():
    code = ("import numpy as np, funcad, funcad.numpy as fnp\n"
            "a = np.array([[4.0, 1.0], [1.0, 3.0]])\n"
            "f = funcad.jit(lambda m: fnp.linalg.inv(m) @ funcad.lax.linalg.cholesky(m))\n"
            "print(repr(np.asarray(f(a)).round(6).tolist()))")
    import numpy as np
    a = np.array([[4.0, 1.0], [1.0, 3.0]])
    want = (np.linalg.inv(a) @ np.linalg.cholesky(a)).round(6).tolist()
    assert eval(_fresh(code).splitlines()[-1]) == want
