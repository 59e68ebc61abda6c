"""The persistent compilation cache (funcad.experimental.compilation_cache): a second process
loads the compiled program instead of compiling it, the size and time thresholds, and the API."""
from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import funcad
from funcad.core.errors import FuncadTypeError

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

_CACHE_CHILD = """
import sys, numpy as np, funcad, funcad.numpy as fnp
from funcad.experimental.compilation_cache import compilation_cache as cc
from funcad.lowering import compilation_cache as pc, xla
funcad.config.update("jax_persistent_cache_min_compile_time_secs", 0)
cc.set_cache_dir(sys.argv[1])
if sys.argv[2] == "load":  # the second process must not compile: every compile now refuses
    def refuse(*a, **k):
        raise AssertionError("compiled instead of loading from the cache")
    xla.BIG_PROGRAM_LINES = 0   # so every compile goes through _on_big_stack
    xla._on_big_stack = refuse
f = funcad.jit(lambda x: fnp.tanh(x) @ x.T + 1)
print(float(f(np.ones((3, 3))).sum()), pc.stats["hits"], pc.stats["writes"])
"""


def test_second_process_loads_from_the_persistent_cache(tmp_path):
    def run(mode):
        proc = subprocess.run([sys.executable, "-c", _CACHE_CHILD, str(tmp_path), mode], cwd=ROOT,
                              capture_output=True, text=True, timeout=300,
                              env=dict(os.environ, FUNCAD_BACKEND="cpu"))
        assert proc.returncode == 0, proc.stderr[-3000:]
        return proc.stdout.split()
    value, hits, writes = run("store")
    assert (hits, writes) == ("0", "1") and len(os.listdir(tmp_path)) == 1
    value2, hits, writes = run("load")
    assert (hits, writes) == ("1", "0") and value2 == value
    assert float(value) == pytest.approx(float((np.tanh(np.ones((3, 3))) @ np.ones((3, 3)) + 1).sum()))


def test_cache_thresholds_and_api(tmp_path):
    from funcad.experimental.compilation_cache import compilation_cache as cc
    from funcad.lowering import compilation_cache as pc
    assert set(cc.__all__) >= {"set_cache_dir", "reset_cache"} and cc.is_initialized()
    assert "compilation_cache" in funcad.experimental.__all__
    old = {k: funcad.config.read(k) for k in ("compilation_cache_dir", "persistent_cache_min_compile_time_secs",
                                               "persistent_cache_min_entry_size_bytes")}
    try:
        cc.set_cache_dir(tmp_path)
        assert funcad.config.jax_compilation_cache_dir == str(tmp_path)
        funcad.config.update("persistent_cache_min_compile_time_secs", 1e9)  # nothing compiles that slowly
        funcad.jit(lambda x: x * 7.25 - 1)(1.0)
        assert os.listdir(tmp_path) == []
        funcad.config.update("persistent_cache_min_compile_time_secs", 0)
        funcad.config.update("jax_persistent_cache_min_entry_size_bytes", 10 ** 9)  # all too small
        funcad.jit(lambda x: x * 7.5 - 2)(1.0)
        assert os.listdir(tmp_path) == []
        funcad.config.update("persistent_cache_min_entry_size_bytes", 0)
        funcad.jit(lambda x: x * 7.75 - 3)(1.0)
        assert len(os.listdir(tmp_path)) == 1
        cc.reset_cache()
        assert pc.stats == {"hits": 0, "misses": 0, "writes": 0}
        with pytest.raises(FuncadTypeError, match="directory path"):
            funcad.config.update("compilation_cache_dir", 3)
    finally:
        for k, v in old.items():
            funcad.config.update(k, v)
        cc.reset_cache()
