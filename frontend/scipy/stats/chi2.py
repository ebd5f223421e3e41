"""The chi-squared distribution, ported from ``jax/_src/scipy/stats/chi2.py`` so that jaxprs print as JAX's."""
from __future__ import annotations

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.numpy._util import promote_args_inexact
from irax.scipy.special import _lax_const, gammainc, gammaincc

__all__ = ["cdf", "logcdf", "logpdf", "logsf", "pdf", "sf"]


def logpdf(x, df, loc=0, scale=1):
    """Log of the chi-squared density with ``df`` degrees of freedom at y = (x - loc) / scale; -inf below ``loc``."""
    x, df, loc, scale = promote_args_inexact("chi2.logpdf", x, df, loc, scale)
    one = _lax_const(x, 1)
    two = _lax_const(x, 2)
    y = lax.div(lax.sub(x, loc), scale)
    df_on_two = lax.div(df, two)
    kernel = lax.sub(lax.mul(lax.sub(df_on_two, one), lax.log(y)), lax.div(y, two))
    nrml_cnst = lax.neg(lax.add(lax.lgamma(df_on_two), lax.div(lax.mul(lax.log(two), df), two)))
    log_probs = lax.add(lax.sub(nrml_cnst, lax.log(scale)), kernel)
    return jnp.where(lax.lt(x, loc), -np.inf, log_probs)


def pdf(x, df, loc=0, scale=1):
    """The chi-squared probability density at ``x``."""
    return lax.exp(logpdf(x, df, loc, scale))


def _half_y(x, loc, scale):
    """(x - loc) / (2 scale), clamped to [0, inf]."""
    two = _lax_const(scale, 2)
    return lax.clamp(_lax_const(x, 0), lax.div(lax.sub(x, loc), lax.mul(scale, two)), _lax_const(x, np.inf))


def cdf(x, df, loc=0, scale=1):
    """The cumulative distribution function P(df / 2, y / 2)."""
    x, df, loc, scale = promote_args_inexact("chi2.cdf", x, df, loc, scale)
    return gammainc(lax.div(df, _lax_const(scale, 2)), _half_y(x, loc, scale))


def logcdf(x, df, loc=0, scale=1):
    """Log of the cumulative distribution function."""
    return lax.log(cdf(x, df, loc, scale))


def sf(x, df, loc=0, scale=1):
    """The survival function Q(df / 2, y / 2)."""
    x, df, loc, scale = promote_args_inexact("chi2.sf", x, df, loc, scale)
    return gammaincc(lax.div(df, _lax_const(scale, 2)), _half_y(x, loc, scale))


def logsf(x, df, loc=0, scale=1):
    """Log of the survival function."""
    return lax.log(sf(x, df, loc, scale))
