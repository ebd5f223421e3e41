"""The Pareto distribution, ported from ``jax/_src/scipy/stats/pareto.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, b, loc=0, scale=1):
    """Log of the Pareto density: -log(scale / b) - (b + 1) log(z) for z = (x - loc) / scale; -inf below z = 1."""
    x, b, loc, scale = promote_args_inexact("pareto.logpdf", x, b, loc, scale)
    one = _lax_const(x, 1)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.div(scale, b))
    log_probs = lax.neg(lax.add(normalize_term, lax.mul(lax.add(b, one), lax.log(scaled_x))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, log_probs)


def pdf(x, b, loc=0, scale=1):
    """The Pareto probability density at ``x``."""
    return lax.exp(logpdf(x, b, loc, scale))


def cdf(x, b, loc=0, scale=1):
    """The cumulative distribution function 1 - z**-b, 0 below z = 1."""
    x, b, loc, scale = promote_args_inexact("pareto.cdf", x, b, loc, scale)
    one = _lax_const(x, 1)
    zero = _lax_const(x, 0)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    cdf = lax.sub(one, lax.pow(scaled_x, lax.neg(b)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, cdf)


def logcdf(x, b, loc=0, scale=1):
    """Log of the cumulative distribution function, log1p(-z**-b); -inf below z = 1."""
    x, b, loc, scale = promote_args_inexact("pareto.logcdf", x, b, loc, scale)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    logcdf_val = lax.log1p(lax.neg(lax.pow(scaled_x, lax.neg(b))))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), -np.inf, logcdf_val)


def logsf(x, b, loc=0, scale=1):
    """Log of the survival function, -b log(z); 0 below z = 1."""
    x, b, loc, scale = promote_args_inexact("pareto.logsf", x, b, loc, scale)
    zero = _lax_const(x, 0)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    logsf_val = lax.neg(lax.mul(b, lax.log(scaled_x)))
    return jnp.where(lax.lt(x, lax.add(loc, scale)), zero, logsf_val)


def sf(x, b, loc=0, scale=1):
    """The survival function z**-b."""
    return lax.exp(logsf(x, b, loc, scale))


def ppf(q, b, loc=0, scale=1):
    """The quantile function loc + scale * (1 - q)**(-1/b); NaN for ``q`` outside [0, 1]."""
    q, b, loc, scale = promote_args_inexact("pareto.ppf", q, b, loc, scale)
    one = _lax_const(q, 1)
    ppf_val = lax.add(loc, lax.mul(scale, lax.pow(lax.sub(one, q), lax.neg(lax.div(one, b)))))
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, ppf_val)
