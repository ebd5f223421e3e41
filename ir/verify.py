"""Checks every ``jaxpr.*`` op against its declaration in the op table.

This is the dialect's verifier (the C++ side knows nothing of jaxpr ops):
known op name, operand count, required attributes of the right kind, and
result types equal to what the op's shape rule computes. Errors name the op's
location, as MLIR's verifier does.
"""
from __future__ import annotations

from .control_flow import BODY_PARAMS, result_types
from .dialect import aval_of_type, decode_params
from .errors import VerificationError
from .jaxpr_view import body_ops, num_consts
from .mlir import ir, module_body
from .ops import OPS, VARIADIC


def _where(op) -> str:
    loc = str(op.location)
    return loc[4:-1] if loc.startswith("loc(") else loc


def verify_op(op, symbols=None):
    name = op.name[len("jaxpr."):]
    opdef = OPS.get(name)
    if opdef is None:
        raise VerificationError(f"{_where(op)}: unknown op 'jaxpr.{name}'")
    n = len(op.operands)
    if opdef.num_operands != VARIADIC and n != opdef.num_operands:
        raise VerificationError(f"{_where(op)}: 'jaxpr.{name}' expects {opdef.num_operands} operands, got {n}")
    attrs = op.attributes
    for p in opdef.params:
        if not p.kind.stored:
            continue
        if p.name not in attrs:
            if _optional(p.kind):
                continue
            raise VerificationError(f"{_where(op)}: 'jaxpr.{name}' requires attribute '{p.name}'")
        try:
            attr = attrs[p.name]
        except TypeError as e:  # the bindings cannot read some attributes back, e.g. complex dense ones
            raise VerificationError(f"{_where(op)}: 'jaxpr.{name}' attribute '{p.name}' cannot be read: {e}; "
                                    "write a complex scalar as [re, im]") from None
        if not p.kind.check(attr):
            raise VerificationError(f"{_where(op)}: 'jaxpr.{name}' attribute '{p.name}' has the wrong kind: "
                                    f"{attr}")
    try:
        avals_in = [aval_of_type(v.type) for v in op.operands]
        params = decode_params(opdef, op)
        if opdef.name in BODY_PARAMS:
            expected = result_types(op, params, symbols or {})
        elif opdef.rule is None:
            expected = _call_results(op, symbols)
        else:
            expected = [a.mlir_type_str() for a in opdef.result_avals(avals_in, params)]
    except (TypeError, ValueError) as e:
        raise VerificationError(f"{_where(op)}: 'jaxpr.{name}' is invalid: {e}") from None
    got = [str(r.type) for r in op.results]
    if expected is not None and got != expected:
        raise VerificationError(f"{_where(op)}: 'jaxpr.{name}' result types {got} differ from the types its "
                                f"shape rule gives, {expected}")


def _optional(kind) -> bool:
    from .params import Optional
    return isinstance(kind, Optional)


def _function(op, symbols, attr):
    callee = ir.FlatSymbolRefAttr(op.attributes[attr]).value
    func = (symbols or {}).get(callee)
    if func is None:
        raise ValueError(f"calls unknown function @{callee}")
    return callee, ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value), func


def _call_results(op, symbols):
    """A call's results are its callee's; the callee takes the leading operands (see ``CALL_BODY_PARAMS``)."""
    if op.name == "jaxpr.custom_lin":
        _, ftype, func = _function(op, symbols, "bwd_callee")
        inputs = [str(t) for t in ftype.inputs]
        n_consts = num_consts(func)
        n_res = ir.IntegerAttr(op.attributes["num_res"]).value - n_consts
        return inputs[n_res:len(inputs) - n_consts]
    callee, ftype, _ = _function(op, symbols, "callee")
    inputs = [str(t) for t in ftype.inputs]
    if inputs != [str(v.type) for v in op.operands][:len(inputs)]:
        raise ValueError(f"operand types do not match @{callee}'s signature {ftype}")
    return [str(t) for t in ftype.results]


def verify_module(module):
    symbols = {ir.StringAttr(f.attributes["sym_name"]).value: f
               for f in module_body(module).operations if "sym_name" in f.attributes}
    for func in symbols.values():
        if func.operation.name != "func.func":
            continue
        for op in body_ops(func):
            if op.name.startswith("jaxpr."):
                verify_op(op, symbols)
