"""The reference interpreter: evaluates a jaxpr module op by op with the NumPy rules.

It is the test oracle for the compiled path: the same module, run here and by
IREE, must agree.
"""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import aval_of_type, decode_params
from irax.ir.jaxpr_view import body_ops
from irax.ir.mlir import ir
from irax.ir.ops import CALL_BODY_PARAMS, OPS

from . import numpy_rules


def _functions(module):
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module.body.operations if op.operation.name == "func.func"}


def evaluate(module, args, func_name: str = "main"):
    """Runs ``func_name`` of ``module`` on host arrays; returns the list of results."""
    return _run(_functions(module), func_name, [np.asarray(a) for a in args])


def _run(functions, name, args):
    func = functions[name]
    params = func.regions[0].blocks[0].arguments
    if len(params) != len(args):
        raise TypeError(f"@{name} takes {len(params)} arguments, got {len(args)}")
    env = dict(zip(params, args))
    for op in body_ops(func):
        if op.name == "func.return":
            return [env[v] for v in op.operands]
        operands = [env[v] for v in op.operands]
        results = _evaluate_op(functions, op, operands)
        env.update(zip(op.results, results))
    raise ValueError(f"@{name} has no return")


def _evaluate_op(functions, op, operands):
    opdef = OPS[op.name[len("jaxpr."):]]
    params = decode_params(opdef, op)
    if opdef.name in CALL_BODY_PARAMS:
        callee = params["callee"]
        return _run(functions, callee, operands[:len(functions[callee].regions[0].blocks[0].arguments)])
    avals = [aval_of_type(r.type) for r in op.results]
    return numpy_rules.evaluate(opdef.name, operands, params, avals)
