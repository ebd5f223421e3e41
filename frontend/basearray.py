"""``irax.Array``, the public array type. As ``jax.Array`` it is abstract: concrete arrays, tracers (under
``jit``, ``grad`` or ``vmap``) and typed key arrays are all its instances, so library code that picks array leaves
with ``isinstance(x, jax.Array)`` keeps working under transformations."""
from __future__ import annotations

import abc

from .array_methods import ArrayMethods


class Array(abc.ABC):
    """The type of irax arrays (``jax.Array``); ``irax.numpy.ndarray`` is the same class."""

    __slots__ = ()


Array.register(ArrayMethods)
