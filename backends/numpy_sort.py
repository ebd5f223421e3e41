"""NumPy rules of ``sort`` and ``top_k``, in the orders JAX's lowerings compare with.

``sort`` canonicalizes its float keys as ``_sort_lt_comparator`` does (-0.0 equals 0.0, every NaN is one NaN,
after +inf), so ``np.lexsort``'s stable order is JAX's. ``top_k`` compares in the total order of the bits
(XLA's TopK): -NaN < -inf < ... < -0.0 < 0.0 < ... < inf < NaN.
"""
from __future__ import annotations

import numpy as np

from irax.ir.shapes import issubdtype

from .numpy_rules import RULES, _widen


def _sort_keys(x):
    """The lexsort keys of one sort key operand, most significant first. Subnormals (of float32 and float64, the
    types compared as they are) count as zero, as XLA's and IREE's CPU code flush them."""
    x = _widen(x)
    if issubdtype(x.dtype, np.complexfloating):
        return _sort_keys(x.real) + _sort_keys(x.imag)
    if issubdtype(x.dtype, np.floating):
        return [np.where(np.abs(x) < np.finfo(x.dtype).tiny, np.zeros((), x.dtype), x)]
    return [x]


def _sort(*operands, dimension, is_stable, num_keys):
    keys = [k for x in operands[:num_keys] for k in _sort_keys(x)]
    if operands[0].size == 0:
        return list(operands)
    order = np.lexsort(keys[::-1], axis=dimension)
    return [np.take_along_axis(x, order, axis=dimension) for x in operands]


def _total_order_key(x):
    """An integer array ordered as ``x`` is in the total order of its bits."""
    if x.dtype == np.bool_:
        return x.astype(np.uint8)
    if not issubdtype(x.dtype, np.floating):
        return x
    bits = np.ascontiguousarray(x).view(np.dtype(f"i{x.dtype.itemsize}"))
    magnitude = np.array(np.iinfo(bits.dtype).max, bits.dtype)
    return np.where(bits < 0, bits ^ magnitude, bits)


def _top_k(x, *, k, axis):
    descending = ~_total_order_key(x)  # an order-reversing bijection of the integers, without overflow
    order = np.argsort(descending, axis=axis, kind="stable")
    index = [slice(None)] * x.ndim
    index[axis] = slice(0, k)
    order = order[tuple(index)]
    return [np.take_along_axis(x, order, axis=axis), order.astype(np.int32)]


RULES["sort"] = _sort
RULES["top_k"] = _top_k
