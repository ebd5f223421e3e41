"""``gaussian_kde``, ported from ``jax/_src/scipy/stats/kde.py`` so that jaxprs print as JAX's: a frozen dataclass
registered as a pytree (its arrays are the leaves), with JAX's jitted methods and kernel sum."""
from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import Any

import numpy as np

from irax import dtypes, lax, random
from irax import numpy as jnp
from irax.batching import vmap
from irax.numpy._util import check_arraylike, promote_dtypes_inexact, staged_as
from irax.scipy import linalg, special
from irax.tree_util import register_pytree_node_class

__all__ = ["gaussian_kde"]


@register_pytree_node_class
@dataclass(frozen=True, init=False, slots=True)
class gaussian_kde:
    """Gaussian kernel density estimator, as :class:`scipy.stats.gaussian_kde`.

    Args:
      dataset: real data, of shape ``(n_data,)`` or ``(n_dimensions, n_data)``.
      bw_method: ``"scott"`` (the default), ``"silverman"``, a scalar, or a callable taking the estimator.
      weights: optional weights of the data points.

    Raises:
      NotImplementedError: for complex data.
      ValueError: for a dataset of fewer than two elements, weights not one-dimensional or not of length
        ``n_data``, or an unknown ``bw_method``.
    """
    neff: Any
    dataset: Any
    weights: Any
    covariance: Any
    inv_cov: Any

    def __init__(self, dataset, bw_method=None, weights=None):
        check_arraylike("gaussian_kde", dataset)
        dataset = jnp.atleast_2d(dataset)
        if dtypes.issubdtype(lax.dtype(dataset), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex data")
        if not dataset.size > 1:
            raise ValueError("`dataset` input should have multiple elements.")
        d, n = dataset.shape
        if weights is not None:
            check_arraylike("gaussian_kde", weights)
            dataset, weights = promote_dtypes_inexact(dataset, weights)
            weights = jnp.atleast_1d(weights)
            weights /= jnp.sum(weights)
            if weights.ndim != 1:
                raise ValueError("`weights` input should be one-dimensional.")
            if len(weights) != n:
                raise ValueError("`weights` input should be of length n")
        else:
            dataset, = promote_dtypes_inexact(dataset)
            weights = jnp.full(n, 1.0 / n, dtype=dataset.dtype)
        self._setattr("dataset", dataset)
        self._setattr("weights", weights)
        neff = self._setattr("neff", 1 / jnp.sum(weights**2))
        factor = self._bandwidth_factor("scott" if bw_method is None else bw_method, neff, d)
        data_covariance = jnp.atleast_2d(jnp.cov(dataset, rowvar=1, bias=False, aweights=weights))
        data_inv_cov = jnp.linalg.inv(data_covariance)
        self._setattr("covariance", data_covariance * factor**2)
        self._setattr("inv_cov", data_inv_cov / factor**2)

    def _bandwidth_factor(self, bw_method, neff, d):
        if bw_method == "scott":
            return jnp.power(neff, -1. / (d + 4))
        if bw_method == "silverman":
            return jnp.power(neff * (d + 2) / 4.0, -1. / (d + 4))
        if jnp.isscalar(bw_method) and not isinstance(bw_method, str):
            return bw_method
        if callable(bw_method):
            return bw_method(self)
        raise ValueError("`bw_method` should be 'scott', 'silverman', a scalar, or a callable.")

    def _setattr(self, name, value):
        object.__setattr__(self, name, value)  # the frozen dataclass's own way round its __setattr__
        return value

    def tree_flatten(self):
        return ((self.neff, self.dataset, self.weights, self.covariance, self.inv_cov), None)

    @classmethod
    def tree_unflatten(cls, aux_data, children):
        del aux_data
        kde = cls.__new__(cls)
        for name, child in zip(("neff", "dataset", "weights", "covariance", "inv_cov"), children):
            kde._setattr(name, child)
        return kde

    @property
    def d(self):
        """The number of dimensions."""
        return self.dataset.shape[0]

    @property
    def n(self):
        """The number of data points."""
        return self.dataset.shape[1]

    def evaluate(self, points):
        """The estimated density at ``points`` (of shape ``(d, m)``, or ``(m,)`` when d == 1 or m == 1)."""
        check_arraylike("evaluate", points)
        points = self._reshape_points(points)
        result = _gaussian_kernel_eval(False, self.dataset.T, self.weights[:, None], points.T, self.inv_cov)
        return result[:, 0]

    def __call__(self, points):
        return self.evaluate(points)

    def integrate_gaussian(self, mean, cov):
        """The integral of the density times the normal density of ``mean`` and ``cov``.

        Raises:
          ValueError: if ``mean`` or ``cov`` do not have the dataset's dimension.
        """
        mean = jnp.atleast_1d(jnp.squeeze(mean))
        cov = jnp.atleast_2d(cov)
        if mean.shape != (self.d,):
            raise ValueError(f"mean does not have dimension {self.d}")
        if cov.shape != (self.d, self.d):
            raise ValueError(f"covariance does not have dimension {self.d}")
        chol = linalg.cho_factor(self.covariance + cov)
        norm = jnp.sqrt(2 * np.pi)**self.d * jnp.prod(jnp.diag(chol[0]))
        norm = 1.0 / norm
        return _gaussian_kernel_convolve(chol, norm, self.dataset, self.weights, mean)

    @staged_as("integrate_box_1d")
    def integrate_box_1d(self, low, high):
        """The integral of a one-dimensional density over [low, high].

        Raises:
          ValueError: if the density is not one-dimensional or a limit is not a scalar.
        """
        if self.d != 1:
            raise ValueError("integrate_box_1d() only handles 1D pdfs")
        if np.ndim(low) != 0 or np.ndim(high) != 0:
            raise ValueError("the limits of integration in integrate_box_1d must be scalars")
        sigma = jnp.squeeze(jnp.sqrt(self.covariance))
        low = jnp.squeeze((low - self.dataset) / sigma)
        high = jnp.squeeze((high - self.dataset) / sigma)
        return jnp.sum(self.weights * (special.ndtr(high) - special.ndtr(low)))

    def integrate_kde(self, other):
        """The integral of the product of two densities.

        Raises:
          ValueError: if their dimensions differ.
        """
        if other.d != self.d:
            raise ValueError("KDEs are not the same dimensionality")
        chol = linalg.cho_factor(self.covariance + other.covariance)
        norm = jnp.sqrt(2 * np.pi)**self.d * jnp.prod(jnp.diag(chol[0]))
        norm = 1.0 / norm
        sm, lg = (self, other) if self.n < other.n else (other, self)
        result = vmap(partial(_gaussian_kernel_convolve, chol, norm, lg.dataset, lg.weights), in_axes=1)(sm.dataset)
        return jnp.sum(result * sm.weights)

    @staged_as("resample", static_argnames=("shape",))
    def resample(self, key, shape=()):
        """Samples of shape ``(d,) + shape`` from the estimated density: data points drawn by weight, plus
        normal noise of the kernel's covariance."""
        ind_key, eps_key = random.split(key)
        ind = random.choice(ind_key, self.n, shape=shape, p=self.weights)
        eps = random.multivariate_normal(eps_key, jnp.zeros(self.d, self.covariance.dtype), self.covariance,
                                         shape=shape, dtype=self.dataset.dtype).T
        return self.dataset[:, ind] + eps

    def pdf(self, x):
        """The estimated density at ``x``."""
        return self.evaluate(x)

    def logpdf(self, x):
        """Log of the estimated density at ``x``, summed in log space."""
        check_arraylike("logpdf", x)
        x = self._reshape_points(x)
        result = _gaussian_kernel_eval(True, self.dataset.T, self.weights[:, None], x.T, self.inv_cov)
        return result[:, 0]

    def integrate_box(self, low_bounds, high_bounds, maxpts=None):
        """Not implemented, as in JAX: only ``integrate_box_1d`` is."""
        del low_bounds, high_bounds, maxpts
        raise NotImplementedError("only 1D box integrations are supported; use `integrate_box_1d`")

    def set_bandwidth(self, bw_method=None):
        """Not implemented, as in JAX: the bandwidth is fixed at construction."""
        del bw_method
        raise NotImplementedError("dynamically changing the bandwidth method is not supported")

    def _reshape_points(self, points):
        if dtypes.issubdtype(lax.dtype(points), np.complexfloating):
            raise NotImplementedError("gaussian_kde does not support complex coordinates")
        points = jnp.atleast_2d(points)
        d, m = points.shape
        if d != self.d:
            if d == 1 and m == self.d:
                points = jnp.reshape(points, (self.d, 1))
            else:
                raise ValueError(f"points have dimension {d}, dataset has dimension {self.d}")
        return points


def _gaussian_kernel_convolve(chol, norm, target, weights, mean):
    diff = target - mean[:, None]
    alpha = linalg.cho_solve(chol, diff)
    arg = 0.5 * jnp.sum(diff * alpha, axis=0)
    return norm * jnp.sum(jnp.exp(-arg) * weights)


@staged_as("_gaussian_kernel_eval", static_argnums=0)
def _gaussian_kernel_eval(in_log, points, values, xi, precision):
    """The weighted kernel sum (its log if ``in_log``) at each of ``xi``, in coordinates whitened by the
    precision's Cholesky factor."""
    points, values, xi, precision = promote_dtypes_inexact(points, values, xi, precision)
    d = points.shape[1]
    if xi.shape[1] != d:
        raise ValueError("points and xi must have same trailing dim")
    if precision.shape != (d, d):
        raise ValueError("precision matrix must match data dims")
    whitening = linalg.cholesky(precision, lower=True)
    points = jnp.dot(points, whitening)
    xi = jnp.dot(xi, whitening)
    log_norm = jnp.sum(jnp.log(jnp.diag(whitening))) - 0.5 * d * jnp.log(2 * np.pi)

    def kernel(x_test, x_train, y_train):
        arg = log_norm - 0.5 * jnp.sum(jnp.square(x_train - x_test))
        if in_log:
            return jnp.log(y_train) + arg
        return y_train * jnp.exp(arg)

    reduce = special.logsumexp if in_log else jnp.sum
    return vmap(lambda x: reduce(vmap(kernel, in_axes=(None, 0, 0))(x, points, values), axis=0))(xi)
