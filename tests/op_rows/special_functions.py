"""Op-table rows of special functions: expi/exp1/expn,
dawsn, sici, fresnel, spence, owens_t, hyp1f1/hyp2f1, bessel_jn, sph_harm_y,
scipy.stats sem and gaussian_kde, lax.conv_general_dilated_local.

Integer-like parameters (expn's n, the degrees of sph_harm_y) are held fixed;
the hypergeometric parameters vary in float64 only (their derivatives are series
summed to float64's eps). wofz (complex) is checked in tests/scipy/test_special_functions.py."""
import numpy as np
import scipy.special as sps
import scipy.stats as sst

import funcad.lax as flax
import funcad.scipy.special as fsp
import funcad.scipy.stats as fst
from tests.op_table import AWAY, U, op

S23 = (2, 3)
N = np.array([[1.0, 2.0, 3.0], [0.0, 4.0, 7.0]])


def _jsp():
    import jax.scipy.special as jsp
    return jsp


def _jst():
    import jax.scipy.stats as jst
    return jst


def _jlax():
    import jax.lax as jl
    return jl


def _as(f):
    def ref(*a):
        out = f(*a)
        if isinstance(out, tuple):
            return tuple(np.asarray(o).astype(a[0].dtype) for o in out)
        return np.asarray(out).astype(a[0].dtype)
    return ref


for _name, _gen in (("expi", AWAY(S23, lo=0.3, hi=6.0)), ("exp1", U(S23, lo=0.2, hi=6.0)),
                    ("dawsn", U(S23, lo=-8.0, hi=8.0)), ("spence", U(S23, lo=0.1, hi=4.0))):
    op(f"special2_{_name}", getattr(fsp, _name), _as(getattr(sps, _name)), _gen,
       (lambda n: lambda x: getattr(_jsp(), n)(x))(_name), rtol=1e-5)

op("special2_expi_large", fsp.expi, _as(sps.expi), U(S23, lo=6.0, hi=70.0), lambda x: _jsp().expi(x), rtol=1e-5)
op("special2_expn", lambda x: fsp.expn(N.astype(x.dtype), x), _as(lambda x: sps.expn(N, x)),
   U(S23, lo=0.2, hi=4.0), lambda x: _jsp().expn(N.astype(x.dtype), x), rtol=1e-5)
op("special2_sici", lambda x: tuple(fsp.sici(x)), _as(sps.sici), U(S23, lo=0.3, hi=12.0),
   lambda x: tuple(_jsp().sici(x)), rtol=1e-5)
op("special2_fresnel", lambda x: tuple(fsp.fresnel(x)), _as(sps.fresnel), U(S23, lo=-4.0, hi=4.0),
   lambda x: tuple(_jsp().fresnel(x)), rtol=1e-5)
op("special2_owens_t", fsp.owens_t, _as(sps.owens_t),
   lambda r, d: U(S23, lo=-2.0, hi=2.0)(r, d) + AWAY(S23, lo=0.2, hi=3.0)(r, d),
   lambda h, a: _jsp().owens_t(h, a), rtol=1e-5)

op("special2_hyp1f1_x", lambda x: fsp.hyp1f1(0.7, 1.6, x), _as(lambda x: sps.hyp1f1(0.7, 1.6, x)),
   U(S23, lo=-3.0, hi=3.0), lambda x: _jsp().hyp1f1(0.7, 1.6, x), rtol=1e-5)
op("special2_hyp1f1_abx", fsp.hyp1f1, _as(sps.hyp1f1),
   lambda r, d: U(S23, S23, lo=0.5, hi=2.5)(r, d) + U(S23, lo=-2.0, hi=2.0)(r, d),
   lambda a, b, x: _jsp().hyp1f1(a, b, x), dtypes=(np.float64,), rtol=1e-8)
op("special2_hyp2f1_x", lambda x: fsp.hyp2f1(0.6, 1.3, 2.2, x), _as(lambda x: sps.hyp2f1(0.6, 1.3, 2.2, x)),
   U(S23, lo=-0.8, hi=0.8), lambda x: _jsp().hyp2f1(0.6, 1.3, 2.2, x), rtol=1e-5)
op("special2_hyp2f1_abcx", fsp.hyp2f1, _as(sps.hyp2f1),
   lambda r, d: U(S23, S23, lo=0.3, hi=1.5)(r, d) + U(S23, lo=2.0, hi=3.0)(r, d) + U(S23, lo=-0.6, hi=0.6)(r, d),
   lambda a, b, c, x: _jsp().hyp2f1(a, b, c, x), dtypes=(np.float64,), rtol=1e-8)

op("special2_bessel_jn", lambda z: fsp.bessel_jn(z, v=3), _as(lambda z: np.stack([sps.jv(k, z) for k in range(4)])),
   U(S23, lo=0.5, hi=10.0), lambda z: _jsp().bessel_jn(z, v=3), dtypes=(np.float64,), rtol=1e-8)
# (in float32 the backward recurrence from order 50 overflows for |z| < ~8, in JAX too)

_SH_N, _SH_M = np.array([0, 1, 2, 3, 4, 2]), np.array([0, -1, 2, -3, 1, 0])


def _sh(f):
    def fun(theta, phi):
        y = f(_SH_N, _SH_M, theta, phi, n_max=4)
        return y.real, y.imag
    return fun


op("special2_sph_harm_y", _sh(fsp.sph_harm_y),
   lambda t, p: tuple(np.asarray(v, np.float64) for v in (sps.sph_harm_y(_SH_N, _SH_M, t, p).real,
                                                          sps.sph_harm_y(_SH_N, _SH_M, t, p).imag)),
   lambda r, d: U((6,), lo=0.3, hi=2.8)(r, d) + U((6,), lo=0.1, hi=6.0)(r, d),
   _sh(lambda *a, **k: _jsp().sph_harm_y(*a, **k)), dtypes=(np.float64,), rtol=1e-8)

# ------------------------------------------------------------------ stats ----
op("stats_sem", lambda x: fst.sem(x, axis=1), _as(lambda x: sst.sem(x, axis=1)), U((3, 5)),
   lambda x: _jst().sem(x, axis=1), rtol=1e-6)
_PTS = np.array([-0.4, 0.1, 0.9])
op("stats_gaussian_kde_logpdf", lambda d: fst.gaussian_kde(d).logpdf(_PTS.astype(d.dtype)),
   _as(lambda d: sst.gaussian_kde(d).logpdf(_PTS)), U((8,)),
   lambda d: _jst().gaussian_kde(d).logpdf(_PTS.astype(d.dtype)), rtol=1e-5)
op("stats_gaussian_kde_2d", lambda d, p: fst.gaussian_kde(d).evaluate(p),
   _as(lambda d, p: sst.gaussian_kde(d).evaluate(p)), U((2, 9), (2, 3)),
   lambda d, p: _jst().gaussian_kde(d).evaluate(p), dtypes=(np.float64,), rtol=1e-8)

# -------------------------------------------------------------------- lax ----


def _local_ref(x, w):
    # out[n, o, i, j] = sum_{c, a, b} x[n, c, i + a, j + b] w[o, c * 4 + a * 2 + b, i, j]
    out = np.zeros((x.shape[0], w.shape[0], 3, 2), np.float64)
    for i in range(3):
        for j in range(2):
            patch = x[:, :, i:i + 2, j:j + 2].reshape(x.shape[0], -1)
            out[:, :, i, j] = patch @ w[:, :, i, j].T
    return out.astype(x.dtype)


op("lax_conv_general_dilated_local", lambda x, w: flax.conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)),
   _local_ref, U((2, 2, 4, 3), (3, 8, 3, 2)),
   lambda x, w: _jlax().conv_general_dilated_local(x, w, (1, 1), "VALID", (2, 2)), rtol=1e-5)
