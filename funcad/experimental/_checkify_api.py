"""checkify itself and the error sets (the public names are in checkify.py)."""
from __future__ import annotations

from functools import wraps
from typing import Callable

import numpy as np

from ..core.avals import aval_of
from ..lowering.array import Array
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.staging import trace_to_jaxpr
from ._checkify_error import (DivisionByZeroError, FailedCheckError, JaxException, NaNError, OOBError,
                              init_error)
from ._checkify_interp import Context, checkify_jaxpr

__all__ = ["checkify", "ErrorCategory", "user_checks", "nan_checks", "index_checks", "div_checks",
           "float_checks", "automatic_checks", "all_checks"]

ErrorCategory = type[JaxException]

user_checks = frozenset({FailedCheckError})
nan_checks = frozenset({NaNError})
index_checks = frozenset({OOBError})
div_checks = frozenset({DivisionByZeroError})
float_checks = nan_checks | div_checks
automatic_checks = float_checks | index_checks
all_checks = automatic_checks | user_checks


def checkify(f: Callable, errors: frozenset = user_checks) -> Callable:
    """`f` returning `(Error, output)`: its `check`s are functionalized, and the
    automatic checks in `errors` (`nan_checks`, `div_checks`, `index_checks`, or
    unions such as `float_checks | user_checks`) are added.

    Array arguments are traced; other arguments (Python scalars, strings) stay
    Python values, as JAX's closed-over arguments do.

    >>> import funcad.numpy as fnp
    >>> from funcad.experimental import checkify
    >>> err, out = checkify.checkify(lambda x: x / x, errors=checkify.float_checks)(fnp.float32(0.0))
    >>> err.get()
    'division by zero'
    """
    if not callable(f):
        raise TypeError(f"checkify takes a callable, got {f!r} of type {type(f).__name__}")
    errors = frozenset(errors)
    unknown = [e for e in errors if not (isinstance(e, type) and issubclass(e, JaxException))]
    if unknown:
        raise TypeError(f"checkify's errors= takes a set of error categories (such as "
                        f"checkify.user_checks | checkify.nan_checks), got {unknown!r} in it")

    @wraps(f)
    def checked(*args, **kwargs):
        leaves, in_tree = tree_flatten((args, kwargs))
        traced = [isinstance(x, (np.ndarray, np.generic, Array)) for x in leaves]
        box = []

        def flat_f(*arrays):
            # Arrays are the jaxpr's inputs; other leaves (Python scalars, strings) stay
            # Python values, closed over, as in JAX.
            it = iter(arrays)
            a, kw = tree_unflatten(in_tree, [next(it) if t else x for x, t in zip(leaves, traced)])
            out, out_tree = tree_flatten(f(*a, **kw))
            box.append(out_tree)
            return out

        arrays = [x for x, t in zip(leaves, traced) if t]
        closed = trace_to_jaxpr(flat_f, [aval_of(x) for x in arrays], name="checkify")
        error, outs = checkify_jaxpr(Context(0), closed, errors, init_error, *arrays)
        return error, tree_unflatten(box[0], outs)

    return checked
