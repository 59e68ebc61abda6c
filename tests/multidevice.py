"""Running a test file again in a child process with N simulated CPU devices.

XLA exposes several CPU devices only when XLA_FLAGS says so before the backend
starts, and the main test process has started it with one; so a multi-device
test file has one test the main run sees, which runs the file again in a fresh
process with the flag set, where the file's other tests run.
"""
from __future__ import annotations

import os
import subprocess
import sys

import pytest

CHILD = os.environ.get("FUNCAD_SHARDING_CHILD") == "1"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The two halves of a multi-device file: its 8-device tests run only in the child
# process, its suite test (which starts that child) and one-device tests only in the
# main test process.
on_eight_devices = pytest.mark.skipif(
    not CHILD, reason="needs 8 simulated CPU devices: runs in the child process that this "
                      "file's suite test starts (tests/multidevice.py)")
on_one_device = pytest.mark.skipif(
    CHILD, reason="runs in the main test process, not in the 8-device child process")


def run_in_child(path: str, n: int = 8) -> None:
    """Run the test file `path` under pytest in a process with `n` CPU devices; fail with its output."""
    env = dict(os.environ, FUNCAD_SHARDING_CHILD="1", FUNCAD_BACKEND="cpu", JAX_PLATFORMS="cpu",
               XLA_FLAGS=(os.environ.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={n}").strip())
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
                           os.path.abspath(path)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    tail = proc.stdout[-6000:] + proc.stderr[-3000:]
    assert proc.returncode == 0, tail
    assert " passed" in proc.stdout and "failed" not in proc.stdout, tail
