"""funcad.lax's program-level functions: dtype, stage, optimization_barrier,
platform_dependent and composite."""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..core.avals import aval_of
from ..core.errors import FuncadValueError
from ..core.pytree import tree_flatten, tree_unflatten
from ..transforms.checkpoint import optimization_barrier_p
from ..lowering.devices import default_backend
from ..arrays.dtypes import asarray_or_tracer as _arr
from ..arrays.dtypes import canonical_dtype

__all__ = ['dtype', 'stage', 'optimization_barrier', 'platform_dependent', 'composite']


def dtype(x: Any) -> np.dtype:
    """The dtype of a value, or a dtype-like (a type, a name) as a NumPy dtype; Python
    scalars get funcad's defaults.

    >>> dtype(np.float32(1)), dtype("int16")
    (dtype('float32'), dtype('int16'))
    """
    if isinstance(x, (type, str, np.dtype)):
        return canonical_dtype(np.dtype(x))
    return aval_of(_arr(x)).dtype


def stage(x, /):
    """The identity, lifting a Python or NumPy value into the current trace (under jit,
    a staged value); eagerly an array."""
    return _arr(x)


def optimization_barrier(operand, /):
    """The identity on a pytree of arrays, opaque to XLA's optimiser
    (`stablehlo.optimization_barrier`): work is not moved across it, so it orders
    computations (as the remat passes use it). Differentiable; its tangents and
    cotangents pass through.

    >>> optimization_barrier((1.0, np.ones(2)))[1].tolist()
    [1.0, 1.0]
    """
    leaves, tree = tree_flatten(operand)
    return tree_unflatten(tree, optimization_barrier_p.bind(*[_arr(x) for x in leaves]))


def platform_dependent(*args: Any, default: Callable | None = None, **per_platform: Callable):
    """Call the branch for the platform funcad runs on (`cpu`, `cuda`/`gpu`, `rocm`,
    `tpu`), else `default`, with `args`. Chosen when traced, from the default backend.

    >>> platform_dependent(2.0, cpu=lambda x: x + 1, default=lambda x: x)
    3.0
    """
    plat = default_backend()
    names = {"gpu": ("cuda", "rocm", "gpu")}.get(plat, (plat,))
    names = names + (("gpu",) if plat in ("cuda", "rocm") else ())
    for name in names:
        if name in per_platform:
            return per_platform[name](*args)
    if default is None:
        raise FuncadValueError(f"platform_dependent: no branch for platform {plat!r} and no default; "
                               f"branches given: {sorted(per_platform)}")
    return default(*args)


def composite(decomposition: Callable, name: str, version: int = 0):
    """Mark a function as a named composite op; funcad runs (and differentiates, batches
    and compiles) its decomposition, which by definition has the same semantics.

    >>> import funcad.numpy as fnp
    >>> tangent = composite(lambda x: fnp.sin(x) / fnp.cos(x), "my.tangent")
    >>> f"{float(tangent(0.5)):.6f}"
    '0.546302'
    """
    if not isinstance(name, str) or not name:
        raise FuncadValueError(f"composite needs a non-empty name, got {name!r}")

    @functools.wraps(decomposition)
    def run(*args, **kwargs):
        return decomposition(*args, **kwargs)
    return run
