"""NumPy rules of ``tile``, ``unstack``, ``mulhi``, ``optimization_barrier`` and ``approx_top_k`` (exact, as XLA's
CPU fallback; the smallest as the largest of the negation, in the total order ``top_k`` uses)."""
from __future__ import annotations

import numpy as np

from irax.ir.extras import approx_top_k_output_size, platform_branch

from . import numpy_sort
from .numpy_rules import RULES

RULES["tile"] = lambda x, *, reps: np.tile(x, reps)
RULES["optimization_barrier"] = lambda *xs: list(xs)
RULES["device_put"] = lambda *xs, **params: list(xs)
RULES["platform_index"] = lambda *, platforms: np.int32(platform_branch(platforms))
RULES["unstack"] = lambda x, *, axis: [np.take(x, i, axis=axis) for i in range(x.shape[axis])]


def _approx_top_k(x, *, k, reduction_dimension, is_max_k, recall_target, aggregate_to_topk,
                  reduction_input_size_override):
    axis = reduction_dimension % x.ndim
    k = approx_top_k_output_size(x.shape[axis], x.ndim, k, recall_target, aggregate_to_topk,
                                 reduction_input_size_override)
    if is_max_k:
        return numpy_sort._top_k(x, k=k, axis=axis)
    values, indices = numpy_sort._top_k(-x, k=k, axis=axis)
    return [-values, indices]


RULES["approx_top_k"] = _approx_top_k


def _mulhi(x, y):
    """Widened for fewer than 64 bits; 64-bit ones from the four 32-bit partial products, as JAX's
    ``_mulhi_impl`` (unsigned, then the signed correction)."""
    x, y = np.broadcast_arrays(np.asarray(x), np.asarray(y))
    dtype, bits = x.dtype, x.dtype.itemsize * 8
    if bits < 64:
        wide = np.dtype(f"{dtype.kind}{2 * x.dtype.itemsize}")
        return ((x.astype(wide) * y.astype(wide)) >> bits).astype(dtype)
    xu, yu, mask, half = x.astype(np.uint64), y.astype(np.uint64), np.uint64(0xFFFFFFFF), np.uint64(32)
    x_lo, x_hi, y_lo, y_hi = xu & mask, xu >> half, yu & mask, yu >> half
    lo_hi, hi_lo = x_lo * y_hi, x_hi * y_lo
    cross = (lo_hi & mask) + (hi_lo & mask) + ((x_lo * y_lo) >> half)
    high = (x_hi * y_hi + (lo_hi >> half) + (hi_lo >> half) + (cross >> half)).astype(dtype)
    if dtype.kind == "i":
        high = high + (x >> 63) * y + (y >> 63) * x
    return high


RULES["mulhi"] = _mulhi
