"""The binomial distribution, ported from ``jax/_src/scipy/stats/binom.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, gammaln, xlog1py, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of the binomial mass C(n, y) p^y (1 - p)^(n - y) at y = k - loc; -inf outside loc <= k < loc + n + 1."""
    k, n, p, loc = promote_args_inexact("binom.logpmf", k, n, p, loc)
    y = lax.sub(k, loc)
    zero = _lax_const(y, 0)
    comb_term = lax.sub(gammaln(n + 1), lax.add(gammaln(y + 1), gammaln(n - y + 1)))
    log_linear_term = lax.add(xlogy(y, p), xlog1py(lax.sub(n, y), lax.neg(p)))
    log_probs = lax.add(comb_term, log_linear_term)
    y_n_cond = jnp.logical_or(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), lax.eq(log_linear_term, zero))
    log_probs = jnp.where(y_n_cond, 0., log_probs)
    return jnp.where(lax.ge(k, loc) & lax.lt(k, loc + n + 1), log_probs, -np.inf)


def pmf(k, n, p, loc=0):
    """The binomial probability mass at ``k``."""
    return lax.exp(logpmf(k, n, p, loc))
