"""Quantiles (``quantile``, ``percentile``, ``median`` and their NaN-ignoring forms), ported from JAX's
``jax/_src/numpy/reductions.py``: one sort along the reduced axis, then a gather of the entries on either side
of each quantile, combined by ``method``. As in JAX, ``q`` is not range-checked (it is clamped to the data)."""
from __future__ import annotations

import math

import numpy as np

from irax import dtypes, lax

from ._reductions import any, cumsum, sum
from ._util import (_where, canonicalize_axis, ensure_arraylike, lax_const, promote_dtypes_inexact,
                    staged_as)

__all__ = ["median", "nanmedian", "nanpercentile", "nanquantile", "percentile", "quantile"]

_METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]
_STATIC = ("axis", "overwrite_input", "keepdims", "method")


def _isnan(x):
    return lax.ne(x, x)


@staged_as("quantile", static_argnames=_STATIC)
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """The ``q``-th quantiles (``q`` in [0, 1], a scalar or 1-d) of ``a`` along ``axis``.

    Args:
      method: 'linear', 'lower', 'higher', 'midpoint', 'nearest', or 'inverted_cdf' (the only one taking
        ``weights``).

    Raises:
      ValueError: for ``overwrite_input=True``, ``out``, an unknown method, complex input or a 2-d ``q``.
    """
    return _checked_quantile("quantile", False, a, q, axis, out, overwrite_input, method, keepdims, weights)


@staged_as("nanquantile", static_argnames=_STATIC)
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """``quantile`` ignoring NaNs (NaN only where every entry is NaN)."""
    return _checked_quantile("nanquantile", True, a, q, axis, out, overwrite_input, method, keepdims, weights)


def _checked_quantile(name, squash_nans, a, q, axis, out, overwrite_input, method, keepdims, weights):
    a, q = ensure_arraylike(name, a, q)
    if weights is not None:
        weights = ensure_arraylike(name, weights)
    if overwrite_input or out is not None:
        raise ValueError(f"jax.numpy.{name} does not support overwrite_input=True or out != None")
    return _quantile(a, q, axis, method, keepdims, squash_nans, weights)


@staged_as("percentile", static_argnames=_STATIC)
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None):
    """``quantile`` with ``q`` in percent."""
    a, q = ensure_arraylike("percentile", a, q)
    if weights is not None:
        weights = ensure_arraylike("percentile", weights)
    q, = promote_dtypes_inexact(q)
    return quantile(a, q / 100, axis=axis, out=out, overwrite_input=overwrite_input, method=method,
                    keepdims=keepdims, weights=weights)


@staged_as("nanpercentile", static_argnames=_STATIC)
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                  weights=None):
    """``nanquantile`` with ``q`` in percent."""
    a, q = ensure_arraylike("nanpercentile", a, q)
    if weights is not None:
        weights = ensure_arraylike("nanpercentile", weights)
    q, = promote_dtypes_inexact(q)
    q = q / 100
    return nanquantile(a, q, axis=axis, out=out, overwrite_input=overwrite_input, method=method, weights=weights,
                       keepdims=keepdims)


@staged_as("median", static_argnames=("axis", "overwrite_input", "keepdims"))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """The median along ``axis``: the mean of the two middle entries for an even count."""
    a = ensure_arraylike("median", a)
    return quantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims,
                    method="midpoint")


@staged_as("nanmedian", static_argnames=("axis", "overwrite_input", "keepdims"))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``median`` ignoring NaNs."""
    a = ensure_arraylike("nanmedian", a)
    return nanquantile(a, 0.5, axis=axis, out=out, overwrite_input=overwrite_input, keepdims=keepdims,
                       method="midpoint")


def _check_weights(a, weights, axis, method):
    """``a`` and ``weights`` promoted together, ``weights`` broadcast from the reduced axes to ``a``'s shape."""
    if dtypes.issubdtype(weights.dtype, np.complexfloating):
        raise ValueError("Weights cannot be complex types.")
    if method != "inverted_cdf":
        raise NotImplementedError(f"{method} doesn't support weights. Only method 'inverted_cdf' supports weights.")
    a, weights = promote_dtypes_inexact(a, weights)
    if weights.shape != a.shape:
        if axis is None:
            raise ValueError("Weights shape must match 'a' shape when axis is None.")
        ax_tuple = tuple(canonicalize_axis(ax, a.ndim) for ax in (axis if isinstance(axis, tuple) else (axis,)))
        if weights.shape != tuple(a.shape[ax] for ax in ax_tuple):
            raise ValueError(f"Weights shape {weights.shape} must match reduction axes "
                             f"{tuple(a.shape[ax] for ax in ax_tuple)}")
        weights = lax.broadcast_in_dim(weights, a.shape, broadcast_dimensions=ax_tuple)
    return a, weights


def _move_axes_last(a, weights, axis):
    """The reduced axes of a tuple ``axis`` merged into one last axis, and the shape ``keepdims`` gives."""
    keepdim = list(a.shape)
    nd = a.ndim
    axis = tuple(canonicalize_axis(ax, nd) for ax in axis)
    if len(set(axis)) != len(axis):
        raise ValueError("repeated axis")
    for ax in axis:
        keepdim[ax] = 1
    keep = set(range(nd)) - set(axis)
    dimensions = list(range(nd))
    for i, s in enumerate(sorted(keep)):
        dimensions[i], dimensions[s] = dimensions[s], dimensions[i]
    do_not_touch_shape = tuple(x for idx, x in enumerate(a.shape) if idx not in axis)
    touch_shape = tuple(x for idx, x in enumerate(a.shape) if idx in axis)
    new_shape = do_not_touch_shape + (math.prod(touch_shape),)
    a = lax.reshape(a, new_shape, dimensions)
    if weights is not None:
        weights = lax.reshape(weights, new_shape, dimensions)
    return a, weights, keepdim


def _quantile(a, q, axis, method, keepdims, squash_nans, weights=None):
    if method not in _METHODS:
        raise ValueError("method can only be 'linear', 'lower', 'higher', 'midpoint', 'nearest' or 'inverted_cdf'")
    if weights is not None:
        a, weights = _check_weights(a, weights, axis, method)
    else:
        a, = promote_dtypes_inexact(a)
    keepdim = []
    if dtypes.issubdtype(a.dtype, np.complexfloating):
        raise ValueError("quantile does not support complex input, as the operation is poorly defined.")
    if axis is None:
        if keepdims:
            keepdim = [1] * a.ndim
        a = a.ravel()
        weights = None if weights is None else weights.ravel()
        axis = 0
    elif isinstance(axis, tuple):
        a, weights, keepdim = _move_axes_last(a, weights, axis)
        axis = canonicalize_axis(-1, a.ndim)
    else:
        axis = canonicalize_axis(axis, a.ndim)
    if q.ndim > 1:
        raise ValueError(f"q must be have rank <= 1, got shape {q.shape}")
    gather_ends = _nan_ends if squash_nans else _ends
    a_shape, q_orig = a.shape, q
    a, weights, q, low_value, high_value, low_weight, high_weight = gather_ends(a, q, axis, keepdims, weights)
    result = _combine(method, low_value, high_value, low_weight, high_weight, q)
    if result is None:
        result = _inverted_cdf(a, weights, q_orig, a_shape, axis, keepdims, squash_nans)
    if keepdims and keepdim:
        if q_orig.ndim > 0:
            keepdim = [q_orig.shape[0], *keepdim]
        result = result.reshape(keepdim)
    return lax.convert_element_type(result, a.dtype)


def _sort(a, weights, axis):
    if weights is not None:
        return lax.sort_key_val(a, weights, dimension=axis)
    return lax.sort(a, dimension=axis), None


def _floor_ceil(q):
    low, high = lax.floor(q), lax.ceil(q)
    high_weight = lax.sub(q, low)
    return low, high, high_weight, lax.sub(lax_const(high_weight, 1), high_weight)


def _nan_ends(a, q, axis, keepdims, weights):
    """The entries either side of each quantile among the non-NaN entries (NaNs sort last)."""
    q_shape, q_ndim = q.shape, q.ndim
    a = _where(_isnan(a), np.nan, a)
    a, weights = _sort(a, weights, axis)
    counts = sum(lax.bitwise_not(_isnan(a)), axis=axis, dtype=q.dtype, keepdims=keepdims)
    shape_after_reduction = counts.shape
    q = lax.expand_dims(q, tuple(range(q_ndim, len(shape_after_reduction) + q_ndim)))
    counts = lax.expand_dims(counts, tuple(range(q_ndim)))
    q = lax.mul(q, lax.sub(counts, lax_const(q, 1)))
    low, high, high_weight, low_weight = _floor_ceil(q)
    low = lax.max(lax_const(low, 0), lax.min(low, counts - 1))
    high = lax.max(lax_const(high, 0), lax.min(high, counts - 1))
    low = lax.convert_element_type(low, dtypes.default_int_dtype())
    high = lax.convert_element_type(high, dtypes.default_int_dtype())
    out_shape = q_shape + shape_after_reduction
    index = [lax.broadcasted_iota(dtypes.default_int_dtype(), out_shape, dim + q_ndim)
             for dim in range(len(shape_after_reduction))]
    if keepdims:
        index[axis] = low
    else:
        index.insert(axis, low)
    low_value = a[tuple(index)]
    index[axis] = high
    high_value = a[tuple(index)]
    return a, weights, q, low_value, high_value, low_weight, high_weight


def _ends(a, q, axis, keepdims, weights):
    """The entries either side of each quantile (NaN along an axis with any NaN)."""
    q_ndim, a_shape = q.ndim, a.shape
    a = _where(any(_isnan(a), axis=axis, keepdims=True), np.nan, a)
    a, weights = _sort(a, weights, axis)
    n = lax.convert_element_type(a_shape[axis], q.dtype)
    q = lax.mul(q, n - 1)
    low, high, high_weight, low_weight = _floor_ceil(q)
    low = lax.clamp(lax_const(low, 0), low, n - 1)
    high = lax.clamp(lax_const(high, 0), high, n - 1)
    low = lax.convert_element_type(low, dtypes.default_int_dtype())
    high = lax.convert_element_type(high, dtypes.default_int_dtype())
    slice_sizes = list(a_shape)
    slice_sizes[axis] = 1
    dnums = lax.GatherDimensionNumbers(
        offset_dims=tuple(range(q_ndim, len(a_shape) + q_ndim if keepdims else len(a_shape) + q_ndim - 1)),
        collapsed_slice_dims=() if keepdims else (axis,), start_index_map=(axis,))
    low_value = lax.gather(a, low[..., None], dimension_numbers=dnums, slice_sizes=slice_sizes)
    high_value = lax.gather(a, high[..., None], dimension_numbers=dnums, slice_sizes=slice_sizes)
    if q_ndim == 1:
        low_weight = lax.broadcast_in_dim(low_weight, low_value.shape, broadcast_dimensions=(0,))
        high_weight = lax.broadcast_in_dim(high_weight, high_value.shape, broadcast_dimensions=(0,))
    return a, weights, q, low_value, high_value, low_weight, high_weight


def _combine(method, low_value, high_value, low_weight, high_weight, q):
    """The quantile from the entries either side of it (None for 'inverted_cdf', which does not use them)."""
    if method == "linear":
        return lax.add(lax.mul(low_value.astype(q.dtype), low_weight), lax.mul(high_value.astype(q.dtype), high_weight))
    if method == "lower":
        return low_value
    if method == "higher":
        return high_value
    if method == "nearest":
        return lax.select(lax.le(high_weight, lax_const(high_weight, 0.5)), low_value, high_value)
    if method == "midpoint":
        return lax.mul(lax.add(low_value, high_value), lax_const(low_value, 0.5))
    return None


def _inverted_cdf(a, weights, q, a_shape, axis, keepdims, squash_nans):
    """The first sorted entry whose cumulative weight reaches ``q`` of the total (NaN for a NaN or negative weight,
    or for NaN data unless ``squash_nans``)."""
    from ._indexing import take_along_axis
    q_ndim = q.ndim
    if weights is None:
        weights = lax.full_like(a, 1.0)
    zeros = lax.full_like(weights, 0)
    bad_weights = lax.bitwise_or(lax.lt(weights, zeros), _isnan(weights))
    nan_data = _isnan(a)
    clean_weights = lax.select(lax.bitwise_or(bad_weights, nan_data), zeros, weights)
    cum_weights = cumsum(clean_weights, axis=axis)
    total_weight = lax.index_in_dim(cum_weights, -1, axis, keepdims)
    tw_f = lax.expand_dims(total_weight, tuple(range(q_ndim)))
    q_f = lax.reshape(q, q.shape + (1,) * total_weight.ndim)
    target_w = lax.mul(q_f, tw_f)
    target_w_aligned = target_w if keepdims else lax.expand_dims(target_w, (axis + q_ndim,))
    cw_f = lax.expand_dims(cum_weights, tuple(range(q_ndim)))
    is_less = lax.lt(cw_f, target_w_aligned)
    idx = sum(lax.convert_element_type(is_less, dtypes.default_int_dtype()), axis=axis + q_ndim, keepdims=keepdims)
    if squash_nans:
        valid_counts = sum(lax.bitwise_not(nan_data), axis=axis, dtype=q.dtype, keepdims=keepdims)
    else:
        valid_counts = lax.full_like(total_weight, a_shape[axis], dtype=q.dtype)
    limit = lax.sub(valid_counts, lax_const(valid_counts, 1))
    max_idx = lax.convert_element_type(limit, dtypes.default_int_dtype())
    max_idx_f = lax.convert_element_type(lax.expand_dims(max_idx, tuple(range(q_ndim))), idx.dtype)
    idx = lax.max(lax_const(idx, 0), lax.min(idx, max_idx_f))
    idx_take = lax.squeeze(idx, (q_ndim + axis,)) if keepdims else idx
    if q_ndim == 0:
        result = take_along_axis(a, lax.expand_dims(idx_take, (axis,)), axis=axis)
        result = lax.squeeze(result, (axis,))
    else:
        perm = [*range(q_ndim, q_ndim + axis), *range(q_ndim), *range(q_ndim + axis, idx_take.ndim)]
        result = take_along_axis(a, lax.transpose(idx_take, perm), axis=axis)
        result = lax.transpose(result, [perm.index(i) for i in range(len(perm))])
    if keepdims:
        result = lax.expand_dims(result, (q_ndim + axis,))
    all_nan_data = lax.eq(valid_counts, lax.full_like(valid_counts, 0))
    any_bad_weight = any(bad_weights, axis=axis, keepdims=keepdims)
    if squash_nans:
        force_nan = lax.bitwise_or(any_bad_weight, all_nan_data)
    else:
        force_nan = lax.bitwise_or(any_bad_weight, any(nan_data, axis=axis, keepdims=keepdims))
    force_nan_f = lax.expand_dims(force_nan, tuple(range(q_ndim)))
    return _where(force_nan_f, lax.full_like(result, np.nan), result)
