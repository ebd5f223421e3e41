"""The beta-binomial distribution, ported from ``jax/_src/scipy/stats/betabinom.py`` so that jaxprs print as JAX's
(``logpmf`` is a jitted function there, so it is a ``pjit`` here too)."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.api import staged
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, betaln

__all__ = ["logpmf", "pmf"]


@staged
def logpmf(k, n, a, b, loc=0):
    """Log of the beta-binomial mass C(n, y) B(y + a, n - y + b) / B(a, b) at y = floor(k) - loc.

    -inf outside 0 <= y <= n, 0 where y = n = 0, NaN unless n >= 0 and a, b > 0.
    """
    k, n, a, b, loc = promote_args_inexact("betabinom.logpmf", k, n, a, b, loc)
    y = lax.sub(lax.floor(k), loc)
    one = _lax_const(y, 1)
    zero = _lax_const(y, 0)
    combiln = lax.neg(lax.add(lax.log1p(n), betaln(lax.add(lax.sub(n, y), one), lax.add(y, one))))
    beta_lns = lax.sub(betaln(lax.add(y, a), lax.add(lax.sub(n, y), b)), betaln(a, b))
    log_probs = lax.add(combiln, beta_lns)
    log_probs = jnp.where(jnp.logical_and(lax.eq(y, zero), lax.eq(n, zero)), 0., log_probs)
    y_cond = jnp.logical_or(jnp.logical_or(lax.lt(y, lax.neg(loc)), lax.gt(y, n)), lax.le(lax.add(y, a), zero))
    log_probs = jnp.where(y_cond, -np.inf, log_probs)
    n_a_b_cond = jnp.logical_or(jnp.logical_or(lax.lt(n, zero), lax.le(a, zero)), lax.le(b, zero))
    return jnp.where(n_a_b_cond, np.nan, log_probs)


def pmf(k, n, a, b, loc=0):
    """The beta-binomial probability mass at ``k``."""
    return lax.exp(logpmf(k, n, a, b, loc))
