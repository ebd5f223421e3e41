"""The batching rule of every primitive, each a port of JAX's (``jax/_src/interpreters/batching.py``,
``lax/lax.py``, ``slicing.py``, ``pjit.py``).

A rule binds the same primitives in the same order as JAX's, with the same
Python or NumPy integers in their params, which is what makes
``make_jaxpr(vmap(f))`` print JAX's text.
"""
from __future__ import annotations

import numpy as np

from irax.ir.gather_scatter import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers

from .batch import (BATCH_RULES, ZERO_IF_MAPPED, _broadcasting, batch_call, canonicalize_axis, defbroadcasting,
                    defreducer, defvectorized)
from .batch_rules_gather_scatter import batch_gather, batch_scatter
from .builder import aval
from .funcs import lookup

# --- elementwise ------------------------------------------------------------------------------------

defvectorized("exp", "exp2", "log", "expm1", "log1p", "tanh", "logistic", "sin", "cos", "tan", "sqrt", "rsqrt",
              "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh", "floor", "ceil", "erf", "erfc",
              "erf_inv", "lgamma", "digamma", "cbrt", "neg", "sign", "square", "stop_gradient", "copy", "abs", "round",
              "is_finite", "not", "population_count", "clz", "integer_pow", "real", "imag", "conj",
              "convert_element_type", "bitcast_convert_type", "name", "bessel_i0e", "bessel_i1e", "reduce_precision")

defbroadcasting("add", "sub", "mul", "div", "rem", "max", "min", "pow", "atan2", "nextafter", "polygamma", "eq",
                "ne", "lt", "le", "gt", "ge", "eq_to", "le_to", "lt_to", "and", "or", "xor", "shift_left",
                "shift_right_arithmetic", "shift_right_logical", "complex", "igamma", "igammac", "igamma_grad_a", "regularized_incomplete_beta",
                "zeta")


def _add_any_batch(b, args, dims):
    """As JAX's ``add_batched``: the unbatched operand is broadcast to the batched one's shape."""
    (x, y), (dx, dy) = args, dims
    if dx == dy:
        return b.add_any(x, y), dx
    if dx is None:
        return b.add_any(b.broadcast(x, aval(y).shape[dy], dy), y), dy
    if dy is None:
        return b.add_any(x, b.broadcast(y, aval(x).shape[dx], dx)), dx
    return b.add_any(b.moveaxis(x, dx, dy), y), dy


BATCH_RULES["add_any"] = _add_any_batch


def _split_batch(b, args, dims, *, sizes, axis):
    (operand,), (bdim,) = args, dims
    outs = b.bind("split", operand, sizes=sizes, axis=axis + 1 if axis >= bdim else axis)
    return outs, [bdim] * len(sizes)


BATCH_RULES["split"] = _split_batch


def _threefry2x32_batch(b, args, dims):
    """JAX's ``defbroadcasting`` for a primitive of two results: both at the one batch axis."""
    outs, dim = _broadcasting(b, args, dims)
    return outs, [dim, dim]


BATCH_RULES["threefry2x32"] = _threefry2x32_batch

# --- reductions ---------------------------------------------------------------------------------------

defreducer("reduce_sum", "reduce_max", "reduce_min", "reduce_prod", "reduce_and", "reduce_or", "reduce_xor",
           "argmax", "argmin")

# --- calls --------------------------------------------------------------------------------------------


def _call_batch(b, args, dims, *, callee, **params):
    """The callee batched as a new function for these operand dims, called in the op's place (JAX's
    ``_pjit_batcher``: the results keep the dims the callee's rules gave them)."""
    new, out_dims = batch_call(b, lookup(b.module, callee), args, dims)
    return b.call(new, args, b.primitive, **params), out_dims


BATCH_RULES["pjit"] = _call_batch


def _checkpoint_batch(b, args, dims, *, callee, **params):
    """As JAX's ``remat_vmap``: batched results of the callee at axis 0."""
    new, out_dims = batch_call(b, lookup(b.module, callee), args, dims, [ZERO_IF_MAPPED])
    return b.call(new, args, "checkpoint", **params), out_dims


BATCH_RULES["checkpoint"] = _checkpoint_batch

# --- select and clamp ---------------------------------------------------------------------------------


def _lax_broadcast(b, x, sizes):
    """``lax.broadcast``: leading axes of ``sizes``, the operand's axes numbered with Python ints (unlike
    ``b.broadcast``, JAX's ``batching.broadcast``, whose are NumPy's)."""
    if not sizes:
        return x
    shape = aval(x).shape
    dims = tuple(range(len(sizes), len(sizes) + len(shape)))
    return b.broadcast_in_dim(x, shape=tuple(sizes) + shape, broadcast_dimensions=dims)


def _select_n_batch(b, args, dims):
    which, *cases = args
    which_bdim, *case_bdims = dims
    which_shape, case_shape = aval(which).shape, aval(cases[0]).shape
    if all(which_bdim == d for d in case_bdims):  # avoid transposes and broadcasts in the special cases
        if which_shape == case_shape:
            return b.select_n(which, *cases), which_bdim
        which = b.broadcast_in_dim(which, shape=case_shape, broadcast_dimensions=(which_bdim,))
        return b.select_n(which, *cases), which_bdim
    if not which_shape and all(d is not None for d in case_bdims):
        if all(case_bdims[0] == d for d in case_bdims[1:]):
            return b.select_n(which, *cases), case_bdims[0]
        if all(case_shape == aval(c).shape for c in cases):
            bdim = case_bdims[0]
            others = [b.moveaxis(c, d, bdim) for c, d in zip(cases[1:], case_bdims[1:])]
            return b.select_n(which, cases[0], *others), bdim
    which = b.bdim_at_front(which, which_bdim) if which_shape else which
    if not all(aval(c).shape == () for c in cases):
        cases = [b.bdim_at_front(c, d) for c, d in zip(cases, case_bdims)]
    ndim_which, case_shape = len(aval(which).shape), aval(cases[0]).shape
    if 0 < ndim_which < len(case_shape):  # the vmapped function had a scalar ``which`` with nonscalar cases
        which = b.broadcast_in_dim(which, shape=case_shape, broadcast_dimensions=(0,))
    if ndim_which > len(case_shape):
        cases = [b.broadcast_in_dim(c, shape=aval(which).shape, broadcast_dimensions=()) for c in cases]
    return b.select_n(which, *cases), 0


def _ndim(x):
    return len(aval(x).shape)


def _clamp_batch(b, args, dims):
    (lo, x, hi), (lo_bdim, x_bdim, hi_bdim) = args, dims
    if lo_bdim == x_bdim == hi_bdim:  # avoid transposes and broadcasts in the special cases
        if aval(lo).shape == aval(x).shape == aval(hi).shape or _ndim(lo) == _ndim(hi) == 0:
            return b.clamp(lo, x, hi), x_bdim
        if _ndim(lo) == _ndim(hi) == 1:
            lo = b.broadcast_in_dim(lo, shape=aval(x).shape, broadcast_dimensions=(lo_bdim,))
            hi = b.broadcast_in_dim(hi, shape=aval(x).shape, broadcast_dimensions=(hi_bdim,))
            return b.clamp(lo, x, hi), x_bdim
    elif _ndim(lo) == 0 and _ndim(hi) == 0 and x_bdim is not None:
        return b.clamp(lo, x, hi), x_bdim
    lo = b.bdim_at_front(lo, lo_bdim) if _ndim(lo) else lo
    hi = b.bdim_at_front(hi, hi_bdim) if _ndim(hi) else hi
    x = b.bdim_at_front(x, x_bdim) if _ndim(x) else x
    if _ndim(lo) == 0 and _ndim(x) > 0:
        lo = _lax_broadcast(b, lo, aval(x).shape)
    if _ndim(hi) == 0 and _ndim(x) > 0:
        hi = _lax_broadcast(b, hi, aval(x).shape)
    if 0 < _ndim(lo) < _ndim(x):
        lo = b.broadcast_in_dim(lo, shape=aval(x).shape, broadcast_dimensions=(0,))
    if 0 < _ndim(hi) < _ndim(x):
        hi = b.broadcast_in_dim(hi, shape=aval(x).shape, broadcast_dimensions=(0,))
    if _ndim(lo) > _ndim(x):
        x = _lax_broadcast(b, x, aval(lo).shape)
    if _ndim(hi) > _ndim(x):  # not in JAX's rule, which fails here (a shared scalar x, only max batched)
        x = _lax_broadcast(b, x, aval(hi).shape)
    return b.clamp(lo, x, hi), 0


BATCH_RULES["select_n"] = _select_n_batch
BATCH_RULES["clamp"] = _clamp_batch

# --- shapes -------------------------------------------------------------------------------------------


def _broadcast_in_dim_batch(b, args, dims, *, shape, broadcast_dimensions, sharding):
    (operand,), (bdim,) = args, dims
    operand = b.moveaxis(operand, bdim, 0)
    return b.broadcast_in_dim(operand, shape=(aval(operand).shape[0],) + tuple(shape),
                              broadcast_dimensions=(0,) + tuple(np.add(1, broadcast_dimensions))), 0


def _reshape_batch(b, args, dims, *, new_sizes, dimensions, sharding):
    (operand,), (bdim,) = args, dims
    operand = b.moveaxis(operand, bdim, 0)
    new_sizes = aval(operand).shape[:1] + tuple(new_sizes)
    if dimensions is not None:
        dimensions = (0,) + tuple(d + 1 for d in dimensions)
    elif aval(operand).shape == new_sizes:  # as lax.reshape, which binds nothing then
        return operand, 0
    return b.reshape(operand, new_sizes=new_sizes, dimensions=dimensions), 0


def _squeeze_batch(b, args, dims, *, dimensions):
    """Squeezes after moving the batch to the front, as JAX's; ``lax.squeeze`` makes the axes Python ints."""
    (operand,), (bdim,) = args, dims
    operand = b.moveaxis(operand, bdim, 0)
    dimensions = tuple(sorted(int(d) for d in np.add(1, dimensions)))
    return (b.squeeze(operand, dimensions=dimensions) if dimensions else operand), 0


def _transpose_batch(b, args, dims, *, permutation):
    (operand,), (bdim,) = args, dims
    perm = (bdim,) + tuple(i if i < bdim else i + 1 for i in permutation)
    if perm == tuple(range(len(perm))):  # as lax.transpose, which binds nothing then
        return operand, 0
    return b.transpose(operand, permutation=perm), 0


def _rev_batch(b, args, dims, *, dimensions):
    (operand,), (bdim,) = args, dims
    return b.rev(operand, dimensions=tuple(i + 1 if i >= bdim else i for i in dimensions)), bdim


def _pad_batch(b, args, dims, *, padding_config):
    (operand, padding_value), (operand_bdim, padding_value_bdim) = args, dims
    if operand_bdim is None:
        operand_bdim = 0
        operand = _lax_broadcast(b, operand, (aval(padding_value).shape[padding_value_bdim],))
    padding_config = list(padding_config)
    padding_config.insert(operand_bdim, (0, 0, 0))
    padding_config = tuple(padding_config)
    if padding_value_bdim is None:
        return b.pad(operand, padding_value, padding_config=padding_config), operand_bdim
    x = b.pad(operand, 0, padding_config=padding_config)
    mask = b.pad(b.full(aval(operand).shape, np.bool_, True), False, padding_config=padding_config)
    broadcasted_padding = b.broadcast_in_dim(padding_value, shape=aval(x).shape, broadcast_dimensions=(operand_bdim,))
    return b.select_n(mask, broadcasted_padding, x), operand_bdim


def _batched_at_front(b, args, dims):
    """Each operand with its batch axis first, an unbatched one broadcast to the batch (JAX's concatenate and
    stack rules)."""
    return [b.moveaxis(x, d, 0) if d is not None else _lax_broadcast(b, x, (b.axis_size,))
            for x, d in zip(args, dims)]


def _concatenate_batch(b, args, dims, *, dimension):
    operands = _batched_at_front(b, args, dims)
    if len(operands) == 1:  # as lax.concatenate, which binds nothing then
        return operands[0], 0
    return b.concatenate(*operands, dimension=dimension + 1), 0


def _stack_batch(b, args, dims, *, axis):
    bdim = dims[0]
    if bdim is not None and all(d == bdim for d in dims):
        if axis <= bdim:
            return b.stack(*args, axis=axis), bdim + 1
        return b.stack(*args, axis=axis + 1), bdim
    return b.stack(*_batched_at_front(b, args, dims), axis=axis + 1), 0


BATCH_RULES.update(broadcast_in_dim=_broadcast_in_dim_batch, reshape=_reshape_batch, squeeze=_squeeze_batch,
                   transpose=_transpose_batch, rev=_rev_batch, pad=_pad_batch, concatenate=_concatenate_batch,
                   stack=_stack_batch)

# --- slicing ------------------------------------------------------------------------------------------


def _slice_batch(b, args, dims, *, start_indices, limit_indices, strides):
    (operand,), (bdim,) = args, dims
    start, limit = list(start_indices), list(limit_indices)
    start.insert(bdim, 0)
    limit.insert(bdim, aval(operand).shape[bdim])
    if strides is not None:
        strides = list(strides)
        strides.insert(bdim, 1)
        strides = tuple(strides)
    return b.slice(operand, start_indices=tuple(start), limit_indices=tuple(limit), strides=strides), bdim


def _batch_dynamic_slice_indices(b, indices, dims):
    """The start indices as one ``[size, n]`` (batched) or ``[n]`` (shared) index array, as JAX builds it."""
    size = next((aval(x).shape[d] for x, d in zip(indices, dims) if d is not None), None)
    if size is None:
        pieces = [b.broadcast_in_dim(i, shape=(1,), broadcast_dimensions=()) for i in indices]
        return (pieces[0] if len(pieces) == 1 else b.concatenate(*pieces, dimension=0)), None
    pieces = [b.broadcast_in_dim(x, shape=(size, 1), broadcast_dimensions=(0,) if d is not None else ())
              for x, d in zip(indices, dims)]
    return (pieces[0] if len(pieces) == 1 else b.concatenate(*pieces, dimension=1)), 0


def _dynamic_slice_batch(b, args, dims, *, slice_sizes):
    """As JAX: a dynamic slice is a gather (clamped starts), batched by the gather rule."""
    operand, *starts = args
    operand_bdim, *start_bdims = dims
    axes = tuple(range(len(starts)))
    dnums = GatherDimensionNumbers(offset_dims=axes, collapsed_slice_dims=(), start_index_map=axes,
                                   operand_batching_dims=(), start_indices_batching_dims=())
    index, index_bdim = _batch_dynamic_slice_indices(b, starts, start_bdims)
    return batch_gather(b, [operand, index], [operand_bdim, index_bdim], dimension_numbers=dnums,
                         slice_sizes=slice_sizes, unique_indices=True, indices_are_sorted=True,
                         mode=GatherScatterMode.CLIP, fill_value=None)


def _dynamic_update_slice_batch(b, args, dims):
    """As JAX: a dynamic update slice is a vmapped ``scatter`` (clamped starts)."""
    operand, update, *starts = args
    operand_bdim, update_bdim, *start_bdims = dims
    axes = tuple(range(len(starts)))
    dnums = ScatterDimensionNumbers(update_window_dims=axes, inserted_window_dims=(), scatter_dims_to_operand_dims=axes,
                                    operand_batching_dims=(), scatter_indices_batching_dims=())
    index, index_bdim = _batch_dynamic_slice_indices(b, starts, start_bdims)
    return batch_scatter(b, "scatter", [operand, index, update], [operand_bdim, index_bdim, update_bdim],
                         dimension_numbers=dnums, indices_are_sorted=True, unique_indices=True,
                         mode=GatherScatterMode.CLIP, transposed=None)


BATCH_RULES.update(slice=_slice_batch, dynamic_slice=_dynamic_slice_batch,
                   dynamic_update_slice=_dynamic_update_slice_batch)

# --- dot_general --------------------------------------------------------------------------------------


def _dot_general_batch_dim_nums(ndims, batch_dims, dimension_numbers):
    """The batched op's dimension numbers and its result's batch dimension (JAX's function of this name)."""
    lhs_ndim, rhs_ndim = ndims
    lbd, rbd = batch_dims
    (lhs_contract, rhs_contract), (lhs_batch, rhs_batch) = dimension_numbers

    def bump_dims(dims, bd):
        return tuple(np.add(dims, np.greater_equal(dims, bd)))

    if lbd is not None and rbd is not None:  # the mapped axes become a new (first) batch dimension
        lhs_batch = (lbd,) + bump_dims(lhs_batch, lbd)
        rhs_batch = (rbd,) + bump_dims(rhs_batch, rbd)
        lhs_contract = bump_dims(lhs_contract, lbd)
        rhs_contract = bump_dims(rhs_contract, rbd)
        result_batch_dim = 0
    elif rbd is None:  # the left mapped axis becomes a free (tensor) dimension
        lhs_tensor = [d for d in range(lhs_ndim) if d not in lhs_batch and d not in lhs_contract]
        result_batch_dim = len(lhs_batch) + int(sum(np.less(lhs_tensor, lbd)))
        lhs_batch = bump_dims(lhs_batch, lbd)
        lhs_contract = bump_dims(lhs_contract, lbd)
    else:
        rhs_tensor = [d for d in range(rhs_ndim) if d not in rhs_batch and d not in rhs_contract]
        result_batch_dim = lhs_ndim - len(lhs_contract) + int(sum(np.less(rhs_tensor, rbd)))
        rhs_batch = bump_dims(rhs_batch, rbd)
        rhs_contract = bump_dims(rhs_contract, rbd)
    return ((lhs_contract, rhs_contract), (lhs_batch, rhs_batch)), result_batch_dim


def _dot_general_batch(b, args, dims, *, dimension_numbers, precision, preferred_element_type):
    """As JAX's; the NumPy ints of the new dimension numbers become Python ints in the attribute, as
    ``lax.dot_general`` makes them."""
    (lhs, rhs), (lbd, rbd) = args, dims
    dimension_numbers, result_stack_dim = _dot_general_batch_dim_nums(
        (len(aval(lhs).shape), len(aval(rhs).shape)), (lbd, rbd), dimension_numbers)
    out = b.dot_general(lhs, rhs, dimension_numbers=dimension_numbers, precision=precision,
                        preferred_element_type=preferred_element_type)
    return out, canonicalize_axis(result_stack_dim, len(aval(out).shape))


BATCH_RULES["dot_general"] = _dot_general_batch

# --- cumulative reductions ----------------------------------------------------------------------------


def _cumulative_batch(b, args, dims, *, axis, reverse):
    (operand,), (bdim,) = args, dims
    return b.same(operand, axis=axis if axis < bdim else axis + 1, reverse=reverse), bdim


for _name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
    BATCH_RULES[_name] = _cumulative_batch

from . import batch_rules_sort  # noqa: E402,F401  (fills BATCH_RULES with sort and top_k)
from . import batch_rules_fft  # noqa: E402,F401  (fills BATCH_RULES with fft)
from . import batch_rules_linalg  # noqa: E402,F401  (fills BATCH_RULES with cholesky, triangular_solve, lu)
from . import batch_solves  # noqa: E402,F401  (fills BATCH_RULES with custom_linear_solve)
from . import batch_rules_extras  # noqa: E402,F401  (fills BATCH_RULES with tile and optimization_barrier)
from . import batch_rules_convolution  # noqa: E402,F401  (fills BATCH_RULES with conv and windows)
from . import batch_rules_callbacks  # noqa: E402,F401  (fills BATCH_RULES with the host callbacks)
