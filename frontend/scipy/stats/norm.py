"""The normal distribution, ported from ``jax/_src/scipy/stats/norm.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy import special
from irax.scipy.special import _lax_const

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the normal probability density at ``x``."""
    x, loc, scale = promote_args_inexact("norm.logpdf", x, loc, scale)
    scale_sqrd = lax.square(scale)
    log_normalizer = lax.log(lax.mul(_lax_const(x, 2 * np.pi), scale_sqrd))
    quadratic = lax.div(lax.square(lax.sub(x, loc)), scale_sqrd)
    return lax.div(lax.add(log_normalizer, quadratic), _lax_const(x, -2))


def pdf(x, loc=0, scale=1):
    """The normal probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The normal cumulative distribution function at ``x``."""
    x, loc, scale = promote_args_inexact("norm.cdf", x, loc, scale)
    return special.ndtr(lax.div(lax.sub(x, loc), scale))


def logcdf(x, loc=0, scale=1):
    """Log of the normal cumulative distribution function, accurate far into the lower tail."""
    x, loc, scale = promote_args_inexact("norm.logcdf", x, loc, scale)
    return special.log_ndtr(lax.div(lax.sub(x, loc), scale))


def ppf(q, loc=0, scale=1):
    """The quantile function: the inverse of ``cdf``."""
    return jnp.asarray(special.ndtri(q) * scale + loc, float)


def logsf(x, loc=0, scale=1):
    """Log of the survival function 1 - cdf."""
    x, loc, scale = promote_args_inexact("norm.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def sf(x, loc=0, scale=1):
    """The survival function 1 - cdf, without cancellation in the upper tail."""
    x, loc, scale = promote_args_inexact("norm.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """The inverse survival function."""
    return ppf(lax.sub(_lax_const(q, 1), q), loc, scale)
