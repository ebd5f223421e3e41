"""``irax.scipy``: JAX's ``jax.scipy`` on irax."""
from . import special, stats
from . import linalg

__all__ = ["linalg", "special", "stats"]
