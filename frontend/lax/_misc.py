"""Small ``jax.lax`` functions written, as JAX writes them, on other primitives: ``broadcast_shapes``,
``dtype``, ``batch_matmul``, ``collapse``, ``dynamic_index_in_dim``, ``dynamic_update_index_in_dim``, ``index_take``,
``broadcast_to_rank``, ``broadcast_like`` and ``reduce`` (of a monoid)."""
from __future__ import annotations

import math
import operator

import numpy as np

from irax import api, dtypes, tree_util

from . import (_canonical_axis, broadcast_in_dim, concatenate, dot_general, dynamic_slice, dynamic_update_slice,
               expand_dims, reshape, squeeze)
from ._scalars import as_operand
from ._slicing import GatherDimensionNumbers, gather


def _static_shape(shape) -> tuple:
    """JAX's ``canonicalize_shape`` of a shape to broadcast: non-negative concrete ints."""
    try:
        checked = tuple(map(operator.index, shape))
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None
    if not all(d >= 0 for d in checked):
        raise TypeError(f"Only non-negative indices are allowed when broadcasting static shapes, but got shape "
                        f"{shape!r}.")
    return checked


def broadcast_shapes(*shapes):
    """The shape NumPy broadcasting gives ``shapes`` (``jax.lax.broadcast_shapes``).

    Raises:
      ValueError: the shapes do not broadcast together.
    """
    if not shapes:
        raise TypeError("broadcast_shapes: At least one shape is required.")
    checked = [_static_shape(s) for s in shapes]
    if len(checked) == 1:
        return tuple(shapes[0])
    try:
        return tuple(int(d) for d in np.broadcast_shapes(*checked))
    except ValueError:
        raise ValueError(f"Incompatible shapes for broadcasting: shapes={list(shapes)}") from None


def dtype(x):
    """``x``'s dtype as an array of it would have it: Python scalars and 64-bit types canonicalized
    (``jax.lax.dtype``)."""
    return dtypes.dtype(x, canonicalize=True)


def batch_matmul(lhs, rhs, precision=None):
    """Matrix products over leading batch axes: one ``dot_general`` (``jax.lax.batch_matmul``)."""
    lhs, rhs = as_operand(lhs), as_operand(rhs)
    if min(lhs.ndim, rhs.ndim) < 2:
        raise ValueError(f"Arguments to batch_matmul must be at least 2D, got {lhs.ndim}, {rhs.ndim}")
    if lhs.ndim != rhs.ndim:
        raise ValueError(f"Arguments to batch_matmul must have same ndim, got {lhs.ndim}, {rhs.ndim}")
    batch = tuple(range(lhs.ndim - 2))
    return dot_general(lhs, rhs, (((lhs.ndim - 1,), (rhs.ndim - 2,)), (batch, batch)), precision=precision)


def collapse(operand, start_dimension, stop_dimension=None):
    """Axes ``[start_dimension, stop_dimension)`` raveled into one, by a ``reshape`` (``jax.lax.collapse``)."""
    operand = as_operand(operand)
    lo, hi, _ = slice(start_dimension, stop_dimension).indices(len(operand.shape))
    if hi < lo:
        raise ValueError(f"Invalid dimension range passed to collapse: {operand.shape}"
                         f"[{start_dimension}:{stop_dimension}]")
    size = math.prod(operand.shape[lo:hi])
    return reshape(operand, operand.shape[:lo] + (size,) + operand.shape[hi:])


@api.staged(static_argnames=("axis", "keepdims", "allow_negative_indices"))
def dynamic_index_in_dim(operand, index, axis=0, keepdims=True, *, allow_negative_indices=True):
    """``operand[..., index, ...]`` along ``axis`` for a traced ``index`` (``jax.lax.dynamic_index_in_dim``)."""
    operand = as_operand(operand)
    axis = _canonical_axis(axis, operand.ndim)
    starts, sizes = [0] * operand.ndim, list(operand.shape)
    starts[axis], sizes[axis] = index, 1
    result = dynamic_slice(operand, starts, sizes, allow_negative_indices=allow_negative_indices)
    return result if keepdims else squeeze(result, (axis,))


@api.staged(static_argnames=("axis", "allow_negative_indices"))
def dynamic_update_index_in_dim(operand, update, index, axis, *, allow_negative_indices=True):
    """``operand`` with ``update`` written at ``index`` along ``axis`` (``jax.lax.dynamic_update_index_in_dim``);
    ``update`` may lack that axis."""
    operand, update = as_operand(operand), as_operand(update)
    axis = int(axis)
    if update.ndim != operand.ndim:
        if update.ndim + 1 != operand.ndim:
            raise ValueError(f"dynamic_update_index_in_dim: update of rank {update.ndim} for an operand of rank "
                             f"{operand.ndim}")
        update = expand_dims(update, (axis,))
    starts = [0] * operand.ndim
    starts[_canonical_axis(axis, operand.ndim)] = index
    return dynamic_update_slice(operand, update, starts, allow_negative_indices=allow_negative_indices)


def index_take(src, idxs, axes):
    """``src`` at the index arrays ``idxs`` along ``axes`` (wrapped modulo their sizes), as one ``gather``
    (``jax.lax.index_take``)."""
    from irax.numpy import remainder
    src = as_operand(src)
    columns = [expand_dims(as_operand(i), (1,)) for i in idxs]
    indices = columns[0] if len(columns) == 1 else concatenate(columns, 1)  # JAX's concatenate of one is itself
    max_idx = np.array([src.shape[ax] for ax in axes])
    indices = remainder(indices, broadcast_in_dim(max_idx, (1,) * (indices.ndim - 1) + max_idx.shape,
                                                  (indices.ndim - 1,)))
    slice_sizes = list(src.shape)
    for ax in axes:
        slice_sizes[ax] = 1
    offset_dims = tuple(range(1, src.ndim - indices.shape[1] + 1))
    dnums = GatherDimensionNumbers(offset_dims=offset_dims, collapsed_slice_dims=tuple(axes),
                                   start_index_map=tuple(axes))
    return gather(src, indices, dimension_numbers=dnums, slice_sizes=slice_sizes)


def broadcast_to_rank(x, rank):
    """``x`` with leading unit axes added up to ``rank`` (``jax.lax.broadcast_to_rank``)."""
    from . import broadcast
    x = as_operand(x)
    return x if x.ndim == rank else broadcast(x, (1,) * (rank - x.ndim))


def broadcast_like(arr, like_arr):
    """``arr`` broadcast to ``like_arr``'s shape, NumPy-style (``jax.lax.broadcast_like``)."""
    from irax.numpy._util import _broadcast_to
    return _broadcast_to(arr, np.shape(like_arr))


def _max_identity(dtype):
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(-np.inf, dtype)
    return np.array(np.iinfo(dtype).min if np.issubdtype(dtype, np.integer) else False, dtype)


def _min_identity(dtype):
    if dtypes.issubdtype(dtype, np.inexact):
        return np.array(np.inf, dtype)
    return np.array(np.iinfo(dtype).max if np.issubdtype(dtype, np.integer) else True, dtype)


def _monoid_reducer(computation, init_values):
    """JAX's ``_get_monoid_reducer``: the reduction primitive that ``computation`` with its identity as the
    one concrete scalar ``init_values`` is, or None."""
    from irax import core
    from . import add, bitwise_and, bitwise_or, bitwise_xor, max, min, mul
    from . import reduce_and, reduce_max, reduce_min, reduce_or, reduce_prod, reduce_sum, reduce_xor
    if len(init_values) != 1:
        return None
    (x,) = init_values
    if isinstance(x, core.Tracer) and x.concrete is None or np.shape(x) != ():
        return None
    value = np.asarray(x.concrete if isinstance(x, core.Tracer) else x)
    dtype = dtypes.canonicalize_dtype(dtypes.dtype(x))
    intlike = dtype == np.bool_ or np.issubdtype(dtype, np.integer)
    identities = [(add, reduce_sum, lambda: 0), (mul, reduce_prod, lambda: 1),
                  (bitwise_or, reduce_or, lambda: np.array(0, dtype)),
                  (bitwise_and, reduce_and, lambda: np.array(-1).astype(dtype)),
                  (bitwise_xor, reduce_xor, lambda: np.array(0, dtype)),
                  (max, reduce_max, lambda: _max_identity(dtype)), (min, reduce_min, lambda: _min_identity(dtype))]
    for op, reducer, identity in identities:
        if computation is op and (intlike or op not in (bitwise_or, bitwise_and, bitwise_xor)):
            return reducer if np.equal(value, identity()) else None
    return None


def reduce(operands, init_values, computation, dimensions, out_sharding=None):
    """``operands`` reduced over ``dimensions`` by ``computation`` from ``init_values`` (``jax.lax.reduce``): a
    monoid (``lax.add``, ``mul``, ``max``, ``min``, ``bitwise_*`` with its identity) becomes its reduction
    primitive, any other computation the general ``reduce`` primitive, as in JAX."""
    from . import _convert
    flat_operands, operand_tree = tree_util.tree_flatten(operands)
    flat_init_values, init_value_tree = tree_util.tree_flatten(init_values)
    if operand_tree != init_value_tree:
        raise ValueError(f"Operands must have the same tree structure as init_values: {operand_tree} vs. "
                         f"{init_value_tree}")
    if len(flat_operands) != len(flat_init_values):
        raise ValueError(f"Must have same total number of operands as init_values:  {len(flat_operands)} vs. "
                         f"{len(flat_init_values)}")
    reducer = _monoid_reducer(computation, flat_init_values)
    if reducer is None:
        from ._control_flow import general_reduce
        return tree_util.tree_unflatten(operand_tree, general_reduce(flat_operands, flat_init_values, operand_tree,
                                                                     computation, dimensions))
    weak_type = all(map(dtypes.is_weakly_typed, flat_operands)) and all(map(dtypes.is_weakly_typed,
                                                                           flat_init_values))
    out = reducer(*flat_operands, dimensions)
    return _convert(out, out.dtype, weak_type)
