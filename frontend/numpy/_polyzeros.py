"""``poly``: the coefficients of the monic polynomial with given zeros, ported from JAX's
``jax/_src/numpy/polynomial.py`` (one ``convolve`` per zero)."""
from __future__ import annotations

from ._util import ensure_arraylike, promote_dtypes_inexact, staged_as

__all__ = ["poly"]


@staged_as("poly")
def poly(seq_of_zeros):
    """The coefficients, highest power first, of the polynomial whose zeros are ``seq_of_zeros`` (or the
    eigenvalues of a square matrix).

    Raises:
      ValueError: for input that is neither 1-d nor a non-empty square matrix.
    """
    import irax.numpy as jnp
    seq_of_zeros = ensure_arraylike("poly", seq_of_zeros)
    seq_of_zeros, = promote_dtypes_inexact(seq_of_zeros)
    zeros = jnp.atleast_1d(seq_of_zeros)
    sh = zeros.shape
    if len(sh) == 2 and sh[0] == sh[1] and sh[0] != 0:
        zeros = jnp.linalg.eigvals(zeros)
    if zeros.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dt = zeros.dtype
    if len(zeros) == 0:
        return jnp.ones((), dtype=dt)
    a = jnp.ones((1,), dtype=dt)
    for k in range(len(zeros)):
        a = jnp.convolve(a, jnp.array([1, -zeros[k]], dtype=dt), mode="full")
    return a
