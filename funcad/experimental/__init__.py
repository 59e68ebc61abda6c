"""funcad.experimental: JAX's `jax.experimental` names that funcad has.

`io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs)`
calls an impure Python function from inside transformed code (funcad/_effect_callbacks.py).
The submodules, each loaded on first use (`import funcad` stays quick):
`checkify` adds run-time error checks to a function (funcad/experimental/checkify.py);
`ode.odeint` is JAX's ODE solver (adaptive Dormand–Prince, adjoint gradients);
`jet.jet` is Taylor-mode differentiation;
`sparse` holds JAX's sparse arrays (BCOO), `sparsify` and sparse-aware gradients.
"""
from .._effect_callbacks import io_callback

__all__ = ["io_callback", "checkify", "jet", "ode", "sparse"]
_SUBMODULES = {"checkify", "jet", "ode", "sparse"}


def __getattr__(name):
    if name in _SUBMODULES:  # loaded on first use, as JAX's submodules are imported explicitly
        import importlib
        return importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
