"""``irax.ops``: segment reductions (``jax.ops.segment_sum`` and kin), ported from ``jax/_src/ops/scatter.py`` so
that their jaxprs print as JAX's: one scatter of ``data`` into an array of the reduction's identity, or, with
``bucket_size``, into one row per bucket reduced afterwards (sums and products of fewer terms each)."""
from __future__ import annotations

import numpy as np

from irax import dtypes, lax
from irax.lax import GatherScatterMode

__all__ = ["segment_max", "segment_min", "segment_prod", "segment_sum"]


def _get_identity(op, dtype):
    if op is lax.scatter_add:
        return 0
    if op is lax.scatter_mul:
        return 1
    if op is lax.scatter_min:
        if dtype == np.bool_:
            return True
        return dtypes.iinfo(dtype).max if dtypes.issubdtype(dtype, np.integer) else float("inf")
    if dtype == np.bool_:
        return False
    return dtypes.iinfo(dtype).min if dtypes.issubdtype(dtype, np.integer) else -float("inf")


def _segment_update(name, data, segment_ids, scatter_op, num_segments, indices_are_sorted, unique_indices,
                    bucket_size, reducer, mode):
    from irax import numpy as jnp
    from irax.numpy._indexing import _scatter_update
    from irax.numpy._misc import _concrete_size
    from irax.numpy._util import check_arraylike
    check_arraylike(name, data, segment_ids)
    mode = GatherScatterMode.FILL_OR_DROP if mode is None else mode
    data = jnp.asarray(data)
    segment_ids = jnp.asarray(segment_ids)
    dtype = data.dtype
    if num_segments is None:
        num_segments = np.max(segment_ids) + 1
    num_segments = _concrete_size(num_segments, f"{name}() `num_segments` argument.")
    if num_segments < 0:
        raise ValueError("num_segments must be non-negative.")
    if bucket_size is None:
        out = jnp.full((num_segments,) + data.shape[1:], _get_identity(scatter_op, dtype), dtype=dtype)
        return _scatter_update(out, segment_ids, data, scatter_op, indices_are_sorted, unique_indices,
                               normalize_indices=False, mode=mode)
    num_buckets = -(-segment_ids.size // bucket_size)
    out = jnp.full((num_buckets, num_segments) + data.shape[1:], _get_identity(scatter_op, dtype), dtype=dtype)
    out = _scatter_update(out, np.index_exp[jnp.arange(segment_ids.shape[0]) // bucket_size, segment_ids[None, :]],
                          data, scatter_op, indices_are_sorted, unique_indices, normalize_indices=False, mode=mode)
    return reducer(out, axis=0).astype(dtype)


def segment_sum(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None, out_sharding=None):
    """Sums of the rows of ``data`` sharing a segment id; ids outside ``[0, num_segments)`` are dropped."""
    from irax import numpy as jnp
    return _segment_update("segment_sum", data, segment_ids, lax.scatter_add, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, jnp.sum, mode)


def segment_prod(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                 bucket_size=None, mode=None, out_sharding=None):
    """Products of the rows of ``data`` sharing a segment id (1 for an empty segment)."""
    from irax import numpy as jnp
    return _segment_update("segment_prod", data, segment_ids, lax.scatter_mul, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, jnp.prod, mode)


def segment_max(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None, out_sharding=None):
    """Maxima of the rows of ``data`` sharing a segment id (the dtype's lowest value for an empty segment)."""
    from irax import numpy as jnp
    return _segment_update("segment_max", data, segment_ids, lax.scatter_max, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, jnp.max, mode)


def segment_min(data, segment_ids, num_segments=None, indices_are_sorted=False, unique_indices=False,
                bucket_size=None, mode=None, out_sharding=None):
    """Minima of the rows of ``data`` sharing a segment id (the dtype's highest value for an empty segment)."""
    from irax import numpy as jnp
    return _segment_update("segment_min", data, segment_ids, lax.scatter_min, num_segments, indices_are_sorted,
                           unique_indices, bucket_size, jnp.min, mode)
