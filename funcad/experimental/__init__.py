"""funcad.experimental: JAX's `jax.experimental` names that funcad has.

`io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs)`
calls an impure Python function from inside transformed code (funcad/_effect_callbacks.py).
`checkify` (the submodule, loaded on first use) adds run-time error checks to a function
(funcad/experimental/checkify.py).
"""
from .._effect_callbacks import io_callback

__all__ = ["io_callback", "checkify"]


def __getattr__(name):
    if name == "checkify":  # loaded on first use, as JAX's submodule is imported explicitly
        import importlib
        return importlib.import_module(".checkify", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    return sorted(__all__)
