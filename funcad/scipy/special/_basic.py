"""expit, logit, the error functions, xlogy/xlog1py, entropies and Box-Cox."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ...core.avals import aval_of
from ...core.errors import FuncadTypeError
from ...arrays.dtypes import asarray_or_tracer, real_args as _real
from ...primitives import elementwise as E
from ...transforms.custom import custom_jvp

__all__ = ["boxcox", "boxcox1p", "entr", "erf", "erfc", "erfinv", "expit", "kl_div", "logit",
           "rel_entr", "xlog1py", "xlogy"]


def expit(x):
    """The logistic sigmoid 1 / (1 + exp(-x)).

    >>> from funcad.scipy.special import expit
    >>> float(expit(0.0))
    0.5
    """
    x = asarray_or_tracer(x)
    if aval_of(x).dtype.kind == "c":  # complex too, as JAX's
        return E.logistic(x)
    return E.logistic(*_real("expit", x))


@custom_jvp
def _logit(x):
    return fnp.log(fnp.divide(x, fnp.subtract(1.0, x)))


# funcad ops, not NumPy's operators: 1.0 - x keeps a bfloat16 x's dtype (ml_dtypes widens it)
_logit.defjvps(lambda g, ans, x: fnp.divide(g, fnp.multiply(x, fnp.subtract(1.0, x))))


def logit(x):
    """log(x / (1 - x)), the inverse of expit; derivative 1 / (x (1 - x)).

    >>> from funcad.scipy.special import logit
    >>> float(logit(0.5))
    0.0
    """
    return _logit(*_real("logit", x))


def erf(x):
    """The error function.

    >>> from funcad.scipy.special import erf
    >>> float(erf(0.0))
    0.0
    """
    return E.erf(*_real("erf", x))


def erfc(x):
    """1 - erf(x), accurate where it is tiny (the erfc primitive).

    >>> from funcad.scipy.special import erfc
    >>> float(erfc(0.0))
    1.0
    """
    return E.erfc(*_real("erfc", x))


def erfinv(x):
    """The inverse of erf on (-1, 1).

    >>> from funcad.scipy.special import erfinv
    >>> float(erfinv(0.0))
    0.0
    """
    return E.erf_inv(*_real("erfinv", x))


@custom_jvp
def _xlogy(x, y):
    return fnp.where(fnp.logical_or(fnp.not_equal(x, 0), fnp.isnan(y)), x * fnp.log(y), 0.0)


@_xlogy.defjvp
def _xlogy_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlogy(x, y), tx * fnp.log(y) + ty * x / y


def xlogy(x, y):
    """x * log(y), defined as 0 where x == 0 (NaN in y still propagates).

    >>> from funcad.scipy.special import xlogy
    >>> float(xlogy(0.0, 0.0))
    0.0
    """
    return _xlogy(*_real("xlogy", x, y))


@custom_jvp
def _xlog1py(x, y):
    return fnp.where(fnp.logical_or(fnp.not_equal(x, 0), fnp.isnan(y)), x * fnp.log1p(y), 0.0)


@_xlog1py.defjvp
def _xlog1py_jvp(primals, tangents):
    (x, y), (tx, ty) = primals, tangents
    return _xlog1py(x, y), tx * fnp.log1p(y) + ty * x / (1.0 + y)


def xlog1py(x, y):
    """x * log1p(y), defined as 0 where x == 0.

    >>> from funcad.scipy.special import xlog1py
    >>> float(xlog1py(0.0, -1.0))
    0.0
    """
    return _xlog1py(*_real("xlog1py", x, y))


@custom_jvp
def _xlogx(x):
    return _xlogy(x, x)


_xlogx.defjvps(lambda g, ans, x: g * (fnp.log(x) + 1.0))


def entr(x):
    """-x log(x) for x > 0, 0 at 0, -inf for x < 0.

    >>> from funcad.scipy.special import entr
    >>> float(entr(1.0))
    -0.0
    """
    x, = _real("entr", x)
    return fnp.where(fnp.less(x, 0), -np.inf, fnp.negative(_xlogx(x)))


def _log_ratio(p, q):
    """log(p / q) for p, q > 0: through log1p near 1, and log p - log q where p / q
    would under- or overflow (as SciPy)."""
    ratio = p / q
    near_one = fnp.logical_and(fnp.greater(ratio, 0.5), fnp.less(ratio, 2.0))
    normal = fnp.logical_and(fnp.greater(ratio, np.finfo(aval_of(ratio).dtype).tiny),
                             fnp.less(ratio, np.inf))
    u = (fnp.where(near_one, p, 1.0) - fnp.where(near_one, q, 1.0)) / fnp.where(near_one, q, 1.0)
    out = fnp.where(near_one, fnp.log1p(u),
                    fnp.where(normal, fnp.log(fnp.where(normal, ratio, 1.0)), fnp.log(p) - fnp.log(q)))
    return out, ratio, near_one, u


def _entr_masks(p, q):
    nan = fnp.logical_or(fnp.isnan(p), fnp.isnan(q))
    pos = fnp.logical_and(fnp.greater(p, 0), fnp.greater(q, 0))
    zero = fnp.logical_and(fnp.equal(p, 0), fnp.greater_equal(q, 0))
    return nan, pos, zero, fnp.where(pos, p, 1.0), fnp.where(pos, q, 1.0)


def _rel_entr_value(p, q, kl):
    nan, pos, zero, sp, sq = _entr_masks(p, q)
    log_pq, _, near_one, u = _log_ratio(sp, sq)
    val = sp * log_pq
    if kl:
        # p log(1 + u) - (p - q) with p = q (1 + u) is q u^2 (1/2 - u/6 + u^2/12 - u^3/20 + u^4/30 ...):
        # summed directly for small u, where the subtraction would cancel.
        series = (sp - sq) * u * (0.5 - u * (1 / 6 - u * (1 / 12 - u * (1 / 20 - u / 30))))
        small = fnp.logical_and(near_one, fnp.less(fnp.abs(u), 0.05))
        val = fnp.where(small, series, val - (sp - sq))
    return fnp.where(nan, np.nan, fnp.where(pos, val, fnp.where(zero, q if kl else fnp.zeros_like(q), np.inf)))


def _rel_entr_jvp(kl, primals, tangents):
    (p, q), (tp, tq) = primals, tangents
    nan, pos, zero, sp, sq = _entr_masks(p, q)
    log_pq, ratio, _, _ = _log_ratio(sp, sq)
    if kl:
        finite_q = fnp.less(sq, np.inf)
        fq = fnp.where(finite_q, sq, 1.0)
        dp, dq = log_pq, -fnp.where(finite_q, (fnp.where(finite_q, sp, 1.0) - fq) / fq, -1.0)
    else:
        dp, dq = log_pq + 1.0, -ratio
    dp = fnp.where(nan, np.nan, fnp.where(pos, dp, 0.0))
    dq = fnp.where(nan, np.nan, fnp.where(pos, dq, fnp.where(zero, 1.0 if kl else 0.0, fnp.zeros_like(q))))
    return _rel_entr(p, q, kl), tp * dp + tq * dq


_rel_entr = custom_jvp(_rel_entr_value, nondiff_argnums=(2,))
_rel_entr.defjvp(_rel_entr_jvp)


def rel_entr(p, q):
    """p log(p / q) for p, q > 0; 0 where p == 0 and q >= 0; inf elsewhere.

    >>> from funcad.scipy.special import rel_entr
    >>> float(rel_entr(1.0, 1.0))
    0.0
    """
    return _rel_entr(*_real("rel_entr", p, q), False)


def kl_div(p, q):
    """p log(p / q) - p + q for p, q > 0; q where p == 0 and q >= 0; inf elsewhere.

    >>> from funcad.scipy.special import kl_div
    >>> float(kl_div(0.0, 2.0))
    2.0
    """
    return _rel_entr(*_real("kl_div", p, q), True)


def boxcox(x, lmbda):
    """(x**lmbda - 1) / lmbda, log(x) where lmbda == 0.

    >>> from funcad.scipy.special import boxcox
    >>> float(boxcox(1.0, 2.0))
    0.0
    """
    x, lmbda = _real("boxcox", x, lmbda)
    return _boxcox(fnp.log(x), lmbda)


def boxcox1p(x, lmbda):
    """((1 + x)**lmbda - 1) / lmbda, log1p(x) where lmbda == 0.

    >>> from funcad.scipy.special import boxcox1p
    >>> float(boxcox1p(0.0, 2.0))
    0.0
    """
    x, lmbda = _real("boxcox1p", x, lmbda)
    return _boxcox(fnp.log1p(x), lmbda)


def _boxcox(log_x, lmbda):
    is0 = fnp.equal(lmbda, 0)
    safe = fnp.where(is0, 1.0, lmbda)
    return fnp.where(is0, log_x, fnp.expm1(safe * log_x) / safe)
