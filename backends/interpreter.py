"""The reference interpreter: evaluates a jaxpr module op by op with the NumPy rules.

It is the test oracle for the compiled path: the same module, run here and by
IREE, must agree.
"""
from __future__ import annotations

import numpy as np

from irax.ir import control_flow as CF
from irax.ir import solves as SV
from irax.ir.dialect import aval_of_type, decode_params
from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import ir, module_body
from irax.ir.ops import CALL_BODY_PARAMS, OPS

from . import numpy_rules


def _functions(module):
    return {ir.StringAttr(op.attributes["sym_name"]).value: op
            for op in module_body(module).operations if op.operation.name == "func.func"}


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
    return _evaluate(functions, opdef.name, operands, [aval_of_type(r.type) for r in op.results],
                     decode_params(opdef, op))


def evaluate_primitive(module, primitive, operands, avals, params):
    """One op of the given params on host arrays, the functions it calls being those of ``module``."""
    return _evaluate(_functions(module), primitive, [np.asarray(x) for x in operands], avals, params)


def _evaluate(functions, primitive, operands, avals, params):
    if primitive in CALL_BODY_PARAMS:
        callee = params["callee"]
        return _run(functions, callee, operands[:len(functions[callee].regions[0].blocks[0].arguments)])
    if primitive in CONTROL_FLOW:
        return CONTROL_FLOW[primitive](functions, operands, avals, **params)
    if primitive == "scatter" and params["update_jaxpr"] is not None:  # scatter_apply: the rule calls the function
        name, unused = params["update_jaxpr"], np.zeros((), operands[0].dtype)
        params = {**params, "update_jaxpr": lambda x: _run(functions, name, [np.asarray(x), unused])[0]}
    return numpy_rules.evaluate(primitive, operands, params, avals)


def _cond(functions, operands, avals, *, branches, branches_platforms):
    """Out-of-range indices run the last branch (as ``stablehlo.case``); lax.switch clamps before."""
    index = int(operands[0])
    name = branches[index if 0 <= index < len(branches) else -1]
    return _run(functions, name, CF.branch_operands(operands[1:], num_consts(functions[name])))


def _while(functions, operands, avals, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    """A batched predicate (an array) runs the body while any element is true, a carry element whose
    predicate is false keeping its value."""
    cond_consts, body_consts, carry = CF.split_while(operands, cond_nconsts, body_nconsts)
    pred = _run(functions, cond_jaxpr, carry + cond_consts)[0]
    while np.any(pred):
        new = _run(functions, body_jaxpr, carry + body_consts)
        carry = [np.where(np.reshape(pred, pred.shape + (1,) * (n.ndim - pred.ndim)), n, c)
                 for n, c in zip(new, carry)]
        pred = _run(functions, cond_jaxpr, carry + cond_consts)[0]
    return carry


def _scan(functions, operands, avals, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, carry, xs = CF.split_scan(operands, num_consts, num_carry)
    ys = [np.empty(a.shape, a.dtype) for a in avals[num_carry:]]
    for i in reversed(range(length)) if reverse else range(length):
        outs = _run(functions, jaxpr, carry + [x[i] for x in xs] + consts)
        carry = outs[:num_carry]
        for y, out in zip(ys, outs[num_carry:]):
            y[i] = out
    return carry + ys


def _linear_solve(functions, operands, avals, *, const_lengths, jaxprs):
    """Runs the solve body: the other bodies serve only its derivatives."""
    consts, b = SV.split_operands(operands, const_lengths)
    return _run(functions, SV.as_tuple(jaxprs)[2], b + consts[2])


def _reduce(functions, operands, avals, *, computation, dimensions, jaxpr):
    """Each output position folds the body over its reduced elements in order (XLA's CPU order, which a
    computation that is not associative shows)."""
    n = len(operands) // 2
    xs, acc0 = operands[:n], operands[n:]
    kept = [d for d in range(xs[0].ndim) if d not in dimensions]
    rows = [np.transpose(x, kept + list(dimensions)).reshape(avals[0].shape + (-1,)) for x in xs]
    outs = [np.empty(a.shape, a.dtype) for a in avals]
    for index in np.ndindex(*avals[0].shape):
        acc = list(acc0)
        for k in range(rows[0].shape[-1]):
            acc = _run(functions, jaxpr, acc + [np.asarray(r[index + (k,)]) for r in rows])
        for out, value in zip(outs, acc):
            out[index] = value
    return outs


CONTROL_FLOW = {"cond": _cond, "while": _while, "scan": _scan, "custom_linear_solve": _linear_solve,
                "reduce": _reduce}
