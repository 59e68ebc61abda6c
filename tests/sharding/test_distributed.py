"""funcad.distributed (two processes over jaxlib's distributed runtime and gloo)
and funcad.debug's sharding pictures.

`test_two_processes_data_parallel_step` starts two copies of this file as
workers on the loopback address, each with 4 CPU devices; together they run
a data-parallel `jit(value_and_grad)` step of an MLP over all 8 devices (and
a shard_map psum), whose results must match the step in one process. The
sharding pictures need 8 devices and run in a child process.
"""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import funcad
import funcad.numpy as fnp
from funcad.sharding import NamedSharding, PartitionSpec as P

from tests.multidevice import on_eight_devices, on_one_device, run_in_child  # noqa: E402
HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


def _problem():
    rng = np.random.default_rng(0)
    f32 = np.float32
    params = {"w1": rng.standard_normal((12, 16)).astype(f32) / 3, "b1": np.zeros(16, f32),
              "w2": rng.standard_normal((16, 3)).astype(f32) / 4, "b2": np.full(3, 0.1, f32)}
    x = rng.standard_normal((64, 12)).astype(f32)
    y = rng.standard_normal((64, 3)).astype(f32)
    return params, x, y


def _loss(p, x, y):
    h = fnp.tanh(x @ p["w1"] + p["b1"])
    return fnp.mean((h @ p["w2"] + p["b2"] - y) ** 2)


def _worker(pid: int, port: int, out: str) -> None:
    funcad.distributed.initialize(f"127.0.0.1:{port}", 2, pid)
    assert funcad.distributed.is_initialized()
    params, x, y = _problem()
    mesh = funcad.make_mesh((8,), ("data",))
    rep, data = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    step = funcad.jit(funcad.value_and_grad(_loss), in_shardings=(rep, data, data),
                      out_shardings=rep)
    loss, grads = step(params, x, y)
    total = funcad.jit(funcad.shard_map(lambda a: funcad.lax.psum(fnp.sum(a), "data"), mesh=mesh,
                                        in_specs=P("data"), out_specs=P()))(x)
    result = {"devices": funcad.device_count(), "local": funcad.local_device_count(),
              "index": funcad.process_index(), "count": funcad.process_count(),
              "loss": float(loss), "total": float(total),
              "shardy": "sdy.mesh @mesh" in step.lower(params, x, y).as_text(),
              "grads": {k: np.asarray(v).tolist() for k, v in grads.items()}}
    with open(out, "w") as fh:
        json.dump(result, fh)
    funcad.distributed.shutdown()
    assert not funcad.distributed.is_initialized()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow  # two processes start, connect and compile: about 15 s on 2 shared cores
@on_one_device
def test_two_processes_data_parallel_step(tmp_path):
    port = _free_port()
    env = dict(os.environ, FUNCAD_BACKEND="cpu", JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=4")
    env.pop("FUNCAD_SHARDING_CHILD", None)
    # run as a script, this file must import the funcad of this checkout
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    outs = [str(tmp_path / f"out{i}.json") for i in range(2)]
    procs = [subprocess.Popen([sys.executable, HERE, "worker", str(i), str(port), outs[i]],
                              cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True) for i in range(2)]
    logs = []
    deadline = time.monotonic() + 240
    for p in procs:
        try:
            logs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("the two worker processes did not finish in time")
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log[-4000:]
        assert "GSPMD sharding propagation is going to be deprecated" not in log
    results = [json.load(open(o)) for o in outs]
    from funcad.lowering.partitioning import shardy_available
    assert [r["shardy"] for r in results] == [shardy_available()] * 2  # partitioned by Shardy

    params, x, y = _problem()
    loss, grads = funcad.jit(funcad.value_and_grad(_loss))(params, x, y)
    for i, r in enumerate(results):
        assert (r["devices"], r["local"], r["index"], r["count"]) == (8, 4, i, 2)
        np.testing.assert_allclose(r["loss"], float(loss), rtol=2e-6)
        np.testing.assert_allclose(r["total"], float(x.sum()), rtol=1e-5)
        for k in params:
            np.testing.assert_allclose(np.array(r["grads"][k], np.float32), np.asarray(grads[k]),
                                       rtol=2e-5, atol=2e-7)


@on_one_device
def test_initialize_errors():
    assert not funcad.distributed.is_initialized()
    funcad.distributed.shutdown()  # a no-op when not initialized
    with pytest.raises(funcad.FuncadError, match="host:port"):
        funcad.distributed.initialize("localhost", 2, 0)
    with pytest.raises(funcad.FuncadError, match="process_id"):
        funcad.distributed.initialize("localhost:1234", 2, 2)
    with pytest.raises(funcad.FuncadError, match="num_processes"):
        funcad.distributed.initialize("localhost:1234", 0, 0)
    with pytest.raises(funcad.FuncadError, match="local_device_ids"):
        funcad.distributed.initialize("localhost:1234", 2, 0, local_device_ids=[1, 2])
    funcad.devices()  # the backend has started: too late to join a distributed program
    with pytest.raises(funcad.FuncadError, match="before any funcad computation"):
        funcad.distributed.initialize("localhost:1234", 2, 0)
    assert not funcad.distributed.is_initialized()


# ------------------------------------------------------ sharding pictures ----

@on_one_device
def test_sharding_pictures_suite():
    run_in_child(__file__)


GRID_4x2 = """\
┌──────────┬──────────┐
│  CPU 0   │  CPU 1   │
├──────────┼──────────┤
│  CPU 2   │  CPU 3   │
├──────────┼──────────┤
│  CPU 4   │  CPU 5   │
├──────────┼──────────┤
│  CPU 6   │  CPU 7   │
└──────────┴──────────┘

"""

ROW_1D = """\
┌───────┬───────┬───────┬───────┐
│CPU 0,1│CPU 2,3│CPU 4,5│CPU 6,7│
└───────┴───────┴───────┴───────┘

"""


@on_eight_devices
def test_visualize_sharding_pictures(capsys):
    mesh = funcad.make_mesh((4, 2), ("x", "y"))
    funcad.debug.visualize_sharding((8, 8), NamedSharding(mesh, P("x", "y")), use_color=False)
    assert capsys.readouterr().out == GRID_4x2
    funcad.debug.visualize_sharding((16,), NamedSharding(mesh, P("x")), use_color=False)
    assert capsys.readouterr().out == ROW_1D
    # columns: each block is held by the four devices that agree on "y"
    funcad.debug.visualize_sharding((8, 8), NamedSharding(mesh, P(None, "y")), use_color=False)
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "┌───────────┬───────────┐" and len(lines) == 12  # 9 rows, 2 rules, a blank line
    assert "│CPU 0,2,4,6│CPU 1,3,5,7│" in lines
    # a replicated array is one block on all devices
    funcad.debug.visualize_sharding((4,), NamedSharding(mesh, P()), use_color=False)
    assert "CPU 0,1,2,3,4,5,6,7" in capsys.readouterr().out


@on_eight_devices
def test_visualize_and_inspect_array_sharding(capsys):
    mesh = funcad.make_mesh((4, 2), ("x", "y"))
    a = funcad.device_put(np.ones((8, 8), np.float32), NamedSharding(mesh, P("x", "y")))
    funcad.debug.visualize_array_sharding(a, use_color=False)
    assert capsys.readouterr().out == GRID_4x2
    seen = []
    funcad.debug.inspect_array_sharding({"a": a, "b": np.ones(3)}, callback=seen.append)
    assert seen[0] == NamedSharding(mesh, P("x", "y")) and seen[1].num_devices == 1
    # results of a sharded jit carry their layout
    out = funcad.jit(lambda v: v * 2, out_shardings=NamedSharding(mesh, P("y")))(a)
    funcad.debug.inspect_array_sharding(out, callback=seen.append)
    assert seen[2].devices_indices_map((8, 8)) == NamedSharding(mesh, P("y")).devices_indices_map(
        (8, 8))
    with pytest.raises(funcad.FuncadError, match="3 dimensions|1 and 2 dimensions"):
        funcad.debug.visualize_sharding((2, 2, 2), NamedSharding(mesh, P()))
    # inside jit: the layout XLA chose, when compiled (tests/sharding/test_sharding_inspect.py)
    funcad.jit(lambda v: funcad.debug.inspect_array_sharding(v, callback=seen.append) or v)(a)
    assert seen[3] == NamedSharding(mesh, P("x", "y"))


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    _worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
