"""The multinomial distribution: counts x (last axis) of n trials with probabilities p."""
import numpy as _np

from ... import numpy as _fnp
from ...core.avals import aval_of as _aval_of
from ...core.errors import FuncadValueError as _FuncadValueError
from ...arrays.dtypes import asarray_or_tracer as _asarray, promote as _promote, to_inexact as _to_inexact
from ..special import gammaln as _gammaln, xlogy as _xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """gammaln(n + 1) + sum(x log p - gammaln(x + 1)); -inf where sum(x) != n. x and n
    must be integers (as in JAX).

    >>> import numpy as np
    >>> from funcad.scipy.stats import multinomial
    >>> round(float(multinomial.logpmf(np.array([1, 2]), 3, np.array([0.5, 0.5]))), 6)
    -0.980829
    """
    p = _to_inexact(_asarray(p))
    x, n = _promote(_asarray(x), _asarray(n))
    xd = _aval_of(x).dtype
    if xd.kind not in "iu":
        raise _FuncadValueError(f"x and n must be of integer type; got x.dtype={_aval_of(x).dtype}, "
                                f"n.dtype={_aval_of(n).dtype}")
    in_support = _fnp.equal(_fnp.sum(x, axis=-1, dtype=xd), n)
    dt = _aval_of(p).dtype
    x, n = x.astype(dt), n.astype(dt)
    out = _gammaln(n + 1) + _fnp.sum(_xlogy(x, p) - _gammaln(x + 1), axis=-1)
    return _fnp.where(in_support, out, -_np.inf)


def pmf(x, n, p):
    """P(X = x).

    >>> import numpy as np
    >>> from funcad.scipy.stats import multinomial
    >>> round(float(multinomial.pmf(np.array([1, 2]), 3, np.array([0.5, 0.5]))), 6)
    0.375
    """
    return _fnp.exp(logpmf(x, n, p))
