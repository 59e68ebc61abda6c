"""The jet rules: for each primitive, (primals, series, **params) -> (primal_out,
series_out), on unscaled Taylor coefficients (x(t) = x0 + x1 t + x2 t^2 + ...).

The table covers every primitive JAX's `jax.experimental.jet` has a rule for,
with its recurrences (so the series are JAX's): the propagation of exp, log,
sin/cos, logistic, division and products by Cauchy products; functions given
by their first derivative (erf, asinh) by f' composed with the input series;
the rest as compositions of these. Where JAX's rule computes a wrong primal
(tanh as 2 logistic(2x) - 1 loses small values; rem as a floor-modulo; max
as a select that drops NaN; integer div as true division) the primal here is
the primitive's own and the series are the exact ones.
"""
from __future__ import annotations

import math

import numpy as np

from .. import lax as _lax
from ..core.avals import aval_of
from ..primitives import bits as B
from ..primitives import convolution as C
from ..primitives import elementwise as E
from ..primitives import fft as F
from ..primitives import indexing as I
from ..primitives import reductions as R
from ..primitives import sharding as SH
from ..primitives import structural as S
from ..primitives._base import const
from ..primitives.linalg import dot_general_p
from ..transforms.checkpoint import name_p
from ..transforms.closed_call import closed_call_p
from ..transforms.jit import jit_p
from ._jet_trace import jet_rules, jet_terms
from ..numpy import broadcast_arrays
from ..numpy import where
from ..core.staging import trace_to_jaxpr
from ..core.trace import eval_jaxpr
from ._jet_trace import jet_flat
from ..lowering.runtime import memo

__all__: list = []

mul, div, add, sub = E.mul_p.bind, E.div_p.bind, E.add_p.bind, E.sub_p.bind
exp, log = E.exp_p.bind, E.log_p.bind


def _pow(x, r):
    return E.pow_p.bind(x, const(x, r))


# ------------------------------------------------------------- zero series ----

def _zero_rule(prim):
    def rule(primals, series, **params):
        return prim.bind(*primals, **params), None
    return rule


for _p in (E.le_p, E.lt_p, E.gt_p, E.ge_p, E.eq_p, E.ne_p, E.not_p, E.and_p, E.or_p, E.xor_p,
           E.floor_p, E.ceil_p, E.round_p, E.sign_p, E.stop_gradient_p, E.is_finite_p,
           B.shift_left_p, B.shift_right_arithmetic_p, B.shift_right_logical_p,
           B.bitcast_convert_type_p, B.population_count_p, B.clz_p, R.argmax_p, R.argmin_p):
    jet_rules[_p] = _zero_rule(_p)


# ------------------------------------------------------------------ linear ----

def _linear_rule(prim):
    def rule(primals, series, **params):
        out = prim.bind(*primals, **params)
        terms = [prim.bind(*ts, **params) for ts in zip(*series)]
        if prim.multiple_results:
            terms = [list(t) for t in zip(*terms)]
        return out, terms
    return rule


for _p in (E.neg_p, E.real_p, E.complex_p, E.conj_p, E.imag_p, E.add_p, E.sub_p,
           E.convert_element_type_p, S.broadcast_in_dim_p, S.concatenate_p, S.pad_p, S.reshape_p,
           S.squeeze_p, S.rev_p, S.transpose_p, S.slice_p, R.reduce_sum_p, R.cumsum_p, F.fft_p,
           SH.sharding_constraint_p, name_p):
    jet_rules[_p] = _linear_rule(_p)


def _dynamic_slice_rule(primals, series, **params):
    operand, *starts = primals
    return (I.dynamic_slice_p.bind(operand, *starts, **params),
            [I.dynamic_slice_p.bind(t, *starts, **params) for t in series[0]])


def _dynamic_update_slice_rule(primals, series, **params):
    operand, update, *starts = primals
    return (I.dynamic_update_slice_p.bind(operand, update, *starts, **params),
            [I.dynamic_update_slice_p.bind(t, u, *starts, **params)
             for t, u in zip(series[0], series[1])])


def _gather_rule(primals, series, **params):
    operand, indices = primals
    return (I.gather_p.bind(operand, indices, **params),
            [I.gather_p.bind(t, indices, **params) for t in series[0]])


def _scatter_add_rule(primals, series, **params):
    operand, indices, updates = primals
    return (I.scatter_add_p.bind(operand, indices, updates, **params),
            [I.scatter_add_p.bind(t, indices, u, **params) for t, u in zip(series[0], series[2])])


def _select_n_rule(primals, series):
    which, *cases = primals
    return E.select_n_p.bind(which, *cases), [E.select_n_p.bind(which, *ts) for ts in zip(*series[1:])]


jet_rules[I.dynamic_slice_p] = _dynamic_slice_rule
jet_rules[I.dynamic_update_slice_p] = _dynamic_update_slice_rule
jet_rules[I.gather_p] = _gather_rule
jet_rules[I.scatter_add_p] = _scatter_add_rule
jet_rules[E.select_n_p] = _select_n_rule


def _cumulative_rule(combine):
    # The parallel prefix scan: its series follow from the rules of `combine` (as JAX's).
    def rule(primals, series, *, axis, reverse):
        return jet_terms(lambda x: _lax.associative_scan(combine, x, reverse=reverse, axis=axis),
                         primals, series)
    return rule


jet_rules[R.cumprod_p] = _cumulative_rule(E.mul_p.bind)
jet_rules[R.cummax_p] = _cumulative_rule(E.max_p.bind)
jet_rules[R.cummin_p] = _cumulative_rule(E.min_p.bind)


# ------------------------------------------------- the Taylor recurrences ----

def _compose(c, u, v):
    """v[1:] of v = f(u) from c = f'(u) (all series): k v_k = sum_j j c_{k-j} u_j."""
    for k in range(1, len(v)):
        v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
    return v


def _deriv_rule(prim, deriv):
    """The rule of a function given by its derivative (itself jetted)."""
    def rule(primals, series, **params):
        (x,), (s,) = primals, series
        c0, cs = jet_terms(deriv, [x], [s])
        v = _compose([c0] + cs, [x] + s, [prim.bind(x, **params)] + [None] * len(s))
        return v[0], v[1:]
    return rule


def _comp_rule(prim, comp):
    """The series of a composition of ruled primitives; the primal is the primitive's."""
    def rule(primals, series, **params):
        _, terms = jet_terms(comp, primals, series)
        return prim.bind(*primals, **params), terms
    return rule


def _erf_deriv(x):
    return mul(const(x, 2 / math.sqrt(math.pi)), exp(E.neg_p.bind(mul(x, x))))


def _asinh_deriv(x):
    return _pow(add(mul(x, x), const(x, 1)), -0.5)


def _rem_rule(primals, series):
    # rem truncates (C fmod): x - y trunc(x / y), the quotient locally constant. (JAX's
    # rule composes x - y floor(x / y), whose primal is wrong for operands of mixed sign.)
    x, y = primals
    out = E.rem_p.bind(x, y)
    q = E.round_p.bind(div(sub(x, out), y))
    return out, [sub(tx, mul(q, ty)) for tx, ty in zip(*series)]


jet_rules[E.erf_p] = _deriv_rule(E.erf_p, _erf_deriv)
jet_rules[E.asinh_p] = _deriv_rule(E.asinh_p, _asinh_deriv)
jet_rules[E.exp2_p] = _comp_rule(E.exp2_p, lambda x: exp(mul(x, const(x, math.log(2)))))
jet_rules[E.expm1_p] = _comp_rule(E.expm1_p, lambda x: sub(exp(x), const(x, 1)))
jet_rules[E.log1p_p] = _comp_rule(E.log1p_p, lambda x: log(add(const(x, 1), x)))
jet_rules[E.sqrt_p] = _comp_rule(E.sqrt_p, lambda x: _pow(x, 0.5))
jet_rules[E.rsqrt_p] = _comp_rule(E.rsqrt_p, lambda x: _pow(x, -0.5))
jet_rules[E.acosh_p] = _comp_rule(E.acosh_p, lambda x: log(add(x, mul(
    E.sqrt_p.bind(sub(x, const(x, 1))), E.sqrt_p.bind(add(x, const(x, 1)))))))
jet_rules[E.atanh_p] = _comp_rule(E.atanh_p, lambda x: mul(const(x, 0.5), log(
    div(add(const(x, 1), x), sub(const(x, 1), x)))))
jet_rules[E.erfc_p] = _comp_rule(E.erfc_p, lambda x: sub(const(x, 1), E.erf_p.bind(x)))
jet_rules[E.clamp_p] = _comp_rule(E.clamp_p, lambda lo, x, hi: E.min_p.bind(E.max_p.bind(lo, x), hi))
jet_rules[E.rem_p] = _rem_rule
jet_rules[E.one_minus_square_p] = _comp_rule(E.one_minus_square_p, lambda x: sub(const(x, 1), mul(x, x)))

# Beyond JAX's table: the inverse trigonometric functions by their derivatives, tan
# as sin / cos.
jet_rules[E.atan_p] = _deriv_rule(E.atan_p, lambda x: div(const(x, 1), add(const(x, 1), mul(x, x))))
jet_rules[E.asin_p] = _deriv_rule(E.asin_p, lambda x: _pow(sub(const(x, 1), mul(x, x)), -0.5))
jet_rules[E.acos_p] = _deriv_rule(E.acos_p, lambda x: E.neg_p.bind(_pow(sub(const(x, 1), mul(x, x)), -0.5)))
jet_rules[E.tan_p] = _comp_rule(E.tan_p, lambda x: div(E.sin_p.bind(x), E.cos_p.bind(x)))


def _erf_inv_rule(primals, series):
    # erf_inv' = (sqrt(pi) / 2) exp(y^2) of the output y: its series and y's are
    # built together, one order at a time.
    (x,), (s,) = primals, series
    u = [x] + s
    K = len(s)
    v = [E.erf_inv_p.bind(x)] + [None] * K
    scale = math.sqrt(math.pi) / 2
    sq = [mul(v[0], v[0])] + [None] * K
    ex = [exp(sq[0])] + [None] * K
    c = [mul(const(x, scale), ex[0])] + [None] * K
    for k in range(1, K + 1):
        v[k] = sum(j * c[k - j] * u[j] for j in range(1, k + 1)) / k
        if k == K:
            break
        sq[k] = sum(v[k - j] * v[j] for j in range(k + 1))
        ex[k] = sum(j * ex[k - j] * sq[j] for j in range(1, k + 1)) / k
        c[k] = scale * ex[k]
    return v[0], v[1:]


def _exp_rule(primals, series, **params):
    (x,), (s,) = primals, series
    v = [E.exp_p.bind(x, **params)] + [None] * len(s)
    u = [x] + s
    for k in range(1, len(v)):  # v' = v u'
        v[k] = sum(j * v[k - j] * u[j] for j in range(1, k + 1)) / k
    return v[0], v[1:]


def _log_rule(primals, series, **params):
    (x,), (s,) = primals, series
    u = [x] + s
    v = [E.log_p.bind(x, **params)] + [None] * len(s)
    for k in range(1, len(v)):  # u v' = u'
        conv = sum(j * v[j] * u[k - j] for j in range(1, k))
        v[k] = (u[k] - conv / k) / u[0]
    return v[0], v[1:]


def _pow_rule(primals, series):
    x, r = primals
    z0, zs = jet_terms(lambda x, y: mul(y, log(x)), primals, series)  # x^r = exp(r log x)
    u = [z0] + zs
    v = [E.pow_p.bind(x, r)] + [None] * len(zs)
    for k in range(1, len(v)):
        v[k] = sum(j * v[k - j] * u[j] for j in range(1, k + 1)) / k
    return v[0], v[1:]


def _pow_by_squaring(x, n: int):
    if n < 0:
        return _pow_by_squaring(div(const(x, 1), x), -n)
    if n == 1:
        return x
    if n % 2 == 0:
        return _pow_by_squaring(mul(x, x), n // 2)
    return mul(x, _pow_by_squaring(mul(x, x), (n - 1) // 2))


def _integer_pow_rule(primals, series, *, y):
    out = E.integer_pow_p.bind(primals[0], y=y)
    if y == 0:
        return out, None
    _, terms = jet_terms(lambda x: _pow_by_squaring(x, y), primals, series)
    return out, terms


def _logistic_series(x, s, **params):
    u = [x] + s
    v = [E.logistic_p.bind(x, **params)] + [None] * len(s)
    e = [v[0] * (1 - v[0])] + [None] * len(s)  # logistic' = logistic (1 - logistic)
    for k in range(1, len(v)):
        v[k] = sum(j * e[k - j] * u[j] for j in range(1, k + 1)) / k
        e[k] = (1 - v[0]) * v[k] - sum(v[j] * v[k - j] for j in range(1, k + 1))
    return v


def _logistic_rule(primals, series, **params):
    (x,), (s,) = primals, series
    v = _logistic_series(x, s, **params)
    return v[0], v[1:]


def _tanh_rule(primals, series, **params):
    # tanh x = 2 logistic(2x) - 1 for the series; the primal is tanh's own.
    (x,), (s,) = primals, series
    v = _logistic_series(mul(const(x, 2), x), [2 * t for t in s])
    return E.tanh_p.bind(x, **params), [2 * t for t in v[1:]]


def _atan2_rule(primals, series):
    x, y = primals
    q0, qs = jet_terms(div, primals, series)
    c0, cs = jet_terms(lambda q: div(const(q, 1), add(const(q, 1), mul(q, q))), [q0], [qs])
    v = _compose([c0] + cs, [q0] + qs, [E.atan2_p.bind(x, y)] + [None] * len(qs))
    return v[0], v[1:]


def _div_rule(primals, series):
    x, y = primals
    u, w = [x] + series[0], [y] + series[1]
    v = [E.div_p.bind(x, y)] + [None] * len(series[0])
    for k in range(1, len(v)):  # y v = x, order by order
        conv = sum(v[j] * w[k - j] for j in range(k))
        v[k] = (u[k] - conv) / w[0]
    return v[0], v[1:]


def _sinusoidal_rules(sign, sin, cos):
    """sin' = cos, cos' = sign sin (sign -1: sin/cos, +1: sinh/cosh), built together."""
    def both(primals, series, params):
        (x,), (s,) = primals, series
        u = [x] + s
        sv = [sin(x, **params)] + [None] * len(s)
        cv = [cos(x, **params)] + [None] * len(s)
        for k in range(1, len(sv)):
            sv[k] = sum(j * u[j] * cv[k - j] for j in range(1, k + 1)) / k
            cv[k] = sum(j * u[j] * sv[k - j] for j in range(1, k + 1)) / k * sign
        return sv, cv

    def sin_rule(primals, series, **params):
        sv, _ = both(primals, series, params)
        return sv[0], sv[1:]

    def cos_rule(primals, series, **params):
        _, cv = both(primals, series, params)
        return cv[0], cv[1:]
    return sin_rule, cos_rule


def _bilinear_rule(prim):
    def rule(primals, series, **params):
        u, w = [primals[0]] + series[0], [primals[1]] + series[1]
        v = [sum(prim.bind(u[j], w[k - j], **params) for j in range(k + 1)) for k in range(len(u))]
        return v[0], v[1:]
    return rule


jet_rules[E.erf_inv_p] = _erf_inv_rule
jet_rules[E.exp_p] = _exp_rule
jet_rules[E.log_p] = _log_rule
jet_rules[E.pow_p] = _pow_rule
jet_rules[E.integer_pow_p] = _integer_pow_rule
jet_rules[E.logistic_p] = _logistic_rule
jet_rules[E.tanh_p] = _tanh_rule
jet_rules[E.atan2_p] = _atan2_rule
jet_rules[E.div_p] = _div_rule
jet_rules[E.sin_p], jet_rules[E.cos_p] = _sinusoidal_rules(-1, E.sin_p.bind, E.cos_p.bind)
jet_rules[E.sinh_p], jet_rules[E.cosh_p] = _sinusoidal_rules(1, E.sinh_p.bind, E.cosh_p.bind)
for _p in (E.mul_p, dot_general_p, C.conv_general_dilated_p):
    jet_rules[_p] = _bilinear_rule(_p)


# ------------------------------------------- choices: max, min, abs, reduce ----

def _chooser_reduce_rule(prim):
    # The series of the maximal entries, averaged over ties (as JAX's).
    def rule(primals, series, *, axes, **params):
        (x,), (gs,) = primals, series
        out = prim.bind(x, axes=axes, **params)
        kept = tuple(1 if i in axes else d for i, d in enumerate(aval_of(x).shape))
        where = E.convert_element_type(E.eq_p.bind(x, S.reshape(out, kept)), aval_of(gs[0]).dtype)
        counts = R.reduce_sum_p.bind(where, axes=axes)
        return out, [div(R.reduce_sum_p.bind(mul(g, where), axes=axes), counts) for g in gs]
    return rule


def _broadcast(*xs):
    return broadcast_arrays(*xs)


def _minmax_rule(prim, pick):
    # The series of the chosen operand, the mean of both where they are equal (as JAX's).
    def rule(primals, series):
        x, y = _broadcast(*primals)
        first, tie = pick(x, y), E.eq_p.bind(x, y)
        terms = []
        for tx, ty in zip(*series):
            tx, ty = _broadcast(tx, ty)
            t = E.select_n_p.bind(first, ty, tx)
            terms.append(E.select_n_p.bind(tie, t, (tx + ty) / 2))
        return prim.bind(*primals), terms
    return rule


def _abs_rule(primals, series):
    (x,), (s,) = primals, series
    negs = where(E.lt_p.bind(x, const(x, 0)), const(x, -1), const(x, 1))
    return E.abs_p.bind(x), [negs * t for t in s]


jet_rules[R.reduce_max_p] = _chooser_reduce_rule(R.reduce_max_p)
jet_rules[R.reduce_min_p] = _chooser_reduce_rule(R.reduce_min_p)
jet_rules[E.max_p] = _minmax_rule(E.max_p, E.gt_p.bind)
jet_rules[E.min_p] = _minmax_rule(E.min_p, E.lt_p.bind)
jet_rules[E.abs_p] = _abs_rule


# -------------------------------------------------------------------- jit ----

def _jet_jaxpr(closed, order: int, series_avals):
    n = len(closed.in_avals)

    def fun(*xs):
        flat = xs[n:]
        series = [list(flat[i * order:(i + 1) * order]) for i in range(n)]
        p_out, s_out = jet_flat(lambda *a: eval_jaxpr(closed.jaxpr, closed.consts, *a),
                                list(xs[:n]), series, order)
        return list(p_out) + [t for s in s_out for t in s]

    return trace_to_jaxpr(fun, list(closed.in_avals) + list(series_avals), name="jet")


def _jit_rule(primals, series, *, jaxpr, name, backend):
    # jet of a jitted function stays one jitted call (its jet, traced once per signature).
    order = len(series[0])
    flat = [t for s in series for t in s]
    avals = tuple(aval_of(t) for t in flat)
    closed = memo(jaxpr, ("jet", order, avals), lambda: _jet_jaxpr(jaxpr, order, avals))
    outs = jit_p.bind(*primals, *flat, jaxpr=closed, name=f"jet_{name}", backend=backend)
    n = len(jaxpr.out_avals)
    return outs[:n], [outs[n + i * order:n + (i + 1) * order] for i in range(n)]


jet_rules[jit_p] = _jit_rule


def _closed_call_rule(primals, series, *, call_jaxpr):
    # a closed_call has no meaning of its own: the jet of its callee
    return jet_flat(lambda *a: eval_jaxpr(call_jaxpr.jaxpr, call_jaxpr.consts, *a),
                    list(primals), [list(s) for s in series], len(series[0]))


jet_rules[closed_call_p] = _closed_call_rule
