"""The stages of ahead-of-time compilation, as JAX's `jax.stages`.

`funcad.jit(f)` is a `Wrapped`; `.trace(*args)` gives a `Traced` (its `.jaxpr`),
`.lower()` a `Lowered` (StableHLO, `.as_text()`), `.compile()` a `Compiled` (XLA's
executable, callable like `f`). Each stage carries its signature: `args_info` (a tree
of `ArgInfo` over `(args, kwargs)`), `in_tree`, `out_tree`, `in_avals`, `out_info`
and `donate_argnums`.

>>> import funcad, numpy as np
>>> from funcad import stages
>>> f = funcad.jit(lambda x: x * 2.0)
>>> isinstance(f, stages.Wrapped)
True
>>> traced = f.trace(np.ones(3))
>>> compiled = traced.lower().compile()
>>> isinstance(traced, stages.Traced), isinstance(compiled, stages.Compiled)
(True, True)
>>> compiled(np.ones(3))
Array([2., 2., 2.], dtype=float64)
"""
from .transforms.jit_stages import ArgInfo, Compiled, CompilerOptions, Lowered, Traced, Wrapped

__all__ = ["ArgInfo", "Compiled", "CompilerOptions", "Lowered", "Traced", "Wrapped"]
