"""Contexts that evaluate operations at once under a transformation (JAX's
`core.eval_context` and `ensure_compile_time_eval`)."""
from __future__ import annotations

import contextlib
from typing import Iterator

from .trace import Trace, Tracer, ctx, set_trace


def eval_context() -> set_trace:
    """Inside this block every operation runs eagerly, whatever transformation is
    current (its inputs must be concrete).

    >>> import funcad, funcad.numpy as fnp
    >>> @funcad.jit
    ... def f(x):
    ...     with eval_context():
    ...         n = int(fnp.arange(4).sum())
    ...     return x * n
    >>> float(f(1.0))
    6.0
    """
    return set_trace(None)


class _CompileTimeEvalTrace(Trace):
    """Runs operations whose inputs are all concrete at once, and passes the
    others on to the transformation underneath."""

    name = "ensure_compile_time_eval"

    def process_primitive(self, prim, args, params):
        if any(isinstance(x, Tracer) for x in args):
            with set_trace(self.parent):
                return prim.bind(*args, **params)
        with set_trace(None):
            return prim.bind(*args, **params)


@contextlib.contextmanager
def ensure_compile_time_eval() -> Iterator[None]:
    """Inside this block, operations on concrete values (NumPy arrays, Python
    scalars, closed-over constants) are computed at once even under `jit`,
    so their results can steer Python control flow; operations on traced
    values are traced as usual.

    >>> import funcad, funcad.numpy as fnp, numpy as np
    >>> @funcad.jit
    ... def f(x):
    ...     with funcad.ensure_compile_time_eval():
    ...         n = int(fnp.sum(fnp.arange(4)))  # concrete: 6
    ...     return x * n
    >>> f(1.0)
    Array(6., dtype=float64)
    """
    if ctx.trace is None:  # nothing is traced: everything already runs at once
        yield
        return
    trace = _CompileTimeEvalTrace(ctx.trace)
    try:
        with set_trace(trace):
            yield
    finally:
        trace.finish()
