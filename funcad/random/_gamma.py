"""Gamma samples and the samplers built on them: JAX's algorithms, JAX's key use.

`gamma` is Marsaglia and Tsang's rejection sampler run per element (one key
per element from `split(key, a.size)`, as JAX splits), with JAX's boost
`Gamma(a) = Gamma(a + 1) U^(1/a)` for a < 1 (in log space for `loggamma`).
Its derivative in `a` is the implicit reparameterisation gradient JAX uses,
dx/da = -(dP(a, x)/da) / (dP(a, x)/dx) with P the regularised lower
incomplete gamma function (`_gamma_sample_grad`). `method='approximate'` is
JAX's loop-free chi-square quantile series with Stuart's boosting.
"""
from __future__ import annotations

import operator

import numpy as np

from .. import numpy as fnp
from ..lax import map as lax_map, while_loop
from ..primitives import elementwise as E
from ..primitives import structural as S
from ..transforms.custom import custom_jvp
from ..transforms.vmap import vmap
from ._keys import canonical_shape, check_key, current_impl, impl_scope, split_key
from ._samplers import (_as, _c, _check_shape, _finfo, _float_dtype, _normal_real, _shape_of, _shape_or_broadcast,
                        _two, _uniform, rademacher)

__all__ = ["gamma", "loggamma", "beta", "dirichlet", "chisquare", "f", "t", "generalized_normal",
           "ball"]


def _check_method(name, method):
    if method not in ("exact", "approximate"):
        raise ValueError(f"method argument to `{name}` must be one of {{'exact', 'approximate'}}, "
                         f"got {method!r}")


# ------------------------------------------------------- Marsaglia-Tsang ----

def _gamma_one(key, alpha, log_space: bool):
    """One Gamma(alpha) sample (log sample if log_space) from one key, as JAX draws it."""
    dtype = np.dtype(alpha.dtype)
    zero, one = _c(0, dtype), _c(1, dtype)
    boost_mask = E.ge(alpha, one)
    alpha_orig = alpha
    alpha = E.select_n(boost_mask, E.add(alpha, one), alpha)
    d = E.sub(alpha, _c(1 / 3, dtype))
    c = E.div(_c(1 / 3, dtype), E.sqrt(d))

    def reject(state):
        _, X, V, U = state
        squeeze = E.ge(U, E.sub(one, E.mul(_c(0.0331, dtype), E.mul(X, X))))
        log_test = E.ge(E.log(U), E.add(E.mul(X, _c(0.5, dtype)),
                                        E.mul(d, E.add(E.sub(one, V), E.log(V)))))
        return E.bitwise_and(squeeze, log_test)

    def propose(state):
        def next_xv(kxv):
            k, sub = _two(kxv[0])
            x = _normal_real(sub, (), dtype)
            return k, x, E.add(one, E.mul(x, c))

        k, x_key, u_key = _two(state[0], 3)
        _, x, v = while_loop(lambda kxv: E.le(kxv[2], zero), next_xv, (x_key, zero, _c(-1, dtype)))
        return k, E.mul(x, x), E.mul(E.mul(v, v), v), _uniform(u_key, (), dtype, zero, one)

    key, subkey = _two(key)
    _, _, V, _ = while_loop(reject, propose, (key, zero, one, _c(2, dtype)))
    if log_space:
        log_u = E.log1p(E.neg(_uniform(subkey, (), dtype, zero, one)))  # -exponential
        skip = E.bitwise_or(boost_mask, E.eq(log_u, zero))
        log_boost = E.select_n(skip, E.mul(log_u, E.div(one, alpha_orig)), zero)
        return E.add(E.add(E.log(d), E.log(V)), log_boost)
    u = E.sub(one, _uniform(subkey, (), dtype, zero, one))
    boost = E.select_n(boost_mask, E.pow(u, E.div(one, alpha_orig)), one)
    return E.mul(E.mul(d, V), boost)


def _gamma_draws(key, a, log_space: bool):
    a = fnp.asarray(a)
    shape = tuple(a.shape)
    n = int(np.prod(shape, dtype=np.int64))
    if n == 0:
        return fnp.zeros(shape, a.dtype)
    keys = split_key(key, (n,))
    one = lambda k, al: _gamma_one(k, al, log_space)
    if current_impl() == "threefry2x32":
        flat = vmap(one)(keys, S.reshape(a, (n,)))
    else:  # JAX maps other keys one by one (vmap would draw rbg bits from the first key only)
        flat = lax_map(lambda ka: one(*ka), (keys, S.reshape(a, (n,))))
    return S.reshape(flat, shape)


def _random_gamma(key, a, log_space, impl):
    with impl_scope(impl):  # the jvp may be traced after the sampler's call has returned
        return _gamma_draws(key, a, log_space)


_random_gamma = custom_jvp(_random_gamma, nondiff_argnums=(2, 3))


@_random_gamma.defjvp
def _random_gamma_jvp(log_space, impl, primals, tangents):
    key, a = primals[0], fnp.asarray(primals[1])
    a_dot = tangents[1]
    # The rule is written with funcad ops (loops included), so higher orders differentiate it.
    ans = _random_gamma(key, a, log_space, impl)
    x = ans
    if log_space:  # d log x = dx / x; exp(log x) may round to 0, use the tiniest float then
        x = E.exp(x)
        x = fnp.where(E.eq(x, _c(0, x.dtype)), _c(_finfo(x.dtype).tiny, x.dtype), x)
        grad = E.div(_gamma_sample_grad(a, x), x)
    else:
        grad = _gamma_sample_grad(a, x)
    return ans, fnp.multiply(a_dot, grad)


# ------------------------------------------- implicit reparameterisation ----

def _gamma_sample_grad(a, x):
    """dx/da for x ~ Gamma(a, 1) held at fixed P(a, x): -(dP/da) / (dP/dx).

    P's value and a-derivative come from the power series for x <= max(1, a) and from
    the continued fraction of Q = 1 - P otherwise (Cephes' split, as XLA and JAX use),
    each run until its a-derivative stops changing.
    """
    dtype = np.dtype(a.dtype)
    eps = _c(_finfo(dtype).eps, dtype)
    zero, one = _c(0, dtype), _c(1, dtype)
    is_nan = E.bitwise_or(E.ne(a, a), E.ne(x, x))
    x_zero = E.eq(x, zero)
    domain = E.bitwise_or(E.lt(x, zero), E.le(a, zero))
    use_cf = E.bitwise_and(E.gt(x, one), E.gt(x, a))
    log_ax = E.sub(E.sub(E.mul(a, E.log(x)), x), E.lgamma(a))
    underflow = E.lt(log_ax, _c(-np.log(_finfo(dtype).max), dtype))
    ok = E.bitwise_not(E.bitwise_or(E.bitwise_or(x_zero, domain), E.bitwise_or(underflow, is_nan)))
    safe_x = fnp.where(ok, x, one)
    safe_a = fnp.where(ok, a, one)
    series = _series_sample_grad(safe_a, safe_x, E.bitwise_and(ok, E.bitwise_not(use_cf)), eps)
    cfrac = _cf_sample_grad(safe_a, safe_x, E.bitwise_and(ok, use_cf), eps)
    out = fnp.where(use_cf, cfrac, series)
    out = fnp.where(x_zero, zero, out)
    return fnp.where(E.bitwise_or(domain, is_nan), _c(np.nan, dtype), out)


def _series_sample_grad(a, x, enabled, eps):
    # P = x^a e^-x / Gamma(a + 1) * sum_k c_k with c_0 = 1, c_k = c_{k-1} x / (a + k).
    one = _c(1, a.dtype)

    def body(s):
        on, r, c, tot, dc, dtot = s
        r1 = E.add(r, one)
        dc1 = E.sub(E.mul(dc, E.div(x, r1)), E.div(E.mul(c, x), E.mul(r1, r1)))
        c1 = E.mul(c, E.div(x, r1))
        tot1, dtot1 = E.add(tot, c1), E.add(dtot, dc1)
        keep = lambda new, old: fnp.where(on, new, old)
        go = E.bitwise_and(on, E.gt(E.abs(E.div(dc1, dtot1)), eps))
        return go, keep(r1, r), keep(c1, c), keep(tot1, tot), keep(dc1, dc), keep(dtot1, dtot)

    zero = fnp.zeros_like(a)
    s = (enabled, a, fnp.ones_like(a), fnp.ones_like(a), zero, zero)
    _, _, _, tot, _, dtot = while_loop(lambda s: fnp.any(s[0]), body, s)
    dlog = E.sub(E.log(x), E.digamma(E.add(a, one)))
    return E.div(E.mul(E.neg(E.add(dtot, E.mul(tot, dlog))), x), a)


def _cf_sample_grad(a, x, enabled, eps):
    # Q = x^a e^-x / Gamma(a) * p_k / q_k, the convergents of Legendre's continued fraction,
    # carried with their a-derivatives; rescaled by eps when they grow past 1/eps.
    dtype = np.dtype(a.dtype)
    one, two = _c(1, dtype), _c(2, dtype)
    big = _c(1 / _finfo(dtype).eps, dtype)

    def body(s):
        on, n, y, z, ans, dans, p1, q1, p2, q2, dp1, dq1, dp2, dq2 = s
        n1, y1, z1 = E.add(n, one), E.add(y, one), E.add(z, two)
        yc = E.mul(y1, n1)
        p = E.sub(E.mul(p1, z1), E.mul(p2, yc))
        q = E.sub(E.mul(q1, z1), E.mul(q2, yc))
        dp = E.add(E.sub(E.sub(E.mul(dp1, z1), p1), E.mul(dp2, yc)), E.mul(p2, n1))
        dq = E.add(E.sub(E.sub(E.mul(dq1, z1), q1), E.mul(dq2, yc)), E.mul(q2, n1))
        qnz = E.ne(q, _c(0, dtype))
        safe_q = fnp.where(qnz, q, one)
        ans1 = fnp.where(qnz, E.div(p, safe_q), ans)
        dans1 = fnp.where(qnz, E.div(E.sub(dp, E.mul(ans1, dq)), safe_q), dans)
        change = fnp.where(qnz, E.abs(E.sub(dans1, dans)), one)
        scale = fnp.where(E.gt(E.abs(p), big), _c(_finfo(dtype).eps, dtype), one)
        new = (y1, z1, ans1, dans1, E.mul(p, scale), E.mul(q, scale), E.mul(p1, scale),
               E.mul(q1, scale), E.mul(dp, scale), E.mul(dq, scale), E.mul(dp1, scale),
               E.mul(dq1, scale))
        old = (y, z, ans, dans, p1, q1, p2, q2, dp1, dq1, dp2, dq2)
        kept = tuple(fnp.where(on, nw, od) for nw, od in zip(new, old))
        return (E.bitwise_and(on, E.gt(change, eps)), n1) + kept

    y = E.sub(one, a)
    z = E.add(E.add(x, y), one)
    p2, q2 = fnp.ones_like(x), x
    p1, q1 = E.add(x, one), E.mul(z, x)
    ans = E.div(p1, q1)
    zero = fnp.zeros_like(x)
    dq1 = E.neg(x)
    dans = E.div(E.neg(E.mul(ans, dq1)), q1)
    s = (enabled, _c(0, dtype), y, z, ans, dans, p1, q1, p2, q2, zero, dq1, zero, zero)
    out = while_loop(lambda s: E.bitwise_and(E.lt(s[1], _c(2000, dtype)), fnp.any(s[0])), body, s)
    ans, dans = out[4], out[5]
    dlog = E.sub(E.log(x), E.digamma(a))
    return E.mul(E.add(dans, E.mul(ans, dlog)), x)


# ------------------------------------------------------ approximate gamma ----

# Chi-square quantile series (Goldstein's Algorithm 451; JKB eq. 18.37) as JAX uses it: row k
# holds the coefficients of t^k as a quadratic in 1/nu; the leading constant is exactly 1.
_CHI2_COEF = (
    (1.0, -0.2237368, -0.01513904),
    (0.4713941, 0.02607083, -0.008986007),
    (0.0001348028, 0.01128186, 0.02277679),
    (-0.008553069, -0.01153761, -0.01323293),
    (0.00312558, 0.005169654, -0.006950356),
    (-0.0008426812, 0.00253001, 0.001060438),
    (0.00009780499, -0.001450117, 0.001565326),
)
_BOOSTS = 4


def _horner(x, coefs):
    """sum_k coefs[k] x^k, highest power first (as lax.polynomial evaluates it)."""
    acc = None
    for c in reversed(coefs):
        c = _c(c, x.dtype) if isinstance(c, float) else c
        acc = c if acc is None else E.add(E.mul(acc, x), c)
    return fnp.broadcast_to(acc, _shape_of(x))


def _gamma_approx(key, a, log_space: bool, dtype):
    cdt = np.dtype(np.float32) if _finfo(dtype).bits < 32 else dtype
    a = _as(a, cdt)
    shape = tuple(a.shape)
    k_base, k_boost = _two(key)
    ab = E.add(a, _c(_BOOSTS, cdt))
    nu = E.mul(_c(2, cdt), ab)
    t = E.mul(_normal_real(k_base, shape, cdt), E.rsqrt(nu))
    u = E.div(_c(1, cdt), nu)
    poly = _horner(t, [_horner(u, row) for row in _CHI2_COEF])
    poly = E.max(poly, _c(_finfo(cdt).tiny, cdt))
    log_base = E.add(E.log(ab), E.mul(_c(3, cdt), E.log(poly)))
    ks = S.reshape(S.iota(cdt, (_BOOSTS,), 0), (_BOOSTS,) + (1,) * len(shape))
    log_u = E.log1p(E.neg(_uniform(k_boost, (_BOOSTS,) + shape, cdt, 0.0, 1.0)))
    denom = E.add(S.reshape(a, (1,) + shape), ks)
    out = E.add(log_base, fnp.sum(E.div(log_u, denom), axis=0))
    out = out if log_space else E.exp(out)
    return E.convert_element_type(out, dtype)


def _gamma(name, key, a, shape, dtype, method, log_space):
    key = check_key(name, key)
    _check_method(name, method)
    dtype = _float_dtype(name, dtype)
    shape = _shape_or_broadcast(name, shape, a)
    a = fnp.broadcast_to(_as(a, dtype), shape)
    if method == "approximate":
        return _gamma_approx(key, a, log_space, dtype)
    return _random_gamma(key, a, log_space, current_impl())


def gamma(key, a, shape=None, dtype=None, *, method: str = "exact"):
    """Gamma(a, 1) samples; differentiable in `a` (implicit reparameterisation, as JAX).

    >>> import funcad.random as fr
    >>> fr.gamma(fr.PRNGKey(0), 2.0, (3,)).shape
    (3,)
    """
    return _gamma("gamma", key, a, shape, dtype, method, False)


def loggamma(key, a, shape=None, dtype=None, *, method: str = "exact"):
    """log of Gamma(a, 1) samples, accurate for small `a` where gamma underflows.

    >>> import funcad.random as fr
    >>> bool(fr.loggamma(fr.PRNGKey(0), 1e-3) < 0)
    True
    """
    return _gamma("loggamma", key, a, shape, dtype, method, True)


# ---------------------------------------------------- built on gamma ----

def beta(key, a, b, shape=None, dtype=None, *, method: str = "exact"):
    """Beta(a, b) samples, from two log-gamma draws.

    >>> import funcad.random as fr
    >>> fr.beta(fr.PRNGKey(0), 2.0, 3.0, (4,)).shape
    (4,)
    """
    key = check_key("beta", key)
    _check_method("beta", method)
    dtype = _float_dtype("beta", dtype)
    shape = _shape_or_broadcast("beta", shape, a, b)
    a, b = (fnp.broadcast_to(_as(v, dtype), shape) for v in (a, b))
    ka, kb = _two(key)
    lga = loggamma(ka, a, shape, dtype, method=method)
    lgb = loggamma(kb, b, shape, dtype, method=method)
    # a / (a + b) scaled by the larger, so neither exp underflows to 0/0.
    top = E.max(lga, lgb)
    ga, gb = E.exp(E.sub(lga, top)), E.exp(E.sub(lgb, top))
    return E.div(ga, E.add(ga, gb))


def dirichlet(key, alpha, shape=None, dtype=None):
    """Dirichlet(alpha) samples over the last axis: softmax of log-gamma draws.

    >>> import funcad.random as fr
    >>> fr.dirichlet(fr.PRNGKey(0), [1.0, 2.0, 3.0], (2,)).shape
    (2, 3)
    """
    key = check_key("dirichlet", key)
    dtype = _float_dtype("dirichlet", dtype)
    ashape = _shape_of(alpha)
    if len(ashape) < 1:
        raise ValueError(f"dirichlet requires alpha.ndim >= 1, got alpha.ndim == {len(ashape)}")
    if shape is None:
        shape = ashape[:-1]
    else:
        shape = canonical_shape(shape)
        _check_shape("dirichlet", shape, ashape[:-1])
    alpha = _as(alpha, dtype)
    lg = loggamma(key, alpha, tuple(shape) + ashape[-1:], dtype)
    # softmax along the last axis, as JAX's nn.softmax computes it (shift by the max).
    shifted = fnp.subtract(lg, E.stop_gradient(fnp.max(lg, axis=-1, keepdims=True)))
    un = E.exp(shifted)
    return fnp.divide(un, fnp.sum(un, axis=-1, keepdims=True))


def chisquare(key, df, shape=None, dtype=None, *, method: str = "exact"):
    """Chi-square(df) samples: 2 exp(loggamma(df / 2)).

    >>> import funcad.random as fr
    >>> fr.chisquare(fr.PRNGKey(0), 3.0, (2,)).shape
    (2,)
    """
    key = check_key("chisquare", key)
    _check_method("chisquare", method)
    dtype = _float_dtype("chisquare", dtype)
    shape = _shape_or_broadcast("chisquare", shape, df)
    half = E.div(_as(fnp.asarray(df), dtype), _c(2, dtype))
    return E.mul(E.exp(loggamma(key, half, shape, dtype, method=method)), _c(2, dtype))


def f(key, dfnum, dfden, shape=None, dtype=None):
    """F(dfnum, dfden) samples: a ratio of scaled chi-squares.

    >>> import funcad.random as fr
    >>> fr.f(fr.PRNGKey(0), 3.0, 5.0, (2,)).shape
    (2,)
    """
    key = check_key("f", key)
    dtype = _float_dtype("f", dtype)
    shape = _shape_or_broadcast("f", shape, dfnum, dfden)
    dfnum, dfden = _as(fnp.asarray(dfnum), dtype), _as(fnp.asarray(dfden), dtype)
    k_den, k_num = _two(key)
    num = fnp.divide(chisquare(k_num, dfnum, shape, dtype), dfnum)
    den = fnp.divide(chisquare(k_den, dfden, shape, dtype), dfden)
    return fnp.divide(num, den)


def t(key, df, shape=None, dtype=None):
    """Student's t(df) samples: normal * sqrt(df / 2 / gamma(df / 2)).

    >>> import funcad.random as fr
    >>> fr.t(fr.PRNGKey(0), 4.0, (2,)).shape
    (2,)
    """
    key = check_key("t", key)
    dtype = _float_dtype("t", dtype)
    shape = _shape_or_broadcast("t", shape, df)
    df = _as(fnp.asarray(df), dtype)
    k_n, k_g = _two(key)
    n = _normal_real(k_n, shape, dtype)
    half = E.div(df, _c(2, dtype))
    g = gamma(k_g, half, shape, dtype)
    return fnp.multiply(n, fnp.sqrt(fnp.divide(half, g)))


def _reciprocal(p):
    # A Python number stays a Python number (weakly typed: it takes the samples' dtype).
    return 1 / p if isinstance(p, (int, float)) else fnp.divide(1.0, p)


def generalized_normal(key, p, shape=(), dtype=None):
    """Samples with density proportional to exp(-|x|^p).

    >>> import funcad.random as fr
    >>> fr.generalized_normal(fr.PRNGKey(0), 1.5, (3,)).shape
    (3,)
    """
    key = check_key("generalized_normal", key)
    dtype = _float_dtype("generalized_normal", dtype)
    shape = canonical_shape(shape)
    _shape_or_broadcast("generalized_normal", shape, p)
    k_g, k_r = _two(key)
    inv_p = _reciprocal(p)
    g = gamma(k_g, inv_p, shape, dtype)
    r = rademacher(k_r, shape, dtype)
    return fnp.multiply(r, fnp.power(g, inv_p))


def ball(key, d: int, p=2, shape=(), dtype=None):
    """Samples uniform in the unit Lp ball of dimension d, shape (*shape, d).

    >>> import funcad.random as fr
    >>> fr.ball(fr.PRNGKey(0), 3, shape=(2,)).shape
    (2, 3)
    """
    key = check_key("ball", key)
    dtype = _float_dtype("ball", dtype)
    shape = canonical_shape(shape)
    d = operator.index(d)
    k1, k2 = _two(key)
    g = generalized_normal(k1, p, (*shape, d), dtype)
    e = E.neg(E.log1p(E.neg(_uniform(k2, shape, dtype, 0.0, 1.0))))
    norm = fnp.power(fnp.add(fnp.sum(fnp.power(fnp.abs(g), p), axis=-1), e), _reciprocal(p))
    return fnp.divide(g, fnp.expand_dims(norm, -1))
