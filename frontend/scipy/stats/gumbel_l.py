"""The left-skewed Gumbel distribution, ported from ``jax/_src/scipy/stats/gumbel_l.py``."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, xlog1py, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the density: -log(scale) + z - exp(z) for z = (x - loc) / scale; NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_l.logpdf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    t2 = lax.sub(z, lax.exp(z))
    log_pdf = lax.add(neg_log_scale, t2)
    return jnp.where(ok, log_pdf, np.nan)


def pdf(x, loc=0, scale=1):
    """The probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution function: log(-expm1(-exp(z))); NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_l.logcdf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_exp_z = lax.neg(lax.exp(z))
    log_cdf = lax.log(-lax.expm1(neg_exp_z))
    return jnp.where(ok, log_cdf, np.nan)


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function 1 - exp(-exp(z))."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """The quantile function loc + scale * log(-log1p(-p)); NaN for ``p`` outside (0, 1)."""
    p, loc, scale = promote_args_inexact("gumbel_l.ppf", p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, _lax_const(p, 0)), lax.lt(p, _lax_const(p, 1)))
    t1 = xlog1py(-1, lax.neg(p))
    t = lax.mul(scale, lax.log(t1))
    quantile = lax.add(loc, t)
    return jnp.where(ok, quantile, np.nan)


def sf(x, loc=0, scale=1):
    """The survival function exp(-exp(z))."""
    return jnp.exp(logsf(x, loc, scale))


def logsf(x, loc=0, scale=1):
    """Log of the survival function: -exp(z); NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_l.logsf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_sf = lax.neg(lax.exp(z))
    return jnp.where(ok, log_sf, np.nan)
