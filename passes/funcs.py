"""Finding, creating and finishing the ``func.func``s that passes read and write."""
from __future__ import annotations

import itertools

from irax.ir.errors import PassPipelineError
from irax.ir.jaxpr_view import NUM_CONSTS_ATTR, body_ops
from irax.ir.mlir import func_op, ir, module_body, return_op


def functions(module):
    return [op for op in module_body(module).operations if op.operation.name == "func.func"]


def name_of(func) -> str:
    return ir.StringAttr(func.attributes["sym_name"]).value


def symbols(module):
    return {name_of(f): f for f in functions(module)}


# Functions named before they are traced: name -> a function tracing it into the module it is given.
_deferred: dict = {}
_deferred_names = itertools.count()


def defer(name: str, trace_into):
    """Names a function that ``lookup`` traces into a module when first asked for it there (a custom_jvp rule
    that calls its own function at another nondiff value: traced eagerly, it would trace the next one's rule
    and so on without end)."""
    _deferred[name] = trace_into


def deferred_name(base: str) -> str:
    """A name for a function that passes defer, unlike any other in any module."""
    return f"{base}_deferred{next(_deferred_names)}"


def is_deferred(module, name) -> bool:
    """Whether ``name`` is a deferred function not yet traced into ``module``."""
    return name in _deferred and name not in symbols(module)


def lookup(module, name):
    func = symbols(module).get(name)
    if func is None and name in _deferred:
        _deferred[name](module)
        func = symbols(module).get(name)
    if func is None:
        raise PassPipelineError(f"no function @{name} in the module")
    return func


def function_type(func):
    return ir.FunctionType(ir.TypeAttr(func.attributes["function_type"]).value)


def arguments(func) -> list:
    return list(func.regions[0].blocks[0].arguments)


def int_attr(value: int):
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), value)


def int_attribute(func, name, default=0) -> int:
    return ir.IntegerAttr(func.attributes[name]).value if name in func.attributes else default


def parse_ints(text) -> list:
    """A pass option listing ints, ``0,2``."""
    try:
        return [int(t) for t in str(text).split(",") if t.strip()]
    except ValueError:
        raise PassPipelineError(f"expected comma-separated integers, got {text!r}") from None


def new_function(module, name, arg_types, *, after, loc):
    """An empty ``func.func @name`` placed after ``after``; a taken name gets a numeric suffix."""
    taken = symbols(module)
    unique, k = name, 0
    while unique in taken:
        k += 1
        unique = f"{name}_{k}"
    with loc:
        func, block = func_op(unique, arg_types, ip=ir.InsertionPoint.after(after))
        if "sym_visibility" in after.attributes:
            func.attributes["sym_visibility"] = after.attributes["sym_visibility"]
    return func, block


def finish(func, block, results, *, n_consts=0):
    """Returns ``results`` and fixes the function's type; the last ``n_consts`` arguments are constants."""
    with func.location:
        return_op(results, ip=ir.InsertionPoint(block))
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], [r.type for r in results]))
        if n_consts:
            func.attributes[NUM_CONSTS_ATTR] = int_attr(n_consts)


def set_results(func, results):
    """Makes ``func`` return ``results`` instead of what it returned."""
    block = func.regions[0].blocks[0]
    body_ops(func)[-1].erase()
    with func.location:
        return_op(results, ip=ir.InsertionPoint(block))
        func.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get([a.type for a in block.arguments], [r.type for r in results]))


def inline_body(func, operands, ip) -> list:
    """Copies ``func``'s body before ``ip`` with its arguments bound to the leading ``operands``; returns
    the copies of its results."""
    mapping = dict(zip(arguments(func), operands))
    for op in body_ops(func):
        if op.name == "func.return":
            return [mapping.get(v, v) for v in op.operands]
        clone = op.clone(ip=ip)
        for i, operand in enumerate(op.operands):
            if operand in mapping:
                clone.operands[i] = mapping[operand]
        mapping.update(zip(op.results, clone.results))
    raise ValueError(f"@{name_of(func)} has no return")


def copy_function(module, func, arg_order, results, n_consts, name):
    """A copy of ``func`` named ``name`` (or that plus a suffix), taking its arguments in ``arg_order`` (indices
    of its arguments; one left out must be unused) and returning ``results`` (indices of its results), the last
    ``n_consts`` arguments being constants."""
    old_args = arguments(func)
    new, block = new_function(module, name, [old_args[i].type for i in arg_order], after=func, loc=func.location)
    bound = dict(zip(arg_order, block.arguments))
    outs = inline_body(func, [bound.get(i, a) for i, a in enumerate(old_args)], ir.InsertionPoint(block))
    finish(new, block, [outs[i] for i in results], n_consts=n_consts)
    return new


def rewire(module, func, arg_order, results, n_consts):
    """``func`` replaced by its ``copy_function`` under the same name: a body whose outputs were pruned or inputs
    moved, as JAX's ``prune_closed_jaxpr_outputs`` and ``move_binders_to_front`` leave one."""
    name = name_of(func)
    new = copy_function(module, func, arg_order, results, n_consts, name + "_rewired")
    func.erase()
    new.attributes["sym_name"] = ir.StringAttr.get(name)
    return new
