"""Shape rules of ``tile``, ``unstack``, ``optimization_barrier`` and ``approx_top_k``, as JAX's abstract
evaluation checks them."""
from __future__ import annotations

import math

import numpy as np

from .avals import ShapedArray
from .shapes import issubdtype


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


def device_put(name, avals_in, *, devices, srcs, copy_semantics):
    """The identity on any number of operands, each with its own device, source and copy semantics."""
    if not len(devices) == len(srcs) == len(copy_semantics) == len(avals_in):
        raise ValueError(f"device_put takes one device, source and copy semantics per operand, got {len(devices)}, "
                         f"{len(srcs)} and {len(copy_semantics)} for {len(avals_in)} operands")
    return list(avals_in)


# The platform irax traces and lowers for, as JAX names platforms: one StableHLO module serves every IREE target,
# so lax.platform_dependent takes the CPU branch wherever the module runs.
PLATFORM = "cpu"


def platform_index(name, avals_in, *, platforms):
    """The index of the branch for the platform compiled for: an int32 scalar."""
    return [ShapedArray((), np.dtype(np.int32))]


def platform_branch(platforms) -> int:
    """The branch of ``PLATFORM`` among ``platforms`` (name tuples, ``None`` for the default branch), as JAX's
    lowering of ``platform_index`` picks it."""
    for i, names in enumerate(platforms):
        if names is not None and PLATFORM in names:
            return i
    if None in platforms:
        return platforms.index(None)
    raise NotImplementedError(f"MLIR translation rule for primitive 'platform_index(platforms={platforms})' not "
                              f"found for platform {PLATFORM}")


def approx_top_k_output_size(input_size, rank, k, recall_target, aggregate_to_topk, input_size_override) -> int:
    """XLA's ``ApproxTopKReductionOutputSize``: how many candidates ``aggregate_to_topk=False`` returns, the TPU
    algorithm's reduction output (XLA's CPU fallback returns that many of the best, sorted, as irax does)."""
    if aggregate_to_topk:
        return k
    tiling = 1024 if rank == 1 else 128
    if input_size <= tiling:
        return input_size
    if 0 <= input_size_override < input_size:
        raise ValueError(f"reduction_input_size_override: {input_size_override} should be greater equals to "
                         f"operands[reduction_dim]: {input_size}")
    logical = input_size_override if input_size_override >= 0 else input_size
    if k == 1:
        return tiling
    recall = float(np.float32(recall_target))  # a C++ float, widened
    if recall == 1.0:
        return input_size
    if not 0 < recall <= 1:
        raise ValueError("recall_target should range in (0,1]")
    windows = min(max(int((1.0 - k) / math.log(recall)), tiling), logical)
    log2_reduction = _log2_floor(logical // windows)
    if log2_reduction == 0:
        return input_size
    log2_reduction = min(log2_reduction, _log2_ceil(input_size // tiling))
    return -(-(-(-input_size // tiling)) // (1 << log2_reduction)) * tiling


def _log2_floor(value):
    return value.bit_length() - 1 if value > 0 else 0


def _log2_ceil(value):
    return (value - 1).bit_length() if value > 0 else 0


def approx_top_k(name, avals_in, *, k, reduction_dimension, recall_target, is_max_k, reduction_input_size_override,
                 aggregate_to_topk):
    """JAX's ``_approx_top_k_abstract_eval``."""
    (x,) = avals_in
    if k <= 0:
        raise ValueError(f"k must be positive, got {k}")
    if x.ndim == 0:
        raise TypeError(f"approx_top_k operand must have >= 1 dimension, got {x.shape}")
    dims = list(x.shape)
    if dims[reduction_dimension] < k:
        raise ValueError(f"k must be smaller than the size of reduction_dim {dims[reduction_dimension]}, got {k}")
    if not issubdtype(x.dtype, np.floating):
        raise ValueError("operand must be a floating type")
    dims[reduction_dimension] = approx_top_k_output_size(dims[reduction_dimension], x.ndim, k, recall_target,
                                                         aggregate_to_topk, reduction_input_size_override)
    return [x.update(shape=tuple(dims)), x.update(shape=tuple(dims), dtype=np.dtype(np.int32), weak_type=False)]
