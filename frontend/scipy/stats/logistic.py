"""The logistic distribution, ported from ``jax/_src/scipy/stats/logistic.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, expit, logit

__all__ = ["cdf", "isf", "logpdf", "pdf", "ppf", "sf"]


def logpdf(x, loc=0, scale=1):
    """Log of the logistic probability density, as -2 logaddexp(z/2, -z/2) - log(scale) for z = (x - loc) / scale."""
    x, loc, scale = promote_args_inexact("logistic.logpdf", x, loc, scale)
    x = lax.div(lax.sub(x, loc), scale)
    two = _lax_const(x, 2)
    half_x = lax.div(x, two)
    return lax.sub(lax.mul(lax.neg(two), jnp.logaddexp(half_x, lax.neg(half_x))), lax.log(scale))


def pdf(x, loc=0, scale=1):
    """The logistic probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def ppf(x, loc=0, scale=1):
    """The quantile function logit(q) * scale + loc."""
    x, loc, scale = promote_args_inexact("logistic.ppf", x, loc, scale)
    return lax.add(lax.mul(logit(x), scale), loc)


def sf(x, loc=0, scale=1):
    """The survival function expit(-(x - loc) / scale)."""
    x, loc, scale = promote_args_inexact("logistic.sf", x, loc, scale)
    return expit(lax.neg(lax.div(lax.sub(x, loc), scale)))


def isf(x, loc=0, scale=1):
    """The inverse survival function -logit(q) * scale + loc."""
    x, loc, scale = promote_args_inexact("logistic.isf", x, loc, scale)
    return lax.add(lax.mul(lax.neg(logit(x)), scale), loc)


def cdf(x, loc=0, scale=1):
    """The cumulative distribution function expit((x - loc) / scale)."""
    x, loc, scale = promote_args_inexact("logistic.cdf", x, loc, scale)
    return expit(lax.div(lax.sub(x, loc), scale))
