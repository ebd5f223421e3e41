"""``lax.sort``, ``lax.sort_key_val`` and ``lax.top_k`` with JAX's signatures and argument checks."""
from __future__ import annotations

import operator
from collections.abc import Sequence

from irax.core import bind

from ._scalars import as_operand

__all__ = ["sort", "sort_key_val", "top_k"]


def _canonical_axis(axis, ndim):
    """JAX's ``canonicalize_axis``: a scalar has no axis to sort along."""
    axis = operator.index(axis)
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim


def sort(operand, dimension=-1, is_stable=True, num_keys=1):
    """XLA's sort: one array, or a sequence sorted together by its first ``num_keys`` (NaN last, -0.0 == 0.0)."""
    if isinstance(operand, Sequence):
        if len(operand) == 0:
            raise TypeError("Sort requires at least one operand")
        if not 1 <= num_keys <= len(operand):
            raise ValueError(f"num_keys={num_keys} must be between 1 and len(operand)={len(operand)}")
        operands = [as_operand(x) for x in operand]
        dimension = _canonical_axis(dimension, operands[0].ndim)
        return tuple(bind("sort", *operands, dimension=dimension, is_stable=bool(is_stable), num_keys=num_keys))
    if num_keys != 1:
        raise ValueError(f"num_keys={num_keys} must equal 1 for a single operand.")
    operand = as_operand(operand)
    dimension = _canonical_axis(dimension, operand.ndim)
    return bind("sort", operand, dimension=dimension, is_stable=bool(is_stable), num_keys=1)[0]


def sort_key_val(keys, values, dimension=-1, is_stable=True):
    """Sorts ``keys`` along ``dimension`` and applies the same permutation to ``values``."""
    keys, values = as_operand(keys), as_operand(values)
    dimension = _canonical_axis(dimension, keys.ndim)
    k, v = bind("sort", keys, values, dimension=dimension, is_stable=bool(is_stable), num_keys=1)
    return k, v


def top_k(operand, k, *, axis=-1):
    """The ``k`` largest entries along ``axis`` (the lower index first among equals) and their int32 indices."""
    k = operator.index(k)
    if k < 0:
        raise ValueError(f"k argument to top_k must be nonnegative, got {k}")
    operand = as_operand(operand)
    axis = _canonical_axis(axis, operand.ndim)
    return bind("top_k", operand, k=k, axis=axis)
