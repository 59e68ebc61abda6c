"""funcad.experimental.mesh_utils and multihost_utils against JAX's.

Three parts: checks in the main process (one device: errors, the one-process
results); a child process with 8 CPU devices (tests/multidevice.py) that
compares device orders and values with jax's functions on the same devices;
and two worker processes of 4 devices each, joined with
funcad.distributed.initialize, that gather, broadcast and convert arrays
across processes.
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
from funcad.experimental import mesh_utils as mu, multihost_utils as mh
from funcad.sharding import Mesh, NamedSharding, PartitionSpec as P

from tests.multidevice import on_eight_devices, on_one_device, run_in_child

HERE = os.path.abspath(__file__)
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(HERE)))


# ------------------------------------------------------------ one process ----

@on_one_device
def test_one_process_values_and_errors():
    x = np.arange(6.0).reshape(2, 3)
    np.testing.assert_array_equal(mh.process_allgather(x), x[None])
    np.testing.assert_array_equal(mh.process_allgather(x, tiled=True), x)
    assert mh.process_allgather(2.5).shape == (1,) and mh.process_allgather(2.5, tiled=True).shape == ()
    out = mh.broadcast_one_to_all({"a": x, "n": 3})
    assert isinstance(out["n"], np.ndarray) and out["n"] == 3
    np.testing.assert_array_equal(out["a"], x)
    mh.sync_global_devices("step 1")
    mh.assert_equal({"a": x, "b": 1.0}, "differs")
    assert mh.reached_preemption_sync_point(5) is False
    with pytest.raises(RuntimeError, match="not initialized"):
        with mh.live_devices(funcad.devices()):
            pass
    d = funcad.devices()
    with pytest.raises(ValueError, match=r"Number of devices 1 must equal the product of mesh_shape \(2, 2\)"):
        mu.create_device_mesh((2, 2))
    with pytest.raises(ValueError, match="should be a sequence of ints"):
        mu.create_device_mesh(("a", 1))
    with pytest.raises(ValueError, match="does not have attribute slice_index"):
        mu.create_hybrid_device_mesh((1,), (1,))
    with pytest.raises(ValueError, match=r"Number of slices 1 must equal the product of dcn_mesh_shape"):
        mu.create_hybrid_device_mesh((1,), (2,), process_is_granule=True)
    assert mu.create_device_mesh([1.0, "1"], d).shape == (1, 1)
    mesh = Mesh(np.array(d), ("x",))
    with pytest.raises(ValueError, match="`None` is not a valid input to the pspecs"):
        mh.host_local_array_to_global_array(x, mesh, None)
    with pytest.raises(ValueError, match="names the axis 'z'"):
        mh.host_local_array_to_global_array(x, mesh, P("z"))
    with pytest.raises(funcad.FuncadError, match="must be one Sharding or a tree"):
        mh.global_array_to_host_local_array({"a": x}, mesh, [P()])
    # a tree prefix of specs, identity values, and grad through both conversions
    g = mh.host_local_array_to_global_array({"a": x, "b": [x[0]]}, mesh, {"a": P("x"), "b": P()})
    np.testing.assert_array_equal(g["a"], x)
    loss = lambda v: fnp.sum(mh.global_array_to_host_local_array(  # noqa: E731
        mh.host_local_array_to_global_array(v, mesh, P("x")), mesh, P("x")) ** 3)
    np.testing.assert_allclose(funcad.grad(loss)(x), 3 * x ** 2)
    np.testing.assert_allclose(funcad.jit(funcad.grad(loss))(x), 3 * x ** 2)


# ------------------------------------------------------- 8 CPU devices ----

@on_one_device
def test_multidevice_suite():
    run_in_child(__file__)


def _ids(a) -> list:
    return np.vectorize(lambda d: d.id, otypes=[int])(np.asarray(a, dtype=object)).tolist()


@on_eight_devices
def test_device_meshes_match_jax():
    import jax
    from jax.experimental import mesh_utils as jmu
    fd, jd = funcad.devices(), jax.devices()
    assert [d.id for d in fd] == [d.id for d in jd] and len(fd) == 8
    for shape in [(8,), (2, 4), (4, 2), (2, 2, 2), (1, 8, 1)]:
        assert _ids(mu.create_device_mesh(shape)) == _ids(jmu.create_device_mesh(shape)), shape
        assert _ids(mu.create_device_mesh(shape, fd[::-1], contiguous_submeshes=True)) == \
            _ids(jmu.create_device_mesh(shape, jd[::-1], contiguous_submeshes=True)), shape
    perm = [3, 1, 7, 0, 2, 6, 4, 5]
    assert _ids(mu.create_device_mesh((2, 4), [fd[i] for i in perm])) == \
        _ids(jmu.create_device_mesh((2, 4), [jd[i] for i in perm]))
    for ici, dcn in [((4, 2), (1, 1)), ((2, 4), (1,)), ((8,), (1,))]:
        assert _ids(mu.create_hybrid_device_mesh(ici, dcn, process_is_granule=True)) == \
            _ids(jmu.create_hybrid_device_mesh(ici, dcn, process_is_granule=True)), (ici, dcn)
    with pytest.raises(ValueError, match=r"Number of devices 8 must equal the product of mesh_shape \(3, 3\)"):
        mu.create_device_mesh((3, 3))
    mesh = Mesh(mu.create_device_mesh((4, 2)), ("x", "y"))
    assert mesh.local_mesh == mesh and not mesh.is_multi_process


@on_eight_devices
def test_conversions_and_gathers_match_jax():
    import jax
    from jax.experimental import multihost_utils as jmh
    jmesh = jax.sharding.Mesh(np.array(jax.devices()).reshape(4, 2), ("x", "y"))
    mesh = Mesh(mu.create_device_mesh((4, 2)), ("x", "y"))
    x = np.arange(32.0, dtype=np.float32).reshape(8, 4)
    for spec in [P("x", "y"), P(None, "x"), P(("x", "y")), P()]:
        g = mh.host_local_array_to_global_array({"v": x}, mesh, spec)["v"]
        jg = jmh.host_local_array_to_global_array({"v": x}, jmesh, jax.sharding.PartitionSpec(*spec))["v"]
        assert g.shape == jg.shape and g.sharding == NamedSharding(mesh, spec)
        assert {s.device.id: np.asarray(s.data).tolist() for s in g.addressable_shards} == \
            {s.device.id: np.asarray(s.data).tolist() for s in jg.addressable_shards}
        back = mh.global_array_to_host_local_array(g, mesh, spec)
        np.testing.assert_array_equal(back, x)
    # under jit and vmap (the batch dimension is not split, as JAX's without spmd_axis_name)
    f = funcad.jit(lambda v: mh.host_local_array_to_global_array(v, mesh, P("x")) * 2)
    np.testing.assert_array_equal(f(x), 2 * x)
    vm = funcad.vmap(lambda v: mh.host_local_array_to_global_array(v, mesh, P("x")))(x.T)
    jvm = jax.vmap(lambda v: jmh.host_local_array_to_global_array(v, jmesh, jax.sharding.PartitionSpec("x")))(x.T)
    np.testing.assert_array_equal(vm, jvm)
    # a global array resharded to the requested layout on the way back
    a = funcad.device_put(x, NamedSharding(mesh, P("y")))
    np.testing.assert_array_equal(mh.global_array_to_host_local_array(a, mesh, P("x")), x)
    assert mh.process_allgather(a, tiled=True).tolist() == jmh.process_allgather(
        jax.device_put(x, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec("y"))),
        tiled=True).tolist()
    tree = {"a": x, "s": np.float32(2.0), "i": np.arange(3)}
    for tiled in (False, True):
        got, want = mh.process_allgather(tree, tiled), jmh.process_allgather(tree, tiled)
        for k in tree:
            assert got[k].shape == want[k].shape and got[k].dtype == want[k].dtype, (k, tiled)
            np.testing.assert_array_equal(got[k], want[k])


# ------------------------------------------------------- two processes ----

def _worker(pid: int, port: int, out: str) -> None:
    funcad.distributed.initialize(f"127.0.0.1:{port}", 2, pid)
    res = {}
    res["ids"] = [d.id for d in funcad.devices()]  # the second process's start at 2048
    res["hybrid"] = _ids(mu.create_hybrid_device_mesh((4, 1), (1, 2), process_is_granule=True))
    mesh = Mesh(mu.create_device_mesh((8,)), ("x",))
    local = np.arange(8.0).reshape(4, 2) + 100 * pid
    g = mh.host_local_array_to_global_array(local, mesh, P("x"))
    res["global_shape"] = list(g.shape)
    res["global_sum"] = float(funcad.jit(fnp.sum, out_shardings=NamedSharding(mesh, P()))(g))
    res["back"] = np.asarray(mh.global_array_to_host_local_array(g, mesh, P("x"))).tolist()
    rep = funcad.jit(lambda v: v, out_shardings=NamedSharding(mesh, P()))(g)
    res["back_resharded"] = np.asarray(mh.global_array_to_host_local_array(rep, mesh, P("x"))).tolist()
    res["rep_shape"] = list(mh.host_local_array_to_global_array(local, mesh, P()).shape)
    res["stack"] = mh.process_allgather(np.array([pid, 10 + pid])).tolist()
    res["tiled"] = mh.process_allgather(np.float32(pid), tiled=True).tolist()
    res["global_gather"] = mh.process_allgather(g, tiled=True).tolist()
    with pytest.raises(ValueError, match="only supports tiled=True"):
        mh.process_allgather(g)
    res["bcast"] = {k: np.asarray(v).tolist() for k, v in
                    mh.broadcast_one_to_all({"w": local, "n": np.int32(7 + pid)}).items()}
    res["from1"] = np.asarray(mh.broadcast_one_to_all(np.float32(pid), is_source=pid == 1)).tolist()
    mh.sync_global_devices("half way")
    mh.assert_equal({"same": np.arange(3)})
    with pytest.raises(AssertionError, match="they differ"):
        mh.assert_equal(np.array([pid]), "they differ")
    res["preempt"] = mh.reached_preemption_sync_point(0)
    with mh.live_devices(funcad.devices()) as alive:
        res["live"] = [d.id for d in alive]
    with pytest.raises(KeyError):  # the block's own error, once no process has failed
        with mh.live_devices(funcad.devices()):
            raise KeyError("x")
    with open(out, "w") as fh:
        json.dump(res, fh)
    funcad.distributed.shutdown()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@on_one_device
def test_two_processes(tmp_path):
    port = _free_port()
    env = dict(os.environ, FUNCAD_BACKEND="cpu", JAX_PLATFORMS="cpu",
               XLA_FLAGS="--xla_force_host_platform_device_count=4")
    env.pop("FUNCAD_SHARDING_CHILD", None)
    env["PYTHONPATH"] = os.pathsep.join([ROOT] + [p for p in [os.environ.get("PYTHONPATH")] if p])
    outs = [str(tmp_path / f"out{i}.json") for i in range(2)]
    procs = [subprocess.Popen([sys.executable, HERE, "worker", str(i), str(port), outs[i]], cwd=ROOT,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(2)]
    logs, deadline = [], time.monotonic() + 240
    for p in procs:
        try:
            logs.append(p.communicate(timeout=max(1.0, deadline - time.monotonic()))[0])
        except subprocess.TimeoutExpired:
            for q in procs:
                q.kill()
            pytest.fail("the two worker processes did not finish in time")
    for p, log in zip(procs, logs):
        assert p.returncode == 0, log[-4000:]
    r0, r1 = (json.load(open(o)) for o in outs)
    whole = np.concatenate([np.arange(8.0).reshape(4, 2), np.arange(8.0).reshape(4, 2) + 100])
    for pid, r in enumerate((r0, r1)):
        # one column of four devices per process
        assert r["hybrid"] == np.array(r["ids"]).reshape(2, 4).T.tolist()
        assert r["back_resharded"] == r["back"]
        assert r["global_shape"] == [8, 2] and r["rep_shape"] == [4, 2]
        assert r["global_sum"] == whole.sum()
        assert r["back"] == (np.arange(8.0).reshape(4, 2) + 100 * pid).tolist()
        assert r["stack"] == [[0, 10], [1, 11]] and r["tiled"] == [0.0, 1.0]
        assert r["global_gather"] == whole.tolist()
        assert r["bcast"] == {"w": np.arange(8.0).reshape(4, 2).tolist(), "n": 7}
        assert r["from1"] == 1.0 and r["preempt"] is False
        assert r["live"] == sorted(r["ids"])


if __name__ == "__main__" and sys.argv[1:2] == ["worker"]:
    _worker(int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])
