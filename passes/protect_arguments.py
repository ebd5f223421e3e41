"""Copies the arguments (and shared constants) that IREE would otherwise overwrite.

IREE 3.13 lowers ``stablehlo.sort`` and a ``stablehlo.dynamic_update_slice`` at constant offsets to ops that
write into their operand's buffer, and when that operand is an argument of the program (directly, through a
reshape, or as the initial carry of a loop) it writes into the caller's buffer: ``sort(x)`` under ``jit``
sorted ``x`` itself, and a constant closed over by a jitted sampler came back permuted on the next call (IREE
issues 16168 and 24665). No copy survives IREE's clone elision, and ``x + 0`` or ``-(-x)`` fold away, so such
an argument is read through ``select(barrier(true), x, 0)``: an elementwise dispatch that writes a fresh
buffer, once at entry. Donated arguments (``iree.abi.consume`` / ``iree.abi.output``) are the caller's to lose
and keep their in-place update.
"""
from __future__ import annotations

import numpy as np

from irax.ir.avals import bfloat16
from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.params import dense_attr
from irax.ir.mlir import ir

from . import funcs
from .guard_constant_reductions import ConstantExpressions

# Ops that may update their operand's buffer in place, with the positions of those operands (None: all).
_IN_PLACE = {"stablehlo.sort": None, "stablehlo.dynamic_update_slice": (0,)}
# Ops whose result IREE may make a view of an operand's buffer.
_VIEWS = {"stablehlo.reshape", "stablehlo.bitcast_convert", "stablehlo.convert", "stablehlo.broadcast_in_dim",
          "stablehlo.optimization_barrier"}


def protect_arguments(module):
    """Reads each non-donated argument of a public function that may reach an in-place op through a copy."""
    table = funcs.symbols(module)
    calls = {}
    targets = []
    constant = ConstantExpressions()
    for func in table.values():
        for op in _walk(func):
            if op.name == "func.call":
                calls.setdefault(ir.FlatSymbolRefAttr(op.attributes["callee"]).value, []).append(op)
            if op.name in _IN_PLACE:
                positions = _IN_PLACE[op.name]
                if op.name == "stablehlo.sort":  # a dynamic_update_slice of a constant fills a fresh buffer
                    _copy_constant_operands(op, positions, constant)
                targets += [v for i, v in enumerate(op.operands) if positions is None or i in positions]
    if not targets:
        return
    reached = _Reach(table, calls)
    for value in targets:
        reached.trace(value)
    for func in table.values():
        if _is_public(func):
            args = [a for a in funcs.arguments(func) if a in reached.arguments and not _donated(func, a.arg_number)]
            if args:
                _copy_at_entry(func, args)


class _Reach:
    """The function arguments whose buffers a value may be (through views, loop carries, branches and calls)."""

    def __init__(self, table, calls):
        self.table, self.calls = table, calls
        self.arguments = set()
        self.seen = set()

    def trace(self, value):
        if value in self.seen:
            return
        self.seen.add(value)
        if isinstance(value, ir.BlockArgument):
            self._argument(value)
            return
        op, i = value.owner.operation, value.result_number
        if op.name in _VIEWS:
            self.trace(op.operands[i if op.name == "stablehlo.optimization_barrier" else 0])
        elif op.name == "stablehlo.while":
            self.trace(op.operands[i])
            self.trace(_terminator(op.regions[1]).operands[i])
        elif op.name == "stablehlo.case":
            for region in op.regions:
                self.trace(_terminator(region).operands[i])
        elif op.name == "func.call":
            callee = self.table.get(ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
            if callee is not None and len(callee.regions[0].blocks):
                self.trace(_terminator(callee.regions[0]).operands[i])

    def _argument(self, arg):
        owner = arg.owner.owner.operation
        j = arg.arg_number
        if owner.name == "func.func":
            self.arguments.add(arg)
            for call in self.calls.get(funcs.name_of(owner.opview), ()):
                self.trace(call.operands[j])
        elif owner.name == "stablehlo.while":
            self.trace(owner.operands[j])
            self.trace(_terminator(owner.regions[1]).operands[j])


def _walk(func):
    ops = []

    def visit(op):
        ops.append(op)
        return ir.WalkResult.ADVANCE
    func.operation.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops


def _terminator(region):
    return list(region.blocks[0].operations)[-1].operation


def _is_public(func):
    return "sym_visibility" not in func.attributes or ir.StringAttr(func.attributes["sym_visibility"]).value == "public"


def _donated(func, index):
    if "arg_attrs" not in func.attributes:
        return False
    attrs = ir.DictAttr(ir.ArrayAttr(func.attributes["arg_attrs"])[index])
    return "iree.abi.consume" in attrs or "iree.abi.output" in attrs


def _copy_at_entry(func, args):
    """A copy of each argument at the top of ``func``, which its uses read instead."""
    ip = ir.InsertionPoint.at_block_begin(func.regions[0].blocks[0])
    pred = _true(ip)
    for arg in args:
        copy, reader = _copy(arg, pred, ip)
        arg.replace_all_uses_except(copy, reader)


def _copy_constant_operands(op, positions, constant):
    """Sorts a copy of each operand computed from constants alone: IREE sorted such a constant in place under
    its other readers, and under those of equal constant expressions it merged with it (a sort by a broadcast
    ``iota`` that is also added to, or that ``argmax`` computes again)."""
    for i, value in enumerate(list(op.operands)):
        if (positions is None or i in positions) and constant(value):
            ip = ir.InsertionPoint(op)
            op.operands[i] = _copy(value, _true(ip), ip)[0]


def _true(ip):
    pred_type = tensor_type((), np.dtype(np.bool_))
    return _emit(ip, "stablehlo.optimization_barrier", [
        _emit(ip, "stablehlo.constant", [], pred_type, {"value": dense_attr(np.array(True), pred_type)})], pred_type)


def _emit(ip, name, operands, result_type, attributes=None):
    return ir.Operation.create(name, results=[result_type], operands=operands, attributes=attributes or {},
                               loc=ir.Location.unknown(), ip=ip).result


def _copy(x, pred, ip):
    """``select(pred, x, 0)`` with ``pred`` true behind a barrier, on the bits for floats (IREE computes a
    bfloat16 select in float32, which would change a NaN's sign and payload); and the op of it that reads ``x``."""
    aval = aval_of_type(x.type)
    bits = np.dtype(f"uint{8 * aval.dtype.itemsize}") if aval.dtype.kind == "f" or aval.dtype == bfloat16 \
        else aval.dtype
    bits_type = tensor_type(aval.shape, bits)
    source = x if bits == aval.dtype else _emit(ip, "stablehlo.bitcast_convert", [x], bits_type)
    scalar_type = tensor_type((), bits)
    zeros = _emit(ip, "stablehlo.broadcast_in_dim", [
        _emit(ip, "stablehlo.constant", [], scalar_type, {"value": dense_attr(np.zeros((), bits), scalar_type)})],
        bits_type, {"broadcast_dimensions": ir.DenseI64ArrayAttr.get([])})
    copy = _emit(ip, "stablehlo.select", [pred, source, zeros], bits_type)
    if bits == aval.dtype:
        return copy, copy.owner.operation
    return _emit(ip, "stablehlo.bitcast_convert", [copy], x.type), source.owner.operation
