"""The Bernoulli distribution, ported from ``jax/_src/scipy/stats/bernoulli.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, xlog1py, xlogy

__all__ = ["cdf", "logpmf", "pmf", "ppf"]


def logpmf(k, p, loc=0):
    """Log of the Bernoulli probability mass x log(p) + (1 - x) log(1 - p) at x = k - loc; -inf outside [0, 1]."""
    k, p, loc = promote_args_inexact("bernoulli.logpmf", k, p, loc)
    zero = _lax_const(k, 0)
    one = _lax_const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlogy(x, p) + xlog1py(lax.sub(one, x), -p)
    return jnp.where(jnp.logical_or(lax.lt(x, zero), lax.gt(x, one)), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """The Bernoulli probability mass at ``k``."""
    return jnp.exp(logpmf(k, p, loc))


def cdf(k, p):
    """The cumulative distribution function: 0 below 0, 1 - p on [0, 1), 1 from 1; NaN for an invalid ``p``."""
    k, p = promote_args_inexact("bernoulli.cdf", k, p)
    zero, one = _lax_const(k, 0), _lax_const(k, 1)
    conds = [
        jnp.isnan(k) | jnp.isnan(p) | (p < zero) | (p > one),
        lax.lt(k, zero),
        jnp.logical_and(lax.ge(k, zero), lax.lt(k, one)),
        lax.ge(k, one),
    ]
    vals = [jnp.nan, zero, one - p, one]
    return jnp.select(conds, vals)


def ppf(q, p):
    """The quantile function: 0 for q <= 1 - p, else 1; NaN for an invalid ``q`` or ``p``."""
    q, p = promote_args_inexact("bernoulli.ppf", q, p)
    zero, one = _lax_const(q, 0), _lax_const(q, 1)
    return jnp.where(jnp.isnan(q) | jnp.isnan(p) | (p < zero) | (p > one) | (q < zero) | (q > one), jnp.nan,
                     jnp.where(lax.le(q, one - p), zero, one))
