"""``irax.scipy.stats``: JAX's ``jax.scipy.stats`` distributions on irax."""
from . import (bernoulli, beta, betabinom, binom, cauchy, chi2, dirichlet, expon, gamma, gennorm, geom, gumbel_l,
               gumbel_r, laplace, logistic, multinomial, multivariate_normal, nbinom, norm, pareto, poisson, t,
               truncnorm, uniform, vonmises, wrapcauchy)
from ._core import mode, rankdata, sem
from ._kde import gaussian_kde

__all__ = ["bernoulli", "beta", "betabinom", "binom", "cauchy", "chi2", "dirichlet", "expon", "gamma", "gaussian_kde",
           "gennorm", "geom", "gumbel_l", "gumbel_r", "laplace", "logistic", "mode", "multinomial",
           "multivariate_normal", "nbinom", "norm", "pareto", "poisson", "rankdata", "sem", "t", "truncnorm",
           "uniform", "vonmises", "wrapcauchy"]
