"""Taylor-mode automatic differentiation: JAX's `jax.experimental.jet`.

`jet(fun, primals, series)` pushes a truncated Taylor polynomial through `fun` in
one forward pass, instead of nesting `jvp` K times. With x(t) = x0 + x1 t + x2
t^2/2! + ... (the factorial-scaled convention, the default), the output series
of f(x(t)) holds its derivatives in t at t = 0: for x(t) = x + t v (series
[v, 0, 0, ...]) they are the directional derivatives d^k/dt^k f(x + t v).

It is an interpreter over funcad's traces (`_jet_trace.py`) with one rule per
primitive (`_jet_rules.py`), so it composes with `jit`, `vmap` and `grad`.
"""
import math as _math
from typing import Any as _Any
from typing import Callable as _Callable

from ..core.avals import aval_of as _aval_of
from ..core.pytree import tree_flatten as _tree_flatten
from ..core.pytree import tree_structure as _tree_structure
from ..core.pytree import tree_unflatten as _tree_unflatten
from ..core.trace import Tracer as _Tracer
from ..core.traceback_util import api_boundary as _api_boundary
from . import _jet_rules  # noqa: F401  (fills the rule table)
from ._jet_trace import jet_flat as _jet_flat
from ..arrays.dtypes import asarray_or_tracer as _asarray
from ..numpy import asarray as _asarray

__all__ = ["jet", "jet2"]


def _leaf(x, what: str):
    td = _tree_structure(x)
    if td.num_leaves != 1 or td.num_nodes != 1:
        raise ValueError(what)
    return x


def _term_like(term, primal):
    # A Python scalar term takes the primal's dtype, as JAX's weak-typed one does.
    if isinstance(term, (int, float, complex)) and not isinstance(term, bool):
        return _asarray(term, dtype=_aval_of(primal).dtype)
    return _asarray(term)


@_api_boundary
def jet(fun: _Callable, primals, series, factorial_scaled: bool = True) -> tuple[_Any, _Any]:
    """Taylor-mode higher-order differentiation, as `jax.experimental.jet.jet`.

    `primals` is a tuple or list of `fun`'s positional arguments (arrays or
    scalars), `series` one tuple or list of K terms per argument: with
    `factorial_scaled` (the default) term k is the k-th derivative of the input
    path, else its k-th Taylor coefficient (divided by k!). Returns
    `(fun(*primals), series_out)`, `series_out` shaped as `fun`'s output with
    each array replaced by the list of its K terms, in the same convention.

    >>> import funcad.numpy as fnp
    >>> h0, h1, h2 = 0.5 ** 3, 3 * 0.5 ** 2, 6 * 0.5   # h(z) = z^3 at z = 0.5
    >>> f0, (f1, f2) = jet(fnp.sin, (h0,), ((h1, h2),))  # sin(z^3) and its derivatives
    >>> bool(fnp.allclose(f2, -fnp.sin(h0) * h1 ** 2 + fnp.cos(h0) * h2))
    True
    """
    try:
        order, = set(map(len, series))
    except ValueError:
        raise ValueError("jet terms have inconsistent lengths for different arguments") from None
    for i, (x, terms) in enumerate(zip(primals, series)):
        _leaf(x, f"primal value at position {i} is not an array")
        for j, t in enumerate(terms):
            _leaf(t, f"term {j} for argument {i} is not an array")
    if len(primals) != len(series):
        raise ValueError(f"jet got {len(primals)} primals but {len(series)} series; give one tuple "
                         "of terms per primal argument")
    primals = [x if isinstance(x, _Tracer) else _asarray(x) for x in primals]
    series = [[_term_like(t, x) for t in terms] for x, terms in zip(primals, series)]
    if factorial_scaled:
        series = [[t / _math.factorial(k + 1) for k, t in enumerate(terms)] for terms in series]
    out_tree = []

    def flat_fun(*xs):
        leaves, tree = _tree_flatten(fun(*xs))
        out_tree.append(tree)
        return leaves

    p_out, s_out = _jet_flat(flat_fun, primals, series, order)
    if factorial_scaled:
        s_out = [[t * _math.factorial(k + 1) for k, t in enumerate(terms)] for terms in s_out]
    return _tree_unflatten(out_tree[0], p_out), _tree_unflatten(out_tree[0], s_out)


def jet2(fun: _Callable, primals, series) -> tuple[_Any, _Any]:
    """`jet` with `factorial_scaled=False`: the series are plain Taylor coefficients.

    >>> import funcad.numpy as fnp
    >>> _, (c1, c2) = jet2(fnp.exp, (0.0,), ((1.0, 0.0),))   # exp(t) = 1 + t + t^2/2 + ...
    >>> float(c2)
    0.5
    """
    return jet(fun, primals, series, factorial_scaled=False)
