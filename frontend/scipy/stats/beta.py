"""The beta distribution, ported from ``jax/_src/scipy/stats/beta.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, betainc, betaln, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, b, loc=0, scale=1):
    """Log of the beta density at y = (x - loc) / scale; -inf outside [0, 1], NaN unless a, b, scale > 0."""
    x, a, b, loc, scale = promote_args_inexact("beta.logpdf", x, a, b, loc, scale)
    one = _lax_const(x, 1)
    zero = _lax_const(a, 0)
    shape_term = lax.neg(betaln(a, b))
    y = lax.div(lax.sub(x, loc), scale)
    log_linear_term = lax.add(xlogy(lax.sub(a, one), y), xlog1py(lax.sub(b, one), lax.neg(y)))
    log_probs = lax.sub(lax.add(shape_term, log_linear_term), lax.log(scale))
    result = jnp.where(jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc)), -np.inf, log_probs)
    bad_params = jnp.logical_or(jnp.logical_or(lax.le(a, zero), lax.le(b, zero)), lax.le(scale, zero))
    return jnp.where(bad_params, np.nan, result)


def pdf(x, a, b, loc=0, scale=1):
    """The beta probability density at ``x``."""
    return lax.exp(logpdf(x, a, b, loc, scale))


def cdf(x, a, b, loc=0, scale=1):
    """The cumulative distribution function, the regularized incomplete beta I(a, b, y) with y clamped to [0, 1]."""
    x, a, b, loc, scale = promote_args_inexact("beta.cdf", x, a, b, loc, scale)
    return betainc(a, b, lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, 1)))


def logcdf(x, a, b, loc=0, scale=1):
    """Log of the cumulative distribution function."""
    return lax.log(cdf(x, a, b, loc, scale))


def sf(x, a, b, loc=0, scale=1):
    """The survival function I(b, a, 1 - y) with y clamped to [0, 1]."""
    x, a, b, loc, scale = promote_args_inexact("beta.sf", x, a, b, loc, scale)
    return betainc(b, a, 1 - lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, 1)))


def logsf(x, a, b, loc=0, scale=1):
    """Log of the survival function."""
    return lax.log(sf(x, a, b, loc, scale))
