"""``einsum`` and ``einsum_path``: the pairwise contraction order ``opt_einsum`` picks, each pair one ``dot_general``.

The order decides both the cost of a many-operand einsum and the program's text, so irax takes it from
``opt_einsum`` as JAX does, and contracts each pair as JAX's ``_einsum``: labels only one side holds summed out
first, repeated labels masked with a Kronecker delta, and the operands of each ``dot_general`` in the order that
needs no transpose where one does.
"""
from __future__ import annotations

import collections

import numpy as np

from .. import dtypes, lax
from irax.lax._scalars import as_operand

from ._util import check_arraylike, convert

__all__ = ["einsum", "einsum_path"]


def _opt_einsum():
    """``opt_einsum``, imported on first use (30 ms that ``import irax`` need not pay)."""
    import opt_einsum
    return opt_einsum


def _path_type(optimize):
    if optimize is False:  # JAX's Unoptimized: contract the first two operands, again and again
        class Unoptimized(_opt_einsum().paths.PathOptimizer):
            def __call__(self, inputs, *args, **kwargs):
                return [(0, 1)] * (len(inputs) - 1)
        return Unoptimized()
    return "optimal" if optimize is True else optimize


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The pairwise contraction path for ``einsum(subscripts, *operands)`` and a printable description of it.

    Args:
      optimize: True ('optimal'), False (left to right), or any strategy name ``opt_einsum`` knows.
    """
    return _opt_einsum().contract_path(subscripts, *operands, optimize=_path_type(optimize))


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None, preferred_element_type=None,
           _dot_general=lax.dot_general, out_sharding=None):
    """Einstein summation (``...`` broadcasting, repeated labels, NumPy's interleaved form
    ``einsum(x, [0, 1], y, [1, 2], [0, 2])``)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.einsum is not supported.")
    operands, contractions = _opt_einsum().contract_path(subscripts, *operands, einsum_call=True, use_blas=True,
                                                         optimize=_path_type(optimize))
    check_arraylike("einsum", *operands)
    operands = [as_operand(x) for x in operands]
    if preferred_element_type is None:
        preferred_element_type, weak_type = dtypes.result_type(*operands, return_weak_type_flag=True)
    else:
        preferred_element_type, weak_type = dtypes.canonicalize_dtype(preferred_element_type), False
    for indices, contracted, einstr, *_ in contractions:
        inputs, result_names = einstr.split("->")
        contract = _contract_one if len(indices) == 1 else _contract_pair
        operand, names = contract([operands.pop(i) for i in indices], inputs.split(","), sorted(contracted),
                                  result_names, precision, preferred_element_type, _dot_general)
        if names != result_names:
            operand = lax.transpose(operand, tuple(names.index(name) for name in result_names))
        operands.append(operand)
    return convert(operands[0], preferred_element_type, weak_type)


def _contract_one(operands, input_names, contracted, result_names, precision, dtype, dot_general):
    (operand,), (names,) = operands, input_names
    counts = collections.Counter(names)
    operand, names = _sum_uniques(operand, names, [n for n in contracted if counts[n] == 1], dtype)
    return _sum_repeats(operand, names, counts, result_names, dtype)


def _contract_pair(operands, input_names, contracted, result_names, precision, dtype, dot_general):
    (lhs, rhs), (lhs_names, rhs_names) = operands, input_names
    lhs, lhs_names = _drop_singletons(lhs, lhs_names, rhs.shape, rhs_names)
    rhs, rhs_names = _drop_singletons(rhs, rhs_names, lhs.shape, lhs_names)
    lhs_counts, rhs_counts = collections.Counter(lhs_names), collections.Counter(rhs_names)
    lhs, lhs_names = _sum_uniques(lhs, lhs_names, [n for n in contracted if lhs_counts[n] == 1 and not rhs_counts[n]],
                                  dtype)
    rhs, rhs_names = _sum_uniques(rhs, rhs_names, [n for n in contracted if rhs_counts[n] == 1 and not lhs_counts[n]],
                                  dtype)
    lhs, lhs_names = _sum_repeats(lhs, lhs_names, lhs_counts, result_names + rhs_names, dtype)
    rhs, rhs_names = _sum_repeats(rhs, rhs_names, rhs_counts, result_names + lhs_names, dtype)
    contracted = [n for n in contracted if n in set(lhs_names) | set(rhs_names)]
    shared = set(lhs_names) & set(rhs_names)
    batch = "".join(n for n in result_names if n in shared)
    for n in contracted:
        if lhs.shape[lhs_names.index(n)] != rhs.shape[rhs_names.index(n)]:
            raise ValueError(f"einsum: label {n!r} has sizes {lhs.shape[lhs_names.index(n)]} and "
                             f"{rhs.shape[rhs_names.index(n)]}")
    lhs_dims = ([lhs_names.index(n) for n in contracted], [lhs_names.index(n) for n in batch])
    rhs_dims = ([rhs_names.index(n) for n in contracted], [rhs_names.index(n) for n in batch])
    deleted = batch + "".join(contracted)
    lhs_rest, rhs_rest = _removechars(lhs_names, deleted), _removechars(rhs_names, deleted)
    # opt_einsum contracts right to left: (rhs, lhs) is the order likelier to need no transpose
    if batch + rhs_rest + lhs_rest == result_names:
        names, first, second = batch + rhs_rest + lhs_rest, (rhs, rhs_dims), (lhs, lhs_dims)
    else:
        names, first, second = batch + lhs_rest + rhs_rest, (lhs, lhs_dims), (rhs, rhs_dims)
    (a, (a_contract, a_batch)), (b, (b_contract, b_batch)) = first, second
    dimension_numbers = ((tuple(a_contract), tuple(b_contract)), (tuple(a_batch), tuple(b_batch)))
    return dot_general(a, b, dimension_numbers, precision, preferred_element_type=dtype), names


def _sum(x, axes, dtype):
    if dtypes.result_type(x, dtype) != x.dtype:
        x = x.astype(dtype)
    return lax.reduce(x, np.array(0, x.dtype), lax.add if x.dtype != np.bool_ else lax.bitwise_or, tuple(axes))


def _sum_uniques(operand, names, uniques, dtype):
    if uniques:
        operand = _sum(operand, [names.index(n) for n in uniques], dtype)
        names = _removechars(names, uniques)
    return operand, names


def _sum_repeats(operand, names, counts, keep_names, dtype):
    """Each label an operand repeats: the entries off its diagonal masked to zero, then summed out, once kept."""
    for name, count in counts.items():
        if count > 1:
            axes = [i for i, n in enumerate(names) if n == name]
            operand = lax.select(_delta(operand.shape, axes), operand, lax.full_like(operand, 0))
            if name not in keep_names:
                operand = _sum(operand, axes, dtype)
                names = names.replace(name, "")
            else:
                operand = _sum(operand, axes[:-1], dtype)
                names = names.replace(name, "", count - 1)
    return operand, names


def _delta(shape, axes):
    """JAX's ``lax._delta``: true where the indices along ``axes`` are all equal."""
    base = tuple(shape[a] for a in axes)
    iotas = [lax.broadcasted_iota(np.uint32, base, i) for i in range(len(base))]
    eyes = [lax.eq(a, b) for a, b in zip(iotas[:-1], iotas[1:])]
    result = eyes[0]
    for eye in eyes[1:]:
        result = lax.bitwise_and(result, eye)
    return lax.broadcast_in_dim(result, tuple(shape), tuple(axes))


def _drop_singletons(operand, names, other_shape, other_names):
    """Size-1 axes whose label the other operand holds with another size are squeezed (NumPy's broadcasting)."""
    keep = [operand.shape[i] != 1 or j == -1 or other_shape[j] == 1 for i, j in enumerate(map(other_names.find, names))]
    squeezed = tuple(i for i, k in enumerate(keep) if not k)
    if not squeezed:
        return operand, names
    return lax.squeeze(operand, squeezed), "".join(n for n, k in zip(names, keep) if k)


def _removechars(s, chars):
    return s.translate(str.maketrans(dict.fromkeys(chars)))
