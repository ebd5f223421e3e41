"""The geometric distribution, ported from ``jax/_src/scipy/stats/geom.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, xlog1py

__all__ = ["logpmf", "pmf"]


def logpmf(k, p, loc=0):
    """Log of the geometric probability mass (x - 1) log(1 - p) + log(p) at x = k - loc; -inf for x <= 0."""
    k, p, loc = promote_args_inexact("geom.logpmf", k, p, loc)
    zero = _lax_const(k, 0)
    one = _lax_const(k, 1)
    x = lax.sub(k, loc)
    log_probs = xlog1py(lax.sub(x, one), -p) + lax.log(p)
    return jnp.where(lax.le(x, zero), -np.inf, log_probs)


def pmf(k, p, loc=0):
    """The geometric probability mass at ``k``."""
    return jnp.exp(logpmf(k, p, loc))
