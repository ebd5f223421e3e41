"""Materializes the constant operands of reductions.

IREE 3.13's llvm-cpu code for a reduction whose operand is a splat constant it folded (``sum(-full(20, 4.0))``:
the producer fused into the reduction, whose body then adds a constant instead of its input) runs the wrong
number of steps unless the size is a multiple of the vector width: the sum came back as -8, not -80, and
``abs``, ``exp``, ``sqrt``, ``log`` and ``negate`` of ``jnp.full`` or ``jnp.ones`` summed wrongly at every such
size. A reduction operand computed from constants alone is read through ``optimization_barrier``, which IREE
materializes (once: it is a constant) and the reduction then reads like any tensor.
"""
from __future__ import annotations

from irax.ir.mlir import ir

from . import funcs

# Ops whose result is a constant when their operands are.
_LEAVES = {"stablehlo.constant", "stablehlo.iota"}


def guard_constant_reductions(module):
    for func in funcs.functions(module):
        reductions = []

        def visit(op):
            if op.name == "stablehlo.reduce":
                reductions.append(op)
            return ir.WalkResult.ADVANCE
        func.operation.walk(visit)
        constant = ConstantExpressions()
        for op in reductions:
            inputs = list(op.operands)[:len(op.operands) // 2]  # then one init value per input
            for i, value in enumerate(inputs):
                if constant(value):
                    barrier = ir.Operation.create("stablehlo.optimization_barrier", results=[value.type],
                                                  operands=[value], loc=op.location, ip=ir.InsertionPoint(op))
                    op.operands[i] = barrier.result


class ConstantExpressions:
    """Whether a value is computed from constants alone, by ops without regions (memoized)."""

    def __init__(self):
        self._known = {}

    def __call__(self, value) -> bool:
        if isinstance(value, ir.BlockArgument):
            return False
        op = value.owner.operation
        if op not in self._known:
            self._known[op] = op.name in _LEAVES or (
                op.name.startswith("stablehlo.") and not len(op.regions) and len(op.operands) > 0
                and op.name not in ("stablehlo.custom_call", "stablehlo.rng_bit_generator",
                                    "stablehlo.optimization_barrier")
                and all(self(v) for v in op.operands))
        return self._known[op]
