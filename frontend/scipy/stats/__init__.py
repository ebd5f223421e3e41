"""``irax.scipy.stats``: JAX's ``jax.scipy.stats`` distributions on irax."""
from . import norm

__all__ = ["norm"]
