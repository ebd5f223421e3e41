"""``irax.scipy``: JAX's ``jax.scipy`` on irax."""
from . import special, stats
from . import linalg, sparse
from . import cluster, fft, integrate, interpolate, ndimage, signal

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "signal", "sparse", "special", "stats"]
