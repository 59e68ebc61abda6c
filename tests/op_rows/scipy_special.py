"""Op-table rows of funcad.scipy.special, funcad.scipy.stats and funcad.scipy.integrate."""
import numpy as np
import scipy.special as sps
import scipy.stats as sst
import scipy.integrate as sint

import funcad.numpy as fnp
import funcad.scipy.integrate as fint
import funcad.scipy.special as fsp
import funcad.scipy.stats as fst
from tests.op_table import U, op

S23 = (2, 3)


def _jsp():
    import jax.scipy.special as jsp
    return jsp


def _jst():
    import jax.scipy.stats as jst
    return jst


def _as(f):
    """A SciPy reference that keeps the input's dtype."""
    return lambda *a: np.asarray(f(*a)).astype(a[0].dtype)


POS = U(S23, lo=0.5, hi=4.0)
PROB = U(S23, lo=0.05, hi=0.95)
# (name, generator, scipy reference); funcad and JAX take the same name.
_UNARY = [
    ("gammaln", POS, sps.gammaln), ("gamma", U(S23, lo=0.5, hi=3.0), sps.gamma),
    ("digamma", POS, sps.digamma), ("loggamma", POS, sps.loggamma),
    ("erf", U(S23), sps.erf), ("erfc", U(S23), sps.erfc), ("erfinv", U(S23, lo=-0.8, hi=0.8), sps.erfinv),
    ("erfcinv", U(S23, lo=0.2, hi=1.8), sps.erfcinv),
    ("expit", U(S23), sps.expit), ("logit", U(S23, lo=0.2, hi=0.8), sps.logit),
    ("ndtr", U(S23, lo=-3, hi=3), sps.ndtr), ("ndtri", PROB, sps.ndtri),
    ("log_ndtr", U(S23, lo=-5, hi=5), sps.log_ndtr), ("entr", POS, sps.entr),
    ("factorial", U(S23, lo=0.5, hi=4.0), lambda n: sps.factorial(n, exact=False)),
]
for _n, _g, _r in _UNARY:
    op(f"special_{_n}", getattr(fsp, _n), _as(_r), _g, (lambda n: lambda x: getattr(_jsp(), n)(x))(_n), rtol=1e-6)

_BINARY = [
    ("betaln", U(S23, S23, lo=0.5, hi=4.0), sps.betaln), ("beta", U(S23, S23, lo=0.5, hi=3.0), sps.beta),
    ("xlogy", U(S23, S23, lo=0.3, hi=3.0), sps.xlogy), ("xlog1py", U(S23, S23, lo=-0.5, hi=2.0), sps.xlog1py),
    ("rel_entr", U(S23, S23, lo=0.3, hi=3.0), sps.rel_entr), ("kl_div", U(S23, S23, lo=0.3, hi=3.0), sps.kl_div),
    ("comb", lambda r, d: (U(S23, lo=4.0, hi=6.0)(r, d)[0], U(S23, lo=0.5, hi=3.5)(r, d)[0]),
     lambda n, k: sps.comb(n, k)),
    ("poch", U(S23, S23, lo=0.5, hi=2.5), sps.poch),
    ("boxcox", lambda r, d: (U(S23, lo=0.5, hi=3.0)(r, d)[0], U(S23, lo=0.2, hi=1.5)(r, d)[0]), sps.boxcox),
]
for _n, _g, _r in _BINARY:
    op(f"special_{_n}", getattr(fsp, _n), _as(_r), _g,
       (lambda n: lambda x, y: getattr(_jsp(), n)(x, y))(_n), rtol=1e-6)

op("special_betaln_large", fsp.betaln, _as(sps.betaln), U(S23, S23, lo=9.0, hi=30.0),
   lambda a, b: _jsp().betaln(a, b), rtol=1e-6)
op("special_polygamma2", lambda x: fsp.polygamma(2, x), _as(lambda x: sps.polygamma(2, x)), POS,
   lambda x: _jsp().polygamma(2, x), rtol=1e-6)
op("special_multigammaln", lambda x: fsp.multigammaln(x, 3), _as(lambda x: sps.multigammaln(x, 3)),
   U((3,), lo=2.0, hi=5.0), lambda x: _jsp().multigammaln(x, 3), rtol=1e-6)
op("special_logsumexp_b", lambda a, b: fsp.logsumexp(a, axis=1, b=b),
   _as(lambda a, b: sps.logsumexp(a, axis=1, b=b)), U(S23, (3,), lo=0.2, hi=2.0),
   lambda a, b: _jsp().logsumexp(a, axis=1, b=b))
op("special_softmax", lambda x: fsp.softmax(x, axis=1), _as(lambda x: sps.softmax(x, axis=1)), U(S23),
   lambda x: _jsp().softmax(x, axis=1))
op("special_log_ndtr_tail", fsp.log_ndtr, _as(sps.log_ndtr), U((3,), lo=-40.0, hi=-21.0),
   lambda x: _jsp().log_ndtr(x), dtypes=(np.float64,), rtol=1e-6)

# -------------------------------------------------------------- stats ----
_LOC_SCALE = [  # (module, function, scipy distribution, generator of x)
    ("norm", "logpdf", sst.norm, U(S23)), ("norm", "cdf", sst.norm, U(S23)),
    ("norm", "logcdf", sst.norm, U(S23)), ("norm", "logsf", sst.norm, U(S23)),
    ("norm", "ppf", sst.norm, PROB), ("norm", "isf", sst.norm, PROB),
    ("cauchy", "logpdf", sst.cauchy, U(S23)), ("cauchy", "cdf", sst.cauchy, U(S23)),
    ("cauchy", "ppf", sst.cauchy, U(S23, lo=0.1, hi=0.45)),
    ("laplace", "logpdf", sst.laplace, U(S23, lo=1.2, hi=3.0)), ("laplace", "cdf", sst.laplace, U(S23, lo=1.2, hi=3.0)),
    ("logistic", "logpdf", sst.logistic, U(S23)), ("logistic", "cdf", sst.logistic, U(S23)),
    ("logistic", "ppf", sst.logistic, PROB),
    ("expon", "logpdf", sst.expon, U(S23, lo=1.0, hi=3.0)), ("expon", "logcdf", sst.expon, U(S23, lo=1.0, hi=3.0)),
    ("expon", "ppf", sst.expon, PROB),
    ("uniform", "cdf", sst.uniform, U(S23, lo=0.6, hi=1.5)), ("uniform", "ppf", sst.uniform, PROB),
]
for _m, _f, _d, _g in _LOC_SCALE:
    op(f"stats_{_m}_{_f}", (lambda m, f: lambda x, loc, s: getattr(getattr(fst, m), f)(x, loc, s + 1.0))(_m, _f),
       (lambda d, f: _as(lambda x, loc, s: getattr(d, f)(x, loc, s + 1.0)))(_d, _f),
       (lambda g: lambda r, dt: g(r, dt) + (np.asarray(0.5, dt), np.asarray(0.7, dt)))(_g),
       (lambda m, f: lambda x, loc, s: getattr(getattr(_jst(), m), f)(x, loc, s + 1.0))(_m, _f), rtol=1e-6)

op("stats_t_logpdf", lambda x, df: fst.t.logpdf(x, df, 0.3, 1.5), _as(lambda x, df: sst.t.logpdf(x, df, 0.3, 1.5)),
   lambda r, d: U(S23)(r, d) + U(S23, lo=1.0, hi=5.0)(r, d),
   lambda x, df: _jst().t.logpdf(x, df, 0.3, 1.5), rtol=1e-6)
op("stats_chi2_logpdf", lambda x, df: fst.chi2.logpdf(x, df), _as(sst.chi2.logpdf),
   U(S23, S23, lo=0.5, hi=4.0), lambda x, df: _jst().chi2.logpdf(x, df), rtol=1e-6)
op("stats_gamma_logpdf", lambda x, a, s: fst.gamma.logpdf(x, a, 0.1, s), _as(lambda x, a, s: sst.gamma.logpdf(x, a, 0.1, s)),
   U(S23, S23, S23, lo=0.5, hi=3.0), lambda x, a, s: _jst().gamma.logpdf(x, a, 0.1, s), rtol=1e-6)
op("stats_beta_logpdf", fst.beta.logpdf, _as(sst.beta.logpdf),
   lambda r, d: U(S23, lo=0.1, hi=0.9)(r, d) + U(S23, S23, lo=0.5, hi=3.0)(r, d),
   lambda x, a, b: _jst().beta.logpdf(x, a, b), rtol=1e-6)
op("stats_poisson_logpmf", lambda mu: fst.poisson.logpmf(np.array([0.0, 1.0, 4.0], mu.dtype), mu),
   _as(lambda mu: sst.poisson.logpmf(np.array([0.0, 1.0, 4.0], mu.dtype), mu)), U((3,), lo=0.5, hi=4.0),
   lambda mu: _jst().poisson.logpmf(np.array([0.0, 1.0, 4.0], mu.dtype), mu), rtol=1e-6)
op("stats_binom_logpmf", lambda p: fst.binom.logpmf(np.array([0.0, 2.0, 5.0], p.dtype), 5.0, p),
   _as(lambda p: sst.binom.logpmf(np.array([0.0, 2.0, 5.0], p.dtype), 5, p)), PROB,
   lambda p: _jst().binom.logpmf(np.array([0.0, 2.0, 5.0], p.dtype), 5.0, p), rtol=1e-6)
op("stats_geom_logpmf", lambda p: fst.geom.logpmf(np.array([1.0, 2.0, 5.0], p.dtype), p),
   _as(lambda p: sst.geom.logpmf(np.array([1.0, 2.0, 5.0], p.dtype), p)), U((3,), lo=0.1, hi=0.9),
   lambda p: _jst().geom.logpmf(np.array([1.0, 2.0, 5.0], p.dtype), p), rtol=1e-6)
op("stats_bernoulli_logpmf", lambda p: fst.bernoulli.logpmf(np.array([0.0, 1.0, 1.0], p.dtype), p),
   _as(lambda p: sst.bernoulli.logpmf(np.array([0.0, 1.0, 1.0], p.dtype), p)), U((3,), lo=0.1, hi=0.9),
   lambda p: _jst().bernoulli.logpmf(np.array([0.0, 1.0, 1.0], p.dtype), p), rtol=1e-6)
op("stats_dirichlet_logpdf", lambda a: fst.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a),
   _as(lambda a: sst.dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a)), U((3,), lo=0.5, hi=3.0),
   lambda a: _jst().dirichlet.logpdf(np.array([0.2, 0.3, 0.5]), a), dtypes=(np.float64,), rtol=1e-6)
op("integrate_trapezoid", lambda y, x: fint.trapezoid(y, fnp.sort(x)),
   _as(lambda y, x: sint.trapezoid(y, np.sort(x))), U((2, 5), (5,)),
   lambda y, x: _jint().trapezoid(y, __import__("jax.numpy").numpy.sort(x)))


def _jint():
    import jax.scipy.integrate as jint
    return jint
