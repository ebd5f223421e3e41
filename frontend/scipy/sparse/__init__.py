"""``irax.scipy.sparse``: JAX's ``jax.scipy.sparse`` (its iterative solvers) on irax."""
from . import linalg

__all__ = ["linalg"]
