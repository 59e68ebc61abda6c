"""Op-table rows of the special-function primitives (igamma, igammac,
betainc, bessel_i0e/i1e, zeta) through funcad.scipy.special and funcad.lax.

Arguments whose second derivative JAX does not offer (a of gammainc: the
derivative of igamma_grad_a; a and b of betainc; x of lax.zeta) are held
fixed here; tests/test_special_more.py checks them and their errors."""
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
