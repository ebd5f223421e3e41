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
from .simplify import dce_function, has_effects

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


class Staged:
    """An op of the linear half whose emission differs from the source op's (a call of a callee's linear half,
    a control-flow op of linear bodies): ``emit(builder, operand values)`` makes it and returns its results."""

    def __init__(self, op, operands, results, emit):
        self.op, self.operands, self.results, self.emit = op, operands, results, emit


def linearize_function(module, source, done=None, saveable=None):
    """Returns ``(primal, lin)``; ``source``'s arguments are params, tangents, constants (its JVP layout).

    ``saveable(op)``, when given, is a remat policy: only the inputs and the results of saveable ops are
    residuals, and the linear half recomputes the other known values it needs. ``done`` memoises callees.
    """
    if NUM_TANGENT_ARGS_ATTR not in source.attributes:
        raise ValueError(f"@{funcs.name_of(source)} is not a JVP function (run jaxpr-jvp first)")
    n_args = len(funcs.arguments(source))
    n_tangents = funcs.int_attribute(source, NUM_TANGENT_ARGS_ATTR)
    n_consts = num_consts(source)
    n_params = n_args - n_tangents - n_consts
    n_results = len(funcs.function_type(source).results)
    n_out = n_results - funcs.int_attribute(source, NUM_TANGENT_RESULTS_ATTR)
    primal, lin, _ = partial_eval(module, source, [n_params <= i < n_params + n_tangents for i in range(n_args)],
                                  list(range(n_out)), list(range(n_out, n_results)), done=done, saveable=saveable,
                                  n_consts=n_consts)
    return primal, lin


def partial_eval(module, source, unknown_args, known_outs, unknown_outs, *, done=None, saveable=None, n_consts=0):
    """Splits ``source`` into ``@<name>_primal``, its ops that depend on no ``unknown_args``, taking the known
    arguments (the last ``n_consts`` being constants) and returning the results indexed by ``known_outs`` then
    the residuals; and ``@<name>_lin``, taking the residuals then the unknown arguments and returning the results
    indexed by ``unknown_outs`` (a known one becomes a residual). Returns both and the residuals (values of
    ``source``, or of the primal for a split call's). JAX's ``partial_eval_jaxpr_nounits``."""
    done = {} if done is None else done
    args = funcs.arguments(source)
    known_args = [a for a, u in zip(args, unknown_args) if not u]
    unknown_arg_values = [a for a, u in zip(args, unknown_args) if u]
    name = funcs.name_of(source)

    primal, primal_block = funcs.new_function(module, f"{name}_primal", [a.type for a in known_args],
                                              after=source, loc=source.location)
    known = dict(zip(known_args, primal_block.arguments))  # values of source -> values of primal
    primal_ip = ir.InsertionPoint(primal_block)
    unknown = set(unknown_arg_values)
    linear, literals, known_ops = [], {}, {}  # linear: source ops and Staged entries, in order
    effects = []  # known effectful ops: a remat recomputes them too, as JAX's checkpoint reruns its function
    table, memo = funcs.symbols(module), {}
    returned = None
    for op in body_ops(source):
        if op.name == "func.return":
            returned = list(op.operands)
            break
        if op.name == "jaxpr.literal":
            literals[op.result] = op
        elif any(v in unknown for v in op.operands) or OUTPUT_ZEROS_ATTR in op.attributes:
            split = SPLIT_RULES.get(op.name)
            entry = split(module, op, known, primal_ip, done, unknown) if split else op
            linear.append(entry)
            unknown.update(entry.results)
            continue
        clone = op.clone(ip=primal_ip)
        for i, v in enumerate(op.operands):
            clone.operands[i] = known[v]
        known.update(zip(op.results, clone.results))
        known_ops.update((r, op) for r in op.results)
        if saveable is not None and has_effects(op, table, memo):
            effects.append(op)
    outs, tangent_outs = [returned[i] for i in known_outs], [returned[i] for i in unknown_outs]
    if any(v in unknown for v in outs):
        raise ValueError(f"@{name}: a result asked to be known depends on unknown arguments")

    linear = _live(linear, tangent_outs, table, memo)
    needed = [v for entry in linear for v in entry.operands] + tangent_outs
    recompute = set()
    if saveable is not None:
        needed += [v for op in effects for v in op.operands]
        needed, recompute = remat.residuals_and_recomputed(needed, unknown, literals, known_ops, saveable)
        recompute.update(effects)
    residuals = list(dict.fromkeys(v for v in needed if v not in unknown and v not in literals))
    funcs.finish(primal, primal_block, [known.get(v, v) for v in outs + residuals], n_consts=n_consts)
    primal.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(residuals))
    if saveable is not None:
        dce_function(primal)

    lin, lin_block = funcs.new_function(module, f"{name}_lin", [v.type for v in residuals + unknown_arg_values],
                                        after=primal, loc=source.location)
    env = dict(zip(residuals + unknown_arg_values, lin_block.arguments))
    lin_ip = ir.InsertionPoint(lin_block)

    def value(v):
        if v not in env:  # a literal: re-created in the linear function
            env[v] = literals[v].clone(ip=lin_ip).result
        return env[v]

    for entry in _in_order(source, linear, recompute) if recompute else linear:
        if isinstance(entry, Staged):
            results = entry.emit(Builder(lin_ip, entry.op.location, module), [value(v) for v in entry.operands])
            env.update(zip(entry.results, results))
            continue
        operands = [value(v) for v in entry.operands]  # literals first: each is defined before its use
        clone = entry.clone(ip=lin_ip)
        for i, v in enumerate(operands):
            clone.operands[i] = v
        env.update(zip(entry.results, clone.results))
    funcs.finish(lin, lin_block, [value(v) for v in tangent_outs])
    lin.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(residuals))
    return primal, lin, residuals


def _live(linear, tangent_outs, table, memo):
    """The linear entries some tangent output depends on, and effectful ones (a print in a loop body split off
    as varying): the others (tangents that die at a stop_gradient, say) would only keep residuals alive, which
    JAX prunes."""
    wanted, live = set(tangent_outs), []
    for entry in reversed(linear):
        op = entry.op if isinstance(entry, Staged) else entry
        if any(r in wanted for r in entry.results) or has_effects(op, table, memo):
            live.append(entry)
            wanted.update(entry.operands)
    return live[::-1]


def _in_order(source, linear, recompute):
    """The linear entries and the recomputed known ops, in the source's order (as JAX's remat keeps it)."""
    position = {op: i for i, op in enumerate(body_ops(source))}
    keyed = [(position[e.op if isinstance(e, Staged) else e], e) for e in linear]
    keyed += [(position[op], op) for op in recompute]
    return [e for _, e in sorted(keyed, key=lambda item: item[0])]


def unknown_results(module, func, unknown_args):
    """Which results of ``func`` depend on its unknown arguments, as partial_eval will find (calls and
    control-flow ops are looked into through ``UNKNOWN_RULES``, as their split rules split them)."""
    unknown = {a for a, u in zip(funcs.arguments(func), unknown_args) if u}
    body = body_ops(func)
    for op in body[:-1]:
        uk = [v in unknown for v in op.operands]
        if OUTPUT_ZEROS_ATTR in op.attributes:
            unknown.update(op.results)
        elif any(uk):
            rule = UNKNOWN_RULES.get(op.name)
            results = rule(module, op, uk) if rule else [True] * len(op.results)
            unknown.update(r for r, u in zip(op.results, results) if u)
    return [v in unknown for v in body[-1].operands]


def _call_unknowns(module, op, uk):
    callee = funcs.lookup(module, ir.FlatSymbolRefAttr(op.attributes["callee"]).value)
    return unknown_results(module, callee, uk[:len(funcs.arguments(callee))])


def _split_call(module, op, known, primal_ip, done, unknown):
    """The primal half of a call emitted (a call, or inlined for a checkpoint); returns the linear call to make."""
    primitive = op.name[len("jaxpr."):]
    params = decode_params(OPS[primitive], op)
    callee = funcs.lookup(module, params.pop("callee"))
    if NUM_TANGENT_ARGS_ATTR not in callee.attributes:
        return _split_plain_call(module, op, callee, primitive, params, known, primal_ip, done, unknown)
    key = funcs.name_of(callee)
    if key not in done:
        saveable = remat.policy(params["policy"]) if primitive == "checkpoint" else None
        callee_primal, callee_lin = linearize_function(module, callee, done, saveable)
        dce_function(callee_primal, nested=True)  # JAX keeps only what a call's known half returns
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
    return Staged(op, full[n_out:] + operands[n_params:n_params + n_tangents], list(op.results[n_out:]),
                  lambda b, values: b.call(callee_lin, values, primitive, **params))


def _split_plain_call(module, op, callee, primitive, params, known, primal_ip, done, unknown):
    """A call of a function that is not a JVP (a jit a custom_jvp rule applies to tangents): its callee split by
    which operands are unknown."""
    operands = list(op.operands)
    n_args = len(funcs.arguments(callee))
    arg_uk = [v in unknown for v in operands[:n_args]]
    out_uk = unknown_results(module, callee, arg_uk)
    known_outs = [i for i, u in enumerate(out_uk) if not u]
    unknown_outs = [i for i, u in enumerate(out_uk) if u]
    n_consts = sum(not u for u in arg_uk[n_args - num_consts(callee):]) if num_consts(callee) else 0
    primal, lin, _ = partial_eval(module, callee, arg_uk, known_outs, unknown_outs, done=done, n_consts=n_consts)
    if primitive == "checkpoint":
        params["differentiated"] = True
    known_operands = [known[v] for v, u in zip(operands, arg_uk) if not u]
    results = Builder(primal_ip, op.location, module).call(primal, known_operands, primitive, **params)
    n_known = len(known_outs)
    known.update(zip([op.results[i] for i in known_outs], results[:n_known]))
    return Staged(op, results[n_known:] + [v for v, u in zip(operands, arg_uk) if u],
                  [op.results[i] for i in unknown_outs],
                  lambda b, values: b.call(lin, values, primitive, **params))


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


# Ops whose linear half is not the op itself: rule(module, op, known, primal_ip, done, unknown) emits the known
# half into the primal function (``known`` maps source values to it) and returns the Staged entry of the linear.
SPLIT_RULES = {"jaxpr.pjit": _split_call, "jaxpr.checkpoint": _split_call}
# Which results of an op its split rule makes unknown: rule(module, op, unknown operands) -> mask.
UNKNOWN_RULES = {"jaxpr.pjit": _call_unknowns, "jaxpr.checkpoint": _call_unknowns}
