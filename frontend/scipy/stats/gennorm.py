"""The generalized normal distribution, ported from ``jax/_src/scipy/stats/gennorm.py`` so that jaxprs print as
JAX's."""
from __future__ import annotations

from irax import lax
from irax.numpy._util import promote_args_inexact

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, beta):
    """Log of the density beta / (2 Gamma(1 / beta)) exp(-|x|^beta)."""
    x, beta = promote_args_inexact("gennorm.logpdf", x, beta)
    return lax.log(.5 * beta) - lax.lgamma(1 / beta) - lax.abs(x) ** beta


def cdf(x, beta):
    """The cumulative distribution function (1 + sign(x) P(1 / beta, |x|^beta)) / 2."""
    x, beta = promote_args_inexact("gennorm.cdf", x, beta)
    return .5 * (1 + lax.sign(x) * lax.igamma(1 / beta, lax.abs(x) ** beta))


def pdf(x, beta):
    """The generalized normal probability density at ``x``."""
    return lax.exp(logpdf(x, beta))
