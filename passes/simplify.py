"""``jaxpr-inline``, ``jaxpr-dce`` and ``jaxpr-cse``.

MLIR treats unregistered ops as side-effecting, so its own ``inline``, DCE and
``cse`` leave ``jaxpr.*`` ops alone; every jaxpr primitive is pure, so these
passes can inline, drop and merge them freely.
"""
from __future__ import annotations

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


def dce_function(func):
    for op in reversed(body_ops(func)):
        if op.name.startswith("jaxpr.") and all(_unused(r) for r in op.results):
            op.erase()


def _unused(value) -> bool:
    for _ in value.uses:
        return False
    return True


@register_pass("jaxpr-cse", "Merges jaxpr ops with the same name, operands and attributes")
def cse(module):
    for func in functions(module):
        seen = {}
        for op in body_ops(func):
            if not op.name.startswith("jaxpr.") or len(op.regions):
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
