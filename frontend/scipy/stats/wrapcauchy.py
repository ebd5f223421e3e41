"""The wrapped Cauchy distribution, ported from ``jax/_src/scipy/stats/wrapcauchy.py`` so that jaxprs print as
JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const

__all__ = ["logpdf", "pdf"]


def logpdf(x, c):
    """Log of the density (1 - c^2) / (2 pi (1 + c^2 - 2 c cos x)) on [0, 2 pi]; -inf outside, NaN unless 0 < c < 1."""
    x, c = promote_args_inexact("wrapcauchy.logpdf", x, c)
    return jnp.where(
        lax.gt(c, _lax_const(c, 0)) & lax.lt(c, _lax_const(c, 1)),
        jnp.where(
            lax.ge(x, _lax_const(x, 0)) & lax.le(x, _lax_const(x, np.pi * 2)),
            jnp.log(1 - c * c) - jnp.log(2 * np.pi) - jnp.log(1 + c * c - 2 * c * jnp.cos(x)),
            -np.inf,
        ),
        np.nan,
    )


def pdf(x, c):
    """The wrapped Cauchy probability density at ``x``."""
    return lax.exp(logpdf(x, c))
