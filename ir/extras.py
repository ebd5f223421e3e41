"""Shape rules of ``tile``, ``unstack``, ``optimization_barrier`` and ``approx_top_k``, as JAX's abstract
evaluation checks them."""
from __future__ import annotations

import numpy as np


def tile(name, avals_in, *, reps):
    """JAX's ``_tile_abstract_eval``: each axis times its repetitions."""
    (x,) = avals_in
    if x.ndim != len(reps):
        raise TypeError(f"reps length must be equal to the ndim of x, got len(reps)={len(reps)} and x.ndim={x.ndim}.")
    return [x.update(shape=tuple(d * r for d, r in zip(x.shape, reps)))]


def unstack(name, avals_in, *, axis):
    """JAX's ``_unstack_shape_rule``: one result per index along ``axis``, without it."""
    (x,) = avals_in
    if x.ndim == 0:
        raise ValueError(f"unstack requires arrays with rank > 0, however a scalar array of shape {x.shape} was "
                         "passed.")
    shape = list(x.shape)
    n = shape.pop(axis)
    return [x.update(shape=tuple(shape))] * n


def optimization_barrier(name, avals_in):
    """The identity on any number of operands."""
    return list(avals_in)


def approx_top_k(name, avals_in, *, k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
                 aggregate_to_topk):
    """JAX's ``_approx_top_k_abstract_eval``, for ``aggregate_to_topk`` (the output size of the other mode is
    XLA's choice)."""
    (x,) = avals_in
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if x.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {x.shape}")
    dims = list(x.shape)
    if dims[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {dims[reduction_dimension]}, got {k}")
    if not np.issubdtype(x.dtype, np.floating):
        raise ValueError("operand must be a floating type")
    if not aggregate_to_topk:
        raise NotImplementedError("approx_top_k with aggregate_to_topk=False is not supported")
    dims[reduction_dimension] = k
    return [x.update(shape=tuple(dims)), x.update(shape=tuple(dims), dtype=np.dtype(np.int32), weak_type=False)]
