"""funcad.random: JAX's counter-based random numbers, bit for bit.

Keys are raw threefry-2x32 keys, uint32 arrays of shape (2,), made by
`PRNGKey(seed)`, or typed keys (shape (), dtype key<fry>) made by `key(seed)`;
both are consumed by `split`, `fold_in` and the samplers. JAX's other
implementations (`impl=` 'rbg', 'unsafe_rbg', 'threefry4x32', 'philox2x32',
'philox4x32', or `funcad.config.default_prng_impl`) give JAX's bits too.
`Key` is JAX's annotation for key arrays. The
values equal JAX's (with x64 enabled, whose default dtypes funcad shares)
for the same key, eagerly and under jit, vmap, scan and grad.

>>> import funcad.random as fr
>>> key = fr.PRNGKey(0)
>>> k1, k2 = fr.split(key)
>>> fr.normal(k1, (2, 3)).shape
(2, 3)
"""
import typing as _typing

from ..lowering.array import Array as _Array
from ._keys import (PRNGKey, bits, clone, fold_in, key, key_data, key_dtype, key_impl, split,
                    wrap_key_data)
from ._eager import eager_jit as _eager_jit
from . import _counter_impls
from ._discrete import binomial, multinomial, poisson
from ._matrix import multivariate_normal, orthogonal
from ._gamma import (ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma,
                     t)
from ._samplers import (bernoulli, cauchy, categorical, choice, double_sided_maxwell,
                        exponential, geometric, gumbel, laplace, logistic,
                        lognormal, maxwell, normal, pareto, permutation, rademacher, randint,
                        rayleigh, triangular, truncated_normal, uniform, wald, weibull_min)

# Eager calls compile each sampler once per static signature, as JAX does (see _eager.py).
# So do `bits` of the implementations whose hash is a composition (op by op it is slow);
# threefry2x32's NumPy hash is fast eagerly and rbg's bits are one primitive.
bits = _eager_jit(bits, impls=_counter_impls.KEY_WIDTHS, site="random_bits")
ball = _eager_jit(ball, dynamic=("p",))
(beta, binomial, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, multinomial,
 poisson, t, orthogonal, multivariate_normal) = map(_eager_jit, (
    beta, binomial, chisquare, dirichlet, f, gamma, generalized_normal, loggamma,
    multinomial, poisson, t, orthogonal, multivariate_normal))
(bernoulli, cauchy, categorical, choice, double_sided_maxwell, exponential, geometric, gumbel,
 laplace, logistic, lognormal, maxwell, normal, pareto, permutation, rademacher, randint, rayleigh,
 triangular, truncated_normal, uniform, wald, weibull_min) = map(_eager_jit, (
    bernoulli, cauchy, categorical, choice, double_sided_maxwell, exponential, geometric, gumbel,
    laplace, logistic, lognormal, maxwell, normal, pareto, permutation, rademacher, randint,
    rayleigh, triangular, truncated_normal, uniform, wald, weibull_min))

# JAX's out_sharding= on every sampler: the draw laid out so (values do not depend on it)
from ..primitives.sharding import takes_out_sharding as _takes_out_sharding  # noqa: E402

(bits, ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, poisson, t,
 orthogonal, multivariate_normal, bernoulli, cauchy, categorical, exponential, geometric, gumbel,
 laplace, logistic, lognormal, maxwell, normal, pareto, permutation, rademacher, randint, rayleigh,
 triangular, truncated_normal, uniform, wald) = map(_takes_out_sharding, (
    bits, ball, beta, chisquare, dirichlet, f, gamma, generalized_normal, loggamma, poisson, t,
    orthogonal, multivariate_normal, bernoulli, cauchy, categorical, exponential, geometric, gumbel,
    laplace, logistic, lognormal, maxwell, normal, pareto, permutation, rademacher, randint,
    rayleigh, triangular, truncated_normal, uniform, wald))

# JAX's typing alias for key arrays (typed keys, or raw uint32 key data): an annotation,
# and at run time the identity, as JAX's random.Key.
Key = _typing.NewType("Key", _Array)

__all__ = ["Key", "PRNGKey", "bits", "clone", "fold_in", "key", "key_data", "key_dtype", "key_impl",
           "split", "wrap_key_data",
           "ball", "beta", "binomial", "multinomial", "multivariate_normal", "orthogonal",
           "poisson", "chisquare", "dirichlet", "f", "gamma", "generalized_normal", "loggamma",
           "t",
           "bernoulli", "cauchy", "categorical", "choice", "double_sided_maxwell", "exponential",
           "geometric", "gumbel", "laplace", "logistic", "lognormal",
           "maxwell", "normal", "pareto", "permutation", "rademacher", "randint", "rayleigh",
           "triangular", "truncated_normal", "uniform", "wald", "weibull_min"]
