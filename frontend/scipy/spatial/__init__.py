"""``irax.scipy.spatial``: JAX's ``jax.scipy.spatial`` on irax."""
from . import transform

__all__ = ["transform"]
