"""funcad.scipy.integrate: trapezoid."""
from __future__ import annotations

from .. import numpy as fnp
from ..core.avals import aval_of
from ..numpy._dtypes import asarray_or_tracer, to_inexact

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of y along `axis` by the trapezoidal rule, at points x (or spacing dx).

    >>> import numpy as np
    >>> float(trapezoid(np.array([0.0, 1.0, 2.0])))
    2.0
    """
    y = to_inexact(asarray_or_tracer(y))
    y = fnp.moveaxis(y, axis, -1)
    if x is None:
        d = dx
    else:
        x = to_inexact(asarray_or_tracer(x))
        x = fnp.moveaxis(x, axis, -1) if aval_of(x).ndim > 1 else x
        d = x[..., 1:] - x[..., :-1]
    return 0.5 * fnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)
