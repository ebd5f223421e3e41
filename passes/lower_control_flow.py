"""Lowering of ``cond``, ``while`` and ``scan`` to ``stablehlo.case`` and ``stablehlo.while``, so that a loop runs
on the device with no host round trip per step. Each region calls the body function (``func.call``), which IREE
inlines; the regions read the loop's constants from above, as StableHLO allows.

A scan is a while loop over a counter, as XLA lowers it: step i slices its xs at i (``length - 1 - i`` when
reversed) and writes its ys there, into buffers that start as zeros.
"""
from __future__ import annotations

import numpy as np

from irax.ir import control_flow as CF
from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.jaxpr_view import num_consts
from irax.ir.mlir import ir
from irax.ir.params import dense_attr

from .to_stablehlo import lowering

_I32 = np.dtype(np.int32)


class _Region:
    """Emits ops into one block of a region op."""

    def __init__(self, ctx, region, arg_types):
        with ctx.loc:
            self.block = region.blocks.append(*arg_types)
        self.ctx = ctx
        self.ip = ir.InsertionPoint(self.block)
        self.args = list(self.block.arguments)

    def emit(self, name, operands, result_types, attributes=None):
        return ir.Operation.create(name, results=list(result_types), operands=list(operands),
                                   attributes=attributes or {}, loc=self.ctx.loc, ip=self.ip).results

    def call(self, name, operands):
        func = self.ctx.symbols[name]
        results = ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value).results
        return list(self.emit("func.call", operands, results, {"callee": ir.FlatSymbolRefAttr.get(name)}))

    def constant(self, value, dtype):
        t = tensor_type((), np.dtype(dtype))
        return self.emit("stablehlo.constant", [], [t], {"value": dense_attr(np.array(value, dtype), t)})[0]

    def any(self, pred):
        """Whether any element of the bool array ``pred`` is true."""
        t = tensor_type((), np.dtype(np.bool_))
        op = ir.Operation.create("stablehlo.reduce", results=[t], operands=[pred, self.constant(False, np.bool_)],
                                 attributes={"dimensions": ir.DenseI64ArrayAttr.get(
                                     list(range(len(aval_of_type(pred.type).shape))), context=self.ctx.loc.context)},
                                 regions=1, loc=self.ctx.loc, ip=self.ip)
        reducer = _Region(self.ctx, op.regions[0], [t, t])
        reducer.finish(reducer.emit("stablehlo.or", reducer.args, [t]))
        return op.results[0]

    def select(self, pred, on_true, on_false):
        """``on_true`` where ``pred`` (whose shape prefixes theirs) is true, else ``on_false``."""
        shape = aval_of_type(on_true.type).shape
        mask = self.emit("stablehlo.broadcast_in_dim", [pred], [tensor_type(shape, np.dtype(np.bool_))],
                         {"broadcast_dimensions": ir.DenseI64ArrayAttr.get(
                             list(range(len(aval_of_type(pred.type).shape))), context=self.ctx.loc.context)})[0]
        return self.emit("stablehlo.select", [mask, on_true, on_false], [on_true.type])[0]

    def finish(self, values):
        self.emit("stablehlo.return", values, [])


@lowering("cond")
def _cond(ctx, index, *operands, branches):
    args = CF.branch_operands(operands, num_consts(ctx.symbols[branches[0]]))
    op = ctx.emit("stablehlo.case", [index], [r.type for r in ctx.op.results], regions=len(branches))
    for region, name in zip(op.regions, branches):
        block = _Region(ctx, region, [])
        block.finish(block.call(name, args))
    return list(op.results)


@lowering("while")
def _while(ctx, *operands, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, carry = CF.split_while(operands, cond_nconsts, body_nconsts)
    types = [v.type for v in carry]
    op = ctx.emit("stablehlo.while", carry, types, regions=2)
    cond = _Region(ctx, op.regions[0], types)
    (pred,) = cond.call(cond_jaxpr, cond.args + cond_consts)
    batched = bool(aval_of_type(pred.type).shape)
    cond.finish([cond.any(pred)] if batched else [pred])
    body = _Region(ctx, op.regions[1], types)
    outs = body.call(body_jaxpr, body.args + body_consts)
    if batched:  # as JAX's lowering: an element whose predicate is false keeps its carry
        (pred,) = body.call(cond_jaxpr, body.args + cond_consts)
        outs = [body.select(pred, new, old) for new, old in zip(outs, body.args)]
    body.finish(outs)
    return list(op.results)


@lowering("scan")
def _scan(ctx, *operands, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, init, xs = CF.split_scan(operands, num_consts, num_carry)
    ys_types = [r.type for r in ctx.op.results[num_carry:]]
    ys_init = [ctx.broadcast(ctx.constant(0, aval_of_type(t).dtype), aval_of_type(t).shape) for t in ys_types]
    if length == 0:  # no step runs; a loop would still be checked, and slicing an empty xs is ill-typed
        return list(init) + ys_init
    counter = ctx.constant(0, _I32)
    state = [counter] + list(init) + ys_init
    types = [v.type for v in state]
    op = ctx.emit("stablehlo.while", state, types, regions=2)

    cond = _Region(ctx, op.regions[0], types)
    bound = cond.constant(length, _I32)
    less = cond.emit("stablehlo.compare", [cond.args[0], bound], [tensor_type((), np.dtype(np.bool_))],
                     {"comparison_direction": ir.Attribute.parse("#stablehlo<comparison_direction LT>")})[0]
    cond.finish([less])

    body = _Region(ctx, op.regions[1], types)
    i, carry, ys = body.args[0], body.args[1:1 + num_carry], body.args[1 + num_carry:]
    step = body.emit("stablehlo.subtract", [body.constant(length - 1, _I32), i], [i.type])[0] if reverse else i
    slices = [_slice_at(body, x, step) for x in xs]
    outs = body.call(jaxpr, list(carry) + slices + list(consts))
    new_ys = [_update_at(body, y, out, step) for y, out in zip(ys, outs[num_carry:])]
    next_i = body.emit("stablehlo.add", [i, body.constant(1, _I32)], [i.type])[0]
    body.finish([next_i] + outs[:num_carry] + new_ys)
    return list(op.results)[1:]


def _slice_at(region, x, i):
    aval = aval_of_type(x.type)
    zero = region.constant(0, _I32)
    window = region.emit("stablehlo.dynamic_slice", [x, i] + [zero] * (aval.ndim - 1),
                         [tensor_type((1,) + aval.shape[1:], aval.dtype)],
                         {"slice_sizes": ir.DenseI64ArrayAttr.get([1] + list(aval.shape[1:]))})[0]
    return region.emit("stablehlo.reshape", [window], [tensor_type(aval.shape[1:], aval.dtype)])[0]


def _update_at(region, ys, y, i):
    aval = aval_of_type(ys.type)
    zero = region.constant(0, _I32)
    window = region.emit("stablehlo.reshape", [y], [tensor_type((1,) + aval.shape[1:], aval.dtype)])[0]
    return region.emit("stablehlo.dynamic_update_slice", [ys, window, i] + [zero] * (aval.ndim - 1), [ys.type])[0]
