"""The von Mises distribution, ported from ``jax/_src/scipy/stats/vonmises.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const

__all__ = ["logpdf", "pdf"]


def logpdf(x, kappa):
    """Log of the density exp(kappa cos x) / (2 pi I0(kappa)), through i0e so that large kappa does not overflow;
    NaN unless kappa > 0."""
    x, kappa = promote_args_inexact("vonmises.logpdf", x, kappa)
    zero = _lax_const(kappa, 0)
    return jnp.where(lax.gt(kappa, zero), kappa * (jnp.cos(x) - 1) - jnp.log(2 * np.pi * lax.bessel_i0e(kappa)),
                     np.nan)


def pdf(x, kappa):
    """The von Mises probability density at ``x``."""
    return lax.exp(logpdf(x, kappa))
