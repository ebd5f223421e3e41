"""``jax.experimental``'s names that irax has: ``io_callback``."""
from ..callbacks import io_callback

__all__ = ["io_callback"]
