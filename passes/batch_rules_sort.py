"""Batching rules of ``sort`` and ``top_k``, ports of JAX's ``_sort_batch_rule`` and ``_top_k_batch_rule``."""
from __future__ import annotations

import numpy as np

from .batch import BATCH_RULES
from .builder import aval


def _sort_batch(b, args, dims, *, dimension, is_stable, num_keys):
    """Every operand at the first batched one's batch axis (shared ones broadcast there)."""
    prototype, new_bdim = next((a, d) for a, d in zip(args, dims) if d is not None)
    shape = aval(prototype).shape
    new_args = []
    for arg, bdim in zip(args, dims):
        if bdim is None:
            kept = tuple(int(d) for d in np.delete(np.arange(len(shape)), new_bdim))
            new_args.append(b.broadcast_in_dim(arg, shape=shape, broadcast_dimensions=kept))
        else:
            new_args.append(b.moveaxis(arg, bdim, new_bdim))
    new_dimension = dimension + (new_bdim <= dimension)
    outs = b.bind("sort", *new_args, dimension=new_dimension, is_stable=is_stable, num_keys=num_keys)
    return outs, [new_bdim] * len(outs)


def _top_k_batch(b, args, dims, *, k, axis):
    (operand,), (bdim,) = args, dims
    if bdim <= axis:
        axis += 1
    return b.bind("top_k", operand, k=k, axis=axis), [bdim, bdim]


BATCH_RULES["sort"] = _sort_batch
BATCH_RULES["top_k"] = _top_k_batch
