"""JVP rules of ``sort`` and ``top_k``, ports of JAX's ``_sort_jvp`` and ``_top_k_jvp`` (``jax/_src/lax/lax.py``):
the tangents follow the primal's permutation by a gather, bound in JAX's order so that ``make_jaxpr(grad(f))``
prints JAX's text."""
from __future__ import annotations

import numpy as np

from irax.ir.gather_scatter import GatherDimensionNumbers, GatherScatterMode

from .builder import aval
from .jvp import JVP_RULES


def _gather(b, operand, indices, dnums):
    """``lax.gather`` with its defaults: every start in bounds, one element a slice."""
    return b.gather(operand, indices, dimension_numbers=dnums, slice_sizes=(1,) * len(aval(operand).shape),
                    indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.PROMISE_IN_BOUNDS,
                    fill_value=None)


def _sort_jvp(b, primals, tangents, *, dimension, is_stable, num_keys):
    """The operands sorted with an iota along, whose sorted order gathers each tangent."""
    shape = aval(primals[0]).shape
    iota = b.iota(dtype=np.dtype(np.uint32), shape=shape, dimension=dimension, sharding=None)
    outs = b.bind("sort", *primals, iota, dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    batch_dims = tuple(np.delete(np.arange(len(shape), dtype=np.int64), dimension))
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(dimension,), start_index_map=(dimension,),
                                   operand_batching_dims=batch_dims, start_indices_batching_dims=batch_dims)
    idx = b.broadcast_in_dim(outs[-1], shape=shape + (1,), broadcast_dimensions=tuple(range(len(shape))))
    return outs[:-1], [None if t is None else _gather(b, t, idx, dnums) for t in tangents]


def _top_k_jvp(b, primals, tangents, *, k, axis):
    values, k_idxs = b.bind("top_k", *primals, k=k, axis=axis)
    idx_shape = aval(k_idxs).shape
    others = tuple(i for i in range(len(idx_shape)) if i != axis)
    gather_indices = b.reshape(k_idxs, new_sizes=idx_shape + (1,), dimensions=None)
    dnums = GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(axis,), start_index_map=(axis,),
                                   operand_batching_dims=others, start_indices_batching_dims=others)
    return [values, k_idxs], [_gather(b, tangents[0], gather_indices, dnums), None]


JVP_RULES["sort"] = _sort_jvp
JVP_RULES["top_k"] = _top_k_jvp
