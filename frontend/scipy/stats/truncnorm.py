"""The truncated normal distribution, ported from ``jax/_src/scipy/stats/truncnorm.py`` so that jaxprs print as
JAX's (its ``logpdf``, ``logcdf``, ``cdf``, ``logsf`` and ``sf`` are jitted there, so ``pjit`` calls here too)."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.api import staged
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import log_ndtr, logsumexp, ndtr
from irax.scipy.stats import norm

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def _log_diff(x, y):
    return logsumexp(jnp.array([x, y]), b=jnp.array([jnp.ones_like(x), -jnp.ones_like(y)]), axis=0)


def _log_gauss_mass(a, b):
    """Log of the standard normal mass on [a, b]: from the left tail (the right one mirrored onto it, where the
    cdf would round to 1) or, for an interval about 0, as log1p of the two tails' masses."""
    a, b = jnp.array(a), jnp.array(b)
    a, b = jnp.broadcast_arrays(a, b)
    case_left = b <= 0
    case_right = a > 0
    case_central = ~(case_left | case_right)
    a_tail = jnp.where(case_right, -b, a)
    b_tail = jnp.where(case_right, -a, b)
    mass_tail = _log_diff(log_ndtr(b_tail), log_ndtr(a_tail))
    mass_central = jnp.log1p(-ndtr(a) - ndtr(-b))
    return jnp.where(case_central, mass_central, mass_tail)


@staged
def logpdf(x, a, b, loc=0, scale=1):
    """Log of the normal density truncated to [a, b] (in standard deviations from ``loc``); -inf outside,
    NaN where a >= b."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logpdf", x, a, b, loc, scale)
    val = lax.sub(norm.logpdf(x, loc, scale), _log_gauss_mass(a, b))
    x_scaled = lax.div(lax.sub(x, loc), scale)
    val = jnp.where((x_scaled < a) | (x_scaled > b), -np.inf, val)
    return jnp.where(a >= b, np.nan, val)


def pdf(x, a, b, loc=0, scale=1):
    """The truncated normal probability density at ``x``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


@staged
def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function: ``logcdf`` of the mirrored distribution at ``-x``."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logsf", x, a, b, loc, scale)
    return logcdf(-x, -b, -a, -loc, scale)


@staged
def sf(x, a, b, loc=0, scale=1):
    """The survival function 1 - cdf."""
    return lax.exp(logsf(x, a, b, loc, scale))


@staged
def logcdf(x, a, b, loc=0, scale=1):
    """Log of the cumulative distribution function: 0 above b, -inf below a, NaN where a >= b; near 0 it is
    log1p(-sf), which does not cancel."""
    x, a, b, loc, scale = promote_args_inexact("truncnorm.logcdf", x, a, b, loc, scale)
    x, a, b = jnp.broadcast_arrays(x, a, b)
    x = lax.div(lax.sub(x, loc), scale)
    lgm_ab = _log_gauss_mass(a, b)
    logcdf = _log_gauss_mass(a, x) - lgm_ab
    logsf = _log_gauss_mass(x, b) - lgm_ab
    logcdf = jnp.select([x >= b, x <= a, logcdf > -0.1, x > a], [0, -np.inf, jnp.log1p(-jnp.exp(logsf)), logcdf])
    return jnp.where(a >= b, np.nan, logcdf)


@staged
def cdf(x, a, b, loc=0, scale=1):
    """The cumulative distribution function."""
    return lax.exp(logcdf(x, a, b, loc, scale))
