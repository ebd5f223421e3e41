"""The Laplace distribution, ported from ``jax/_src/scipy/stats/laplace.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

from irax import lax
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const

__all__ = ["cdf", "logpdf", "pdf"]


def logpdf(x, loc=0, scale=1):
    """Log of the Laplace probability density: -|x - loc| / scale - log(2 scale)."""
    x, loc, scale = promote_args_inexact("laplace.logpdf", x, loc, scale)
    two = _lax_const(x, 2)
    linear_term = lax.div(lax.abs(lax.sub(x, loc)), scale)
    return lax.neg(lax.add(linear_term, lax.log(lax.mul(two, scale))))


def pdf(x, loc=0, scale=1):
    """The Laplace probability density at ``x``."""
    return lax.exp(logpdf(x, loc, scale))


def cdf(x, loc=0, scale=1):
    """The Laplace cumulative distribution function, with the exponential taken on the side where it is small."""
    x, loc, scale = promote_args_inexact("laplace.cdf", x, loc, scale)
    half = _lax_const(x, 0.5)
    one = _lax_const(x, 1)
    zero = _lax_const(x, 0)
    diff = lax.div(lax.sub(x, loc), scale)
    return lax.select(lax.le(diff, zero), lax.mul(half, lax.exp(diff)),
                      lax.sub(one, lax.mul(half, lax.exp(lax.neg(diff)))))
