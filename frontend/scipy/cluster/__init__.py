"""``irax.scipy.cluster``: JAX's ``jax.scipy.cluster``."""
from . import vq

__all__ = ["vq"]
