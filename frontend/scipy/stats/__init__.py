"""``irax.scipy.stats``: JAX's ``jax.scipy.stats`` distributions on irax."""
from . import (bernoulli, beta, cauchy, chi2, expon, gamma, geom, gumbel_l, gumbel_r, laplace, logistic, norm, pareto,
               poisson, t, uniform)

__all__ = ["bernoulli", "beta", "cauchy", "chi2", "expon", "gamma", "geom", "gumbel_l", "gumbel_r", "laplace",
           "logistic", "norm", "pareto", "poisson", "t", "uniform"]
