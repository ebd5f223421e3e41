"""The multinomial distribution, ported from ``jax/_src/scipy/stats/multinomial.py`` so that jaxprs print as
JAX's."""
from __future__ import annotations

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact, promote_args_numeric
from irax.scipy.special import gammaln, xlogy

__all__ = ["logpmf", "pmf"]


def logpmf(x, n, p):
    """Log of the multinomial mass n! prod p_i^x_i / x_i! over the last axis; -inf unless sum(x) == n.

    Raises:
      ValueError: if ``x`` and ``n`` are not integers.
    """
    p, = promote_args_inexact("multinomial.logpmf", p)
    x, n = promote_args_numeric("multinomial.logpmf", x, n)
    if not dtypes.issubdtype(x.dtype, np.integer):
        raise ValueError(f"x and n must be of integer type; got x.dtype={x.dtype}, n.dtype={n.dtype}")
    x = x.astype(p.dtype)
    n = n.astype(p.dtype)
    logprobs = gammaln(n + 1) + jnp.sum(xlogy(x, p) - gammaln(x + 1), axis=-1)
    return jnp.where(jnp.equal(jnp.sum(x), n), logprobs, -np.inf)


def pmf(x, n, p):
    """The multinomial probability mass at ``x``."""
    return lax.exp(logpmf(x, n, p))
