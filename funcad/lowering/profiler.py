"""funcad.profiler's implementation: jaxlib's own profiler, as `jax.profiler` uses it.

Only `funcad.profiler` (a namespace loaded on first use) imports this module, so its
jaxlib imports sit at module level. jaxlib 0.12 has the bindings as `jaxlib._profiler`
(and the parsed-trace classes as `jaxlib._profile_data`); jaxlib 0.6 as
`jaxlib.xla_client.profiler`, with no Python-visible ProfileData. Both have the same
ProfilerSession (`stop()` gives the serialized XSpace, `export(xspace, log_dir)` writes
`plugins/profile/<run>/`), TraceMe, ProfileOptions and start_server.

>>> TraceAnnotation.__mro__[1].__name__
'TraceMe'
"""
import functools as _functools
import gzip as _gzip
import http.server as _http_server
import json as _json
import os as _os
import pathlib as _pathlib
import socketserver as _socketserver
import threading as _threading
from collections.abc import Callable as _Callable, Iterator as _Iterator
from contextlib import contextmanager as _contextmanager

from . import xla as _xla

try:
    from jaxlib import _profiler as _p
except ImportError:  # jaxlib < 0.7
    from jaxlib.xla_client import profiler as _p
try:
    from jaxlib import _profile_data as _pd
except ImportError:  # jaxlib 0.6: no ProfileData
    _pd = None

__all__ = ["ProfileOptions", "ProfileSession", "StepTraceAnnotation", "TraceAnnotation",
           "annotate_function", "device_memory_profile", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]


class ProfileOptions(_p.ProfileOptions):
    """Options of the profiler's collectors (`host_tracer_level`, `python_tracer_level`,
    `duration_ms`, ...); a misspelt attribute raises instead of being ignored.

    >>> opts = ProfileOptions(); opts.python_tracer_level = 0
    """
    __slots__ = ()


class TraceAnnotation(_p.TraceMe):
    """Context manager that records a named span on the trace timeline while a
    trace is being collected (and costs almost nothing otherwise).

    >>> with TraceAnnotation("my_label"):
    ...     pass
    """


class StepTraceAnnotation(TraceAnnotation):
    """A `TraceAnnotation` that marks one training step, so that the profiler's
    tools can analyse the trace step by step; pass `step_num=` to number it.

    >>> with StepTraceAnnotation("train", step_num=3):
    ...     pass
    """

    def __init__(self, name: str, **kwargs):
        super().__init__(name, _r=1, **kwargs)


def annotate_function(func: _Callable, name: str | None = None, **decorator_kwargs) -> _Callable:
    """Decorator that records each call of `func` as a span named `name` (default:
    its qualified name); use `functools.partial` to pass `name` or other arguments.

    >>> @annotate_function
    ... def step(x):
    ...     return x + 1
    >>> step(1)
    2
    """
    name = name or getattr(func, "__qualname__", None) or func.__name__

    @_functools.wraps(func)
    def wrapper(*args, **kwargs):
        with TraceAnnotation(name, **decorator_kwargs):
            return func(*args, **kwargs)
    return wrapper


# ------------------------------------------------------------------ server ----

_server = None


def start_server(port: int, requires_backend: bool = True):
    """Start the profiler server on `port`, to which Xprof/TensorBoard can connect
    and sample traces on demand. Returns jaxlib's server object.

    >>> server = start_server(9012); stop_server()
    """
    global _server
    if _server is not None:
        raise ValueError("Only one profiler server can be active at a time.")
    if requires_backend:  # device tracers register only once the backend exists
        _xla.get_client(_xla.default_backend())
    _server = _p.start_server(port)
    return _server


def stop_server() -> None:
    """Stop the server started by `start_server`."""
    global _server
    if _server is None:
        raise ValueError("No active profiler server.")
    _server = None  # dropping jaxlib's object shuts the server down


# ----------------------------------------------------------------- traces ----

_lock = _threading.Lock()
_active: "ProfileSession | None" = None


class ProfileSession:
    """One profiling session: `start()`/`stop()` or a `with` block (see `trace`).

    After `stop()`, the trace is written to `log_dir` (if given) and, where jaxlib
    exposes it, kept in memory as `profile_data`.

    >>> import tempfile
    >>> with ProfileSession(tempfile.mkdtemp()) as s:
    ...     pass
    >>> s.is_running
    False
    """

    def __init__(self, log_dir: _os.PathLike | str | None = None,
                 create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
                 profiler_options: ProfileOptions | None = None):
        self.log_dir = None if log_dir is None else str(log_dir)
        self.create_perfetto_link = create_perfetto_link
        self.create_perfetto_trace = create_perfetto_trace or create_perfetto_link
        self.profiler_options = profiler_options
        self._raw = None
        self._xspace: bytes | None = None
        self._profile_data = None
        self._is_running = False

    def start(self) -> "ProfileSession":
        """Start collecting; a RuntimeError if any trace is already running."""
        global _active
        with _lock:
            if _active is not None or self._is_running:
                raise RuntimeError("Profile has already been started. Only one profile may "
                                   "be run at a time.")
            _xla.get_client(_xla.default_backend())  # device tracers need the backend first
            options = self.profiler_options
            self._raw = _p.ProfilerSession(ProfileOptions() if options is None else options)
            self._is_running, self._xspace, self._profile_data = True, None, None
            _active = self
        return self

    def stop(self):
        """Stop collecting, write the trace to `log_dir` (if given) and return its
        `ProfileData` (None where jaxlib has no ProfileData)."""
        global _active
        with _lock:
            if not self._is_running or self._raw is None:
                raise RuntimeError("No profile started")
            self._xspace = self._raw.stop()
            if _pd is not None:
                self._profile_data = _pd.ProfileData.from_serialized_xspace(self._xspace)
            self._is_running = False
            _active = None
        if self.log_dir is not None:
            self.export_profile_data(self.log_dir, self.create_perfetto_link,
                                     self.create_perfetto_trace)
        return self._profile_data

    def export_profile_data(self, log_dir: _os.PathLike | str, create_perfetto_link: bool = False,
                            create_perfetto_trace: bool = False,
                            session_id: str | None = None) -> None:
        """Write the stopped session's trace under `log_dir/plugins/profile/`."""
        if self._is_running:
            raise RuntimeError("Cannot export a ProfileSession while it is running. Call stop() "
                               "first.")
        if self._xspace is None:
            raise RuntimeError("No profile data to export. Ensure the session has completed.")
        if session_id is None and self.profiler_options is not None:
            session_id = getattr(self.profiler_options, "session_id", None)
        if _pd is not None and hasattr(_p, "export_to_xprof"):
            _p.export_to_xprof(self._profile_data, str(log_dir), session_id=session_id or "")
        else:  # jaxlib 0.6: the session object writes its own XSpace
            self._raw.export(self._xspace, str(log_dir))
        _perfetto(str(log_dir), create_perfetto_link, create_perfetto_trace)

    @property
    def is_running(self) -> bool:
        return self._is_running

    @property
    def profile_data(self):
        """The stopped session's `ProfileData` (None before `stop()` or on jaxlib 0.6)."""
        return self._profile_data

    def __enter__(self) -> "ProfileSession":
        return self.start()

    def __exit__(self, *exc) -> None:
        if self._is_running:  # stop() inside the block already ended it
            self.stop()


def start_trace(log_dir: _os.PathLike | str, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> "ProfileSession":
    """Start a trace that `stop_trace` ends and writes to `log_dir`.

    `create_perfetto_trace` also writes `perfetto_trace.json.gz` for
    https://ui.perfetto.dev; `create_perfetto_link` does that too, prints a link
    and blocks until Perfetto has loaded the file. Only one trace at a time.

    >>> import tempfile
    >>> session = start_trace(tempfile.mkdtemp()); _ = stop_trace()
    """
    return ProfileSession(log_dir, create_perfetto_link, create_perfetto_trace,
                          profiler_options).start()


def stop_trace():
    """End the running trace, write it to its `log_dir` and return its `ProfileData`
    (None where jaxlib has no ProfileData); a RuntimeError if none is running."""
    with _lock:
        session = _active
    if session is None:
        raise RuntimeError("No profile started")
    return session.stop()


@_contextmanager
def trace(log_dir: _os.PathLike | str | None = None, create_perfetto_link: bool = False,
          create_perfetto_trace: bool = False,
          profiler_options: ProfileOptions | None = None) -> _Iterator["ProfileSession"]:
    """Trace the enclosed block (see `start_trace`); yields the `ProfileSession`.
    With `log_dir=None` the trace is only kept in memory (`session.profile_data`).

    >>> import tempfile
    >>> with trace(tempfile.mkdtemp()) as session:
    ...     pass
    """
    with ProfileSession(log_dir, create_perfetto_link, create_perfetto_trace,
                        profiler_options) as session:
        yield session


# --------------------------------------------------------------- perfetto ----

def _perfetto(log_dir: str, link: bool, write: bool) -> None:
    if write or link:
        path = _write_perfetto_trace(log_dir)
        if link:
            _serve_once(path)


def _write_perfetto_trace(log_dir: str) -> _pathlib.Path:
    """Perfetto rejects the trace's `metadata` field: copy the newest run's
    `*.trace.json.gz` without it to `perfetto_trace.json.gz` beside it."""
    runs = (_pathlib.Path(log_dir).absolute() / "plugins" / "profile").iterdir()
    run = max(runs, key=_os.path.getmtime)
    found = list(run.glob("*.trace.json.gz"))
    if len(found) != 1:
        raise ValueError(f"Invalid trace folder: {run}")
    with _gzip.open(found[0], "rb") as f:
        data = _json.load(f)
    data.pop("metadata", None)
    out = run / "perfetto_trace.json.gz"
    with _gzip.open(out, "wb") as f:
        f.write(_json.dumps(data).encode())
    return out


def _serve_once(path: _pathlib.Path, port: int = 9001) -> None:
    """Serve `path` on 127.0.0.1:`port` (where ui.perfetto.dev looks) until it is fetched."""
    directory, name = str(path.parent), path.name

    class Handler(_http_server.SimpleHTTPRequestHandler):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, directory=directory, **kwargs)

        def end_headers(self):
            self.send_header("Access-Control-Allow-Origin", "*")
            super().end_headers()

        def do_GET(self):
            self.server.last_request = self.path
            super().do_GET()

        def do_POST(self):
            self.send_error(404, "File not found")

    class Server(_socketserver.TCPServer):
        allow_reuse_address = True

    with Server(("127.0.0.1", port), Handler) as httpd:
        print(f"Open URL in browser: https://ui.perfetto.dev/#!/?url=http://127.0.0.1:{port}/{name}")
        while getattr(httpd, "last_request", None) != "/" + name:
            httpd.handle_request()


# ----------------------------------------------------------------- memory ----

def device_memory_profile(backend: str | None = None) -> bytes:
    """A snapshot of the device memory in use (live arrays and executables, with the
    Python stacks that allocated them) as a gzipped pprof protocol buffer.

    >>> device_memory_profile()[:2] == b"\\x1f\\x8b"
    True
    """
    client = _xla.get_client(backend or _xla.default_backend())
    return _gzip.compress(client.heap_profile())  # the raw proto on jaxlib 0.6 .. 0.12


def save_device_memory_profile(filename: _os.PathLike | str, backend: str | None = None) -> None:
    """Write `device_memory_profile(backend)` to `filename` (view it with pprof)."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


# ------------------------------------------------- jaxlib >= 0.7 only ----

if _pd is not None and hasattr(_p, "export_to_xprof"):
    ProfileData = _pd.ProfileData
    ProfilePlane = _pd.ProfilePlane
    ProfileLine = _pd.ProfileLine
    ProfileEvent = _pd.ProfileEvent

    def export_profile_data(profile_data, log_dir: _os.PathLike | str,
                            create_perfetto_link: bool = False,
                            create_perfetto_trace: bool = False,
                            session_id: str | None = None) -> None:
        """Write a `ProfileData` or a stopped `ProfileSession` under
        `log_dir/plugins/profile/`."""
        if isinstance(profile_data, ProfileSession):
            profile_data.export_profile_data(log_dir, create_perfetto_link,
                                             create_perfetto_trace, session_id)
            return
        if not isinstance(profile_data, ProfileData):
            raise TypeError("Expected ProfileData or ProfileSession, got "
                            f"{type(profile_data).__name__}")
        _p.export_to_xprof(profile_data, str(log_dir), session_id=session_id or "")
        _perfetto(str(log_dir), create_perfetto_link, create_perfetto_trace)

    __all__ += ["ProfileData", "ProfileEvent", "ProfileLine", "ProfilePlane",
                "export_profile_data"]
