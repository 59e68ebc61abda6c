"""Op-table rows of the special-function primitives (igamma, igammac,
betainc, bessel_i0e/i1e, zeta) through funcad.scipy.special and funcad.lax.

Arguments whose second derivative JAX does not offer (a of gammainc: the
derivative of igamma_grad_a; a and b of betainc; x of lax.zeta) are held
fixed here; tests/scipy/test_special_primitives.py checks them and their errors."""
import numpy as np
import scipy.special as sps

import funcad.lax as flax
import funcad.scipy.special as fsp
from tests.op_table import U, op

S23 = (2, 3)
A = np.array([[0.7, 1.5, 3.0], [2.2, 5.0, 0.9]])   # shapes a of the gamma rows


def _jsp():
    import jax.scipy.special as jsp
    return jsp


def _jlax():
    import jax.lax as jl
    return jl


def _as(f):
    return lambda *a: np.asarray(f(*a)).astype(a[0].dtype)


def _a(x):
    return A.astype(x.dtype)


# Series side (x < max(1, a)) and continued-fraction side (x > max(1, a)) of igamma.
for _name, _sp in (("gammainc", sps.gammainc), ("gammaincc", sps.gammaincc)):
    for _side, _gen in (("series", U(S23, lo=0.2, hi=0.9)), ("cf", U(S23, lo=5.5, hi=9.0))):
        op(f"special_{_name}_{_side}", (lambda n: lambda x: getattr(fsp, n)(_a(x), x))(_name),
           _as((lambda f: lambda x: f(_a(x), x))(_sp)), _gen,
           (lambda n: lambda x: getattr(_jsp(), n)(_a(x), x))(_name), rtol=1e-5)

op("special_betainc", lambda x: fsp.betainc(_a(x), _a(x)[::-1] + 0.5, x),
   _as(lambda x: sps.betainc(_a(x), _a(x)[::-1] + 0.5, x)), U(S23, lo=0.05, hi=0.95),
   lambda x: _jsp().betainc(_a(x), _a(x)[::-1] + 0.5, x), rtol=1e-5)
op("special_betainc_large", lambda x: fsp.betainc(_a(x) * 8, _a(x)[::-1] * 6, x),
   _as(lambda x: sps.betainc(_a(x) * 8, _a(x)[::-1] * 6, x)), U(S23, lo=0.3, hi=0.7),
   lambda x: _jsp().betainc(_a(x) * 8, _a(x)[::-1] * 6, x), dtypes=(np.float64,), rtol=1e-6)

for _name, _sp, _gen in (("i0e", sps.i0e, U(S23, lo=-12.0, hi=12.0)), ("i1e", sps.i1e, U(S23, lo=-12.0, hi=12.0)),
                         ("i0", sps.i0, U(S23, lo=-3.0, hi=3.0)), ("i1", sps.i1, U(S23, lo=-3.0, hi=3.0))):
    op(f"special_{_name}", getattr(fsp, _name), _as(_sp), _gen,
       (lambda n: lambda x: getattr(_jsp(), n)(x))(_name), rtol=1e-5)

op("special_zeta", fsp.zeta, _as(sps.zeta), lambda r, d: (U(S23, lo=1.5, hi=4.0)(r, d)[0],
                                                         U(S23, lo=0.5, hi=3.0)(r, d)[0]),
   lambda x, q: _jsp().zeta(x, q), rtol=1e-5)
op("lax_zeta_q", lambda q: flax.zeta(np.array(2.5, q.dtype), q), _as(lambda q: sps.zeta(2.5, q)),
   U(S23, lo=0.5, hi=3.0), lambda q: _jsp().zeta(2.5, q), rtol=1e-5)
def _dp_da(x):
    x = np.asarray(x, np.float64)
    return (sps.gammainc(A + 1e-6, x) - sps.gammainc(A - 1e-6, x)) / 2e-6


op("lax_igamma_grad_a", lambda x: flax.igamma_grad_a(_a(x), x), _as(_dp_da),
   U(S23, lo=0.2, hi=8.0), lambda x: _jlax().igamma_grad_a(_a(x), x), diff=False, rtol=1e-4)
op("lax_random_gamma_grad", lambda x: flax.random_gamma_grad(_a(x), x),
   _as(lambda x: -_dp_da(x) / np.exp((A - 1) * np.log(x) - x - sps.gammaln(A))),
   U(S23, lo=0.2, hi=8.0), lambda x: _jlax().random_gamma_grad(_a(x), x), diff=False, rtol=1e-4)


# ------------------------------------------------------------------ stats ----
# The shape parameters of gamma, chi2 and beta are held fixed (their second
# derivative, or any derivative for beta, is not offered); x, loc and scale vary.

def _jst():
    import jax.scipy.stats as jst
    return jst


import funcad.scipy.stats as fst  # noqa: E402
import scipy.stats as sst  # noqa: E402

_XLS = lambda lo, hi: (lambda r, d: U(S23, lo=lo, hi=hi)(r, d) + (np.asarray(0.1, d), np.asarray(1.3, d)))
for _f in ("cdf", "logcdf", "sf", "logsf"):
    for _m, _shape, _gen in (("gamma", (lambda x: (_a(x),)), _XLS(0.4, 6.0)),
                             ("chi2", (lambda x: (_a(x) * 2,)), _XLS(0.4, 9.0)),
                             ("beta", (lambda x: (_a(x), _a(x)[::-1] + 0.5)), _XLS(0.35, 1.2))):
        op(f"stats_{_m}_{_f}",
           (lambda m, f, sh: lambda x, loc, s: getattr(getattr(fst, m), f)(x, *sh(x), loc, s))(_m, _f, _shape),
           (lambda m, f, sh: _as(lambda x, loc, s: getattr(getattr(sst, m), f)(x, *sh(x), loc, s)))(_m, _f, _shape),
           _gen,
           (lambda m, f, sh: lambda x, loc, s: getattr(getattr(_jst(), m), f)(x, *sh(x), loc, s))(_m, _f, _shape),
           rtol=1e-5)

op("stats_poisson_cdf", lambda mu: fst.poisson.cdf(np.array([[0.0, 1.0, 4.0], [2.0, 7.0, 3.0]], mu.dtype), mu),
   _as(lambda mu: sst.poisson.cdf(np.array([[0.0, 1.0, 4.0], [2.0, 7.0, 3.0]]), mu)), U(S23, lo=0.5, hi=6.0),
   lambda mu: _jst().poisson.cdf(np.array([[0.0, 1.0, 4.0], [2.0, 7.0, 3.0]], mu.dtype), mu), rtol=1e-5)
op("stats_poisson_entropy", fst.poisson.entropy,
   _as(lambda mu: np.vectorize(lambda m: sst.poisson(m).entropy())(mu)),
   lambda r, d: (np.array([0.5, 3.0, 8.7, 14.0, 60.0, 250.0], d),),
   lambda mu: _jst().poisson.entropy(mu), rtol=1e-4)
op("stats_vonmises_logpdf", fst.vonmises.logpdf, _as(sst.vonmises.logpdf),
   lambda r, d: U(S23, lo=-3.0, hi=3.0)(r, d) + U(S23, lo=0.3, hi=20.0)(r, d),
   lambda x, k: _jst().vonmises.logpdf(x, k), rtol=1e-5)
op("stats_vonmises_pdf", fst.vonmises.pdf, _as(sst.vonmises.pdf),
   lambda r, d: U(S23, lo=-3.0, hi=3.0)(r, d) + U(S23, lo=0.3, hi=5.0)(r, d),
   lambda x, k: _jst().vonmises.pdf(x, k), rtol=1e-5)

import funcad.numpy as fnp  # noqa: E402

op("numpy_i0", fnp.i0, _as(np.i0), U(S23, lo=-3.0, hi=3.0), lambda x: __import__("jax.numpy").numpy.i0(x),
   rtol=1e-5)
op("special_erfcx", fsp.erfcx, _as(sps.erfcx), U(S23, lo=-2.0, hi=3.0), lambda x: _jsp().erfcx(x), rtol=1e-5)
op("special_erfcx_large", fsp.erfcx, _as(sps.erfcx), U(S23, lo=7.0, hi=40.0), lambda x: _jsp().erfcx(x), rtol=1e-5)

# Pareto, Gumbel (both sides), negative binomial: x, loc and scale (or p) vary.
_PARETO_X = lambda r, d: U(S23, lo=1.6, hi=4.0)(r, d) + (np.asarray(0.2, d), np.asarray(1.3, d))
for _f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
    op(f"stats_pareto_{_f}", (lambda f: lambda x, loc, s: getattr(fst.pareto, f)(x, 2.5, loc, s))(_f),
       (lambda f: _as(lambda x, loc, s: getattr(sst.pareto, f)(x, 2.5, loc, s)))(_f), _PARETO_X,
       (lambda f: lambda x, loc, s: getattr(_jst().pareto, f)(x, 2.5, loc, s))(_f), rtol=1e-5)
op("stats_pareto_ppf", lambda q: fst.pareto.ppf(q, 2.5, 0.2, 1.3), _as(lambda q: sst.pareto.ppf(q, 2.5, 0.2, 1.3)),
   U(S23, lo=0.05, hi=0.95), lambda q: _jst().pareto.ppf(q, 2.5, 0.2, 1.3), rtol=1e-5)
for _m in ("gumbel_r", "gumbel_l"):
    for _f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
        op(f"stats_{_m}_{_f}", (lambda m, f: lambda x, loc, s: getattr(getattr(fst, m), f)(x, loc, s))(_m, _f),
           (lambda m, f: _as(lambda x, loc, s: getattr(getattr(sst, m), f)(x, loc, s)))(_m, _f),
           _XLS(-2.0, 2.0),
           (lambda m, f: lambda x, loc, s: getattr(getattr(_jst(), m), f)(x, loc, s))(_m, _f), rtol=1e-5)
    op(f"stats_{_m}_ppf", (lambda m: lambda q: getattr(fst, m).ppf(q, 0.3, 1.4))(_m),
       (lambda m: _as(lambda q: getattr(sst, m).ppf(q, 0.3, 1.4)))(_m), U(S23, lo=0.1, hi=0.85),
       (lambda m: lambda q: getattr(_jst(), m).ppf(q, 0.3, 1.4))(_m), rtol=1e-5)
_K = np.array([[0.0, 1.0, 4.0], [2.0, 7.0, 3.0]])
op("stats_nbinom_logpmf", lambda n, p: fst.nbinom.logpmf(_K.astype(n.dtype), n, p),
   _as(lambda n, p: sst.nbinom.logpmf(_K, n, p)), lambda r, d: U(S23, lo=0.5, hi=5.0)(r, d) + U(S23, lo=0.1, hi=0.9)(r, d),
   lambda n, p: _jst().nbinom.logpmf(_K.astype(n.dtype), n, p), rtol=1e-5)
op("stats_wrapcauchy_logpdf", fst.wrapcauchy.logpdf, _as(sst.wrapcauchy.logpdf),
   lambda r, d: U(S23, lo=0.5, hi=5.8)(r, d) + U(S23, lo=0.1, hi=0.6)(r, d),
   lambda x, c: _jst().wrapcauchy.logpdf(x, c), rtol=1e-5)
op("stats_gennorm_logpdf", fst.gennorm.logpdf, _as(sst.gennorm.logpdf),
   lambda r, d: U(S23, lo=0.3, hi=2.0)(r, d) + U(S23, lo=0.8, hi=3.0)(r, d),
   lambda x, b: _jst().gennorm.logpdf(x, b), rtol=1e-5)
op("stats_gennorm_cdf", lambda x: fst.gennorm.cdf(x, _a(x) + 0.5), _as(lambda x: sst.gennorm.cdf(x, _a(x) + 0.5)),
   U(S23, lo=-2.0, hi=2.0), lambda x: _jst().gennorm.cdf(x, _a(x) + 0.5), rtol=1e-5)
op("stats_betabinom_logpmf", lambda a, b: fst.betabinom.logpmf(_K.astype(a.dtype), 8.0, a, b),
   _as(lambda a, b: sst.betabinom.logpmf(_K, 8, a, b)), U(S23, S23, lo=0.5, hi=4.0),
   lambda a, b: _jst().betabinom.logpmf(_K.astype(a.dtype), 8.0, a, b), rtol=1e-5)
op("stats_multinomial_logpmf", lambda p: fst.multinomial.logpmf(np.array([[1, 2, 0], [0, 1, 2]]), 3, p / p.sum()),
   _as(lambda p: sst.multinomial.logpmf(np.array([[1, 2, 0], [0, 1, 2]]), 3, p / p.sum())),
   U((3,), lo=0.5, hi=2.0),
   lambda p: _jst().multinomial.logpmf(np.array([[1, 2, 0], [0, 1, 2]]), 3, p / p.sum()), rtol=1e-5)
for _f in ("logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"):
    op(f"stats_truncnorm_{_f}", (lambda f: lambda x, loc, s: getattr(fst.truncnorm, f)(x, -1.0, 1.5, loc, s))(_f),
       (lambda f: _as(lambda x, loc, s: getattr(sst.truncnorm, f)(x, -1.0, 1.5, loc, s)))(_f),
       _XLS(-0.9, 1.8),
       (lambda f: lambda x, loc, s: getattr(_jst().truncnorm, f)(x, -1.0, 1.5, loc, s))(_f), rtol=1e-5)
op("stats_truncnorm_logpdf_tail", lambda x: fst.truncnorm.logpdf(x, 8.0, 9.0),
   _as(lambda x: sst.truncnorm.logpdf(x, 8.0, 9.0)), U(S23, lo=8.1, hi=8.9),
   lambda x: _jst().truncnorm.logpdf(x, 8.0, 9.0), dtypes=(np.float64,), rtol=1e-6)

_COV = np.array([[2.0, 0.3, -0.2], [0.3, 1.5, 0.4], [-0.2, 0.4, 1.2]])
op("stats_multivariate_normal_logpdf", lambda x, m: fst.multivariate_normal.logpdf(x, m, _COV.astype(x.dtype)),
   _as(lambda x, m: sst.multivariate_normal.logpdf(x, m, _COV)), U((4, 3), (3,)),
   lambda x, m: _jst().multivariate_normal.logpdf(x, m, _COV.astype(x.dtype)), rtol=1e-5)
op("stats_multivariate_normal_cov", lambda a: fst.multivariate_normal.logpdf(
       np.array([0.3, -0.5, 1.0], a.dtype), np.zeros(3, a.dtype), a @ a.T + np.eye(3, dtype=a.dtype)),
   _as(lambda a: sst.multivariate_normal.logpdf(np.array([0.3, -0.5, 1.0]), np.zeros(3), a @ a.T + np.eye(3))),
   U((3, 3)), lambda a: _jst().multivariate_normal.logpdf(
       np.array([0.3, -0.5, 1.0], a.dtype), np.zeros(3, a.dtype), a @ a.T + np.eye(3, dtype=a.dtype)), rtol=1e-5)
