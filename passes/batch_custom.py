"""Batching rules of the custom-derivative ops (as JAX's ``BatchTrace.process_custom_jvp_call`` and
``process_custom_vjp_call``, with ``batch_custom_jvp_subtrace`` and ``batch_custom_vjp_bwd``).

JAX batches a custom function's rules lazily, when they are run; here they are functions of the
module that the autodiff passes inline in the call's place (``custom_calls.py``), so the batched
call names batched copies of all of them at once, and those must agree on every batch dimension
they exchange. The callee is batched as JAX batches it (results where its rules put them, which is
what ``make_jaxpr(vmap(f))`` prints); each rule's results are then moved to those dimensions, and
where a rule's result is batched but the callee's is not, the callee is batched again with that
result broadcast. The batched rules are private to the op (memoised under their own key), so their
results can be moved in place.
"""
from __future__ import annotations

from types import SimpleNamespace

from irax.ir.dialect import encode_params
from irax.ir.jaxpr_view import body_ops, num_consts
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs
from .batch import BATCH_RULES, BatchBuilder, batch_function, batched_type


def _batch(b, func, dims, out_dims=None):
    return batch_function(b.module, func, list(dims), b.axis_size, f"{funcs.name_of(func)}_batched",
                          out_dims=out_dims, axis_name=b.axis_name, memo=b.memo)


def _move_results(b, func, src, dst, sum_match=False):
    """Makes ``func`` return its results batched along ``dst`` instead of ``src``. With ``sum_match`` an
    unbatched destination sums a batched result over the batch (the cotangent of a shared argument)."""
    if list(src) == list(dst):
        return
    ret = body_ops(func)[-1]
    bb = BatchBuilder(ir.InsertionPoint(ret), func.location, b.module, b.axis_size, b.axis_name, b.memo)
    outs = [bb.reduce_sum(v, axes=(s,)) if sum_match and d is None and s is not None else bb.matchaxis(v, s, d)
            for v, s, d in zip(ret.operands, src, dst)]
    funcs.set_results(func, outs)


def _merge(primary, secondary):
    """JAX's ``_merge_bdims``: the first batch dimension there is."""
    return [p if p is not None else s for p, s in zip(primary, secondary)]


def _emit(b, primitive, args, result_types, params):
    return ir.Operation.create(f"jaxpr.{primitive}", results=result_types, operands=list(args),
                               attributes=encode_params(OPS[primitive], params), loc=b.loc, ip=b.ip)


def _result_types(func):
    return list(funcs.function_type(func).results)


class _Pending:
    """A custom call whose rules are being batched. A rule that calls its own function (as ``defjvps``
    rules do) meets the call again, with the same dims: that call gets the batched callee at once, and
    the batched rules' names once they exist."""

    def __init__(self, callee, out_dims):
        self.callee, self.out_dims, self.ops = callee, out_dims, []

    def resolve(self, rules):
        for op in self.ops:
            for name, func in rules.items():
                op.attributes[name] = ir.FlatSymbolRefAttr.get(funcs.name_of(func))


def _custom_call_batch(b, args, dims, key, build, params, rules):
    """``rules`` maps each ``*_callee`` param to its unbatched function's name (what a pending call names
    until its batched rules exist)."""
    entry = b.memo.get(key)
    if entry is None:
        entry = b.memo[key] = build()
    if isinstance(entry, _Pending):
        callee, names, out_dims = entry.callee, rules, entry.out_dims
    else:
        callee, batched_rules, out_dims = entry
        names = {name: func if isinstance(func, str) else funcs.name_of(func) for name, func in batched_rules.items()}
    op = _emit(b, b.primitive, args, _result_types(callee), {**params, **names, "callee": funcs.name_of(callee)})
    if isinstance(entry, _Pending):
        entry.ops.append(op)
    return list(op.results), out_dims


def _batch_until_agreed(b, func, dims, key, batch_rule):
    """Batches ``func``, then its rule (``batch_rule(call_dims) -> (rule, rule_dims, wanted_dims)``); where
    the rule wants a result batched that the call leaves unbatched, both are batched again with that result
    broadcast (a rule calling ``func`` then sees it so). Returns the pending call, the rule and its dims."""
    out_dims, memo = None, dict(b.memo)
    while True:
        callee, call_dims = _batch(b, func, dims, out_dims)
        pending = b.memo[key] = _Pending(callee, call_dims)
        rule, rule_dims, wanted = batch_rule(call_dims)
        if wanted == call_dims:
            return pending, rule, rule_dims
        if pending.ops:  # functions batched meanwhile may call this round's callee: forget them, left unused
            b.memo.clear()
            b.memo.update(memo)
        else:
            rule.erase()
            callee.erase()
        out_dims = wanted


def _custom_jvp_call_batch(b, args, dims, *, callee, jvp_callee, **params):
    """The jvp rule is batched with tangents batched like their primals (JAX's ``in_dims * 2``); its
    primal and tangent results both take the call's dimensions, as the JVP pass substitutes them for the
    call's results and their tangents."""
    key = ("custom_jvp_call", callee, jvp_callee, tuple(dims))

    def build():
        func = funcs.lookup(b.module, callee)
        n_args = len(funcs.arguments(func))
        jvp_in_dims = dims[:n_args - num_consts(func)] * 2 + dims[n_args:]
        if funcs.is_deferred(b.module, jvp_callee):
            return _batch_deferred_jvp(b, func, dims[:n_args], jvp_callee, jvp_in_dims)
        jvp = funcs.lookup(b.module, jvp_callee)

        def batch_jvp(call_dims):
            new_jvp, jvp_dims = _batch(b, jvp, jvp_in_dims)
            k = len(call_dims)
            return new_jvp, jvp_dims, _merge(call_dims, _merge(jvp_dims[:k], jvp_dims[k:]))
        pending, new_jvp, jvp_dims = _batch_until_agreed(b, func, dims[:n_args], key, batch_jvp)
        _move_results(b, new_jvp, jvp_dims, pending.out_dims * 2)
        rules = {"jvp_callee": new_jvp}
        pending.resolve(rules)
        return pending.callee, rules, pending.out_dims

    return _custom_call_batch(b, args, dims, key, build, params, {"jvp_callee": jvp_callee})


def _batch_deferred_jvp(b, func, dims, jvp_callee, jvp_in_dims):
    """A jvp rule not yet traced (``funcs.defer``) is batched when a pass first asks for it, its results moved to
    the batched callee's dimensions: batching it now would trace it, and the rules it calls in turn."""
    new_func, out_dims = _batch(b, func, dims)
    name = funcs.deferred_name(f"{jvp_callee}_batched")
    axis_size, axis_name = b.axis_size, b.axis_name

    def batch_into(module):
        rule = funcs.lookup(module, jvp_callee)
        new_jvp, jvp_dims = batch_function(module, rule, jvp_in_dims, axis_size, name, axis_name=axis_name)
        _move_results(SimpleNamespace(module=module, axis_size=axis_size, axis_name=axis_name, memo={}), new_jvp,
                      jvp_dims, out_dims * 2)
    funcs.defer(name, batch_into)
    return new_func, {"jvp_callee": name}, out_dims


def _custom_vjp_call_batch(b, args, dims, *, callee, fwd_callee, bwd_callee, **params):
    """fwd's outputs take the call's dimensions and its residuals keep theirs; bwd takes the residuals and
    the cotangents batched so, and returns each argument's cotangent batched as that argument (summed over
    the batch for a shared one, as JAX's ``_match_axes_and_sum``)."""
    key = ("custom_vjp_call", callee, fwd_callee, bwd_callee, tuple(dims))

    def build():
        func = funcs.lookup(b.module, callee)
        n_args = len(funcs.arguments(func))
        param_dims = dims[:n_args - num_consts(func)]
        if funcs.is_deferred(b.module, fwd_callee):
            return _batch_deferred_vjp(b, func, dims[:n_args], param_dims, fwd_callee, bwd_callee)
        fwd, bwd = funcs.lookup(b.module, fwd_callee), funcs.lookup(b.module, bwd_callee)
        n_fwd_consts = num_consts(fwd)

        def batch_fwd(call_dims):
            new_fwd, fwd_dims = _batch(b, fwd, param_dims + dims[n_args:n_args + n_fwd_consts])
            return new_fwd, fwd_dims, _merge(call_dims, fwd_dims[:len(call_dims)])
        pending, new_fwd, fwd_dims = _batch_until_agreed(b, func, dims[:n_args], key, batch_fwd)
        out_dims, res_dims = pending.out_dims, fwd_dims[len(pending.out_dims):]
        _move_results(b, new_fwd, fwd_dims, out_dims + res_dims)
        rules = {"fwd_callee": new_fwd,
                 "bwd_callee": _batched_bwd(b, bwd, res_dims + out_dims + dims[n_args + n_fwd_consts:], param_dims)}
        pending.resolve(rules)
        return pending.callee, rules, out_dims

    return _custom_call_batch(b, args, dims, key, build, params, {"fwd_callee": fwd_callee, "bwd_callee": bwd_callee})


def _batch_deferred_vjp(b, func, dims, param_dims, fwd_callee, bwd_callee):
    """Rules not yet traced (``funcs.defer``; they close over nothing) are batched when a pass first asks for
    them, as ``_batch_deferred_jvp``: fwd's outputs moved to the callee's dimensions, bwd batched after fwd, whose
    residuals' dimensions it takes."""
    new_func, out_dims = _batch(b, func, dims)
    sources = {"fwd_callee": fwd_callee, "bwd_callee": bwd_callee}
    names = {kind: funcs.deferred_name(f"{name}_batched") for kind, name in sources.items()}
    res_dims = {}  # module -> the batched fwd's residual dimensions there

    def batch_rule(module, kind, in_dims, wanted, sum_match=False):
        new, got = batch_function(module, funcs.lookup(module, sources[kind]), in_dims, b.axis_size, names[kind],
                                  axis_name=b.axis_name)
        at = SimpleNamespace(module=module, axis_size=b.axis_size, axis_name=b.axis_name, memo={})
        _move_results(at, new, got, wanted(got), sum_match)

    def fwd_into(module):
        def wanted(got):
            res_dims[module] = got[len(out_dims):]
            return out_dims + res_dims[module]
        batch_rule(module, "fwd_callee", param_dims, wanted)

    def bwd_into(module):
        funcs.lookup(module, names["fwd_callee"])
        batch_rule(module, "bwd_callee", res_dims[module] + out_dims, lambda got: param_dims, sum_match=True)
    funcs.defer(names["fwd_callee"], fwd_into)
    funcs.defer(names["bwd_callee"], bwd_into)
    return new_func, names, out_dims


def _batched_bwd(b, bwd, in_dims, grad_dims):
    new_bwd, dims = _batch(b, bwd, in_dims)
    _move_results(b, new_bwd, dims, grad_dims, sum_match=True)
    return new_bwd


def _custom_lin_batch(b, args, dims, *, num_res, bwd, bwd_callee):
    """Only the transpose reads a ``custom_lin``, so its results (bwd's cotangent arguments) may be batched
    anywhere: each at 0. bwd's results are the tangents' cotangents, batched as the tangents. (JAX raises
    here instead: its linearize never leaves a ``custom_lin`` where vmap can see it.)"""
    n_out = len(b.op.results)
    key = ("custom_lin", bwd_callee, tuple(dims))
    if key not in b.memo:
        func = funcs.lookup(b.module, bwd_callee)
        n_res = num_res - num_consts(func)
        b.memo[key] = _batched_bwd(b, func, dims[:n_res] + [0] * n_out + dims[n_res:num_res], dims[num_res:])
    op = _emit(b, "custom_lin", args, [batched_type(r.type, 0, b.axis_size) for r in b.op.results],
               {"num_res": num_res, "bwd": bwd, "bwd_callee": funcs.name_of(b.memo[key])})
    return list(op.results), [0] * n_out


BATCH_RULES["custom_jvp_call"] = _custom_jvp_call_batch
BATCH_RULES["custom_vjp_call"] = _custom_vjp_call_batch
BATCH_RULES["custom_lin"] = _custom_lin_batch
