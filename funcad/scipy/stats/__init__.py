"""funcad.scipy.stats: distributions as modules of functions, as in JAX.

>>> from funcad.scipy.stats import norm
>>> round(float(norm.logpdf(0.0)), 6)
-0.918939
"""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm,
               geom, gumbel_l, gumbel_r, laplace, logistic, multinomial, multivariate_normal,
               nbinom, norm, pareto, poisson, t, truncnorm, uniform, vonmises, wrapcauchy)
from ._core import mode, rankdata, sem
from ._kde import gaussian_kde
from ...core.errors import unsupported_name as _unsupported_name

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon",
           "gamma", "gaussian_kde", "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic",
           "mode", "multinomial", "multivariate_normal", "nbinom", "norm", "pareto", "poisson",
           "rankdata", "sem", "t", "truncnorm", "uniform", "vonmises", "wrapcauchy"]


def __getattr__(name):
    raise _unsupported_name(__name__, name, globals(), None)
