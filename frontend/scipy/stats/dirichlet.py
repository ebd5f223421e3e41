"""The Dirichlet distribution, ported from ``jax/_src/scipy/stats/dirichlet.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_dtypes_inexact
from irax.scipy.special import _lax_const, gammaln, xlogy

__all__ = ["logpdf", "pdf"]


def _is_simplex(x):
    x_sum = jnp.sum(x, axis=0)
    return jnp.all(x > 0, axis=0) & (abs(x_sum - 1) < 1E-6)


def logpdf(x, alpha):
    """Log of the density prod x_i^(alpha_i - 1) / B(alpha) over axis 0 of ``x``; -inf off the open simplex.

    ``x`` may omit its last component (then 1 - sum(x)).

    Raises:
      ValueError: if ``alpha`` is not one-dimensional, or ``x.shape[0]`` is neither ``len(alpha)`` nor one less.
    """
    return _logpdf(*promote_dtypes_inexact(x, alpha))


def _logpdf(x, alpha):
    if alpha.ndim != 1:
        raise ValueError(f"`alpha` must be one-dimensional; got alpha.shape={alpha.shape}")
    if x.shape[0] not in (alpha.shape[0], alpha.shape[0] - 1):
        raise ValueError("`x` must have either the same number of entries as `alpha` "
                         f"or one entry fewer; got x.shape={x.shape}, alpha.shape={alpha.shape}")
    one = _lax_const(x, 1)
    if x.shape[0] != alpha.shape[0]:
        x = jnp.concatenate([x, lax.sub(one, x.sum(0, keepdims=True))], axis=0)
    normalize_term = jnp.sum(gammaln(alpha)) - gammaln(jnp.sum(alpha))
    if x.ndim > 1:
        alpha = lax.broadcast_in_dim(alpha, alpha.shape + (1,) * (x.ndim - 1), (0,))
    log_probs = lax.sub(jnp.sum(xlogy(lax.sub(alpha, one), x), axis=0), normalize_term)
    return jnp.where(_is_simplex(x), log_probs, -np.inf)


def pdf(x, alpha):
    """The Dirichlet probability density at ``x``."""
    return lax.exp(logpdf(x, alpha))
