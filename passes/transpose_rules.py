"""The transpose rule of every linear primitive, each a port of JAX's (``jax/_src/lax/lax.py``).

``rule(b, ct, *operands, **params)`` returns one cotangent per operand (``None``
for operands that are not linear or get nothing); linear operands come as
``Undefined`` with their aval.
"""
from __future__ import annotations

import functools

import numpy as np

from irax.ir.shapes import split_axes

from . import ad_util as U
from .builder import aval
from .transpose import TRANSPOSE_RULES, is_undefined


def _operand_aval(x):
    return x.aval if is_undefined(x) else aval(x)


def _add_transpose(b, ct, x, y):
    return [U.unbroadcast(b, _operand_aval(x), ct), U.unbroadcast(b, _operand_aval(y), ct)]


def _sub_transpose(b, ct, x, y):
    return [U.unbroadcast(b, _operand_aval(x), ct), U.unbroadcast(b, _operand_aval(y), b.neg(ct))]


def _mul_transpose(b, ct, x, y):
    if is_undefined(x):
        return [U.unbroadcast(b, x.aval, b.mul(ct, y)), None]
    return [None, U.unbroadcast(b, y.aval, b.mul(x, ct))]


def _div_transpose(b, ct, x, y):
    if is_undefined(y):
        raise ValueError("nonlinear div can't be transposed")
    return [U.unbroadcast(b, x.aval, b.div(ct, y)), None]


TRANSPOSE_RULES.update({
    "add": _add_transpose, "add_any": lambda b, ct, x, y: [ct, ct], "sub": _sub_transpose, "mul": _mul_transpose,
    "div": _div_transpose, "neg": lambda b, ct, x: [b.neg(ct)], "copy": lambda b, ct, x: [b.copy(ct)],
})


def _reduce_sum_transpose(b, ct, operand, *, axes, out_sharding):
    shape = operand.aval.shape
    dims = tuple(np.delete(np.arange(len(shape)), axes))  # NumPy ints, printed as JAX prints them
    return [U.broadcast_in_dim(b, ct, shape, dims)]


def _broadcast_in_dim_transpose(b, ct, operand, *, shape, broadcast_dimensions, sharding):
    if not is_undefined(operand):
        return [None]
    unit_dims = [i for i, s in enumerate(operand.aval.shape) if s == 1]
    bdims = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
    axes = tuple(i for i in range(len(shape)) if i not in bdims)
    return [U.expand_dims(b, b.reduce_sum(ct, axes=axes), unit_dims)]


def _reshape_transpose(b, ct, operand, *, new_sizes, dimensions, sharding):
    if dimensions is None:
        return [b.reshape(ct, new_sizes=operand.aval.shape, dimensions=None)]
    transposed = tuple(operand.aval.shape[d] for d in dimensions)
    return [b.transpose(b.reshape(ct, new_sizes=transposed, dimensions=None),
                        permutation=tuple(int(d) for d in np.argsort(dimensions)))]


def _convert_element_type_transpose(b, ct, operand, *, new_dtype, weak_type):
    """Types carry no weak flag; a same-dtype conversion exists only to change it, so it is flipped back."""
    old_dtype = operand.aval.dtype
    return [b.convert_element_type(ct, new_dtype=old_dtype, weak_type=old_dtype == new_dtype and not weak_type)]


def _select_n_transpose(b, ct, which, *cases):
    zeros = b.full_like(ct, 0)
    if aval(which).dtype == np.bool_:
        ct0 = U.select(b, which, zeros, ct) if is_undefined(cases[0]) else None
        ct1 = U.select(b, which, ct, zeros) if is_undefined(cases[1]) else None
        return [None, ct0, ct1]
    return [None] + [U.select(b, b.eq(which, i), ct, zeros) if is_undefined(case) else None
                     for i, case in enumerate(cases)]


def _dot_general_transpose_lhs(b, ct, x, y, *, dimension_numbers, precision, preferred_element_type,
                               swap_ans=False):
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    x_ndim = len(_operand_aval(x).shape)
    y_ndim = len(_operand_aval(y).shape)
    x_kept = _remaining(range(x_ndim), x_contract, x_batch)
    y_kept = _remaining(range(y_ndim), y_contract, y_batch)
    if swap_ans:
        ans_batch, ans_y, _ = _ranges_like(x_batch, y_kept, x_kept)
    else:
        ans_batch, _, ans_y = _ranges_like(x_batch, x_kept, y_kept)
    dims = ((tuple(ans_y), tuple(y_kept)), (tuple(ans_batch), tuple(y_batch)))
    x_contract_sorted_by_y = [x_contract[i] for i in np.argsort(y_contract)]
    out_axes = np.argsort(list(x_batch) + x_kept + x_contract_sorted_by_y)
    out = b.dot_general(ct, y, dimension_numbers=dims, precision=precision,
                        preferred_element_type=preferred_element_type)
    x_bar = U.transpose(b, out, tuple(int(a) for a in out_axes))
    x_dtype = _operand_aval(x).dtype
    if aval(x_bar).dtype != x_dtype:
        x_bar = b.convert_element_type(x_bar, new_dtype=x_dtype, weak_type=False)
    return x_bar


def _dot_general_transpose(b, ct, x, y, *, dimension_numbers, precision, preferred_element_type):
    if is_undefined(x):
        return [_dot_general_transpose_lhs(b, ct, x, y, dimension_numbers=dimension_numbers, precision=precision,
                                           preferred_element_type=preferred_element_type), None]
    (x_contract, y_contract), (x_batch, y_batch) = dimension_numbers
    swapped = ((y_contract, x_contract), (y_batch, x_batch))
    return [None, _dot_general_transpose_lhs(b, ct, y, x, dimension_numbers=swapped, precision=precision,
                                             preferred_element_type=preferred_element_type, swap_ans=True)]


def _remaining(original, *removed_lists):
    removed = set().union(*removed_lists)
    return [i for i in original if i not in removed]


def _ranges_like(*xs):
    start = 0
    for x in xs:
        n = len(x)
        yield range(start, start + n)
        start += n


TRANSPOSE_RULES.update({
    "reduce_sum": _reduce_sum_transpose, "broadcast_in_dim": _broadcast_in_dim_transpose,
    "reshape": _reshape_transpose, "convert_element_type": _convert_element_type_transpose,
    "select_n": _select_n_transpose, "dot_general": _dot_general_transpose,
    "transpose": lambda b, ct, x, *, permutation: [U.transpose(b, ct, tuple(int(a) for a in np.argsort(permutation)))],
    "squeeze": lambda b, ct, x, *, dimensions: [U.expand_dims(b, ct, dimensions)],
})


def _pad_transpose(b, ct, operand, padding_value, *, padding_config):
    """The operand's cotangent is ct unpadded: negative low/high padding crops, a strided slice drops the interior;
    the padding value's is what remains of ct's total. JAX unpads only for a linear operand, so it fails when just
    the padding value is linear; here the padding value's share then unpads too."""
    ndim = len(padding_config)

    def total(x):
        return b.reduce_sum(x, axes=tuple(range(ndim)))

    lo, hi, interior = (np.array(column, np.int64) for column in zip(*padding_config)) if ndim else ((),) * 3

    def t_op():  # NumPy ints, as JAX's rule computes them (they print as np.int64(...))
        unpadded = b.pad(ct, 0.0, padding_config=tuple(zip(np.negative(lo), np.negative(hi), np.zeros_like(interior))))
        return b.slice(unpadded, start_indices=tuple(np.zeros_like(lo)), limit_indices=aval(unpadded).shape,
                       strides=tuple(np.add(interior, 1)))

    t_operand = t_op() if is_undefined(operand) or is_undefined(padding_value) else None
    t_padv = b.sub(total(ct), total(t_operand)) if is_undefined(padding_value) else None
    return [t_operand if is_undefined(operand) else None, t_padv]


def _slice_transpose(b, ct, operand, *, start_indices, limit_indices, strides):
    """Pads ct back to the operand's shape with zeros; a stride's gaps become interior padding."""
    shape = operand.aval.shape
    if strides is None or all(s == 1 for s in strides):
        pads = zip(start_indices, np.subtract(shape, limit_indices), (0,) * len(start_indices))
    else:
        ct_shape = np.array(aval(ct).shape)
        real_limits = np.add(start_indices, np.where(ct_shape == 0, 0, 1 + (ct_shape - 1) * np.array(strides)))
        pads = zip(start_indices, np.subtract(shape, real_limits), np.subtract(strides, 1))
    return [b.pad(ct, 0, padding_config=tuple(pads))]


def _concatenate_transpose(b, ct, *operands, dimension):
    """One ``split`` of ct; the pieces of operands that are not linear are dropped."""
    pieces = b.bind("split", ct, sizes=tuple(_operand_aval(o).shape[dimension] for o in operands), axis=dimension)
    return [p if is_undefined(o) else None for p, o in zip(pieces, operands)]


def _split_transpose(b, cts, operand, *, sizes, axis):
    """The pass gives a multi-result op every cotangent (zeros instantiated), a one-piece split its only one."""
    return [b.concatenate(*(cts if isinstance(cts, list) else [cts]), dimension=axis)]


def _stack_transpose(b, ct, *operands, axis):
    """JAX's ``_stack_transpose_rule``: the cotangent unstacked, a piece for each linear operand."""
    pieces = b.bind("unstack", ct, axis=axis)
    return [p if is_undefined(o) else None for p, o in zip(pieces, operands)]


def _complex_transpose(b, ct, x, y):
    return [U.unbroadcast(b, x.aval, b.real(ct)) if is_undefined(x) else None,
            U.unbroadcast(b, y.aval, b.imag(b.neg(ct))) if is_undefined(y) else None]


def _conj_transpose(b, ct, x, *, input_dtype):
    if np.issubdtype(x.aval.dtype, np.complexfloating):
        return [b.conj(ct, input_dtype=x.aval.dtype)]
    return [b.real(ct)]


def _dynamic_slice_transpose(b, ct, operand, *start_indices, slice_sizes):
    zeros = b.full(operand.aval.shape, operand.aval.dtype, 0)
    return [b.dynamic_update_slice(zeros, ct, *start_indices)] + [None] * len(start_indices)


def _dynamic_update_slice_transpose(b, ct, operand, update, *start_indices):
    """The zeros for the update's window are made even when only the update is linear, as in JAX."""
    update_shape = _operand_aval(update).shape
    zeros = b.full(update_shape, aval(ct).dtype, 0)
    operand_t = b.dynamic_update_slice(ct, zeros, *start_indices) if is_undefined(operand) else None
    update_t = b.dynamic_slice(ct, *start_indices, slice_sizes=update_shape) if is_undefined(update) else None
    return [operand_t, update_t] + [None] * len(start_indices)


TRANSPOSE_RULES.update({
    "pad": _pad_transpose, "slice": _slice_transpose, "concatenate": _concatenate_transpose,
    "split": _split_transpose,
    "stack": _stack_transpose, "rev": lambda b, ct, x, *, dimensions: [b.rev(ct, dimensions=dimensions)],
    "real": lambda b, ct, x: [b.complex(ct, 0.0)], "imag": lambda b, ct, x: [b.complex(0.0, b.neg(ct))],
    "complex": _complex_transpose, "conj": _conj_transpose,
    "cumsum": lambda b, ct, x, *, axis, reverse: [b.cumsum(ct, axis=axis, reverse=not reverse)],
    "dynamic_slice": _dynamic_slice_transpose, "dynamic_update_slice": _dynamic_update_slice_transpose,
})


def _call_transpose(primitive, b, cts, *operands, callee, **params):
    """A call of a linear function: a call of its transpose (made once per callee), as JAX transposes jit
    and remat."""
    from . import funcs
    from .linearize import NUM_RESIDUALS_ATTR
    from .transpose import transpose_function
    func = funcs.lookup(b.module, callee)
    n_res = funcs.int_attribute(func, NUM_RESIDUALS_ATTR)
    if any(is_undefined(x) for x in operands[:n_res]):
        raise NotImplementedError(f"transposing a call of @{callee} whose linear operands are not its arguments "
                                  "after its jaxpr.num_residuals residuals")
    transposed = funcs.symbols(b.module).get(f"{callee}_t") or transpose_function(b.module, func)
    cts = cts if isinstance(cts, list) else [cts]
    outs = b.call(transposed, list(operands[:n_res]) + cts, primitive, **params)
    return [None] * n_res + [g if is_undefined(x) else None for g, x in zip(outs, operands[n_res:])]


TRANSPOSE_RULES["pjit"] = functools.partial(_call_transpose, "pjit")
TRANSPOSE_RULES["checkpoint"] = functools.partial(_call_transpose, "checkpoint")
TRANSPOSE_RULES["name"] = lambda b, ct, x, *, name: [ct]


# --- collectives over named axes ----------------------------------------------------------------------

def _psum_transpose(b, ct, x, *, axes, axis_index_groups):
    """Positional axes transpose as reduce_sum's; JAX reads psum as psum + pbroadcast, so the named axes are
    summed again (a psum with no axes left is still bound, as JAX binds it)."""
    names, positional = split_axes(axes)
    if positional:
        ct, = _reduce_sum_transpose(b, ct, x, axes=positional, out_sharding=None)
    return [b.psum(ct, axes=names, axis_index_groups=None)]


def _ppermute_transpose(b, ct, x, *, axis_name, perm):
    """JAX's ``_ppermute_transpose_rule``: the cotangents sent back, by the inverse permutation."""
    return [b.ppermute(ct, axis_name=axis_name, perm=tuple((dst, src) for src, dst in perm))]


def _all_to_all_transpose(b, ct, x, *, split_axis, concat_axis, **params):
    """The chunks sent back: split and concatenation axes swapped."""
    return [b.all_to_all(ct, split_axis=concat_axis, concat_axis=split_axis, **params)]


def _all_gather_transpose(b, ct, x, *, all_gather_dimension, axis_name, axis_index_groups, axis_size, tiled):
    return [b.reduce_scatter(ct, axis_name=axis_name, scatter_dimension=all_gather_dimension,
                             axis_index_groups=None, axis_size=axis_size, tiled=tiled)]


def _reduce_scatter_transpose(b, ct, x, *, axis_name, scatter_dimension, axis_index_groups, axis_size, tiled):
    return [b.all_gather(ct, all_gather_dimension=scatter_dimension, axis_name=axis_name, axis_index_groups=None,
                         axis_size=axis_size, tiled=tiled)]


TRANSPOSE_RULES.update({"psum": _psum_transpose, "ppermute": _ppermute_transpose,
                        "all_to_all": _all_to_all_transpose, "all_gather": _all_gather_transpose,
                        "reduce_scatter": _reduce_scatter_transpose})


from . import ad_rules_gather_scatter  # noqa: E402,F401  (fills JVP_RULES and TRANSPOSE_RULES for gather/scatter)
from . import ad_rules_linalg  # noqa: E402,F401  (fills JVP_RULES and TRANSPOSE_RULES for linalg)
from . import ad_rules_decompositions  # noqa: E402,F401  (fills JVP_RULES for eigh, svd and qr)
from . import ad_rules_convolution  # noqa: E402,F401  (fills JVP_RULES and TRANSPOSE_RULES for conv/windows)
from . import ad_rules_fft  # noqa: E402,F401  (fills JVP_RULES and TRANSPOSE_RULES for fft)
