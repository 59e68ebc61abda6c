"""gaussian_kde: a Gaussian kernel density estimate, a pytree as in JAX."""
from __future__ import annotations

import numpy as np

from ... import numpy as fnp
from ... import random
from ...core.avals import aval_of
from ...core.errors import FuncadTypeError, FuncadValueError
from ...arrays.dtypes import asarray_or_tracer, to_inexact
from ...transforms.vmap import vmap
from ...core.pytree import register_pytree_node_class
from .. import linalg
from ..special import logsumexp, ndtr

__all__ = ["gaussian_kde"]


def _real_2d(who, x):
    x = fnp.atleast_2d(to_inexact(asarray_or_tracer(x)))
    if aval_of(x).dtype.kind == "c":
        raise FuncadTypeError(f"{who}: gaussian_kde does not take complex data")
    return x


@register_pytree_node_class
class gaussian_kde:
    """A Gaussian kernel density estimate of `dataset` ((d, n), or (n,) for d = 1), with
    bandwidth `bw_method` ("scott" (default), "silverman", a scalar factor, or a callable
    of the kde) and optional `weights` (n,).

    >>> import numpy as np
    >>> from funcad.scipy.stats import gaussian_kde
    >>> kde = gaussian_kde(np.array([0.0, 1.0, 2.0]))
    >>> round(float(kde.evaluate(1.0)[0]), 6)
    0.318156
    """
    __slots__ = ("neff", "dataset", "weights", "covariance", "inv_cov")

    def __init__(self, dataset, bw_method=None, weights=None):
        dataset = _real_2d("gaussian_kde", dataset)
        if not dataset.size > 1:
            raise FuncadValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            weights = fnp.atleast_1d(to_inexact(asarray_or_tracer(weights)))
            dtype = fnp.result_type(dataset, weights)
            dataset, weights = dataset.astype(dtype), weights.astype(dtype)
            weights = weights / fnp.sum(weights)
            if weights.ndim != 1:
                raise FuncadValueError("`weights` input should be one-dimensional.")
            if weights.shape[0] != n:
                raise FuncadValueError(f"`weights` input should be of length n = {n}, got {weights.shape[0]}")
        else:
            weights = fnp.full(n, 1.0 / n, dtype=dataset.dtype)
        object.__setattr__(self, "dataset", dataset)
        object.__setattr__(self, "weights", weights)
        neff = 1 / fnp.sum(weights ** 2)
        object.__setattr__(self, "neff", neff)
        bw_method = "scott" if bw_method is None else bw_method
        if isinstance(bw_method, str) and bw_method == "scott":
            factor = fnp.power(neff, -1.0 / (d + 4))
        elif isinstance(bw_method, str) and bw_method == "silverman":
            factor = fnp.power(neff * (d + 2) / 4.0, -1.0 / (d + 4))
        elif not isinstance(bw_method, str) and fnp.isscalar(bw_method):
            factor = bw_method
        elif callable(bw_method):
            factor = bw_method(self)
        else:
            raise FuncadValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")
        data_cov = fnp.atleast_2d(fnp.cov(dataset, rowvar=True, bias=False, aweights=weights))
        object.__setattr__(self, "covariance", data_cov * factor ** 2)
        object.__setattr__(self, "inv_cov", fnp.linalg.inv(data_cov) / factor ** 2)

    def __setattr__(self, name, value):
        raise AttributeError(f"gaussian_kde is immutable; cannot set {name!r}")

    def tree_flatten(self):
        return (self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None

    @classmethod
    def tree_unflatten(cls, aux, children):
        kde = cls.__new__(cls)
        for name, value in zip(cls.__slots__, children):
            object.__setattr__(kde, name, value)
        return kde

    @property
    def d(self) -> int:
        return self.dataset.shape[0]

    @property
    def n(self) -> int:
        return self.dataset.shape[1]

    def _points(self, points):
        points = _real_2d("gaussian_kde", points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                return fnp.reshape(points, (self.d, 1))
            raise FuncadValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points

    def _kernel_args(self, points):
        """log of the weighted kernels, shape (points, data), in whitened coordinates."""
        x = self._points(points)
        dtype = fnp.result_type(self.dataset, x, self.inv_cov)
        w = linalg.cholesky(self.inv_cov.astype(dtype), lower=True)
        data = fnp.dot(self.dataset.T.astype(dtype), w)
        xi = fnp.dot(x.T.astype(dtype), w)
        log_norm = fnp.sum(fnp.log(fnp.diag(w))) - 0.5 * self.d * float(np.log(2 * np.pi))
        sq = fnp.sum(fnp.square(data[None, :, :] - xi[:, None, :]), axis=-1)
        return log_norm - 0.5 * sq, self.weights.astype(dtype)

    def evaluate(self, points):
        """The density at `points` ((d, m), or (m,) for d = 1): shape (m,)."""
        arg, w = self._kernel_args(points)
        return fnp.sum(w[None, :] * fnp.exp(arg), axis=1)

    def __call__(self, points):
        return self.evaluate(points)

    def pdf(self, x):
        """The density at x, as evaluate."""
        return self.evaluate(x)

    def logpdf(self, x):
        """The log density at x, through logsumexp (no underflow far from the data)."""
        arg, w = self._kernel_args(x)
        return logsumexp(fnp.log(w)[None, :] + arg, axis=1)

    def _convolve(self, chol, norm, target, weights, mean):
        diff = target - mean[:, None]
        alpha = linalg.cho_solve(chol, diff)
        return norm * fnp.sum(fnp.exp(-0.5 * fnp.sum(diff * alpha, axis=0)) * weights)

    def _norm(self, cov):
        chol = linalg.cho_factor(self.covariance + cov)
        return chol, 1.0 / (float(np.sqrt(2 * np.pi)) ** self.d * fnp.prod(fnp.diag(chol[0])))

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the normal density N(mean, cov)."""
        mean = fnp.atleast_1d(fnp.squeeze(asarray_or_tracer(mean)))
        cov = fnp.atleast_2d(asarray_or_tracer(cov))
        if mean.shape != (self.d,):
            raise FuncadValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise FuncadValueError(f"covariance does not have dimension {self.d}")
        chol, norm = self._norm(cov)
        return self._convolve(chol, norm, self.dataset, self.weights, mean)

    def integrate_box_1d(self, low, high):
        """The probability of [low, high] (scalars) under a one-dimensional density."""
        if self.d != 1:
            raise FuncadValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise FuncadValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = fnp.squeeze(fnp.sqrt(self.covariance))
        lo = fnp.squeeze((low - self.dataset) / sigma)
        hi = fnp.squeeze((high - self.dataset) / sigma)
        return fnp.sum(self.weights * (ndtr(hi) - ndtr(lo)))

    def integrate_kde(self, other: "gaussian_kde"):
        """The integral of the product of this density and another kde's."""
        if other.d != self.d:
            raise FuncadValueError("KDEs are not the same dimensionality")
        chol, norm = self._norm(other.covariance)
        sm, lg = (self, other) if self.n < other.n else (other, self)
        parts = vmap(lambda mean: self._convolve(chol, norm, lg.dataset, lg.weights, mean),
                     in_axes=1)(sm.dataset)
        return fnp.sum(parts * sm.weights)

    def resample(self, key, shape=()):
        """Draws from the density: shape (d, *shape); JAX's draws for the same key."""
        shape = tuple(shape)
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, fnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                         shape=shape, dtype=self.dataset.dtype)
        return self.dataset[:, ind] + fnp.moveaxis(eps, -1, 0)
