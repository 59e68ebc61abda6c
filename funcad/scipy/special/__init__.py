"""funcad.scipy.special: JAX's scipy.special functions that compose from funcad's primitives.

>>> import funcad, funcad.scipy.special as sps
>>> float(sps.xlogy(0.0, 0.0))
0.0
"""
from ...arrays.reductions import logsumexp
from ._basic import (boxcox, boxcox1p, entr, erf, erfc, erfinv, expit, kl_div, logit, rel_entr,
                     xlog1py, xlogy)
from ._gamma import (beta, betaln, comb, digamma, factorial, gamma, gammaln, gammasgn, loggamma,
                     multigammaln, poch, polygamma)
from ._erfcx_bernoulli import bernoulli, erfcx
from ._incomplete import betainc, gammainc, gammaincc, i0, i0e, i1, i1e, zeta
from ._normal import erfcinv, log_ndtr, ndtr, ndtri
from ._bessel import bessel_jn, sph_harm_y
from ._expint import exp1, expi, expn
from ._faddeeva import dawsn, wofz
from ._hyper import hyp1f1, hyp2f1
from ._integrals import fresnel, owens_t, sici, spence
from ...nn import log_softmax as _log_softmax, softmax as _softmax
from ...core.errors import unsupported_name as _unsupported_name


def softmax(x, /, *, axis=None):
    """exp(x) / sum(exp(x)) over `axis` (all axes by default), as funcad.nn.softmax.

    >>> import numpy as np
    >>> softmax(np.zeros(2)).tolist()
    [0.5, 0.5]
    """
    return _softmax(x, axis=axis)


def log_softmax(x, /, *, axis=None):
    """x - logsumexp(x) over `axis` (all axes by default), as funcad.nn.log_softmax.

    >>> import numpy as np
    >>> round(float(log_softmax(np.zeros(2))[0]), 6)
    -0.693147
    """
    return _log_softmax(x, axis=axis)


__all__ = ["bernoulli", "bessel_jn", "beta", "betainc", "betaln", "boxcox", "boxcox1p", "comb",
           "dawsn", "digamma", "entr", "erf", "erfc", "erfcinv", "erfcx", "erfinv", "exp1", "expi",
           "expit", "expn", "factorial", "fresnel", "gamma", "gammainc", "gammaincc", "gammaln",
           "gammasgn", "hyp1f1", "hyp2f1", "i0", "i0e", "i1", "i1e", "kl_div", "log_ndtr",
           "log_softmax", "loggamma", "logit", "logsumexp", "multigammaln", "ndtr", "ndtri",
           "owens_t", "poch", "polygamma", "rel_entr", "sici", "softmax", "spence", "sph_harm_y",
           "wofz", "xlog1py", "xlogy", "zeta"]


def __getattr__(name):
    raise _unsupported_name(__name__, name, globals(), None)
