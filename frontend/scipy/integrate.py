"""``irax.scipy.integrate``: JAX's ``jax.scipy.integrate``."""
from __future__ import annotations

from irax import numpy as jnp
from irax.numpy._util import staged_as

__all__ = ["trapezoid"]


@staged_as("trapezoid", static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """The trapezoidal rule over sample points ``x`` or spacing ``dx``: ``jnp.trapezoid`` inside JAX's own jit,
    so a jaxpr shows the two nested ``trapezoid`` jits that JAX's does."""
    return jnp.trapezoid(y, x, dx, axis)
