"""JAX's sharding programs, unmodified, under JAX and under funcad's drop-in (8 CPU devices).

tests/sharded_programs/ holds the programs of JAX's sharding tutorial (its Explicit,
Auto and shard_map sections: types, results, JAX's errors, shardings) and a test
copy of JAX's examples/spmd_mnist_classifier_fromscratch.py (synthetic data of
MNIST's shapes, small sizes). Each runs in a fresh process with real JAX and with
`python -m funcad.as_jax`; what they print must agree: the tutorial's output line
for line, the MNIST example's accuracies, types and shardings exactly and its
parameter sums to float32 rounding (the partitioned reductions may add in another
order).
"""
from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

from tests.multidevice import ROOT

PROGRAMS = os.path.join(ROOT, "tests", "sharded_programs")


def _run(lib: str, name: str) -> list[str]:
    env = dict(os.environ, FUNCAD_BACKEND="cpu", JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8").strip())
    cmd = [sys.executable] + (["-m", "funcad.as_jax"] if lib == "funcad" else []) + \
        [os.path.join(PROGRAMS, name)]
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{lib}: {proc.stderr[-4000:]}"
    return proc.stdout.splitlines()


@pytest.mark.slow
def test_sharding_tutorial_prints_what_jax_prints():
    assert _run("funcad", "sharding_tutorial.py") == _run("jax", "sharding_tutorial.py")


@pytest.mark.slow
def test_spmd_mnist_example_matches_jax():
    got, want = _run("funcad", "spmd_mnist_classifier_fromscratch.py"), \
        _run("jax", "spmd_mnist_classifier_fromscratch.py")
    assert len(got) == len(want) and any("param types" in line for line in want)
    number = re.compile(r"-?\d+\.\d+(?:e-?\d+)?")
    for g, w in zip(got, want):
        if g.startswith("param sums"):
            for a, b in zip(number.findall(g), number.findall(w)):
                assert abs(float(a) - float(b)) <= 1e-5 * max(1.0, abs(float(b))), (g, w)
        else:
            assert g == w
