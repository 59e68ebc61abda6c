"""funcad.experimental.ode: JAX's `jax.experimental.ode`.

`odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=inf, hmax=inf)` integrates
`dy/dt = func(y, t, *args)` with adaptive Dormand–Prince steps and differentiates by the
adjoint method (funcad/experimental/_ode.py).
"""
from ._ode import odeint

__all__ = ["odeint"]
