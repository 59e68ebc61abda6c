"""funcad.experimental.checkify: JAX's `jax.experimental.checkify`.

`checkify(f, errors=...)` returns a function that returns `(err, out)`: `out` is what
`f` returns and `err` an `Error` holding the first run-time error (a failed `check`,
a NaN, a division by zero, an out-of-bounds index, as `errors` selects). It traces
`f` to a jaxpr and evaluates it with an interpreter that threads the error state
(`_checkify_interp.py`), so the result can be jitted, vmapped (an error per batch
entry) and differentiated, and checks inside `lax.cond`, `while_loop`, `scan` and
`jit` are found.

>>> import funcad, funcad.numpy as fnp
>>> from funcad.experimental import checkify
>>> def f(x, i):
...     checkify.check(i >= 0, "index needs to be non-negative, got {i}", i=i)
...     return fnp.sin(x)[i]
>>> err, out = funcad.jit(checkify.checkify(f, errors=checkify.all_checks))(fnp.ones(3), fnp.int32(5))
>>> err.get()
'out-of-bounds indexing for array of shape (3,): index 5 is out of bounds for axis 0 with size 3. '
"""
from ._checkify_api import (ErrorCategory, all_checks, automatic_checks, checkify, div_checks,
                           float_checks, index_checks, nan_checks, user_checks)
from ._checkify_error import Error, JaxRuntimeError, check, check_error, debug_check, init_error

__all__ = ["checkify", "check", "check_error", "debug_check", "Error", "ErrorCategory", "JaxRuntimeError",
           "init_error", "user_checks", "nan_checks", "index_checks", "div_checks", "float_checks",
           "automatic_checks", "all_checks"]
