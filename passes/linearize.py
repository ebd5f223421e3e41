"""``jaxpr-linearize``: partial evaluation of a JVP function.

``@f_jvp(x, tx) -> (y, ty)`` splits into ``@f_jvp_primal(x) -> (y, residuals)``,
every op that does not depend on a tangent in its original order, and
``@f_jvp_lin(residuals, tx) -> ty``, the ops that do, which are linear in
``tx``. This is JAX's ``linearize``: the primal half is what JAX evaluates
forward, and its op order is what ``make_jaxpr(grad(f))`` prints first.
Scalar literals are re-created where used rather than passed as residuals, as
JAX inlines them.
"""
from __future__ import annotations

from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import ir

from . import funcs
from .jvp import NUM_TANGENT_ARGS_ATTR, NUM_TANGENT_RESULTS_ATTR
from .registry import register_pass
from .simplify import inline_call

NUM_RESIDUALS_ATTR = "jaxpr.num_residuals"


@register_pass("jaxpr-linearize", "Splits a JVP function @f_jvp into @f_jvp_primal (primal outputs and residuals) "
               "and @f_jvp_lin (linear in the tangents)")
def linearize_pass(module, func="main_jvp"):
    linearize_function(module, funcs.lookup(module, func))


def linearize_function(module, source):
    """Returns ``(primal, lin)``; ``source``'s arguments are params, tangents, constants (its JVP layout)."""
    if NUM_TANGENT_ARGS_ATTR not in source.attributes:
        raise ValueError(f"@{funcs.name_of(source)} is not a JVP function (run jaxpr-jvp first)")
    _inline_mixed_calls(module, source)
    args = funcs.arguments(source)
    n_tangents = funcs.int_attribute(source, NUM_TANGENT_ARGS_ATTR)
    n_tangent_results = funcs.int_attribute(source, NUM_TANGENT_RESULTS_ATTR)
    n_consts = num_consts(source)
    n_params = len(args) - n_tangents - n_consts
    params, tangents, consts = args[:n_params], args[n_params:n_params + n_tangents], args[n_params + n_tangents:]
    name = funcs.name_of(source)

    primal, primal_block = funcs.new_function(module, f"{name}_primal", [a.type for a in params + consts],
                                              after=source, loc=source.location)
    known = dict(zip(params + consts, primal_block.arguments))
    primal_ip = ir.InsertionPoint(primal_block)
    unknown = set(tangents)
    linear_ops, literals = [], {}
    returned = None
    for op in body_ops(source):
        if op.name == "func.return":
            returned = list(op.operands)
            break
        if op.name == "jaxpr.literal":
            literals[op.result] = op
        elif any(v in unknown for v in op.operands):
            linear_ops.append(op)
            unknown.update(op.results)
            continue
        clone = op.clone(ip=primal_ip)
        for i, v in enumerate(op.operands):
            clone.operands[i] = known[v]
        known.update(zip(op.results, clone.results))
    outs, tangent_outs = returned[:len(returned) - n_tangent_results], returned[len(returned) - n_tangent_results:]

    residuals = list(dict.fromkeys(v for v in [v for op in linear_ops for v in op.operands] + tangent_outs
                                   if v not in unknown and v not in literals))
    funcs.finish(primal, primal_block, [known[v] for v in outs + residuals], n_consts=n_consts)
    primal.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(residuals))

    lin, lin_block = funcs.new_function(module, f"{name}_lin", [v.type for v in residuals + tangents],
                                        after=primal, loc=source.location)
    env = dict(zip(residuals + tangents, lin_block.arguments))
    lin_ip = ir.InsertionPoint(lin_block)

    def value(v):
        if v not in env:  # a literal: re-created in the linear function
            env[v] = literals[v].clone(ip=lin_ip).result
        return env[v]

    for op in linear_ops:
        operands = [value(v) for v in op.operands]
        clone = op.clone(ip=lin_ip)
        for i, v in enumerate(operands):
            clone.operands[i] = v
        env.update(zip(op.results, clone.results))
    funcs.finish(lin, lin_block, [value(v) for v in tangent_outs])
    lin.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(residuals))
    return primal, lin


def _inline_mixed_calls(module, source):
    """Inlines each call that mixes primal and tangent operands: its primal and linear halves part ways."""
    table = funcs.symbols(module)
    changed = True
    while changed:
        changed = False
        args = funcs.arguments(source)
        n_tangents = funcs.int_attribute(source, NUM_TANGENT_ARGS_ATTR)
        n_params = len(args) - n_tangents - num_consts(source)
        unknown = set(args[n_params:n_params + n_tangents])
        for op in body_ops(source):
            if op.name == "func.return":
                break
            if any(v in unknown for v in op.operands):
                if op.name == "jaxpr.pjit":
                    inline_call(op, table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value])
                    changed = True
                    break
                unknown.update(op.results)
