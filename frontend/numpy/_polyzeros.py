"""``poly``: the coefficients of the monic polynomial with given zeros (one ``convolve`` per zero), and ``roots``:
the zeros of a polynomial, the eigenvalues of its companion matrix; as JAX's ``jax/_src/numpy/polynomial.py``."""
from __future__ import annotations

import numpy as np

from ._util import ensure_arraylike, promote_dtypes_inexact, staged_as

__all__ = ["poly", "roots"]


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


def roots(p, *, strip_zeros=True):
    """The zeros of the polynomial with coefficients ``p`` (highest power first), complex. Leading zero
    coefficients are dropped, which needs ``p``'s values; ``strip_zeros=False`` (under ``jit``) gives their roots
    as NaN instead."""
    import irax.numpy as jnp
    from ._setops import concrete_or_error
    p = ensure_arraylike("roots", p)
    p, = promote_dtypes_inexact(p)
    p = jnp.atleast_1d(p)
    if p.ndim != 1:
        raise ValueError("Input must be a rank-1 array.")
    if p.size < 2:
        return jnp.array([], dtype=jnp.result_type(p.dtype, jnp.complex64))
    num_leading_zeros = jnp.where(jnp.all(p == 0), len(p), jnp.argmin(p == 0))
    if strip_zeros:
        num_leading_zeros = concrete_or_error(int, num_leading_zeros, (
            "The error occurred in the jnp.roots() function. To use this within a JIT-compiled context, pass "
            "strip_zeros=False, but be aware that leading zeros will result in some returned roots being set to "
            "NaN."))
        return _roots_no_zeros(p[num_leading_zeros:])
    return _roots_with_zeros(p, num_leading_zeros)


@staged_as("_roots_no_zeros")
def _roots_no_zeros(p):
    """The eigenvalues of the companion matrix of ``p`` (its leading coefficient non-zero)."""
    import irax.numpy as jnp
    if p.size < 2:
        return jnp.array([], dtype=jnp.result_type(p.dtype, jnp.complex64))
    companion = jnp.diag(jnp.ones((p.size - 2,), p.dtype), -1)
    companion = companion.at[0, :].set(-p[1:] / p[0])
    return jnp.linalg.eigvals(companion)


@staged_as("_roots_with_zeros")
def _roots_with_zeros(p, num_leading_zeros):
    """All ``len(p) - 1`` roots of ``p`` with its leading zeros moved to the end: theirs are NaN."""
    import irax.numpy as jnp
    from irax import lax
    p = jnp.where(len(p) == num_leading_zeros, 1.0, p)  # all zeros: no LAPACK call on NaNs
    zeros = _roots_no_zeros(jnp.roll(p, -num_leading_zeros))
    zeros = lax.sort_key_val(zeros == 0, zeros)[1]
    return jnp.where(jnp.arange(zeros.size) < zeros.size - num_leading_zeros, zeros, complex(np.nan, np.nan))
