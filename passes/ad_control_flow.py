"""Derivatives of ``cond``, ``while`` and ``scan``, as JAX's (``_cond_jvp``, ``_cond_partial_eval``,
``_cond_transpose``, ``_while_loop_jvp``, ``_while_transpose_error``, ``_scan_jvp``, ``_scan_partial_eval``,
``_scan_transpose``).

JVP: each body is differentiated (``jvp_function``) and its arguments rearranged so that the op takes the
tangents beside the primals in JAX's order: a cond's branches take ``consts, ops, const tangents, op
tangents``; a loop's tangent carries follow its carries, and so on. A loop's carry has a tangent when its
initial value has one or when the body gives it one: the set is grown to a fixpoint.

Linearize splits a JVP'd cond or scan into a known op in the primal half and a linear one in the linear half.
A cond's residuals are merged across branches by type, each branch returning zeros for the others'. A scan's
residuals are stacked by the known loop, except those that depend only on its constants: these are computed
once before it and given to the linear loop as constants (JAX's loop-invariant residuals). A while loop's known
carries come from a loop of its body's known part, and its linear half runs the whole loop again (JAX stages it
whole), so transposing it raises JAX's error.

Transpose: a cond of linear branches is a cond of their transposes; a linear scan is a scan running the other
way whose carry accumulates the cotangents of its linear constants.
"""
from __future__ import annotations

import collections

from irax.ir import control_flow as CF
from irax.ir.dialect import aval_of_type, decode_params
from irax.ir.jaxpr_view import num_consts
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs
from .builder import Builder
from .jvp import JVP_RULES, jvp_function
from .linearize import NUM_RESIDUALS_ATTR, SPLIT_RULES, UNKNOWN_RULES, Staged, partial_eval, unknown_results
from .simplify import dce_function
from .transpose import SYMBOLIC_ZERO_CTS, TRANSPOSE_RULES, is_undefined, transpose_function


def _groups(*sizes):
    """Index lists of consecutive groups of the given sizes."""
    out, start = [], 0
    for n in sizes:
        out.append(list(range(start, start + n)))
        start += n
    return out


def _spread(values, mask):
    it = iter(values)
    return [next(it) if m else None for m in mask]


def _result_types(func):
    return list(funcs.function_type(func).results)


def _body_jvp(b, func, nonzero, instantiate):
    """``func``'s JVP (arguments: params, tangents of the nonzero ones in order, constants) and which of its
    results have a tangent."""
    return jvp_function(b.module, func, nonzero, f"{funcs.name_of(func)}_jvp", instantiate_outputs=instantiate,
                        memo=b.memo)


def _tangent_mask(b, func, nonzero, instantiate):
    """Which results of ``func`` get a tangent (by differentiating it, then dropping the JVP)."""
    new, has_tangent = _body_jvp(b, func, nonzero, instantiate)
    new.erase()
    return has_tangent


def _zeros_where(mask):
    """An instantiation mask: zeros for the outputs in ``mask``, the others' tangents as they come."""
    return [True if m else None for m in mask]


def _cond_unknowns(module, op, uk):
    if uk[0]:
        return [True] * len(op.results)
    bodies = [funcs.lookup(module, name) for name in decode_params(OPS["cond"], op)["branches"]]
    arg_uk = CF.branch_operands(uk[1:], num_consts(bodies[0]))
    return [any(flags) for flags in zip(*(unknown_results(module, f, arg_uk) for f in bodies))]


def _while_unknowns(module, op, uk):
    carry_uk = _while_carry_unknowns(module, decode_params(OPS["while"], op), uk)
    return carry_uk if carry_uk is not None else [True] * len(op.results)


def _while_carry_unknowns(module, params, uk):
    """The unknown carries of a while loop, or None when its predicate depends on one (it is then staged whole)."""
    cond_uk, body_uk, init_uk = CF.split_while(uk, params["cond_nconsts"], params["body_nconsts"])
    body = funcs.lookup(module, params["body_jaxpr"])
    carry_uk = _carry_fixpoint(init_uk, lambda c: unknown_results(module, body, c + body_uk))
    if unknown_results(module, funcs.lookup(module, params["cond_jaxpr"]), carry_uk + cond_uk)[0]:
        return None
    return carry_uk


def _scan_unknowns(module, op, uk):
    params = decode_params(OPS["scan"], op)
    return _scan_masks(module, params, uk)[1]


def _scan_masks(module, params, uk):
    """The unknown carries of a scan (its fixpoint) and its unknown results."""
    const_uk, init_uk, xs_uk = CF.split_scan(uk, params["num_consts"], params["num_carry"])
    body = funcs.lookup(module, params["jaxpr"])
    n_carry = params["num_carry"]
    carry_uk = _carry_fixpoint(init_uk, lambda c: unknown_results(module, body, c + xs_uk + const_uk)[:n_carry])
    return carry_uk, unknown_results(module, body, carry_uk + xs_uk + const_uk)


UNKNOWN_RULES.update({"jaxpr.cond": _cond_unknowns, "jaxpr.while": _while_unknowns, "jaxpr.scan": _scan_unknowns})


def _carry_fixpoint(carry, grow):
    """Grows the carry mask until the body maps it into itself (JAX's loop-invariance fixpoint)."""
    for _ in range(len(carry) + 1):
        out = grow(carry)
        if out == carry:
            break
        carry = [a or b for a, b in zip(carry, out)]
    return carry


# --- cond --------------------------------------------------------------------------------------------

def _cond_jvp(b, primals, tangents, *, branches, branches_platforms):
    index, ops = primals[0], primals[1:]
    bodies = [funcs.lookup(b.module, name) for name in branches]
    n_consts = num_consts(bodies[0])
    n_ops = len(ops) - n_consts
    nonzero = CF.branch_operands([t is not None for t in tangents[1:]], n_consts)
    out_nz = [any(flags) for flags in zip(*(_tangent_mask(b, f, nonzero, False) for f in bodies))]
    new_branches = []
    for func in bodies:
        new, _ = _body_jvp(b, func, nonzero, out_nz)
        ops_i, t_ops, t_consts, consts_i = _groups(n_ops, sum(nonzero[:n_ops]), sum(nonzero[n_ops:]), n_consts)
        new_branches.append(funcs.rewire(b.module, new, consts_i + ops_i + t_consts + t_ops,
                                         list(range(len(_result_types(new)))), 0))
    outs = b.emit("cond", [index, *ops, *(t for t in tangents[1:] if t is not None)],
                  _result_types(new_branches[0]), branches=tuple(funcs.name_of(f) for f in new_branches),
                  branches_platforms=branches_platforms)
    n = len(b.op.results)
    return outs[:n], _spread(outs[n:], out_nz)


def _merge_residuals(branch_residual_types):
    """One list of residual slots for all branches, equal types sharing slots (JAX's ``_merge_branch_residuals``);
    returns it and each branch's slot for each of its residuals."""
    slots, per_branch = {}, []  # (type, its k-th use in a branch) -> slot
    for types in branch_residual_types:
        seen = collections.Counter()
        indices = []
        for t in types:
            key = (str(t), seen[str(t)])
            seen[str(t)] += 1
            indices.append(slots.setdefault(key, (len(slots), t))[0])
        per_branch.append(indices)
    return [t for _, t in slots.values()], per_branch


def _split_cond(module, op, known, primal_ip, done, unknown):
    index, *ops = op.operands
    if index in unknown:
        return op
    params = decode_params(OPS["cond"], op)
    branches, platforms = params["branches"], params["branches_platforms"]
    bodies = [funcs.lookup(module, name) for name in branches]
    n_consts = num_consts(bodies[0])
    ops_uk = [v in unknown for v in ops]
    arg_uk = CF.branch_operands(ops_uk, n_consts)
    out_uk = _cond_unknowns(module, op, [False] + ops_uk)
    known_outs = [i for i, u in enumerate(out_uk) if not u]
    unknown_outs = [i for i, u in enumerate(out_uk) if u]
    n_known_consts = n_consts - sum(ops_uk[:n_consts])
    splits = [partial_eval(module, f, arg_uk, known_outs, unknown_outs, done=done, n_consts=n_known_consts)
              for f in bodies]
    res_types, slots = _merge_residuals([[r.type for r in res] for _, _, res in splits])
    b = Builder(primal_ip, op.location, module)
    known_branches = [_known_branch(module, primal, len(known_outs), res_types, branch_slots, n_known_consts)
                      for (primal, _, _), branch_slots in zip(splits, slots)]
    known_ops = [known[v] for v in ops[:n_consts] + ops[n_consts:] if v not in unknown]
    results = b.emit("cond", [known[index], *known_ops], _result_types(known_branches[0]),
                     branches=tuple(funcs.name_of(f) for f in known_branches), branches_platforms=platforms)
    known.update(zip([op.results[i] for i in known_outs], results))
    residuals = results[len(known_outs):]
    n_uk_consts = sum(ops_uk[:n_consts])
    lin_branches = [_linear_branch(module, lin, res_types, branch_slots, sum(ops_uk) - n_uk_consts, n_uk_consts)
                    for (_, lin, _), branch_slots in zip(splits, slots)]
    uk_operands = [v for v in ops if v in unknown]
    types = [op.results[i].type for i in unknown_outs]
    names = tuple(funcs.name_of(f) for f in lin_branches)
    return Staged(op, [known[index], *residuals, *uk_operands], [op.results[i] for i in unknown_outs],
                  lambda b, values: b.emit("cond", values, types, branches=names, branches_platforms=platforms))


def _known_branch(module, primal, n_outs, res_types, res_slots, n_consts):
    """``primal`` returning every branch's residual slots, the other branches' filled with ``empty2`` (JAX's
    ``_join_cond_outputs``: an empty value for every slot, then the branch's own residuals in theirs)."""
    args = funcs.arguments(primal)
    new, block = funcs.new_function(module, funcs.name_of(primal) + "_joined", [a.type for a in args],
                                    after=primal, loc=primal.location)
    ip = ir.InsertionPoint(block)
    outs = funcs.inline_body(primal, list(block.arguments), ip)
    b = Builder(ip, primal.location, module)
    residuals = [_empty_like(b, aval_of_type(t)) for t in res_types]
    for slot, value in zip(res_slots, outs[n_outs:]):
        residuals[slot] = value
    funcs.finish(new, block, outs[:n_outs] + residuals, n_consts=n_consts)
    primal.erase()
    return new


def _empty_like(b, a):
    """JAX's ``empty_like_aval``: an ``empty2`` scalar, broadcast to the shape."""
    (empty,) = b.bind("empty2", dtype=a.dtype)
    return empty if a.shape == () else b.broadcast_in_dim(empty, shape=a.shape, broadcast_dimensions=())


def _linear_branch(module, lin, res_types, res_slots, n_uk_ops, n_uk_consts):
    """``lin`` taking every branch's residual slots, then the unknown constants and operands in JAX's order
    (JAX's ``_join_cond_pe_staged_jaxpr_inputs``)."""
    n_res = len(res_slots)
    lin_args = funcs.arguments(lin)
    uk_ops, uk_consts = lin_args[n_res:n_res + n_uk_ops], lin_args[n_res + n_uk_ops:]
    types = list(res_types) + [a.type for a in uk_consts + uk_ops]
    new, block = funcs.new_function(module, funcs.name_of(lin) + "_joined", types, after=lin, loc=lin.location)
    new_args = list(block.arguments)
    res = [new_args[slot] for slot in res_slots]
    consts, operands = new_args[len(res_types):len(res_types) + n_uk_consts], new_args[len(res_types) + n_uk_consts:]
    outs = funcs.inline_body(lin, res + operands + consts, ir.InsertionPoint(block))
    funcs.finish(new, block, outs)
    new.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(len(res_types))
    lin.erase()
    return new


def _cond_transpose(b, cts, index, *operands, branches, branches_platforms):
    bodies = [funcs.lookup(b.module, name) for name in branches]
    n_res = funcs.int_attribute(bodies[0], NUM_RESIDUALS_ATTR)
    if is_undefined(index) or any(is_undefined(x) for x in operands[:n_res]):
        raise NotImplementedError("transposing a cond whose linear operands are not its last ones")
    transposed = [funcs.symbols(b.module).get(f"{funcs.name_of(f)}_t") or transpose_function(b.module, f)
                  for f in bodies]
    cts = cts if isinstance(cts, list) else [cts]
    outs = b.emit("cond", [index, *operands[:n_res], *cts], _result_types(transposed[0]),
                  branches=tuple(funcs.name_of(f) for f in transposed), branches_platforms=branches_platforms)
    return [None] * (1 + n_res) + [g if is_undefined(x) else None for g, x in zip(outs, operands[n_res:])]


# --- while -------------------------------------------------------------------------------------------

def _while_jvp(b, primals, tangents, *, cond_jaxpr, body_jaxpr, cond_nconsts, body_nconsts):
    cond_consts, body_consts, init = CF.split_while(primals, cond_nconsts, body_nconsts)
    _, body_const_tangents, init_tangents = CF.split_while(tangents, cond_nconsts, body_nconsts)
    body_const_nz = [t is not None for t in body_const_tangents]
    body = funcs.lookup(b.module, body_jaxpr)
    carry_nz = _carry_fixpoint([t is not None for t in init_tangents],
                               lambda nz: _tangent_mask(b, body, nz + body_const_nz, _zeros_where(nz)))
    new, _ = _body_jvp(b, body, carry_nz + body_const_nz, _zeros_where(carry_nz))
    n_carry, n_tc, n_tb = len(init), sum(carry_nz), sum(body_const_nz)
    carry_i, t_carry, t_consts, consts_i = _groups(n_carry, n_tc, n_tb, body_nconsts)
    new = funcs.rewire(b.module, new, carry_i + t_carry + consts_i + t_consts, list(range(n_carry + n_tc)),
                       body_nconsts + n_tb)
    cond = _with_unused_args(b.module, funcs.lookup(b.module, cond_jaxpr), n_carry,
                             [t.type for t, nz in zip(init, carry_nz) if nz])
    init_t = [t if t is not None else b.zeros_like(p) for t, p, nz in zip(init_tangents, init, carry_nz) if nz]
    outs = b.emit("while", [*cond_consts, *body_consts, *(t for t in body_const_tangents if t is not None), *init,
                            *init_t], _result_types(new), cond_jaxpr=funcs.name_of(cond),
                  body_jaxpr=funcs.name_of(new), cond_nconsts=cond_nconsts, body_nconsts=body_nconsts + n_tb)
    return outs[:n_carry], _spread(outs[n_carry:], carry_nz)


def _with_unused_args(module, func, at, types):
    """A copy of ``func`` taking arguments of ``types`` it ignores, inserted before argument ``at`` (a cond_jaxpr
    given the tangent carries too)."""
    args = funcs.arguments(func)
    new, block = funcs.new_function(module, funcs.name_of(func) + "_jvp", [a.type for a in args[:at]] + list(types)
                                    + [a.type for a in args[at:]], after=func, loc=func.location)
    new_args = list(block.arguments)
    outs = funcs.inline_body(func, new_args[:at] + new_args[at + len(types):], ir.InsertionPoint(block))
    funcs.finish(new, block, outs, n_consts=num_consts(func))
    return new


def _split_while(module, op, known, primal_ip, done, unknown):
    """The known carries come from a loop of the body's known part; the linear half runs the whole loop again
    (JAX's ``_while_partial_eval``), so that its transpose raises."""
    params = decode_params(OPS["while"], op)
    uk = [v in unknown for v in op.operands]
    carry_uk = _while_carry_unknowns(module, params, uk)
    if carry_uk is None or all(carry_uk):
        return op
    cond_consts, body_consts, init = CF.split_while(op.operands, params["cond_nconsts"], params["body_nconsts"])
    body_consts_uk = [v in unknown for v in body_consts]
    n_carry = len(init)
    known_carry = [i for i in range(n_carry) if not carry_uk[i]]
    body = funcs.lookup(module, params["body_jaxpr"])
    n_known_consts = sum(not u for u in body_consts_uk)
    primal, lin, _ = partial_eval(module, body, carry_uk + body_consts_uk, known_carry, [], done=done,
                                  n_consts=n_known_consts)
    lin.erase()
    primal = funcs.rewire(module, primal, list(range(len(funcs.arguments(primal)))),
                          list(range(len(known_carry))), n_known_consts)
    dce_function(primal, nested=True)
    cond = funcs.lookup(module, params["cond_jaxpr"])
    cond = funcs.copy_function(module, cond, known_carry + [n_carry + j for j in range(len(cond_consts))], [0],
                               len(cond_consts), funcs.name_of(cond) + "_known")
    operands = ([known[v] for v in cond_consts] + [known[v] for v, u in zip(body_consts, body_consts_uk) if not u]
                + [known[init[i]] for i in known_carry])
    results = Builder(primal_ip, op.location, module).emit(
        "while", operands, [init[i].type for i in known_carry], cond_jaxpr=funcs.name_of(cond),
        body_jaxpr=funcs.name_of(primal), cond_nconsts=len(cond_consts), body_nconsts=n_known_consts)
    known.update(zip([op.results[i] for i in known_carry], results))
    staged = [i for i in range(n_carry) if carry_uk[i]]
    types = [r.type for r in op.results]
    return Staged(op, list(op.operands), [op.results[i] for i in staged],
                  lambda b, values: _pick(b.emit("while", values, types, **params), staged))


def _pick(values, indices):
    return [values[i] for i in indices]


def _while_transpose(b, cts, *operands, **params):
    raise ValueError("Reverse-mode differentiation does not work for lax.while_loop or lax.fori_loop with dynamic "
                     "start/stop values. Try using lax.scan, or using fori_loop with static start/stop.")


# --- scan --------------------------------------------------------------------------------------------

def _scan_jvp(b, primals, tangents, *, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, init, xs = CF.split_scan(primals, num_consts, num_carry)
    const_t, init_t, xs_t = CF.split_scan(tangents, num_consts, num_carry)
    const_nz, xs_nz = [t is not None for t in const_t], [t is not None for t in xs_t]
    body = funcs.lookup(b.module, jaxpr)
    n_ys = len(_result_types(body)) - num_carry
    carry_nz = _carry_fixpoint([t is not None for t in init_t], lambda nz: _tangent_mask(
        b, body, nz + xs_nz + const_nz, _zeros_where(nz) + [None] * n_ys)[:num_carry])
    new, has_tangent = _body_jvp(b, body, carry_nz + xs_nz + const_nz, _zeros_where(carry_nz) + [None] * n_ys)
    n_tc, n_tx, n_tk = sum(carry_nz), sum(xs_nz), sum(const_nz)
    carry_i, xs_i, t_carry, t_xs, t_consts, consts_i = _groups(num_carry, len(xs), n_tc, n_tx, n_tk, num_consts)
    ys_nz = has_tangent[num_carry:]
    out_carry, out_ys, out_t_carry, out_t_ys = _groups(num_carry, n_ys, n_tc, sum(ys_nz))
    new = funcs.rewire(b.module, new, carry_i + t_carry + xs_i + t_xs + consts_i + t_consts,
                       out_carry + out_t_carry + out_ys + out_t_ys, num_consts + n_tk)
    init_dot = [t if t is not None else b.zeros_like(p) for t, p, nz in zip(init_t, init, carry_nz) if nz]
    operands = [*consts, *(t for t in const_t if t is not None), *init, *init_dot, *xs,
                *(t for t in xs_t if t is not None)]
    types = [CF.stacked_type(t, length) if i >= num_carry + n_tc else t for i, t in enumerate(_result_types(new))]
    outs = b.emit("scan", operands, types, jaxpr=funcs.name_of(new), length=length, reverse=reverse,
                  num_consts=num_consts + n_tk, num_carry=num_carry + n_tc, unroll=unroll)
    carry, t_carry_out, rest = outs[:num_carry], outs[num_carry:num_carry + n_tc], outs[num_carry + n_tc:]
    return carry + rest[:n_ys], _spread(t_carry_out, carry_nz) + _spread(rest[n_ys:], ys_nz)


def _split_scan(module, op, known, primal_ip, done, unknown):
    """The known loop computes the known carries and ys and stacks the residuals; what in it depends only on
    constants is hoisted before it, and residuals among those are given to the linear loop as constants rather
    than stacked (JAX's loop-invariant residuals)."""
    params = decode_params(OPS["scan"], op)
    n_consts, n_carry, length = params["num_consts"], params["num_carry"], params["length"]
    consts, init, xs = CF.split_scan(op.operands, n_consts, n_carry)
    body = funcs.lookup(module, params["jaxpr"])
    const_uk, xs_uk = [v in unknown for v in consts], [v in unknown for v in xs]
    carry_uk, out_uk = _scan_masks(module, params, [v in unknown for v in op.operands])
    known_outs = [i for i, u in enumerate(out_uk) if not u]
    unknown_outs = [i for i, u in enumerate(out_uk) if u]
    n_kc, n_kx, n_kk = (sum(not u for u in m) for m in (carry_uk, xs_uk, const_uk))
    primal, lin, residuals = partial_eval(module, body, carry_uk + xs_uk + const_uk, known_outs, unknown_outs,
                                          done=done, n_consts=n_kk)
    res_types = [r.type for r in residuals]  # some are values of the primal, erased next
    hoisted, loop, intensive = _hoist_invariant(module, primal, len(known_outs), n_kc + n_kx, n_kk)
    dce_function(loop, nested=True)  # JAX prunes the known body's outputs, which drops its dead equations
    const_values = funcs.inline_body(hoisted, [known[v] for v, u in zip(consts, const_uk) if not u], primal_ip)
    hoisted.erase()
    intensive_values, invariant_values = const_values[:len(intensive)], const_values[len(intensive):]
    extensive = [i for i in range(len(res_types)) if i not in intensive]
    known_types = [op.results[i].type for i in known_outs] + [CF.stacked_type(res_types[i], length)
                                                              for i in extensive]
    known_operands = (invariant_values + [known[v] for v, u in zip(init, carry_uk) if not u]
                      + [known[v] for v, u in zip(xs, xs_uk) if not u])
    results = Builder(primal_ip, op.location, module).emit(
        "scan", known_operands, known_types, jaxpr=funcs.name_of(loop), length=length, reverse=params["reverse"],
        num_consts=len(invariant_values), num_carry=n_kc, unroll=params["unroll"])
    known.update(zip([op.results[i] for i in known_outs], results))
    n_cu, n_xu, n_ku = len(carry_uk) - n_kc, len(xs_uk) - n_kx, len(const_uk) - n_kk
    res_i, carry_i, xs_i, consts_i = _groups(len(res_types), n_cu, n_xu, n_ku)
    lin = funcs.rewire(module, lin, carry_i + xs_i + [res_i[i] for i in extensive] + [res_i[i] for i in intensive]
                       + consts_i, list(range(len(unknown_outs))), len(intensive) + n_ku)
    operands = (intensive_values + [v for v in consts if v in unknown] + [v for v, u in zip(init, carry_uk) if u]
                + [v for v in xs if v in unknown] + results[len(known_outs):])
    types = [op.results[i].type for i in unknown_outs]
    lin_params = dict(params, jaxpr=funcs.name_of(lin), num_consts=len(intensive) + n_ku, num_carry=n_cu)
    return Staged(op, operands, [op.results[i] for i in unknown_outs],
                  lambda b, values: b.emit("scan", values, types, **lin_params))


def _hoist_invariant(module, primal, n_outs, n_loop_args, n_consts):
    """Splits a known scan body (carry and xs, then ``n_consts`` constants; outputs, then residuals) into what
    depends only on its constants, ``hoisted`` (constants -> intensive residuals, loop-invariant values), and the
    rest, ``loop`` (a body taking those values as its constants). Returns both and the indices of the intensive
    residuals."""
    n_results = len(_result_types(primal))
    varying = [True] * n_loop_args + [False] * n_consts
    out_varying = unknown_results(module, primal, varying)
    intensive = [i for i in range(n_outs, n_results) if not out_varying[i]]
    rest = [i for i in range(n_results) if i not in intensive]
    hoisted, loop, invariant = partial_eval(module, primal, varying, intensive, rest)
    primal.erase()
    dce_function(hoisted, nested=True)
    n_inv = len(invariant)
    loop = funcs.rewire(module, loop, list(range(n_inv, n_inv + n_loop_args)) + list(range(n_inv)),
                        list(range(len(rest))), n_inv)
    return hoisted, loop, [i - n_outs for i in intensive]


def _scan_transpose(b, cts, *operands, jaxpr, length, reverse, num_consts, num_carry, unroll):
    consts, init, xs = CF.split_scan(operands, num_consts, num_carry)
    n_ires = next((i for i, c in enumerate(consts) if is_undefined(c)), len(consts))
    n_lx = next((i for i, x in enumerate(xs) if not is_undefined(x)), len(xs))
    if any(is_undefined(c) for c in consts[:n_ires]) or any(is_undefined(x) for x in xs[n_lx:]) or not all(
            is_undefined(c) for c in consts[n_ires:]):
        raise NotImplementedError("transposing a scan whose operands are not (residual, linear) constants, "
                                  "linear carries, (linear, residual) xs, as JAX's")
    body = funcs.lookup(b.module, jaxpr)
    n_lc, n_eres = len(consts) - n_ires, len(xs) - n_lx
    cts = cts if isinstance(cts, list) else [cts]
    ct_carry = [b.full(aval_of_type(t).shape, aval_of_type(t).dtype, 0) if ct is None else ct
                for ct, t in zip(cts[:num_carry], _result_types(funcs.lookup(b.module, jaxpr))[:num_carry])]
    ct_ys = [ct for ct in cts[num_carry:] if ct is not None]
    zero_ys = [num_carry + j for j, ct in enumerate(cts[num_carry:]) if ct is None]
    carry_i, lx_i, eres_i, ires_i, lc_i = _groups(num_carry, n_lx, n_eres, n_ires, n_lc)
    n_out = len(_result_types(body))
    linear = funcs.copy_function(b.module, body, eres_i + ires_i + carry_i + lx_i + lc_i, list(range(n_out)), 0,
                                 funcs.name_of(body) + "_linear")
    linear.attributes[NUM_RESIDUALS_ATTR] = funcs.int_attr(n_eres + n_ires)
    body_t = _scan_transpose_body(b.module, transpose_function(b.module, linear, zero_ys), n_eres, n_ires, n_lc,
                                  num_carry, len(ct_ys))
    lc_avals = [c.aval for c in consts[n_ires:]]
    zeros = [b.full(a.shape, a.dtype, 0) for a in lc_avals]
    types = _result_types(body_t)
    types = types[:n_lc + num_carry] + [CF.stacked_type(t, length) for t in types[n_lc + num_carry:]]
    outs = b.emit("scan", [*consts[:n_ires], *zeros, *ct_carry, *ct_ys, *xs[n_lx:]], types,
                  jaxpr=funcs.name_of(body_t), length=length, reverse=not reverse, num_consts=n_ires,
                  num_carry=n_lc + num_carry, unroll=unroll)
    ct_consts, ct_init, ct_xs = outs[:n_lc], outs[n_lc:n_lc + num_carry], outs[n_lc + num_carry:]
    return ([None] * n_ires + ct_consts + [g if is_undefined(x) else None for g, x in zip(ct_init, init)]
            + ct_xs + [None] * n_eres)


def _scan_transpose_body(module, transposed, n_eres, n_ires, n_lc, n_carry, n_ys):
    """The transposed step in scan's layout: carry (constants' cotangents so far, carry cotangent), xs (ys'
    cotangents, stacked residuals), constants (loop-invariant residuals); ``transposed`` takes the residuals
    then the cotangents of the carry and ys, and gives those of the carry, linear xs and linear constants."""
    args = funcs.arguments(transposed)
    res_types = [a.type for a in args[:n_eres + n_ires]]
    ct_types = [a.type for a in args[n_eres + n_ires:]]
    results = _result_types(transposed)
    ct_const_types = results[len(results) - n_lc:]
    types = ct_const_types + ct_types[:n_carry] + ct_types[n_carry:] + res_types[:n_eres] + res_types[n_eres:]
    new, block = funcs.new_function(module, funcs.name_of(transposed) + "_scan", types, after=transposed,
                                    loc=transposed.location)
    acc, ct_carry, ct_ys, eres, ires = _split(list(block.arguments), n_lc, n_carry, n_ys, n_eres, n_ires)
    ip = ir.InsertionPoint(block)
    outs = funcs.inline_body(transposed, eres + ires + ct_carry + ct_ys, ip)
    b = Builder(ip, transposed.location, module)
    ct_consts = outs[len(outs) - n_lc:]
    funcs.finish(new, block, [b.add_any(a, c) for a, c in zip(acc, ct_consts)] + outs[:len(outs) - n_lc],
                 n_consts=n_ires)
    return new


def _split(values, *sizes):
    return [[values[i] for i in group] for group in _groups(*sizes)]


JVP_RULES.update({"cond": _cond_jvp, "while": _while_jvp, "scan": _scan_jvp})
SPLIT_RULES.update({"jaxpr.cond": _split_cond, "jaxpr.while": _split_while, "jaxpr.scan": _split_scan})
TRANSPOSE_RULES.update({"cond": _cond_transpose, "while": _while_transpose, "scan": _scan_transpose})
SYMBOLIC_ZERO_CTS.add("scan")
