"""funcad.scipy.integrate: trapezoid."""

from .. import numpy as _fnp
from ..core.avals import aval_of as _aval_of
from ..arrays.dtypes import asarray_or_tracer as _asarray_or_tracer, to_inexact as _to_inexact

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis: int = -1):
    """The integral of y along `axis` by the trapezoidal rule, at points x (or spacing dx).

    >>> import numpy as np
    >>> float(trapezoid(np.array([0.0, 1.0, 2.0])))
    2.0
    """
    y = _to_inexact(_asarray_or_tracer(y))
    y = _fnp.moveaxis(y, axis, -1)
    if x is None:
        d = dx
    else:
        x = _to_inexact(_asarray_or_tracer(x))
        x = _fnp.moveaxis(x, axis, -1) if _aval_of(x).ndim > 1 else x
        d = x[..., 1:] - x[..., :-1]
    return 0.5 * _fnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)
