"""Profiling as `jax.profiler` does it, through jaxlib's own profiler.

A trace records host activity (Python, `TraceAnnotation` spans, funcad's calls into
XLA) and device activity of compiled programs, and is written to
`log_dir/plugins/profile/<run>/<host>.xplane.pb` (plus `.trace.json.gz`) for Xprof,
TensorBoard or Perfetto. Only one trace runs at a time, as in JAX.

>>> import tempfile, numpy as np, funcad
>>> f = funcad.jit(lambda x: x * 2.0)
>>> with funcad.profiler.trace(tempfile.mkdtemp()):
...     with funcad.profiler.TraceAnnotation("double"):
...         y = f(np.ones(3))

On jaxlib 0.12 a stopped session also gives the trace in memory as a
`ProfileData` (`ProfileData`, `ProfilePlane`, `ProfileLine`, `ProfileEvent` and
`export_profile_data` exist where the installed jaxlib exposes them; jaxlib 0.6
does not, and there `stop_trace()` returns None, as JAX 0.6's did).
"""
from .lowering.profiler import *  # noqa: F401,F403
from .lowering.profiler import __all__  # noqa: F401  (ProfileData and friends where jaxlib has them)
