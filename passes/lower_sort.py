"""Lowering of ``sort`` and ``top_k`` to ``stablehlo.sort``.

IREE 3.13 ignores ``is_stable`` (equal keys come out in any order), so every sort carries the positions along
the sorted axis as a last, least significant key: the result is the stable order, which is also an order an
unstable sort may give. The comparator of ``sort`` is JAX's ``_sort_lt_comparator``: float keys canonicalized
(-0.0 as 0.0, every NaN as one NaN) and compared in the total order, so NaN goes last.

``top_k`` is a descending sort by the total order of the raw values' bits (as XLA's TopK: -NaN < -inf < -0.0 <
0.0 < inf < NaN) sliced to its first ``k``: IREE's ``chlo.top_k`` returns ``-inf`` with the index of a NaN.

The other IREE 3.13 problems worked around here are described where they are: one value given to a sort twice
(``_sort_with_positions``), an iota shared by two sorts (``_positions``), bfloat16 NaNs (``_as_bits``).
"""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.mlir import ir
from irax.ir.params import dense_attr
from irax.ir.shapes import issubdtype

from .to_stablehlo import _HALF, _attr, _compare_type, lowering

_BOOL = np.dtype(np.bool_)
_F32 = np.dtype(np.float32)


class _Comparator:
    """Emits a sort comparator's ops into its block, on scalar tensors."""

    def __init__(self, ctx, block):
        self.loc, self.ip = ctx.loc, ir.InsertionPoint(block)

    def op(self, name, operands, dtype, **attrs):
        return ir.Operation.create(name, results=[tensor_type((), dtype)], operands=list(operands),
                                   attributes={k: _attr(v) for k, v in attrs.items()}, loc=self.loc,
                                   ip=self.ip).result

    def constant(self, value, dtype):
        t = tensor_type((), dtype)
        return ir.Operation.create("stablehlo.constant", results=[t], attributes={
            "value": dense_attr(np.array(value, dtype), t)}, loc=self.loc, ip=self.ip).result

    def compare(self, x, y, direction, kind):
        return self.op("stablehlo.compare", [x, y], _BOOL,
                       comparison_direction=f"#stablehlo<comparison_direction {direction}>",
                       compare_type=f"#stablehlo<comparison_type {kind}>")

    def ret(self, value):
        ir.Operation.create("stablehlo.return", results=[], operands=[value], loc=self.loc, ip=self.ip)


def _scalar_keys(cmp, x, dtype):
    """The keys of one comparator argument of ``dtype`` (given as its bits if half precision), most significant
    first, each with its comparison type."""
    if dtype in _HALF:
        x = cmp.op("stablehlo.bitcast_convert", [x], dtype)
    if issubdtype(dtype, np.complexfloating):
        part = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        return [k for p in ("real", "imag") for k in _scalar_keys(cmp, cmp.op(f"stablehlo.{p}", [x], part), part)]
    if not issubdtype(dtype, np.floating):
        return [(x, _compare_type(dtype))]
    if dtype in _HALF:  # exact, and order preserving
        x, dtype = cmp.op("stablehlo.convert", [x], _F32), _F32
    # JAX's _canonicalize_float_for_sort
    x = cmp.op("stablehlo.select", [cmp.compare(x, cmp.constant(0, dtype), "EQ", "FLOAT"), cmp.constant(0, dtype), x],
               dtype)
    x = cmp.op("stablehlo.select", [cmp.compare(x, x, "NE", "FLOAT"), cmp.constant(np.nan, dtype), x], dtype)
    return [(x, "TOTALORDER")]


def _lexicographic(cmp, keys):
    """Whether a goes before b, over (a key, b key, comparison type, direction) from the most significant, as
    ``_sort_lt_comparator`` folds them from the least significant."""
    result = None
    for a, b, kind, direction in reversed(keys):
        first = cmp.compare(a, b, direction, kind)
        if result is not None:
            tie = cmp.op("stablehlo.and", [cmp.compare(a, b, "EQ", kind), result], _BOOL)
            first = cmp.op("stablehlo.or", [first, tie], _BOOL)
        result = first
    return result


def _is_positions(value, dimension):
    """Whether ``value`` is an iota along ``dimension``: sorted, it is the sorted positions (converted)."""
    owner = value.owner
    op = owner if isinstance(owner, ir.Operation) else getattr(owner, "operation", None)
    return (op is not None and op.name == "stablehlo.iota"
            and ir.IntegerAttr(op.attributes["iota_dimension"]).value == dimension)


def _positions(ctx, shape, dimension):
    """An iota along ``dimension`` that no other sort of the module shares.

    IREE 3.13 sorts its operands in place: two sorts given one iota (IREE's CSE merges equal ones) write into
    one buffer, and a later sort whose keys come from an earlier sort's positions then reads clobbered values.
    So each sort's iota is ``(iota + c) - c`` with a constant ``c`` of its own, the addition in int64 and the
    subtraction after the conversion to int32, which IREE does not fold away."""
    c = _sorts_in_module(ctx.op) + 1
    wide = tensor_type(shape, np.dtype(np.int64))
    iota = ctx.emit1("stablehlo.iota", [], wide, iota_dimension=dimension)
    shifted = ctx.emit1("stablehlo.add", [iota, ctx.constant(c, np.int64, shape)], wide)
    if shape[dimension] >= 2 ** 31:
        return ctx.emit1("stablehlo.subtract", [shifted, ctx.constant(c, np.int64, shape)], wide)
    narrow = ctx.emit1("stablehlo.convert", [shifted], tensor_type(shape, np.dtype(np.int32)))
    return ctx.emit1("stablehlo.subtract", [narrow, ctx.constant(c, np.int32, shape)], narrow.type)


def _sorts_in_module(op):
    top = op.operation
    while top.parent is not None:
        top = top.parent.operation
    count = 0

    def visit(o):
        nonlocal count
        count += o.name == "stablehlo.sort"
        return ir.WalkResult.ADVANCE
    top.walk(visit, ir.WalkOrder.PRE_ORDER)
    return count


def _as_bits(ctx, x):
    """Half-precision operands travel through the sort as their bits: IREE's sort of bfloat16 values widens them
    and turns -NaN into NaN."""
    a = aval_of_type(x.type)
    if a.dtype not in _HALF:
        return x
    return ctx.emit1("stablehlo.bitcast_convert", [x], tensor_type(a.shape, np.dtype(np.int16)))


def _sort_with_positions(ctx, operands, dimension, num_keys, direction):
    """``stablehlo.sort`` of ``operands`` and the positions along ``dimension`` (ascending among equal keys,
    whichever the keys' ``direction``); returns a result per operand, then the sorted positions.

    Each distinct value is sorted once, and an iota along ``dimension`` is the positions converted: IREE 3.13
    fails to compile ("write affecting operations on global resources are restricted to workgroup distributed
    contexts") a sort of more than one axis given one value twice, and misorders the results of one given an
    iota that another sort shares (see ``_positions``). An ``optimization_barrier`` in front avoids the first
    failure, but then a sort whose input depends on another sort's positions reads the wrong values."""
    shape = aval_of_type(operands[0].type).shape
    positions = _positions(ctx, shape, dimension)
    unique, slots = [], []
    for value in list(operands) + [positions]:
        if _is_positions(value, dimension):
            value = positions
        if value not in unique:
            unique.append(value)
        slots.append(unique.index(value))
    dtypes = [aval_of_type(u.type).dtype for u in unique]
    inputs = [_as_bits(ctx, u) for u in unique]
    op = ctx.emit("stablehlo.sort", inputs, [x.type for x in inputs],
                  {"dimension": _attr(int(dimension)), "is_stable": _attr(True)}, regions=1)
    block = ctx.region_block(op, [tensor_type((), aval_of_type(x.type).dtype) for x in inputs for _ in range(2)])
    cmp = _Comparator(ctx, block)
    args = list(block.arguments)
    keys = []
    for slot in slots[:num_keys]:
        a_keys = _scalar_keys(cmp, args[2 * slot], dtypes[slot])
        b_keys = _scalar_keys(cmp, args[2 * slot + 1], dtypes[slot])
        keys += [(a, b, kind, direction) for (a, kind), (b, _) in zip(a_keys, b_keys)]
    a, b = args[2 * slots[-1]], args[2 * slots[-1] + 1]
    cmp.ret(_lexicographic(cmp, keys + [(a, b, _compare_type(aval_of_type(a.type).dtype), "LT")]))
    sorted_unique = [r if r.type == u.type else ctx.emit1("stablehlo.bitcast_convert", [r], u.type)
                     for r, u in zip(op.results, unique)]
    results = [sorted_unique[k] for k in slots]
    return [r if r.type == x.type else ctx.emit1("stablehlo.convert", [r], x.type)
            for r, x in zip(results, list(operands) + [positions])]


@lowering("sort")
def _sort(ctx, *operands, dimension, is_stable, num_keys):
    shape = aval_of_type(operands[0].type).shape
    if shape[dimension] <= 1 or 0 in shape:
        return list(operands)
    return _sort_with_positions(ctx, operands, dimension, num_keys, "LT")[:-1]


def _total_order_key(ctx, x):
    """An integer tensor ordered as ``x`` in the total order of its bits, computed outside the sort (where a
    NaN's sign survives)."""
    a = aval_of_type(x.type)
    if a.dtype == _BOOL or not issubdtype(a.dtype, np.floating):
        return x
    bits_dtype = np.dtype(f"i{a.dtype.itemsize}")
    bits = ctx.emit1("stablehlo.bitcast_convert", [x], tensor_type(a.shape, bits_dtype))
    negative = ctx.emit1("stablehlo.compare", [bits, ctx.constant(0, bits_dtype, a.shape)],
                         tensor_type(a.shape, _BOOL), comparison_direction="#stablehlo<comparison_direction LT>",
                         compare_type="#stablehlo<comparison_type SIGNED>")
    flipped = ctx.emit1("stablehlo.xor", [bits, ctx.constant(np.iinfo(bits_dtype).max, bits_dtype, a.shape)],
                        bits.type)
    return ctx.emit1("stablehlo.select", [negative, flipped, bits], bits.type)


@lowering("top_k")
def _top_k(ctx, x, *, k, axis):
    if ctx.result_avals[0].size == 0:
        return [ctx.constant(0, a.dtype, a.shape) for a in ctx.result_avals]
    _, sorted_x, positions = _sort_with_positions(ctx, [_total_order_key(ctx, x), x], axis, 1, "GT")
    shape = aval_of_type(x.type).shape
    limits = list(shape)
    limits[axis] = k
    window = dict(start_indices=[0] * len(shape), limit_indices=limits, strides=[1] * len(shape))
    return [ctx.emit1("stablehlo.slice", [r], tensor_type(a.shape, a.dtype), **window)
            for r, a in zip((sorted_x, positions), ctx.result_avals)]
