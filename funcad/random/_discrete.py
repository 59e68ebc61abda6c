"""Counting samplers: poisson, binomial, multinomial, with JAX's algorithms and key use.

The rejection samplers loop over the whole array (`while any element is not
done`), drawing fresh uniforms for every element each round and keeping the
first accepted value, exactly as JAX's do; so the values equal JAX's.
"""
from __future__ import annotations

import numpy as np

from .. import numpy as fnp
from ..lax import cumsum, scan, while_loop
from ..primitives import elementwise as E
from ._keys import canonical_shape, check_key, current_impl, split_key
from ._samplers import (_as, _c, _check_shape, _dtype_of, _int_dtype, _normal_real, _shape_of, _two,
                        _uniform)
from ._samplers import _float_dtype

__all__ = ["poisson", "binomial", "multinomial"]


def _f(x, v):
    return _c(v, x.dtype)


# ------------------------------------------------------------------ poisson ----

def _poisson_knuth(key, lam, shape, dtype):
    # Count uniforms until their product drops below exp(-lam) (in log space).
    def body(s):
        k, rng, log_prod = s
        rng, sub = _two(rng)
        k = fnp.where(E.gt(log_prod, E.neg(lam)), E.add(k, _c(1, dtype)), k)
        return k, rng, E.add(log_prod, E.log(_uniform(sub, shape, np.dtype(np.float32), 0.0, 1.0)))

    init = (fnp.zeros(shape, dtype), key, fnp.zeros(shape, np.float32))
    k = while_loop(lambda s: fnp.any(E.gt(s[2], E.neg(lam))), body, init)[0]
    return E.sub(k, _c(1, dtype))


def _poisson_rejection(key, lam, shape, dtype):
    # Hormann's transformed rejection (PTRS).
    log_lam = E.log(lam)
    b = fnp.add(0.931, fnp.multiply(2.53, E.sqrt(lam)))
    a = fnp.add(-0.059, fnp.multiply(0.02483, b))
    inv_alpha = fnp.add(1.1239, fnp.divide(1.1328, fnp.subtract(b, 3.4)))
    v_r = fnp.subtract(0.9277, fnp.divide(3.6224, fnp.subtract(b, 2)))

    def body(s):
        k_out, accepted, rng = s
        rng, k0, k1 = _two(rng, 3)
        u = fnp.subtract(_uniform(k0, shape, lam.dtype, 0.0, 1.0), 0.5)
        v = _uniform(k1, shape, lam.dtype, 0.0, 1.0)
        us = fnp.subtract(0.5, fnp.abs(u))
        k = fnp.floor(fnp.add(fnp.add(fnp.multiply(fnp.add(fnp.divide(fnp.multiply(2, a), us), b), u),
                                      lam), 0.43))
        s_ = fnp.log(fnp.divide(fnp.multiply(v, inv_alpha), fnp.add(fnp.divide(a, fnp.multiply(us, us)), b)))
        t = fnp.subtract(fnp.add(E.neg(lam), fnp.multiply(k, log_lam)), E.lgamma(fnp.add(k, 1)))
        accept1 = fnp.logical_and(fnp.greater_equal(us, 0.07), fnp.less_equal(v, v_r))
        reject = fnp.logical_or(fnp.less(k, 0), fnp.logical_and(fnp.less(us, 0.013), fnp.greater(v, us)))
        accept = fnp.logical_or(accept1, fnp.logical_and(fnp.logical_not(reject), fnp.less_equal(s_, t)))
        return fnp.where(accept, k, k_out), fnp.logical_or(accepted, accept), rng

    init = (fnp.full(shape, -1, lam.dtype), fnp.zeros(shape, bool), key)
    k = while_loop(lambda s: fnp.any(fnp.logical_not(s[1])), body, init)[0]
    return k.astype(dtype)


def _poisson_exact(key, lam, shape, dtype):
    lam = fnp.broadcast_to(_as(fnp.asarray(lam), np.dtype(np.float32)), shape)
    use_knuth = fnp.logical_or(fnp.isnan(lam), fnp.less(lam, 10))
    lam_knuth = fnp.where(use_knuth, lam, _f(lam, 0))
    # Rejection's acceptance rate tends to 89% as lam grows: a large placeholder rate is cheap.
    lam_rej = fnp.where(use_knuth, _f(lam, 1e5), lam)
    out = fnp.where(use_knuth, _poisson_knuth(key, lam_knuth, shape, dtype),
                    _poisson_rejection(key, lam_rej, shape, dtype))
    return fnp.where(fnp.equal(lam, 0), fnp.zeros_like(out), out)


_SPLIT, _TERMS, _PP_EPS = 7.0, 20, 0.02


def _poisson_approx(key, lam, shape, dtype):
    from ..scipy.special import ndtr  # funcad.scipy loads on first use
    lam = fnp.asarray(lam)
    wide = (lam.dtype.kind == "f" and lam.dtype.itemsize > 4) or dtype.itemsize > 4
    cdt = np.dtype(np.float64 if wide else np.float32)
    lam = _as(lam, cdt)
    lam = fnp.reshape(lam, (1,) * (len(shape) - lam.ndim) + tuple(lam.shape))
    z = _normal_real(key, shape, cdt)
    small = _cdf_inversion(ndtr(z), lam)
    large = _peizer_pratt(z, lam)
    return fnp.where(fnp.less(lam, _SPLIT), small, large).astype(dtype)


def _cdf_inversion(u, lam):
    # Count the partial sums of the first _TERMS pmf terms that lie below u.
    pmf = fnp.exp(E.neg(lam))
    cdf = pmf
    count = fnp.less(cdf, u).astype(u.dtype)
    for k in range(1, _TERMS - 1):
        pmf = fnp.multiply(pmf, fnp.divide(lam, _f(lam, k)))
        cdf = fnp.add(cdf, pmf)
        count = fnp.add(count, fnp.less(cdf, u).astype(u.dtype))
    return count


def _peizer_pratt(z, lam):
    # The smallest integer c with z(c) >= z, searched among ceil(root guess) - 1 .. + 1.
    s = fnp.sqrt(lam)
    zz = fnp.square(z)
    root = fnp.add(fnp.add(fnp.add(fnp.add(lam, fnp.multiply(s, z)), -2 / 3), fnp.divide(zz, 6.0)),
                   fnp.divide(fnp.multiply(z, fnp.subtract(1, zz)), fnp.multiply(72, s)))
    x = fnp.add(root, 0.6)
    c = fnp.ceil(x)

    def at_least(c):
        zc = fnp.where(fnp.less(c, 0), -np.inf, _pp_z(fnp.maximum(c, 0.0), lam))
        return fnp.greater_equal(zc, z).astype(x.dtype)

    out = fnp.subtract(fnp.subtract(fnp.add(c, 1), at_least(c)), at_least(fnp.subtract(c, 1)))
    return fnp.maximum(out, 0.0)


def _pp_z(x, lam):
    y = fnp.divide(fnp.add(x, 0.5), lam)
    t = _pp_t(y)
    head = fnp.add(fnp.add(fnp.subtract(x, lam), 2 / 3), fnp.divide(_PP_EPS, fnp.add(x, 1)))
    return fnp.multiply(head, fnp.sqrt(fnp.divide(fnp.add(1, t), lam)))


def _pp_t(y):
    # (1 - y^2 + 2 y log y) / (1 - y)^2, by its series in d = y - 1 near y = 1.
    d = fnp.subtract(y, 1)
    small = fnp.less(fnp.abs(d), 0.25)
    series = fnp.zeros_like(d)
    for k in reversed(range(1, 10)):
        series = fnp.multiply(d, fnp.add(2 * (-1) ** k / ((k + 1) * (k + 2)), series))
    ys = fnp.where(small, 2.0, y)
    ds = fnp.where(small, 1.0, d)
    direct = fnp.divide(fnp.add(fnp.subtract(1, fnp.square(ys)), fnp.multiply(fnp.multiply(2, ys), fnp.log(ys))),
                        fnp.square(ds))
    return fnp.where(small, series, direct)


def poisson(key, lam, shape=None, dtype=None, *, method: str = "exact"):
    """Poisson(lam) counts: Knuth's method below rate 10, Hormann's rejection above (JAX's).

    >>> import funcad.random as fr
    >>> fr.poisson(fr.PRNGKey(0), 3.0, (4,)).dtype
    dtype('int64')
    """
    key = check_key("poisson", key)
    if method not in ("exact", "approximate"):
        raise ValueError("method argument to `poisson` must be one of {'exact', 'approximate'}, "
                         f"got {method!r}")
    dtype = _int_dtype("poisson", dtype)
    shape = tuple(_shape_of(lam)) if shape is None else canonical_shape(shape)
    if method == "approximate":
        try:
            ok = np.broadcast_shapes(_shape_of(lam), shape) == shape
        except ValueError:
            ok = False
        if not ok:
            raise ValueError("lam shape must be broadcastable to shape argument; got lam.shape "
                             f"{_shape_of(lam)}, shape {shape}")
        return _poisson_approx(key, lam, shape, dtype)
    if current_impl() != "threefry2x32":
        raise NotImplementedError("`poisson` with method='exact' is only implemented for the "
                                  f"threefry2x32 PRNG (as in JAX), not {current_impl()!r}; use "
                                  "method='approximate' or a threefry key")
    return _poisson_exact(key, lam, shape, dtype)


# ----------------------------------------------------------------- binomial ----

_STIRLING_TAIL = (0.0810614667953272, 0.0413406959554092, 0.0276779256849983, 0.02079067210376509,
                  0.0166446911898211, 0.0138761288230707, 0.0118967099458917, 0.0104112652619720,
                  0.00925546218271273, 0.00833056343336287)


def _stirling_tail(k):
    """log k! minus Stirling's approximation: a table below 10, its series above."""
    table = np.array(_STIRLING_TAIL, k.dtype)
    use_table = fnp.less_equal(k, 9)
    kc = fnp.clip(k, _f(k, 0.0), _f(k, 9.0))
    kp1sq = fnp.multiply(fnp.add(kc, 1), fnp.add(kc, 1))
    approx = fnp.divide(fnp.subtract(1.0 / 12, fnp.divide(fnp.subtract(1.0 / 360, fnp.divide(1.0 / 1260, kp1sq)),
                                                          kp1sq)), fnp.add(kc, 1))
    return fnp.where(use_table, fnp.take(table, fnp.floor(kc).astype(np.int32), mode="clip"), approx)


def _binomial_inversion(key, count, prob, shape, dtype):
    # Sum geometric waiting times until they pass count; the number of them is the draw.
    log1mp = fnp.log1p(E.neg(prob))

    def body(s):
        num, total, rng = s
        sub, rng = _two(rng)
        num = fnp.where(fnp.less_equal(total, count), fnp.add(num, 1), num)
        u = _uniform(sub, shape, prob.dtype, 0.0, 1.0)
        return num, fnp.add(total, fnp.ceil(fnp.divide(fnp.log(u), log1mp))), rng

    init = (fnp.zeros(shape, prob.dtype), fnp.zeros(shape, prob.dtype), key)
    k = while_loop(lambda s: fnp.any(fnp.less_equal(s[1], count)), body, init)[0]
    return fnp.subtract(k, 1).astype(dtype)


def _btrs(key, count, prob, shape, dtype):
    # Hormann's transformed rejection with squeeze (BTRS).
    stddev = fnp.sqrt(fnp.multiply(fnp.multiply(count, prob), fnp.subtract(1, prob)))
    b = fnp.add(1.15, fnp.multiply(2.53, stddev))
    a = fnp.add(fnp.add(-0.0873, fnp.multiply(0.0248, b)), fnp.multiply(0.01, prob))
    c = fnp.add(fnp.multiply(count, prob), 0.5)
    v_r = fnp.subtract(0.92, fnp.divide(4.2, b))
    r = fnp.divide(prob, fnp.subtract(1, prob))
    alpha = fnp.multiply(fnp.add(2.83, fnp.divide(5.1, b)), stddev)
    m = fnp.floor(fnp.multiply(fnp.add(count, 1), prob))
    log, add, sub, mul, div = fnp.log, fnp.add, fnp.subtract, fnp.multiply, fnp.divide

    def body(s):
        k_out, accepted, rng = s
        rng, k0, k1 = _two(rng, 3)
        u = _uniform(k0, shape, prob.dtype, 0.0, 1.0)
        v = _uniform(k1, shape, prob.dtype, 0.0, 1.0)
        u = sub(u, 0.5)
        us = sub(0.5, fnp.abs(u))
        accept1 = fnp.logical_and(fnp.greater_equal(us, 0.07), fnp.less_equal(v, v_r))
        k = fnp.floor(add(mul(add(div(mul(2, a), us), b), u), c))
        reject = fnp.logical_or(fnp.less(k, 0), fnp.greater(k, count))
        v = log(div(mul(v, alpha), add(div(a, mul(us, us)), b)))
        ub = mul(add(m, 0.5), log(div(add(m, 1), mul(r, add(sub(count, m), 1)))))
        ub = add(ub, mul(add(count, 1), log(div(add(sub(count, m), 1), add(sub(count, k), 1)))))
        ub = add(ub, mul(add(k, 0.5), log(div(mul(r, add(sub(count, k), 1)), add(k, 1)))))
        ub = add(add(ub, _stirling_tail(m)), _stirling_tail(sub(count, m)))
        ub = sub(sub(ub, _stirling_tail(k)), _stirling_tail(sub(count, k)))
        accept = fnp.logical_or(accept1, fnp.logical_and(fnp.logical_not(reject), fnp.less_equal(v, ub)))
        return fnp.where(accept, k, k_out), fnp.logical_or(accepted, accept), rng

    init = (fnp.full(shape, -1, prob.dtype), fnp.zeros(shape, bool), key)
    return while_loop(lambda s: fnp.any(fnp.logical_not(s[1])), body, init)[0].astype(dtype)


def binomial(key, n, p, shape=None, dtype=None):
    """Binomial(n, p) counts (as floats, as JAX returns them): inversion for n·min(p, 1-p) <= 10,
    BTRS rejection above.

    >>> import funcad.random as fr
    >>> fr.binomial(fr.PRNGKey(0), 10, 0.3, (4,)).dtype
    dtype('float64')
    """
    key = check_key("binomial", key)
    dtype = _float_dtype("binomial", dtype)
    if shape is None:
        shape = tuple(np.broadcast_shapes(_shape_of(n), _shape_of(p)))
    else:
        shape = canonical_shape(shape)
        _check_shape("binomial", shape, _shape_of(n), _shape_of(p))
    prob = fnp.asarray(p)
    if prob.dtype.kind != "f":
        prob = prob.astype(float)  # the default float: no x64 warning
    count = fnp.broadcast_to(_as(fnp.asarray(n), prob.dtype), shape)
    prob = fnp.broadcast_to(prob, shape)
    p_lt_half = fnp.less(prob, 0.5)
    q = fnp.where(p_lt_half, prob, fnp.subtract(1.0, prob))
    count_bad = fnp.logical_or(fnp.isnan(count), fnp.less(count, 0.0))
    count_inf = fnp.isinf(count)
    q_nan, q_neg = fnp.isnan(q), fnp.less(q, 0.0)
    q = fnp.where(fnp.logical_or(q_nan, q_neg), _f(q, 0.01), q)
    use_inv = fnp.logical_or(count_bad, fnp.less_equal(fnp.multiply(count, q), 10.0))
    count = fnp.floor(count)
    count_inv = fnp.where(use_inv, count, _f(count, 0.0))
    count_btrs = fnp.where(use_inv, _f(count, 1e4), count)
    q_btrs = fnp.where(use_inv, _f(q, 0.5), q)
    out = fnp.where(use_inv, _binomial_inversion(key, count_inv, q, shape, dtype),
                    _btrs(key, count_btrs, q_btrs, shape, dtype))
    invalid = fnp.logical_or(fnp.logical_or(q_neg, q_nan), count_bad)
    out = fnp.where(invalid, _c(np.nan, dtype), out)
    out = fnp.where(fnp.logical_and(count_inf, fnp.logical_not(invalid)), _c(np.inf, dtype), out)
    keep = fnp.logical_or(fnp.logical_or(p_lt_half, count_bad), fnp.logical_or(q_nan, count_inf))
    return fnp.where(keep, out, fnp.subtract(count.astype(dtype), out))


def multinomial(key, n, p, *, shape=None, dtype=None, unroll: int | bool = 1):
    """Multinomial counts over p's last axis, by successive conditional binomials (as JAX).

    >>> import funcad.random as fr
    >>> fr.multinomial(fr.PRNGKey(0), 10.0, [0.2, 0.3, 0.5]).shape
    (3,)
    """
    key = check_key("multinomial", key)
    dtype = _float_dtype("multinomial", dtype)
    # JAX's promote_dtypes_inexact: Python numbers are weak; integers become the float type.
    strong = [np.dtype(_dtype_of(a)) for a in (n, p) if not isinstance(a, (int, float))]
    floats = [d for d in strong if d.kind == "f"]
    ft = np.result_type(*floats) if floats else np.dtype(np.float64)
    n, p = fnp.asarray(n).astype(ft), fnp.asarray(p).astype(ft)
    if shape is None:
        shape = tuple(p.shape[:-1])
    else:
        shape = canonical_shape(shape)
        _check_shape("multinomial", shape, tuple(n.shape), tuple(p.shape[:-1]))
    n = fnp.broadcast_to(n, shape)
    p = fnp.moveaxis(fnp.broadcast_to(p, (*shape, p.shape[-1])), -1, 0)
    remaining = cumsum(p, 0, reverse=True)  # summed as JAX's reduce_window sums
    ratios = fnp.divide(p, fnp.where(fnp.equal(remaining, 0), _f(remaining, 1), remaining))
    keys = split_key(key, (ratios.shape[0],))

    def step(remainder, ratio_key):
        ratio, k = ratio_key
        count = binomial(k, remainder, fnp.clip(ratio, 0, 1), dtype=remainder.dtype)
        return fnp.subtract(remainder, count), count

    _, counts = scan(step, n, (ratios, keys), unroll=unroll)
    return fnp.moveaxis(counts, 0, -1).astype(dtype)
