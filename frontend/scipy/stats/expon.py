"""The exponential distribution, ported from ``jax/_src/scipy/stats/expon.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the exponential probability density at ``x``; -inf below ``loc``."""
    x, loc, scale = promote_args_inexact("expon.logpdf", x, loc, scale)
    log_scale = lax.log(scale)
    linear_term = lax.div(lax.sub(x, loc), scale)
    log_probs = lax.neg(lax.add(linear_term, log_scale))
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """The exponential probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The exponential cumulative distribution function 1 - exp(-(x - loc) / scale), 0 below ``loc``."""
    x, loc, scale = promote_args_inexact("expon.cdf", x, loc, scale)
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled_x), lax.neg(lax.expm1(neg_scaled_x)))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution function, as log1p(-sf)."""
    return lax.log1p(lax.neg(sf(x, loc, scale)))


def logsf(x, loc=0, scale=1):
    """Log of the survival function: -(x - loc) / scale, 0 below ``loc``."""
    x, loc, scale = promote_args_inexact("expon.sf", x, loc, scale)
    neg_scaled_x = lax.div(lax.sub(loc, x), scale)
    return jnp.where(lax.lt(x, loc), jnp.zeros_like(neg_scaled_x), neg_scaled_x)


def sf(x, loc=0, scale=1):
    """The survival function 1 - cdf."""
    return lax.exp(logsf(x, loc, scale))


def ppf(q, loc=0, scale=1):
    """The quantile function loc - scale * log1p(-q); NaN for ``q`` outside [0, 1]."""
    q, loc, scale = promote_args_inexact("expon.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.sub(loc, lax.mul(scale, lax.log1p(lax.neg(q)))))
