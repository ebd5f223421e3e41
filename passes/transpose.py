"""``jaxpr-transpose``: reverse mode, by transposing a linear function.

``@f_lin(residuals, t) -> u`` becomes ``@f_lin_t(residuals, ct_u) -> ct_t``. Ops
that use no linear value are evaluated forward first; then the linear ops are
visited in reverse, each through its rule in ``TRANSPOSE_RULES``, accumulating
cotangents with ``add_any`` (old first, as JAX's backward pass does). An op
whose outputs have no cotangent is skipped, and inputs with none get zeros at
the end.
"""
from __future__ import annotations

import dataclasses

from irax.ir.dialect import decode_params
from irax.ir.jaxpr_view import body_ops
from irax.ir.mlir import ir
from irax.ir.ops import OPS

from . import funcs
from .builder import Builder, aval
from .linearize import NUM_RESIDUALS_ATTR
from .simplify import has_effects
from .registry import register_pass

TRANSPOSE_RULES: dict = {}
# Ops linear in each of their two operands apart: a product of two linear values is not linear.
_BILINEAR = {"mul", "dot_general", "conv_general_dilated"}
SYMBOLIC_ZERO_CTS: set = set()  # multi-result ops whose rule takes None for a zero cotangent (JAX's Zero)


@dataclasses.dataclass(frozen=True)
class Undefined:
    """A linear input of the op being transposed (JAX's ``UndefinedPrimal``)."""

    aval: object


def is_undefined(x) -> bool:
    return isinstance(x, Undefined)


@register_pass("jaxpr-transpose", "Transposes a linear function @f (its leading jaxpr.num_residuals arguments are "
               "constants) into @f_t(residuals, cotangents of the results) -> cotangents of the linear arguments")
def transpose_pass(module, func="main_jvp_lin"):
    transpose_function(module, funcs.lookup(module, func))


def transpose_function(module, source, zero_cts=(), trailing_residuals=0):
    """``zero_cts`` lists results whose cotangent is known to be zero: the transpose takes none for them.
    ``trailing_residuals`` counts constants after the linear arguments (a traced function's closed-over values)."""
    args = funcs.arguments(source)
    n_res = funcs.int_attribute(source, NUM_RESIDUALS_ATTR)
    n_linear = len(args) - trailing_residuals
    residuals, linear_args = args[:n_res] + args[n_linear:], args[n_res:n_linear]
    n_res = len(residuals)
    body = body_ops(source)
    returned = [v for i, v in enumerate(body[-1].operands) if i not in zero_cts]
    new, block = funcs.new_function(module, f"{funcs.name_of(source)}_t",
                                    [r.type for r in residuals] + [v.type for v in returned],
                                    after=source, loc=source.location)
    new_args = list(block.arguments)
    ip = ir.InsertionPoint(block)
    env = dict(zip(residuals, new_args[:n_res]))
    linear = set(linear_args)
    linear_ops, forward_ops = [], []
    for op in body[:-1]:
        if any(v in linear for v in op.operands):
            linear_ops.append(op)
            linear.update(op.results)
        else:
            forward_ops.append(op)
    table, memo = funcs.symbols(module), {}
    effects = [op for op in forward_ops if has_effects(op, table, memo)]  # a recomputed print runs again
    needed = _needed_forward(forward_ops, linear_ops, effects)
    for op in forward_ops:
        if op not in needed:
            continue
        clone = op.clone(ip=ip)
        for i, v in enumerate(op.operands):
            clone.operands[i] = env[v]
        env.update(zip(op.results, clone.results))

    cts = {}
    b = Builder(ip, source.location, module)

    def accumulate(value, ct):
        cts[value] = b.add_any(cts[value], ct) if value in cts else ct

    for value, ct in zip(returned, new_args[n_res:]):
        if value in linear:
            accumulate(value, ct)
    for op in reversed(linear_ops):
        cts_out = [cts.pop(r, None) for r in op.results]
        if all(ct is None for ct in cts_out):
            continue
        name = op.name[len("jaxpr."):]
        rule = TRANSPOSE_RULES.get(name)
        if rule is None:
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) for '{name}' not "
                                      "implemented")
        b.loc = op.location
        operands = [Undefined(aval(v)) if v in linear else env[v] for v in op.operands]
        if name in _BILINEAR and all(map(is_undefined, operands[:2])):
            raise NotImplementedError(f"Transpose of '{name}' with both operands linear: the function is not linear")
        if len(cts_out) > 1 and name not in SYMBOLIC_ZERO_CTS:  # every cotangent, zeros instantiated
            cts_out = [b.full(aval(r).shape, aval(r).dtype, 0) if ct is None else ct
                       for ct, r in zip(cts_out, op.results)]
        ct_arg = cts_out if len(cts_out) > 1 else cts_out[0]
        cts_in = rule(b, ct_arg, *operands, **decode_params(OPS[name], op))
        for v, ct in zip(op.operands, cts_in):
            if ct is not None and v in linear:
                accumulate(v, ct)
    b.loc = source.location
    results = [cts[v] if v in cts else b.full(aval(v).shape, aval(v).dtype, 0) for v in linear_args]
    funcs.finish(new, block, results)
    return new


def _needed_forward(forward_ops, linear_ops, effects):
    """The non-linear ops whose values the linear ops use, directly or not, and the effectful ones with what they
    use: only those are evaluated."""
    producers = {r: op for op in forward_ops for r in op.results}
    needed, stack = set(effects), [v for op in linear_ops + effects for v in op.operands]
    while stack:
        op = producers.get(stack.pop())
        if op is not None and op not in needed:
            needed.add(op)
            stack.extend(op.operands)
    return needed


from . import transpose_rules  # noqa: E402,F401  (fills TRANSPOSE_RULES)
