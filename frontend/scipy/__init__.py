"""``irax.scipy``: JAX's ``jax.scipy`` on irax."""
from . import special, stats
from . import linalg, sparse

__all__ = ["linalg", "sparse", "special", "stats"]
