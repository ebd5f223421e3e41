"""The right-skewed Gumbel distribution, ported from ``jax/_src/scipy/stats/gumbel_r.py``."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.nn import log1mexp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the Gumbel density: -log(scale) - (z + exp(-z)) for z = (x - loc) / scale; NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_r.logpdf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    neg_log_scale = xlogy(-1, scale)
    t2 = lax.neg(lax.add(z, lax.exp(lax.neg(z))))
    log_pdf = lax.add(neg_log_scale, t2)
    return jnp.where(ok, log_pdf, np.nan)


def pdf(x, loc=0, scale=1):
    """The Gumbel probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution function: -exp(-z); NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_r.logcdf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    z = lax.div(lax.sub(x, loc), scale)
    log_cdf = lax.neg(lax.exp(lax.neg(z)))
    return jnp.where(ok, log_cdf, np.nan)


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function exp(-exp(-z))."""
    return lax.exp(logcdf(x, loc, scale))


def ppf(p, loc=0, scale=1):
    """The quantile function loc - scale * log(-log(p)); NaN for ``p`` outside (0, 1)."""
    p, loc, scale = promote_args_inexact("gumbel_r.ppf", p, loc, scale)
    ok = lax.bitwise_and(lax.gt(p, _lax_const(p, 0)), lax.lt(p, _lax_const(p, 1)))
    t1 = xlogy(-1, p)
    t = lax.mul(scale, lax.log(t1))
    quantile = lax.sub(loc, t)
    return jnp.where(ok, quantile, np.nan)


def sf(x, loc=0, scale=1):
    """The survival function 1 - exp(-exp(-z)); NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_r.sf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    t1 = lax.exp(lax.neg(lax.exp(neg_z)))
    _sf = lax.sub(_lax_const(x, 1), t1)
    return jnp.where(ok, _sf, np.nan)


def logsf(x, loc=0, scale=1):
    """Log of the survival function, log(1 - exp(-exp(-z))) through ``log1mexp``; NaN unless scale > 0."""
    x, loc, scale = promote_args_inexact("gumbel_r.logsf", x, loc, scale)
    ok = lax.gt(scale, _lax_const(scale, 0))
    neg_z = lax.div(lax.sub(loc, x), scale)
    log_sf = log1mexp(lax.exp(neg_z))
    return jnp.where(ok, log_sf, np.nan)
