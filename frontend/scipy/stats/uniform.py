"""The uniform distribution on [loc, loc + scale], ported from ``jax/_src/scipy/stats/uniform.py``."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf", "ppf"]


def logpdf(x, loc=0, scale=1):
    """Log of the uniform density: -log(scale) inside [loc, loc + scale], -inf outside."""
    x, loc, scale = promote_args_inexact("uniform.logpdf", x, loc, scale)
    log_probs = lax.neg(lax.log(scale))
    return jnp.where(jnp.logical_or(lax.gt(x, lax.add(loc, scale)), lax.lt(x, loc)), -np.inf, log_probs)


def pdf(x, loc=0, scale=1):
    """The uniform probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The uniform cumulative distribution function: 0 below ``loc``, 1 above ``loc + scale``, linear between."""
    x, loc, scale = promote_args_inexact("uniform.cdf", x, loc, scale)
    zero, one = jnp.array(0, x.dtype), jnp.array(1, x.dtype)
    conds = [lax.lt(x, loc), lax.gt(x, lax.add(loc, scale)), lax.ge(x, loc) & lax.le(x, lax.add(loc, scale))]
    vals = [zero, one, lax.div(lax.sub(x, loc), scale)]
    return jnp.select(conds, vals)


def ppf(q, loc=0, scale=1):
    """The quantile function loc + scale * q; NaN for ``q`` outside [0, 1]."""
    q, loc, scale = promote_args_inexact("uniform.ppf", q, loc, scale)
    return jnp.where(jnp.isnan(q) | (q < 0) | (q > 1), np.nan, lax.add(loc, lax.mul(scale, q)))
