"""A read-only view of a ``func.func`` of jaxpr ops as JAX's Jaxpr structure.

The printer, the reference interpreter and ``ClosedJaxpr.jaxpr`` all read
functions through this view: constvars, invars, equations and outvars, with
``jaxpr.literal`` operands shown as literals the way JAX inlines them.
"""
from __future__ import annotations

import dataclasses

from .dialect import aval_of_type, decode_params
from .mlir import ir
from .ops import OPS, PRIMITIVES, OpDef, Primitive

NUM_CONSTS_ATTR = "jaxpr.num_consts"


@dataclasses.dataclass(frozen=True)
class Var:
    value: object  # the ir.Value
    scope: object = None  # tells apart the variables of two views of one function (see ``view``)

    @property
    def aval(self):
        return aval_of_type(self.value.type)


@dataclasses.dataclass(frozen=True)
class Literal:
    value: object  # a 0-d numpy array
    aval: object
    shown: str | None = None  # the Python scalar's text, where JAX keeps the Python value


@dataclasses.dataclass
class Eqn:
    opdef: OpDef
    params: dict
    invars: list
    outvars: list
    op: object  # the ir.Operation

    @property
    def primitive(self) -> Primitive:
        return PRIMITIVES[self.opdef.name]


@dataclasses.dataclass
class JaxprView:
    func: object
    constvars: list
    invars: list
    eqns: list
    outvars: list


def body_ops(func_op) -> list:
    """The ops directly in a function's body, in order.

    Walks instead of iterating ``block.operations`` (quadratic in the bindings),
    and skips nested regions, which belong to their own op.
    """
    ops = []
    func_op = func_op.operation

    def visit(op):
        if op == func_op:
            return ir.WalkResult.ADVANCE
        ops.append(op)
        return ir.WalkResult.SKIP if len(op.regions) else ir.WalkResult.ADVANCE
    func_op.walk(visit, ir.WalkOrder.PRE_ORDER)
    return ops


def num_consts(func_op) -> int:
    """How many trailing arguments are closed-over values (constvars)."""
    attrs = func_op.attributes
    return ir.IntegerAttr(attrs[NUM_CONSTS_ATTR]).value if NUM_CONSTS_ATTR in attrs else 0


def view(func_op, *, nested: bool = False, scope=None) -> JaxprView:
    """Reads ``func_op``; a ``nested`` body shows its closed-over values as leading
    inputs, as JAX prints a jit body (its caller passes them explicitly). Views of one
    function with different ``scope`` have distinct variables, as JAX's retraced bodies do."""
    func_op = func_op.operation if hasattr(func_op, "operation") else func_op
    body = func_op.regions[0].blocks[0]
    args = list(body.arguments)
    n_consts = num_consts(func_op)
    n_params = len(args) - n_consts
    literals = {}
    eqns = []
    outvars = []
    for op in body_ops(func_op):
        name = op.name
        if name == "jaxpr.literal":
            lit_params = decode_params(OPS["literal"], op)
            literals[op.result] = Literal(lit_params["value"], aval_of_type(op.result.type), lit_params.get("shown"))
            continue
        if name == "func.return":
            outvars = [literals.get(v) or Var(v, scope) for v in op.operands]
            continue
        if not name.startswith("jaxpr."):
            raise ValueError(f"op {name} is not a jaxpr op")
        opdef = OPS[name[6:]]
        eqns.append(Eqn(opdef, decode_params(opdef, op),
                        [literals.get(v) or Var(v, scope) for v in op.operands],
                        [Var(r, scope) for r in op.results], op))
    params, consts = [Var(a, scope) for a in args[:n_params]], [Var(a, scope) for a in args[n_params:]]
    if nested:
        return JaxprView(func_op, [], consts + params, eqns, outvars)
    return JaxprView(func_op, consts, params, eqns, outvars)


def rotate_call_operands(invars, n_consts: int):
    """A call's operands in JAX's order: closed-over values first."""
    if not n_consts:
        return list(invars)
    return list(invars[-n_consts:]) + list(invars[:-n_consts])
