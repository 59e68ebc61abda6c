"""funcad.scipy.stats: distributions as modules of functions, as in JAX.

>>> from funcad.scipy.stats import norm
>>> round(float(norm.logpdf(0.0)), 6)
-0.918939
"""
from . import (bernoulli, beta, binom, cauchy, chi2, dirichlet, expon, gamma, geom, gumbel_l, gumbel_r,
               laplace, logistic, nbinom, norm, pareto, poisson, t, uniform, vonmises)

__all__ = ["bernoulli", "beta", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "geom",
           "gumbel_l", "gumbel_r", "laplace", "logistic", "nbinom", "norm", "pareto", "poisson", "t",
           "uniform", "vonmises"]


def __getattr__(name):
    from ...core.errors import unsupported_name
    raise unsupported_name(__name__, name, globals(), None)
