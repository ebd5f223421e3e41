"""The transpose rule of every linear primitive, each a port of JAX's (``jax/_src/lax/lax.py``).

``rule(b, ct, *operands, **params)`` returns one cotangent per operand (``None``
for operands that are not linear or get nothing); linear operands come as
``Undefined`` with their aval.
"""
from __future__ import annotations

import numpy as np

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
    "div": _div_transpose, "neg": lambda b, ct, x: [b.neg(ct)],
})


def _reduce_sum_transpose(b, ct, operand, *, axes, out_sharding):
    shape = operand.aval.shape
    dims = tuple(int(d) for d in np.delete(np.arange(len(shape)), axes))
    return [b.broadcast_in_dim(ct, shape=shape, broadcast_dimensions=dims)]


def _broadcast_in_dim_transpose(b, ct, operand, *, shape, broadcast_dimensions, sharding):
    if not is_undefined(operand):
        return [None]
    unit_dims = [i for i, s in enumerate(operand.aval.shape) if s == 1]
    bdims = tuple(d for i, d in enumerate(broadcast_dimensions) if i not in unit_dims)
    axes = tuple(i for i in range(len(shape)) if i not in bdims)
    return [U.expand_dims(b, b.reduce_sum(ct, axes=axes), unit_dims)]


def _reshape_transpose(b, ct, operand, *, new_sizes, dimensions, sharding):
    return [b.reshape(ct, new_sizes=operand.aval.shape, dimensions=None)]


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
