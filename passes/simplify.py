"""``jaxpr-inline``, ``jaxpr-dce`` and ``jaxpr-cse``.

MLIR treats unregistered ops as side-effecting, so its own ``inline``, DCE and
``cse`` leave ``jaxpr.*`` ops alone; every jaxpr primitive but the effectful host
callbacks (``io_callback``, ``jax.debug``'s) is pure, so these passes can inline,
drop and merge the others freely.
"""
from __future__ import annotations

from irax.ir.callbacks import EFFECTFUL
from irax.ir.control_flow import referenced_symbols
from irax.ir.jaxpr_view import body_ops
from irax.ir.ops import CALL_BODY_PARAMS
from irax.ir.mlir import ir

from .funcs import functions, inline_body, symbols
from .registry import register_pass


@register_pass("jaxpr-inline", "Inlines every call (jaxpr.pjit, custom_jvp_call, custom_vjp_call) into its caller")
def inline(module):
    table = symbols(module)
    changed = True
    while changed:
        changed = False
        for func in functions(module):
            for op in body_ops(func):
                if op.name[len("jaxpr."):] in CALL_BODY_PARAMS:
                    callee = table[ir.FlatSymbolRefAttr(op.attributes["callee"]).value]
                    inline_call(op, callee)
                    changed = True
    _erase_unreferenced(module)


def inline_call(call, callee):
    """Replaces ``call`` by a copy of ``callee``'s body (the callee takes the call's leading operands)."""
    results = inline_body(callee, list(call.operands), ir.InsertionPoint(call))
    for old, new in zip(call.results, results):
        old.replace_all_uses_with(new)
    call.erase()


def _erase_unreferenced(module):
    used = set()
    for func in functions(module):
        for op in body_ops(func):
            used.update(referenced_symbols(op))
    for func in functions(module):
        visibility = func.attributes["sym_visibility"] if "sym_visibility" in func.attributes else None
        name = ir.StringAttr(func.attributes["sym_name"]).value
        if visibility is not None and ir.StringAttr(visibility).value == "private" and name not in used:
            func.erase()


@register_pass("jaxpr-dce", "Removes jaxpr ops whose results are never used")
def dce(module):
    for func in functions(module):
        dce_function(func)


def dce_function(func, nested=False):
    """Erases the pure ops of ``func`` whose results are unused; with ``nested``, those of the functions its ops
    call too (bodies, branches, callees), as JAX's ``dce_jaxpr`` of a known half goes into the equations it keeps.
    Only dead ops go, so a function called from elsewhere too computes the same."""
    if not nested:
        _erase_dead_ops(func)
        return
    table, seen, pending = symbols(func.operation.parent.opview), set(), [func]
    while pending:
        current = pending.pop()
        _erase_dead_ops(current, table)
        for op in body_ops(current):
            for name in referenced_symbols(op):
                if name in table and name not in seen:
                    seen.add(name)
                    pending.append(table[name])


def _erase_dead_ops(func, table=None):
    memo = {}
    for op in reversed(body_ops(func)):
        if op.name.startswith("jaxpr.") and all(_unused(r) for r in op.results):
            if table is None:
                table = symbols(func.operation.parent.opview)
            if not has_effects(op, table, memo):
                op.erase()


def has_effects(op, table, memo=None) -> bool:
    """Whether ``op`` is an effectful callback, or calls a function (a body, a callee) holding one. ``memo`` keeps
    each function's answer (a function being looked into counts as pure: rules may call their own function)."""
    if op.name[len("jaxpr."):] in EFFECTFUL:
        return True
    memo = {} if memo is None else memo
    for name in referenced_symbols(op):
        if name in table and name not in memo:
            memo[name] = False
            memo[name] = any(has_effects(inner, table, memo) for inner in body_ops(table[name]))
        if memo.get(name):
            return True
    return False


def _unused(value) -> bool:
    for _ in value.uses:
        return False
    return True


@register_pass("jaxpr-cse", "Merges jaxpr ops with the same name, operands and attributes")
def cse(module):
    for func in functions(module):
        seen = {}
        for op in body_ops(func):
            if not op.name.startswith("jaxpr.") or len(op.regions) or op.name[len("jaxpr."):] in EFFECTFUL:
                continue
            key = (op.name, tuple(op.operands), tuple(str(r.type) for r in op.results),
                   tuple(sorted((name, str(op.attributes[name])) for name in op.attributes)))
            first = seen.get(key)
            if first is None:
                seen[key] = op
                continue
            for old, new in zip(op.results, first.results):
                old.replace_all_uses_with(new)
            op.erase()
