"""The Cauchy distribution, ported from ``jax/_src/scipy/stats/cauchy.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const

__all__ = ["cdf", "isf", "logcdf", "logpdf", "logsf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the Cauchy probability density: -log(pi scale) - log1p(z**2) for z = (x - loc) / scale."""
    x, loc, scale = promote_args_inexact("cauchy.logpdf", x, loc, scale)
    pi = _lax_const(x, np.pi)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    normalize_term = lax.log(lax.mul(pi, scale))
    return lax.neg(lax.add(normalize_term, lax.log1p(lax.mul(scaled_x, scaled_x))))


def pdf(x, loc=0, scale=1):
    """The Cauchy probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The Cauchy cumulative distribution function 1/2 + arctan(z) / pi."""
    x, loc, scale = promote_args_inexact("cauchy.cdf", x, loc, scale)
    pi = _lax_const(x, np.pi)
    scaled_x = lax.div(lax.sub(x, loc), scale)
    return lax.add(_lax_const(x, 0.5), lax.mul(lax.div(_lax_const(x, 1.), pi), jnp.arctan(scaled_x)))


def logcdf(x, loc=0, scale=1):
    """Log of the cumulative distribution function."""
    return lax.log(cdf(x, loc, scale))


def sf(x, loc=0, scale=1):
    """The survival function, as the cdf of the mirrored distribution."""
    x, loc, scale = promote_args_inexact("cauchy.sf", x, loc, scale)
    return cdf(-x, -loc, scale)


def logsf(x, loc=0, scale=1):
    """Log of the survival function."""
    x, loc, scale = promote_args_inexact("cauchy.logsf", x, loc, scale)
    return logcdf(-x, -loc, scale)


def isf(q, loc=0, scale=1):
    """The inverse survival function tan(pi/2 - pi q) * scale + loc."""
    q, loc, scale = promote_args_inexact("cauchy.isf", q, loc, scale)
    pi = _lax_const(q, np.pi)
    half_pi = _lax_const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(half_pi, lax.mul(pi, q)))
    return lax.add(lax.mul(unscaled, scale), loc)


def ppf(q, loc=0, scale=1):
    """The quantile function tan(pi q - pi/2) * scale + loc."""
    q, loc, scale = promote_args_inexact("cauchy.ppf", q, loc, scale)
    pi = _lax_const(q, np.pi)
    half_pi = _lax_const(q, np.pi / 2)
    unscaled = lax.tan(lax.sub(lax.mul(pi, q), half_pi))
    return lax.add(lax.mul(unscaled, scale), loc)
