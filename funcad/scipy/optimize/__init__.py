"""funcad.scipy.optimize: `minimize` with method="BFGS", as JAX's.

>>> import funcad.numpy as fnp
>>> from funcad.scipy.optimize import minimize
>>> res = minimize(lambda x: fnp.sum((x - 3.0) ** 2), fnp.zeros(2), method="BFGS")
>>> [round(float(v), 6) for v in res.x], bool(res.success)
([3.0, 3.0], True)
"""
from typing import Any as _Any, Callable as _Callable, Mapping as _Mapping, NamedTuple as _NamedTuple

from ...core.errors import FuncadTypeError as _FuncadTypeError, FuncadValueError as _FuncadValueError
from ._bfgs import minimize_bfgs as _minimize_bfgs

__all__ = ["OptimizeResults", "minimize"]

_BFGS_OPTIONS = ("maxiter", "norm", "gtol", "line_search_maxiter")


class OptimizeResults(_NamedTuple):
    """The result of `minimize`.

    x: the solution; success: converged without a line-search failure; status:
    0 converged, 1 maxiter reached, 2 + the line search's status when it failed
    (3 its zoom failed, 5 its maxiter); fun, jac, hess_inv: the value, gradient
    and inverse-Hessian estimate at x; nfev, njev: evaluations of fun and its
    gradient; nit: iterations.
    """
    x: _Any
    success: _Any
    status: _Any
    fun: _Any
    jac: _Any
    hess_inv: _Any
    nfev: _Any
    njev: _Any
    nit: _Any


def minimize(fun: _Callable, x0, args: tuple = (), *, method: str, tol: float | None = None,
             options: _Mapping[str, _Any] | None = None) -> OptimizeResults:
    """Minimise `fun(x, *args)` over a 1-D array x from `x0`, as JAX's
    scipy.optimize.minimize: method "BFGS" (the one JAX offers), gradients by
    funcad.grad, runs eagerly and under jit. `options` takes maxiter, norm (of
    the gradient, inf by default), gtol (1e-5) and line_search_maxiter (10). As
    in JAX, `tol` is accepted and not used: set `gtol` in options.

    >>> import funcad.numpy as fnp
    >>> res = minimize(lambda x, c: fnp.sum((x - c) ** 2), fnp.zeros(2), (1.5,), method="BFGS")
    >>> int(res.nit), round(float(res.fun), 12)
    (2, 0.0)
    """
    options = dict(options or {})
    if not isinstance(args, tuple):
        raise _FuncadTypeError(f"minimize: args must be a tuple, got {type(args).__name__}; "
                               "write args=(value,)")
    if not isinstance(method, str) or method.lower() != "bfgs":
        raise _FuncadValueError(f"Method {method} not recognized; funcad (as JAX) offers method='BFGS'")
    unknown = sorted(set(options) - set(_BFGS_OPTIONS))
    if unknown:
        raise _FuncadTypeError(f"minimize(method='BFGS'): unknown options {unknown}; "
                               f"BFGS takes {', '.join(_BFGS_OPTIONS)}")
    r = _minimize_bfgs(lambda x: fun(x, *args), x0, **options)
    return OptimizeResults(x=r.x_k, success=r.converged & ~r.failed, status=r.status, fun=r.f_k,
                           jac=r.g_k, hess_inv=r.H_k, nfev=r.nfev, njev=r.ngev, nit=r.k)
