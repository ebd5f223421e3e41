"""``jaxpr-linearize``: partial evaluation of a JVP function.

``@f_jvp(x, tx) -> (y, ty)`` splits into ``@f_jvp_primal(x) -> (y, residuals)``,
every op that does not depend on a tangent in its original order, and
``@f_jvp_lin(residuals, tx) -> ty``, the ops that do, which are linear in
``tx``. This is JAX's ``linearize``: the primal half is what JAX evaluates
forward, and its op order is what ``make_jaxpr(grad(f))`` prints first.
Scalar literals are re-created where used rather than passed as residuals, as
JAX inlines them.

Calls split too: a ``jit`` into a call of its callee's primal half and one of
its linear half; a ``checkpoint`` (remat) inlines its primal half, saves only
its inputs and what its policy allows, and recomputes the rest in its linear
half (``passes/remat.py``).
"""
from __future__ import annotations

from irax.ir.dialect import decode_params
from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs, remat
from .builder import Builder
from .jvp import NUM_TANGENT_ARGS_ATTR, NUM_TANGENT_RESULTS_ATTR, OUTPUT_ZEROS_ATTR
from .registry import register_pass
from .simplify import dce_function

NUM_RESIDUALS_ATTR = "jaxpr.num_residuals"


@register_pass("jaxpr-linearize", "Splits a JVP function @f_jvp into @f_jvp_primal (primal outputs and residuals) "
               "and @f_jvp_lin (linear in the tangents)")
def linearize_pass(module, func="main_jvp"):
    linearize_function(module, funcs.lookup(module, func))


@register_pass("jaxpr-remat", "Splits a JVP function as jaxpr-linearize does, but saves only its inputs and what "
               "the policy allows (nothing_saveable, everything_saveable, dots_saveable, "
               "dots_with_no_batch_dims_saveable, save_only_these_names:a:b); @f_jvp_lin recomputes the rest")
def remat_pass(module, func="main_jvp", policy="nothing_saveable"):
    linearize_function(module, funcs.lookup(module, func), saveable=remat.policy(remat.from_option(policy)))


class _Call:
    """A call of a callee's linear half, to be made in the linear function in place of ``op``."""

    def __init__(self, op, callee, primitive, params, operands, results):
        self.op, self.callee, self.primitive, self.params = op, callee, primitive, params
        self.operands, self.results = operands, results


def linearize_function(module, source, done=None, saveable=None):
    """Returns ``(primal, lin)``; ``source``'s arguments are params, tangents, constants (its JVP layout).

    ``saveable(op)``, when given, is a remat policy: only the inputs and the results of saveable ops are
    residuals, and the linear half recomputes the other known values it needs. ``done`` memoises callees.
    """
    if NUM_TANGENT_ARGS_ATTR not in source.attributes:
        raise ValueError(f"@{funcs.name_of(source)} is not a JVP function (run jaxpr-jvp first)")
    done = {} if done is None else done
    args = funcs.arguments(source)
    n_tangents = funcs.int_attribute(source, NUM_TANGENT_ARGS_ATTR)
    n_tangent_results = funcs.int_attribute(source, NUM_TANGENT_RESULTS_ATTR)
    n_consts = num_consts(source)
    n_params = len(args) - n_tangents - n_consts
    params, tangents, consts = args[:n_params], args[n_params:n_params + n_tangents], args[n_params + n_tangents:]
    name = funcs.name_of(source)

    primal, primal_block = funcs.new_function(module, f"{name}_primal", [a.type for a in params + consts],
                                              after=source, loc=source.location)
    known = dict(zip(params + consts, primal_block.arguments))  # values of source -> values of primal
    primal_ip = ir.InsertionPoint(primal_block)
    unknown = set(tangents)
    linear, literals, known_ops = [], {}, {}  # linear: source ops and _Calls, in order
    returned = None
    for op in body_ops(source):
        if op.name == "func.return":
            returned = list(op.operands)
            break
        if op.name == "jaxpr.literal":
            literals[op.result] = op
        elif any(v in unknown for v in op.operands) or OUTPUT_ZEROS_ATTR in op.attributes:
            entry = _split_call(module, op, known, primal_ip, done) if op.name in _SPLITS else op
            linear.append(entry)
            unknown.update(entry.results)
            continue
        clone = op.clone(ip=primal_ip)
        for i, v in enumerate(op.operands):
            clone.operands[i] = known[v]
        known.update(zip(op.results, clone.results))
        known_ops.update((r, op) for r in op.results)
    outs, tangent_outs = returned[:len(returned) - n_tangent_results], returned[len(returned) - n_tangent_results:]

    linear = _live(linear, tangent_outs)
    needed = [v for entry in linear for v in entry.operands] + tangent_outs
    recompute = set()
    if saveable is not None:
        needed, recompute = remat.residuals_and_recomputed(needed, unknown, literals, known_ops, saveable)
    residuals = list(dict.fromkeys(v for v in needed if v not in unknown and v not in literals))
    funcs.finish(primal, primal_block, [known.get(v, v) for v in outs + residuals], n_consts=n_consts)
    primal.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(residuals))
    if saveable is not None:
        dce_function(primal)

    lin, lin_block = funcs.new_function(module, f"{name}_lin", [v.type for v in residuals + tangents],
                                        after=primal, loc=source.location)
    env = dict(zip(residuals + tangents, lin_block.arguments))
    lin_ip = ir.InsertionPoint(lin_block)

    def value(v):
        if v not in env:  # a literal: re-created in the linear function
            env[v] = literals[v].clone(ip=lin_ip).result
        return env[v]

    for entry in _in_order(source, linear, recompute) if recompute else linear:
        if isinstance(entry, _Call):
            results = Builder(lin_ip, lin.location, module).call(entry.callee, [value(v) for v in entry.operands],
                                                                 entry.primitive, **entry.params)
            env.update(zip(entry.results, results))
            continue
        operands = [value(v) for v in entry.operands]  # literals first: each is defined before its use
        clone = entry.clone(ip=lin_ip)
        for i, v in enumerate(operands):
            clone.operands[i] = v
        env.update(zip(entry.results, clone.results))
    funcs.finish(lin, lin_block, [value(v) for v in tangent_outs])
    lin.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(residuals))
    return primal, lin


def _live(linear, tangent_outs):
    """The linear entries some tangent output depends on: the others (tangents that die at a stop_gradient,
    say) would only keep residuals alive, which JAX prunes."""
    wanted, live = set(tangent_outs), []
    for entry in reversed(linear):
        if any(r in wanted for r in entry.results):
            live.append(entry)
            wanted.update(entry.operands)
    return live[::-1]


def _in_order(source, linear, recompute):
    """The linear entries and the recomputed known ops, in the source's order (as JAX's remat keeps it)."""
    position = {op: i for i, op in enumerate(body_ops(source))}
    keyed = [(position[e.op if isinstance(e, _Call) else e], e) for e in linear]
    keyed += [(position[op], op) for op in recompute]
    return [e for _, e in sorted(keyed, key=lambda item: item[0])]


def _split_call(module, op, known, primal_ip, done):
    """The primal half of a call emitted (a call, or inlined for a checkpoint); returns the linear call to make."""
    primitive = op.name[len("jaxpr."):]
    params = decode_params(OPS[primitive], op)
    callee = funcs.lookup(module, params.pop("callee"))
    key = funcs.name_of(callee)
    if key not in done:
        saveable = remat.policy(params["policy"]) if primitive == "checkpoint" else None
        callee_primal, callee_lin = linearize_function(module, callee, done, saveable)
        dce_function(callee_primal)  # JAX keeps only what a call's known half returns
        done[key] = callee_primal, callee_lin, _forward_inputs(callee_primal)
    callee_primal, callee_lin, forwarded = done[key]
    n_tangents = funcs.int_attribute(callee, NUM_TANGENT_ARGS_ATTR)
    operands = list(op.operands)
    n_params = len(operands) - n_tangents - num_consts(callee)
    primal_operands = [known[v] for v in operands[:n_params] + operands[n_params + n_tangents:]]
    if primitive == "checkpoint":
        outs = funcs.inline_body(callee_primal, primal_operands, primal_ip)
        params["differentiated"] = True
    else:
        outs = Builder(primal_ip, op.location, module).call(callee_primal, primal_operands, primitive, **params)
    n_out = len(op.results) - funcs.int_attribute(callee, NUM_TANGENT_RESULTS_ATTR)
    returned, old_operands = iter(outs), operands[:n_params] + operands[n_params + n_tangents:]
    full = [known[old_operands[forwarded[i]]] if i in forwarded else next(returned)
            for i in range(len(outs) + len(forwarded))]
    known.update(zip(op.results[:n_out], full[:n_out]))
    return _Call(op, callee_lin, primitive, params, full[n_out:] + operands[n_params:n_params + n_tangents],
                 list(op.results[n_out:]))


def _forward_inputs(primal):
    """Drops the results (outputs or residuals) that are just arguments of ``primal``, as JAX does (the caller
    uses its own operand instead); returns {result index: argument index}."""
    n_res = funcs.int_attribute(primal, NUM_RESIDUALS_ATTR)
    returned = list(body_ops(primal)[-1].operands)
    args = funcs.arguments(primal)
    forwarded = {i: args.index(v) for i, v in enumerate(returned) if v in args}
    if forwarded:
        funcs.set_results(primal, [v for i, v in enumerate(returned) if i not in forwarded])
        n_out = len(returned) - n_res
        primal.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(n_res - sum(i >= n_out for i in forwarded))
    return forwarded


_SPLITS = ("jaxpr.pjit", "jaxpr.checkpoint")
