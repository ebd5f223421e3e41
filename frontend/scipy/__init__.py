"""``irax.scipy``: JAX's ``jax.scipy`` on irax."""
from . import special, stats
from . import linalg, sparse
from . import cluster, fft, integrate, interpolate, ndimage, optimize, signal, spatial

__all__ = ["cluster", "fft", "integrate", "interpolate", "linalg", "ndimage", "optimize", "signal", "sparse",
           "spatial", "special", "stats"]
