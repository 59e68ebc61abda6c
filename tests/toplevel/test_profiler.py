"""funcad.profiler: JAX's profiler API over jaxlib's own profiler bindings.

A trace must really be written (`plugins/profile/<run>/<host>.xplane.pb`, as JAX
writes it) and hold the annotations made while it ran; errors are JAX's.
"""
from __future__ import annotations

import functools
import gzip
import json
import socket

import numpy as np
import pytest

import funcad
from funcad import profiler

HAS_PROFILE_DATA = hasattr(profiler, "ProfileData")  # jaxlib >= 0.7


def _run(log_dir) -> list:
    runs = sorted((log_dir / "plugins" / "profile").iterdir())
    assert len(runs) == 1, runs
    return sorted(p.name for p in runs[0].iterdir())


def _xplane(log_dir) -> bytes:
    found = list((log_dir / "plugins" / "profile").glob("*/*.xplane.pb"))
    assert len(found) == 1, found
    return found[0].read_bytes()


@pytest.fixture(autouse=True)
def _no_trace_left_running():
    yield
    try:
        profiler.stop_trace()
    except RuntimeError:
        pass


def test_trace_writes_xplane_with_annotations_of_a_jit_program(tmp_path):
    f = funcad.jit(lambda x: funcad.numpy.sin(x) * 2.0)
    with profiler.trace(tmp_path):
        with profiler.TraceAnnotation("funcad_marker_7f3a"):
            y = f(np.arange(4.0))
    np.testing.assert_allclose(np.asarray(y), np.sin(np.arange(4.0)) * 2.0)
    files = _run(tmp_path)
    assert any(n.endswith(".xplane.pb") for n in files), files
    assert any(n.endswith(".trace.json.gz") for n in files), files
    data = _xplane(tmp_path)
    assert b"funcad_marker_7f3a" in data
    assert b"never_annotated_name" not in data


def test_start_and_stop_trace_with_step_and_function_annotations(tmp_path):
    @profiler.annotate_function
    def my_step_fn(x):
        return x + 1

    @functools.partial(profiler.annotate_function, name="renamed_fn_91")
    def other(x):
        return x * 3

    session = profiler.start_trace(str(tmp_path))
    assert isinstance(session, profiler.ProfileSession) and session.is_running
    with profiler.StepTraceAnnotation("train_step_x", step_num=5):
        assert my_step_fn(1) == 2 and other(2) == 6
    profiler.stop_trace()
    assert not session.is_running
    data = _xplane(tmp_path)
    for name in (b"train_step_x", b"my_step_fn", b"renamed_fn_91"):
        assert name in data, name
    assert my_step_fn.__name__ == "my_step_fn"


def test_annotations_outside_a_trace_are_harmless():
    with profiler.TraceAnnotation("idle", key=1):
        pass
    with profiler.StepTraceAnnotation("idle_step", step_num=0):
        pass
    assert profiler.annotate_function(lambda: 41)() == 41


def test_one_trace_at_a_time_with_jax_errors(tmp_path):
    with pytest.raises(RuntimeError, match="^No profile started$"):
        profiler.stop_trace()
    profiler.start_trace(tmp_path / "a")
    msg = "Profile has already been started. Only one profile may be run at a time."
    with pytest.raises(RuntimeError) as e:
        profiler.start_trace(tmp_path / "b")
    assert str(e.value) == msg
    with pytest.raises(RuntimeError, match="already been started"):
        with profiler.trace(tmp_path / "c"):
            pass
    profiler.stop_trace()  # the first trace is still the running one
    assert (tmp_path / "a" / "plugins" / "profile").is_dir()
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
    with pytest.raises(RuntimeError, match="^No profile started$"):
        profiler.stop_trace()


def test_session_stopped_inside_its_block_and_export_errors(tmp_path):
    session = profiler.ProfileSession()
    with pytest.raises(RuntimeError, match="No profile data to export"):
        session.export_profile_data(tmp_path)
    with session:
        with pytest.raises(RuntimeError, match="while it is running"):
            session.export_profile_data(tmp_path)
        session.stop()  # the block's exit does not stop it again
    with pytest.raises(RuntimeError, match="^No profile started$"):
        session.stop()
    session.export_profile_data(tmp_path)  # kept in memory, written on request
    _xplane(tmp_path)


def test_profile_options(tmp_path):
    opts = profiler.ProfileOptions()
    opts.python_tracer_level = 0
    opts.host_tracer_level = 2
    assert (opts.python_tracer_level, opts.host_tracer_level) == (0, 2)
    with pytest.raises(AttributeError):
        opts.host_tracer_levle = 1  # a misspelt option is an error, as in JAX
    with profiler.trace(tmp_path, profiler_options=opts):
        with profiler.TraceAnnotation("with_options_q"):
            pass
    assert b"with_options_q" in _xplane(tmp_path)


def test_perfetto_trace_file(tmp_path):
    profiler.start_trace(tmp_path, create_perfetto_trace=True)
    with profiler.TraceAnnotation("perfetto_mark_z"):
        pass
    profiler.stop_trace()
    assert "perfetto_trace.json.gz" in _run(tmp_path)
    run = next((tmp_path / "plugins" / "profile").iterdir())
    with gzip.open(run / "perfetto_trace.json.gz") as f:
        trace = json.load(f)
    assert "metadata" not in trace  # Perfetto rejects it
    assert any(ev.get("name") == "perfetto_mark_z" for ev in trace["traceEvents"])


@pytest.mark.skipif(not HAS_PROFILE_DATA, reason="jaxlib 0.6 exposes no ProfileData")
def test_profile_data_in_memory(tmp_path):
    with profiler.trace() as session:  # no log_dir: in memory only
        with profiler.TraceAnnotation("in_memory_mark"):
            funcad.jit(lambda x: x + 1.0)(np.ones(2))
    data = session.profile_data
    assert isinstance(data, profiler.ProfileData)
    names = [ev.name for plane in data.planes for line in plane.lines for ev in line.events]
    assert "in_memory_mark" in names
    assert all(isinstance(plane, profiler.ProfilePlane) for plane in data.planes)
    assert not (tmp_path / "plugins").exists()
    profiler.export_profile_data(data, tmp_path)
    assert b"in_memory_mark" in _xplane(tmp_path)
    with pytest.raises(TypeError, match="Expected ProfileData or ProfileSession, got int"):
        profiler.export_profile_data(3, tmp_path)
    profiler.start_trace(tmp_path / "s")
    assert isinstance(profiler.stop_trace(), profiler.ProfileData)


def test_server_start_and_stop():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    with pytest.raises(ValueError, match="^No active profiler server.$"):
        profiler.stop_server()
    server = profiler.start_server(port)
    try:
        assert server is not None
        with pytest.raises(ValueError, match="^Only one profiler server can be active at a time.$"):
            profiler.start_server(port)
    finally:
        profiler.stop_server()
    with pytest.raises(ValueError, match="No active profiler server"):
        profiler.stop_server()


def test_device_memory_profile(tmp_path):
    keep = funcad.device_put(np.ones((64, 64), np.float32))
    prof = profiler.device_memory_profile()
    assert prof[:2] == b"\x1f\x8b" and len(gzip.decompress(prof)) > 0  # gzipped pprof proto
    assert profiler.device_memory_profile("cpu")[:2] == b"\x1f\x8b"
    profiler.save_device_memory_profile(tmp_path / "mem.prof")
    saved = (tmp_path / "mem.prof").read_bytes()
    assert saved[:2] == b"\x1f\x8b" and len(gzip.decompress(saved)) > 0
    with pytest.raises(funcad.BackendError, match="Unknown backend"):
        profiler.device_memory_profile("nosuch")
    del keep


# jax.profiler's public names in JAX 0.12 (the API funcad follows on every jaxlib).
JAX_012 = {"ProfileData", "ProfileEvent", "ProfileLine", "ProfileOptions", "ProfilePlane",
           "ProfileSession", "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "export_profile_data", "register_subprocess",
           "save_device_memory_profile", "start_server", "start_trace", "stop_server",
           "stop_trace", "trace"}
NEEDS_PROFILE_DATA = {"ProfileData", "ProfileEvent", "ProfileLine", "ProfilePlane",
                      "export_profile_data"}


def test_names_match_jax():
    # Left out: register_subprocess (aggregating a subprocess's profiler server).
    want = JAX_012 - {"register_subprocess"} - (set() if HAS_PROFILE_DATA else NEEDS_PROFILE_DATA)
    assert set(profiler.__all__) == want
    assert all(hasattr(profiler, n) for n in profiler.__all__)
    assert "profiler" in dir(funcad)
    jax_profiler = pytest.importorskip("jax.profiler")
    if hasattr(jax_profiler, "ProfileSession"):  # a JAX as new as 0.12
        assert {n for n in dir(jax_profiler) if not n.startswith("_")} == JAX_012


def test_perfetto_link_serves_the_trace_until_fetched(tmp_path, capsys):
    import threading
    import time
    import urllib.request
    from funcad.lowering.profiler import _serve_once  # create_perfetto_link's server, on a free port
    path = tmp_path / "perfetto_trace.json.gz"
    path.write_bytes(gzip.compress(b'{"traceEvents": []}'))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = threading.Thread(target=_serve_once, args=(path, port), daemon=True)
    server.start()
    for _ in range(100):
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path.name}", timeout=5) as r:
                body, cors = r.read(), r.headers["Access-Control-Allow-Origin"]
            break
        except OSError:
            time.sleep(0.05)
    server.join(timeout=5)
    assert not server.is_alive()  # it stops once Perfetto has the file
    assert body == path.read_bytes() and cors == "*"
    assert f"https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{path.name}" in capsys.readouterr().out
