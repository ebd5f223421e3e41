"""Batching rules of the collectives over named axes, ports of JAX's (``jax/_src/lax/parallel.py``).

``vmap(f, axis_name='i')`` gives the mapped axis a name; inside ``f``, ``psum(x, 'i')``
and its kin reduce or index along it. The pass batching over ``'i'`` turns each
collective naming ``'i'`` into ordinary ops: a psum over the batch dimension as a
positional axis, an all_gather as the batched operand itself, axis_index as an
iota. A collective over other names only (a nested vmap's) keeps its op, its
positional axes moved past the batch dimension, for the pass of that name to
rewrite in turn; which is why JAX's rules split named from positional axes.
"""
from __future__ import annotations

import numpy as np

from irax.ir.shapes import split_axes

from .batch import AXIS_NAME_PARAMS, BATCH_RULES
from .builder import aval


def _reduction_collective(b, args, dims, *, axes, axis_index_groups):
    """JAX's ``_batched_reduction_collective``: over this pass's axis, the batch dimension becomes a positional
    axis of the same op. An unbatched operand reaches here only when ``axes`` names this pass's axis (the pass
    copies the rest)."""
    (x,), (d,) = args, dims
    if d is None:
        return _constant_reduction(b, x, axes), None
    if b.axis_name not in axes:
        if not split_axes(axes)[1]:
            return b.same(x, axes=axes, axis_index_groups=None)[0], d
        return _positional_reduction(b, x, d, axes), 0
    return _positional_reduction(b, x, d, axes), None


def _positional_reduction(b, x, d, axes):
    """The batch dimension moved to the front: positional axes shift past it, this pass's name becomes it."""
    x = b.moveaxis(x, d, 0)
    axes = tuple(axis + (axis >= 0) if isinstance(axis, int) else 0 if axis == b.axis_name else axis
                 for axis in axes)
    return b.same(x, axes=axes, axis_index_groups=None)[0]


def _constant_reduction(b, x, axes):
    """Every example holds the same ``x``: its sum over the axis is ``axis_size * x``; its max or min, ``x``."""
    rest = tuple(axis for axis in axes if axis != b.axis_name)
    if rest:
        x = b.same(x, axes=rest, axis_index_groups=None)[0]
    return b.mul(b.axis_size, x) if b.primitive == "psum" else x


def _all_gather_batch(b, args, dims, *, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled):
    """JAX's ``_all_gather_batched_collective``: gathered over this pass's axis, the result is the batched
    operand, its batch dimension moved to ``all_gather_dimension`` (folded into it when tiled)."""
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_index_groups=None, axis_size=axis_size, tiled=tiled)
    if b.axis_name not in axis_name:
        if d <= all_gather_dimension:
            all_gather_dimension += 1
        elif not tiled:
            d += 1
        return b.same(x, all_gather_dimension=all_gather_dimension, **params)[0], d
    if len(axis_name) > 1:
        raise NotImplementedError("Please open a feature request!")
    if d is None:
        shape = list(aval(x).shape)
        shape.insert(all_gather_dimension, axis_size)
        y = b.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=tuple(
            i for i in range(len(shape)) if i != all_gather_dimension))
    else:
        y = b.moveaxis(x, d, all_gather_dimension)
    if tiled:
        shape, k = list(aval(y).shape), all_gather_dimension
        shape[k:k + 2] = [shape[k] * shape[k + 1]]
        y = b.reshape(y, new_sizes=tuple(shape), dimensions=None)
    return y, None


def _reduce_scatter_batch(b, args, dims, *, axis_name, scatter_dimension, axis_index_groups, axis_size, tiled):
    """JAX's ``_reduce_scatter_collective``: over this pass's axis, the sum over the batch dimension, each
    example keeping its slice, so the result is batched along ``scatter_dimension``."""
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_index_groups=None, axis_size=axis_size, tiled=tiled)
    if b.axis_name not in axis_name:
        if d <= scatter_dimension:
            scatter_dimension += 1
        elif not tiled:  # the scatter dimension goes, so a batch dimension after it moves down (JAX adds one)
            d -= 1
        return b.same(x, scatter_dimension=scatter_dimension, **params)[0], d
    if len(axis_name) > 1:
        raise NotImplementedError("Please open a feature request!")
    y = b.mul(x, axis_size) if d is None else b.reduce_sum(x, axes=(d,))
    if tiled:
        shape, k = list(aval(y).shape), scatter_dimension
        shape[k:k + 1] = [axis_size, shape[k] // axis_size]
        y = b.reshape(y, new_sizes=tuple(shape), dimensions=None)
    return y, scatter_dimension


def _ppermute_batch(b, args, dims, *, axis_name, perm):
    """JAX's ``_ppermute_batcher``: over this pass's axis, example ``dst`` takes example ``src``'s value (a
    destination no pair names takes example 0's, as JAX's ``take`` of zero-filled indices does); an unbatched
    operand is every example's already."""
    (x,), (d,) = args, dims
    if b.axis_name not in axis_name:
        return b.same(x, axis_name=axis_name, perm=perm)[0], d
    rest = tuple(name for name in axis_name if name != b.axis_name)
    if rest:
        return b.same(x, axis_name=rest, perm=perm)[0], d
    if len(perm) != b.axis_size:
        raise AssertionError("Permutation doesn't match the axis size!")
    if d is None:
        return x, None
    sources = [0] * b.axis_size
    for src, dst in perm:
        sources[dst] = src
    shape = aval(x).shape
    pieces = [b.slice(x, start_indices=tuple(s if k == d else 0 for k in range(len(shape))),
                      limit_indices=tuple(s + 1 if k == d else n for k, n in enumerate(shape)), strides=None)
              for s in sources]
    return b.concatenate(*pieces, dimension=d), d


def _all_to_all_batch(b, args, dims, *, axis_name, split_axis, concat_axis, axis_size, tiled, axis_index_groups):
    """JAX's ``_all_to_all_batched_collective`` for one name: over this pass's axis, the exchange is a reshape
    and a transpose of the batch; over other names, the op with its axes renumbered around the batch axis."""
    (x,), (d,) = args, dims
    params = dict(axis_name=axis_name, axis_size=axis_size, tiled=tiled, axis_index_groups=None)
    if b.axis_name not in axis_name:
        if d is None:
            return b.same(x, split_axis=split_axis, concat_axis=concat_axis, **params)[0], None
        return b.same(x, split_axis=split_axis + (d <= split_axis), concat_axis=concat_axis + (d <= concat_axis),
                      **params)[0], d
    if len(axis_name) > 1:
        raise NotImplementedError("all_to_all over several axis names, one of them vmap's, is not supported")
    size = b.axis_size
    if d is None:
        x, d = b.broadcast(x, size, 0), 0
    if split_axis == concat_axis:
        axis = split_axis + (d <= split_axis)
        before = d
        x = _split_axis(b, x, axis, size)
        d += axis <= d
        perm = list(range(len(aval(x).shape)))
        perm[d], perm[axis] = perm[axis], perm[d]
        return _fold_axis(b, b.transpose(x, permutation=tuple(perm)), axis), before
    return _split_axis(b, _fold_axis(b, b.moveaxis(x, d, concat_axis), concat_axis), split_axis, size), split_axis


def _split_axis(b, x, axis, factor):
    shape = list(aval(x).shape)
    shape[axis:axis + 1] = [factor, shape[axis] // factor]
    return b.reshape(x, new_sizes=tuple(shape), dimensions=None)


def _fold_axis(b, x, axis):
    shape = list(aval(x).shape)
    shape[axis:axis + 2] = [shape[axis] * shape[axis + 1]]
    return b.reshape(x, new_sizes=tuple(shape), dimensions=None)


def _axis_index_batch(b, args, dims, *, axis_name):
    """Reached only for this pass's name (the pass copies the rest): each example's index is its position."""
    return b.iota(dtype=np.dtype(np.int32), shape=(b.axis_size,), dimension=0), 0


for _name in ("psum", "pmax", "pmin"):
    BATCH_RULES[_name] = _reduction_collective
    AXIS_NAME_PARAMS[_name] = "axes"
BATCH_RULES["all_gather"] = _all_gather_batch
BATCH_RULES["reduce_scatter"] = _reduce_scatter_batch
BATCH_RULES["axis_index"] = _axis_index_batch
BATCH_RULES["ppermute"] = _ppermute_batch
BATCH_RULES["all_to_all"] = _all_to_all_batch
AXIS_NAME_PARAMS.update(all_gather="axis_name", reduce_scatter="axis_name", axis_index="axis_name",
                        ppermute="axis_name", all_to_all="axis_name")
