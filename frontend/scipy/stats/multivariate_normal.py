"""The multivariate normal distribution, ported from ``jax/_src/scipy/stats/multivariate_normal.py`` so that
jaxprs print as JAX's."""
from __future__ import annotations

from functools import partial

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_dtypes_inexact

__all__ = ["logpdf", "pdf"]


def logpdf(x, mean, cov, allow_singular=None):
    """Log of the normal density with ``mean`` (scalar or vector) and ``cov`` (scalar or matrix) at ``x``.

    A matrix covariance is factored by Cholesky and ``x - mean`` whitened by a triangular solve.

    Raises:
      NotImplementedError: if ``allow_singular`` is given.
      ValueError: if ``cov`` is not a square matrix of ``mean``'s size.
    """
    if allow_singular is not None:
        raise NotImplementedError("allow_singular argument of multivariate_normal.logpdf")
    x, mean, cov = promote_dtypes_inexact(x, mean, cov)
    if not mean.shape:
        return -1/2 * jnp.square(x - mean) / cov - 1/2 * (jnp.log(2*np.pi) + jnp.log(cov))
    n = mean.shape[-1]
    if not np.shape(cov):
        y = x - mean
        return -1/2 * jnp.einsum('...i,...i->...', y, y) / cov - n/2 * (jnp.log(2*np.pi) + jnp.log(cov))
    if cov.ndim < 2 or cov.shape[-2:] != (n, n):
        raise ValueError("multivariate_normal.logpdf got incompatible shapes")
    L = lax.linalg.cholesky(cov)
    y = jnp.vectorize(partial(lax.linalg.triangular_solve, lower=True, transpose_a=True),
                      signature="(n,n),(n)->(n)")(L, x - mean)
    return (-1/2 * jnp.einsum('...i,...i->...', y, y) - n/2 * jnp.log(2*np.pi)
            - jnp.log(L.diagonal(axis1=-1, axis2=-2)).sum(-1))


def pdf(x, mean, cov):
    """The multivariate normal probability density at ``x``."""
    return lax.exp(logpdf(x, mean, cov))
