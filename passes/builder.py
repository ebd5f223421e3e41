"""Emitting jaxpr ops from a pass's rules.

Rules are written the way JAX writes them, ``b.mul(g, b.cos(x))``: the builder
creates each ``jaxpr.<name>`` op at its insertion point with result types from
the op table's shape rule, so a rule states only what it computes. A Python
scalar operand becomes a ``jaxpr.literal`` of the other operands' dtype, which
prints inline as JAX's literals do.
"""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import aval_of_type, encode_params, tensor_type, tensor_type_of
from irax.ir.mlir import ir
from irax.ir.ops import OPS


def aval(value):
    return aval_of_type(value.type)


class Builder:
    """Emits ops before ``ip`` (an ``ir.InsertionPoint``) at location ``loc``."""

    def __init__(self, ip, loc, module=None):
        self.ip = ip
        self.loc = loc
        self.module = module  # for rules that read other functions (calls, custom rules)

    def bind(self, primitive: str, *operands, **params) -> list:
        opdef = OPS[primitive]
        dtype = next((aval(x).dtype for x in operands if isinstance(x, ir.Value)), None)
        values = [x if isinstance(x, ir.Value) else self.literal(x, dtype) for x in operands]
        params = {p.name: params.get(p.name) for p in opdef.params if p.kind.stored}
        avals_out = opdef.result_avals([aval(v) for v in values], params)
        op = ir.Operation.create(opdef.mlir_name, results=[tensor_type_of(a) for a in avals_out], operands=values,
                                 attributes=encode_params(opdef, params), loc=self.loc, ip=self.ip)
        return list(op.results)

    def call(self, callee, operands, primitive="pjit", **params) -> list:
        """A call of the function ``callee``: a ``jaxpr.pjit`` (give its ``name``), or ``primitive`` with its
        other ``params`` (a checkpoint)."""
        from .funcs import function_type, name_of
        result_types = list(function_type(callee).results)
        op = ir.Operation.create(f"jaxpr.{primitive}", results=result_types, operands=list(operands),
                                 attributes=encode_params(OPS[primitive], {**params, "callee": name_of(callee)}),
                                 loc=self.loc, ip=self.ip)
        return list(op.results)

    def emit(self, primitive, operands, result_types, **params) -> list:
        """An op whose result types its callees give (a control-flow op), not a shape rule."""
        op = ir.Operation.create(f"jaxpr.{primitive}", results=list(result_types), operands=list(operands),
                                 attributes=encode_params(OPS[primitive], params), loc=self.loc, ip=self.ip)
        return list(op.results)

    def __getattr__(self, name):
        if name not in OPS:
            raise AttributeError(name)
        return lambda *operands, **params: self.bind(name, *operands, **params)[0]

    def literal(self, value, dtype, weak_type=False):
        array = np.asarray(value, dtype)
        params = {"value": array, "weak_type": True if weak_type else None, "shown": None}
        op = ir.Operation.create("jaxpr.literal", results=[tensor_type((), array.dtype)],
                                 attributes=encode_params(OPS["literal"], params), loc=self.loc, ip=self.ip)
        return op.result

    def full_like(self, x, fill):
        """``fill`` in the shape and dtype of ``x``: a literal for a scalar, else a broadcast of one (as JAX's
        ``full_like``)."""
        a = aval(x)
        return self.full(a.shape, a.dtype, fill)

    def full(self, shape, dtype, fill):
        lit = self.literal(fill, dtype)
        if shape == ():
            return lit
        return self.broadcast_in_dim(lit, shape=tuple(shape), broadcast_dimensions=())

    def zeros_like(self, x):
        return self.full_like(x, 0)
