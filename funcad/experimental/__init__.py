"""funcad.experimental: JAX's `jax.experimental` names that funcad has.

`io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs)`
calls an impure Python function from inside transformed code (funcad/debug/_callbacks.py).
The submodules, each loaded on first use (`import funcad` stays quick):
`checkify` adds run-time error checks to a function (funcad/experimental/checkify.py);
`ode.odeint` is JAX's ODE solver (adaptive Dormand–Prince, adjoint gradients);
`jet.jet` is Taylor-mode differentiation; `mesh_utils` arranges devices into mesh
grids; `multihost_utils` moves values between the processes of a multi-process program;
`enable_x64`/`disable_x64` (JAX's older spellings of `funcad.enable_x64`) switch
64-bit mode for a block. `compilation_cache.compilation_cache.set_cache_dir(path)` keeps compiled programs on disk
for later processes (funcad/lowering/compilation_cache.py); `sparse` holds JAX's sparse
arrays (BCOO, BCSR, COO, CSR, CSC), `sparsify` and sparse-aware gradients;
`layout` holds `Layout` and `Format` (funcad/core/layout.py).
"""
import contextlib as _contextlib
import importlib as _importlib

from ..debug._callbacks import io_callback

from ..core.config import scopes as _scopes

enable_x64 = _scopes["enable_x64"]  # funcad.enable_x64


@_contextlib.contextmanager
def disable_x64():
    """`with disable_x64():` 32-bit default dtypes inside the block (JAX's older
    `jax.experimental.disable_x64`; enable_x64(False)).

    >>> import funcad, funcad.numpy as fnp
    >>> with funcad.experimental.disable_x64():
    ...     fnp.ones(2).dtype
    dtype('float32')
    """
    with enable_x64(False):
        yield


__all__ = ["disable_x64", "enable_x64", "io_callback", "checkify", "compilation_cache", "jet", "layout", "mesh_utils", "multihost_utils", "ode",
           "sparse"]
_SUBMODULES = {"checkify", "compilation_cache", "jet", "layout", "mesh_utils", "multihost_utils", "ode", "sparse"}


def __getattr__(name):
    if name in _SUBMODULES:  # loaded on first use, as JAX's submodules are imported explicitly
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
