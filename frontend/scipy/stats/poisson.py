"""The Poisson distribution, ported from ``jax/_src/scipy/stats/poisson.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.api import jit
from irax.numpy._util import ensure_arraylike, promote_args_inexact, promote_dtypes_inexact
from irax.scipy.special import _lax_const, entr, gammaincc, gammaln, xlogy

__all__ = ["cdf", "entropy", "logpmf", "pmf"]


def logpmf(k, mu, loc=0):
    """Log of the Poisson probability mass k log(mu) - log(k!) - mu at integer ``k - loc``; -inf elsewhere."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = _lax_const(k, 0)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, mu) - gammaln(x + 1) - mu
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.ne(jnp.round(k), k)), -np.inf, log_probs)


def pmf(k, mu, loc=0):
    """The Poisson probability mass at ``k``."""
    return jnp.exp(logpmf(k, mu, loc))


def cdf(k, mu, loc=0):
    """The cumulative distribution function Q(floor(k - loc) + 1, mu); 0 below ``loc``."""
    k, mu, loc = promote_args_inexact("poisson.logpmf", k, mu, loc)
    zero = _lax_const(k, 0)
    x = lax.sub(k, loc)
    p = gammaincc(jnp.floor(1 + x), mu)
    return jnp.where(lax.lt(x, zero), zero, p)


@jit
def entropy(mu, loc=0):
    """The entropy -sum p log p: summed over a fixed range of ``k`` for mu < 100, asymptotic beyond."""
    mu, loc = ensure_arraylike("poisson.entropy", mu, loc)
    promoted_mu, promoted_loc = promote_dtypes_inexact(mu, loc)
    result_shape = jnp.broadcast_shapes(promoted_mu.shape, promoted_loc.shape)
    mu_flat = jnp.ravel(promoted_mu)
    zero_result = jnp.zeros_like(mu_flat)
    result = jnp.where(mu_flat == 0, zero_result,
                       jnp.where(mu_flat < 10, _entropy_small_mu(mu_flat),
                                 jnp.where(mu_flat < 100, _entropy_medium_mu(mu_flat), _entropy_large_mu(mu_flat))))
    result_mu_shape = jnp.reshape(result, promoted_mu.shape)
    return jnp.broadcast_to(result_mu_shape, result_shape)


def _entropy_small_mu(mu):
    """The entropy summed over k < 35, masked to k < ceil(mu + 20)."""
    k = jnp.arange(35, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    upper_bounds = jnp.ceil(mu + 20).astype(k.dtype)
    mask = k < upper_bounds[None, :]
    probs_masked = jnp.where(mask, probs, 0.0)
    return jnp.sum(entr(probs_masked), axis=0)


def _entropy_medium_mu(mu):
    """The entropy summed over k < 250, masked to k < ceil(mu + 10 sqrt(mu) + 20)."""
    k = jnp.arange(250, dtype=mu.dtype)[:, None]
    probs = pmf(k, mu, 0)
    upper_bounds = jnp.ceil(mu + 10 * jnp.sqrt(mu) + 20).astype(k.dtype)
    mask = k < upper_bounds[None, :]
    probs_masked = jnp.where(mask, probs, 0.0)
    return jnp.sum(entr(probs_masked), axis=0)


def _entropy_large_mu(mu):
    """The asymptotic entropy log(2 pi e mu) / 2 - 1 / (12 mu)."""
    return 0.5 * jnp.log(2 * np.pi * np.e * mu) - 1.0 / (12 * mu)
