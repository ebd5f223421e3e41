"""The gamma distribution, ported from ``jax/_src/scipy/stats/gamma.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, gammainc, gammaincc, gammaln, xlogy

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, a, loc=0, scale=1):
    """Log of the gamma density (a - 1) log(y) - y - gammaln(a) - log(scale), y = (x - loc) / scale; -inf below."""
    x, a, loc, scale = promote_args_inexact("gamma.logpdf", x, a, loc, scale)
    ok = lax.ge(x, loc)
    one = _lax_const(x, 1)
    y = jnp.where(ok, lax.div(lax.sub(x, loc), scale), one)
    log_linear_term = lax.sub(xlogy(lax.sub(a, one), y), y)
    shape_terms = lax.add(gammaln(a), lax.log(scale))
    log_probs = lax.sub(log_linear_term, shape_terms)
    return jnp.where(ok, log_probs, -np.inf)


def pdf(x, a, loc=0, scale=1):
    """The gamma probability density at ``x``."""
    return lax.exp(logpdf(x, a, loc, scale))


def cdf(x, a, loc=0, scale=1):
    """The cumulative distribution function, the regularized lower incomplete gamma P(a, max(y, 0))."""
    x, a, loc, scale = promote_args_inexact("gamma.cdf", x, a, loc, scale)
    return gammainc(a, lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), scale), _lax_const(x, np.inf)))


def logcdf(x, a, loc=0, scale=1):
    """Log of the cumulative distribution function."""
    return lax.log(cdf(x, a, loc, scale))


def sf(x, a, loc=0, scale=1):
    """The survival function, the regularized upper incomplete gamma Q(a, y); 1 below ``loc``."""
    x, a, loc, scale = promote_args_inexact("gamma.sf", x, a, loc, scale)
    y = lax.div(lax.sub(x, loc), scale)
    return jnp.where(lax.lt(y, _lax_const(y, 0)), 1, gammaincc(a, y))


def logsf(x, a, loc=0, scale=1):
    """Log of the survival function."""
    return lax.log(sf(x, a, loc, scale))
