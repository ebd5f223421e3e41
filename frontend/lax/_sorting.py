"""``lax.sort``, ``lax.sort_key_val`` and ``lax.top_k`` with JAX's signatures and argument checks."""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from irax.core import bind, bind1
from irax.ir.shapes import issubdtype

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


def _canonicalize_float_for_sort(x):
    """-0.0 as 0.0 and every NaN as one NaN, so that the total order's comparisons order them as sort does."""
    from . import eq, full_like, ne, select
    result = select(eq(x, full_like(x, 0, shape=())), full_like(x, 0), x)
    return select(ne(x, x), full_like(result, np.nan), result)


def _sort_keys(v):
    """A value's sort keys: a complex number's canonical real and imaginary parts, a float canonical."""
    from . import imag, real
    v = as_operand(v)
    if issubdtype(v.dtype, np.complexfloating):
        return [_canonicalize_float_for_sort(real(v)), _canonicalize_float_for_sort(imag(v))]
    if issubdtype(v.dtype, np.floating):
        return [_canonicalize_float_for_sort(v)]
    return [v]


def _operands_to_keys(*operands, num_keys=1):
    x_keys, y_keys = [], []
    for x, y in zip(operands[:2 * num_keys:2], operands[1:2 * num_keys:2]):
        x_keys += _sort_keys(x)
        y_keys += _sort_keys(y)
    return x_keys, y_keys


def _sort_comparator(last, *operands, num_keys=1):
    """Lexicographic over the keys from the least significant, as JAX's ``_sort_lt_comparator``; ``last`` is the
    comparison of the most significant keys alone."""
    from . import bitwise_and, bitwise_or
    x_keys, y_keys = _operands_to_keys(*operands, num_keys=num_keys)
    p = None
    for xk, yk in zip(x_keys[::-1], y_keys[::-1]):
        p = (bitwise_or(bind1("lt_to", xk, yk), bitwise_and(bind1("eq_to", xk, yk), p)) if p is not None
             else bind1(last, xk, yk))
    return p


def _sort_lt_comparator(*operands, num_keys=1):
    return _sort_comparator("lt_to", *operands, num_keys=num_keys)


def _sort_le_comparator(*operands, num_keys=1):
    """Less or equal, for searchsorted."""
    return _sort_comparator("le_to", *operands, num_keys=num_keys)
