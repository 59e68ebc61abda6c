"""funcad.experimental: JAX's `jax.experimental` names that funcad has.

`io_callback(callback, result_shape_dtypes, *args, sharding=None, ordered=False, **kwargs)`
calls an impure Python function from inside transformed code (funcad/_effect_callbacks.py).
`funcad.experimental.ode.odeint` is JAX's ODE solver (adaptive Dormand–Prince, adjoint
gradients).
"""
from .._effect_callbacks import io_callback
from . import ode  # bound as a child namespace: funcad.experimental.ode.odeint

__all__ = ["io_callback"]
