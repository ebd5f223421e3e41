"""Batching rules of ``tile`` (one repetition of the batch axis, JAX's ``_tile_batch_rule``), ``unstack``,
``optimization_barrier`` (the batched operands through one barrier) and ``approx_top_k`` (the reduction axis
renumbered around the batch axis, JAX's ``_approx_top_k_batch_rule``)."""
from __future__ import annotations

from .batch import BATCH_RULES, defbroadcasting
from .builder import aval


def _tile_batch(b, args, dims, *, reps):
    reps = list(reps)
    reps.insert(dims[0], 1)
    return b.same(args[0], reps=tuple(reps)), dims[0]


def _unstack_batch(b, args, dims, *, axis):
    """JAX's ``_unstack_batch_rule``: the axis renumbered around the batch axis."""
    (bdim,) = dims
    out_axis, out_bdim = (axis, bdim - 1) if axis < bdim else (axis + 1, bdim)
    outs = b.same(args[0], axis=out_axis)
    return outs, [out_bdim] * len(outs)


def _optimization_barrier_batch(b, args, dims):
    return b.same(*args), list(dims)


def _device_put_batch(b, args, dims, **params):
    return b.same(*args, **params), list(dims)


def _approx_top_k_batch(b, args, dims, *, reduction_dimension, **params):
    (operand,), (bdim,) = args, dims
    dim_map = [d for d in range(len(aval(operand).shape)) if d != bdim]
    return b.same(operand, reduction_dimension=dim_map[reduction_dimension], **params), [bdim, bdim]


defbroadcasting("mulhi")
BATCH_RULES.update({"tile": _tile_batch, "unstack": _unstack_batch, "optimization_barrier": _optimization_barrier_batch,
                    "device_put": _device_put_batch,
                    "approx_top_k": _approx_top_k_batch})
