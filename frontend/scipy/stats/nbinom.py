"""The negative binomial distribution, ported from ``jax/_src/scipy/stats/nbinom.py`` so that jaxprs print as
JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(k, n, p, loc=0):
    """Log of the negative binomial mass C(y + n - 1, n - 1) p^n (1 - p)^y at y = k - loc; -inf below ``loc``."""
    k, n, p, loc = promote_args_inexact("nbinom.logpmf", k, n, p, loc)
    one = _lax_const(k, 1)
    y = lax.sub(k, loc)
    comb_term = lax.sub(lax.sub(gammaln(lax.add(y, n)), gammaln(n)), gammaln(lax.add(y, one)))
    log_linear_term = lax.add(xlogy(n, p), xlogy(y, lax.sub(one, p)))
    log_probs = lax.add(comb_term, log_linear_term)
    return jnp.where(lax.lt(k, loc), -np.inf, log_probs)


def pmf(k, n, p, loc=0):
    """The negative binomial probability mass at ``k``."""
    return lax.exp(logpmf(k, n, p, loc))
