"""NumPy's file readers that JAX leaves unimplemented on purpose: reading a file is a side effect, which ``jit``
and the other transformations cannot replay."""
from __future__ import annotations

__all__ = ["fromfile"]


def fromfile(*args, **kwargs):
    """Unimplemented, as in JAX: use ``jnp.asarray(np.fromfile(...))`` outside transformations.

    Raises:
      NotImplementedError: always.
    """
    raise NotImplementedError(
        "jnp.fromfile() is not implemented because it may be non-pure and thus unsafe for use "
        "with JIT and other JAX transformations. Consider using jnp.asarray(np.fromfile(...)) "
        "instead, although care should be taken if np.fromfile is used within a jax transformations "
        "because of its potential side-effect of consuming the file object; for more information see "
        "https://docs.jax.dev/en/latest/notebooks/Common_Gotchas_in_JAX.html#pure-functions")
