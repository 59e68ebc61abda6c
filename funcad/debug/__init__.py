"""funcad.debug: printing from inside transformed code, as `jax.debug`.

`print(fmt, *args, **kwargs)` prints at once in eager code; under grad, jvp
and linearize the primal values are printed, under vmap the batched values
(batch axis first); under jit the values become extra outputs of the
compiled program and are printed after each call, in program order. The
implementation is in funcad/transforms/debugging.py.

`callback(fn, *args, ordered=False, partitioned=False, **kwargs)` calls `fn` with the
values, as `jax.debug.callback` (funcad/debug/_callbacks.py): once per batch entry
under vmap, with primal values under grad, once per iteration in loops, also under jit.

`visualize_array_sharding(arr)`, `visualize_sharding(shape, sharding)` and
`inspect_array_sharding(value, callback=)` show how arrays are laid out over
devices (funcad/debug/_sharding_viz.py); inside jit, once, when the program is
compiled, with the layout XLA's partitioner chose (transforms/inspect_sharding.py).

`breakpoint(backend=None, filter_frames=True, num_frames=None, ordered=False, token=None)`
stops in a pdb-like debugger over the live values, also under jit, vmap and grad
(funcad/debug/_breakpoint.py); `log(fmt, *args, **kwargs)` is `print` through Python's logging
(funcad/debug/_log.py).

>>> import funcad, funcad.numpy as fnp
>>> def f(x):
...     funcad.debug.print("x = {x}", x=x)
...     return fnp.sin(x)
>>> _ = funcad.grad(f)(0.0)
x = 0.0
>>> _ = funcad.jit(f)(1.0)
x = 1.0
"""
from ._breakpoint import breakpoint  # noqa: A004
from ._log import log
from ._callbacks import debug_callback as callback
from ._sharding_viz import inspect_array_sharding, visualize_array_sharding, visualize_sharding
from ..transforms.debugging import print  # noqa: A004

__all__ = ["breakpoint", "callback", "log", "inspect_array_sharding", "print", "visualize_array_sharding", "visualize_sharding"]
