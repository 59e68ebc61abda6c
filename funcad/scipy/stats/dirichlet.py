"""The Dirichlet distribution over the simplex; components along axis 0 of x."""
from ... import numpy as _fnp
from ...core.avals import aval_of as _aval_of
from ...core.errors import FuncadValueError as _FuncadValueError
from ..special import gammaln as _gammaln, xlogy as _xlogy
from ._common import promote_inexact as _promote_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, alpha):
    """log density; -inf off the simplex (entries > 0 summing to 1 within 1e-6).
    x may leave out its last component (then 1 - sum(x) is used).

    >>> from funcad.scipy.stats import dirichlet
    >>> import numpy as np
    >>> round(float(dirichlet.logpdf(np.array([0.5, 0.5]), np.array([2.0, 2.0]))), 6)
    0.405465
    """
    x, alpha = _promote_inexact("dirichlet.logpdf", x, alpha)
    xs, ashape = _aval_of(x).shape, _aval_of(alpha).shape
    if len(ashape) != 1:
        raise _FuncadValueError(f"`alpha` must be one-dimensional; got alpha.shape={ashape}")
    if not xs or xs[0] not in (ashape[0], ashape[0] - 1):
        raise _FuncadValueError("`x` must have either the same number of entries as `alpha` or one "
                               f"entry fewer; got x.shape={xs}, alpha.shape={ashape}")
    if xs[0] != ashape[0]:
        x = _fnp.concatenate([x, 1.0 - _fnp.sum(x, 0, keepdims=True)], axis=0)
    normalizer = _fnp.sum(_gammaln(alpha)) - _gammaln(_fnp.sum(alpha))
    a = _fnp.reshape(alpha, ashape + (1,) * (len(xs) - 1))
    log_probs = _fnp.sum(_xlogy(a - 1, x), axis=0) - normalizer
    simplex = _fnp.logical_and(_fnp.all(_fnp.greater(x, 0), axis=0),
                              _fnp.less(_fnp.abs(_fnp.sum(x, axis=0) - 1), 1e-6))
    return _fnp.where(simplex, log_probs, -_fnp.inf)


def pdf(x, alpha):
    """Density; 0 off the simplex.

    >>> from funcad.scipy.stats import dirichlet
    >>> import numpy as np
    >>> round(float(dirichlet.pdf(np.array([0.5, 0.5]), np.array([2.0, 2.0]))), 6)
    1.5
    """
    return _fnp.exp(logpdf(x, alpha))
