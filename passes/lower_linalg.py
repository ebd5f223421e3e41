"""The emitter the linear algebra lowerings share, and their stacks of matrices.

IREE 3.13 rejects ``stablehlo.cholesky`` and ``stablehlo.triangular_solve`` ("failed to legalize operation ...
explicitly marked illegal"), and JAX's CPU lowerings are LAPACK custom calls, so each decomposition is written as
loops of ordinary ops over a stack of matrices (the batch dimensions flattened into one), the entries outside a
step's reach masked by iota comparisons so that every step has the same shapes. Half-precision operands are
computed in float32.
"""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.mlir import ir
from irax.ir.params import dense_attr
from irax.ir.shapes import issubdtype

from .to_stablehlo import _HALF, _attr, _compare_type

_I32, _BOOL, _F32 = np.dtype(np.int32), np.dtype(np.bool_), np.dtype(np.float32)


class _Emit:
    """Emits StableHLO ops at one insertion point, result types inferred from the operands."""

    def __init__(self, loc, ip):
        self.loc, self.ip = loc, ip

    def op(self, name, operands, shape, dtype, regions=0, **attrs):
        return ir.Operation.create(name, results=[tensor_type(tuple(shape), np.dtype(dtype))], operands=list(operands),
                                   attributes={k: _attr(v) for k, v in attrs.items()}, regions=regions, loc=self.loc,
                                   ip=self.ip)

    def const(self, value, dtype, shape=()):
        t = tensor_type(tuple(shape), np.dtype(dtype))
        return ir.Operation.create("stablehlo.constant", results=[t], attributes={
            "value": dense_attr(np.full(shape, value, dtype), t)}, loc=self.loc, ip=self.ip).result

    def bcast(self, x, shape, dims):
        return self.op("stablehlo.broadcast_in_dim", [x], shape, _dtype(x), broadcast_dimensions=list(dims)).result

    def same(self, name, *xs):
        return self.op(name, xs, _shape(xs[0]), _dtype(xs[0])).result

    def add(self, x, y):
        return self.same("stablehlo.add", x, y)

    def sub(self, x, y):
        return self.same("stablehlo.subtract", x, y)

    def mul(self, x, y):
        return self.same("stablehlo.multiply", x, y)

    def div(self, x, y):
        return self.same("stablehlo.divide", x, y)

    def select(self, pred, x, y):
        return self.op("stablehlo.select", [pred, x, y], _shape(x), _dtype(x)).result

    def cmp(self, x, y, direction):
        return self.op("stablehlo.compare", [x, y], _shape(x), _BOOL,
                       comparison_direction=f"#stablehlo<comparison_direction {direction}>",
                       compare_type=f"#stablehlo<comparison_type {_compare_type(_dtype(x))}>").result

    def iota(self, shape, dim):
        return self.op("stablehlo.iota", [], shape, _I32, iota_dimension=int(dim)).result

    def at(self, k, shape):
        """The scalar ``k`` broadcast to ``shape``."""
        return self.bcast(k, shape, ())

    def reshape(self, x, shape):
        return self.op("stablehlo.reshape", [x], shape, _dtype(x)).result

    def barrier(self, *xs):
        """The values a loop reads from above, through an ``optimization_barrier``: IREE 3.13 otherwise fuses
        their producers into the loop body's slices, and a gather so fused with 1x1 slices fails to compile
        ("'arith.subf' op requires the same type for all operands and results": vector<f32> against f32)."""
        op = ir.Operation.create("stablehlo.optimization_barrier", results=[x.type for x in xs], operands=list(xs),
                                 loc=self.loc, ip=self.ip)
        return list(op.results)

    def convert(self, x, dtype):
        return x if _dtype(x) == dtype else self.op("stablehlo.convert", [x], _shape(x), dtype).result

    def part(self, name, x):
        """``stablehlo.real`` or ``stablehlo.imag`` of a complex ``x``."""
        return self.op(f"stablehlo.{name}", [x], _shape(x), np.finfo(_dtype(x)).dtype).result

    def conj(self, x):
        if not issubdtype(_dtype(x), np.complexfloating):
            return x
        im = self.same("stablehlo.negate", self.part("imag", x))
        return self.op("stablehlo.complex", [self.part("real", x), im], _shape(x), _dtype(x)).result

    def transpose_last(self, x):
        return self.op("stablehlo.transpose", [x], _shape(x)[:-2] + _shape(x)[:-3:-1], _dtype(x),
                       permutation=[0, 2, 1]).result

    def slice(self, x, starts, sizes):
        """``stablehlo.dynamic_slice`` at the scalar i32 ``starts``; a None in ``sizes`` is a dimension of size 1
        that the result drops."""
        full = [1 if s is None else s for s in sizes]
        window = self.op("stablehlo.dynamic_slice", [x] + list(starts), full, _dtype(x), slice_sizes=full).result
        return self.reshape(window, [s for s in sizes if s is not None])

    def update(self, x, window, starts):
        return self.op("stablehlo.dynamic_update_slice", [x, window] + list(starts), _shape(x), _dtype(x)).result

    def dot(self, lhs, rhs, contracting, out_shape):
        """A ``dot_general`` batched over the leading dimension of both operands."""
        lc, rc = contracting
        attr = (f"#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
                f"lhs_contracting_dimensions = [{lc}], rhs_contracting_dimensions = [{rc}]>")
        return self.op("stablehlo.dot_general", [lhs, rhs], out_shape, _dtype(lhs), dot_dimension_numbers=attr).result

    def reduce(self, x, dim, body, init):
        shape = [d for i, d in enumerate(_shape(x)) if i != dim]
        dtype = _dtype(x)
        op = self.op("stablehlo.reduce", [x, self.const(init, dtype)], shape, dtype, regions=1, dimensions=[dim])
        scalar = tensor_type((), dtype)
        with self.loc:
            block = op.regions[0].blocks.append(scalar, scalar)
        inner = _Emit(self.loc, ir.InsertionPoint(block))
        r = inner.op(body, list(block.arguments), (), dtype).result
        ir.Operation.create("stablehlo.return", results=[], operands=[r], loc=self.loc, ip=inner.ip)
        return op.result

    def fori(self, n, state, body):
        """``body(emit, k, state) -> state`` for k in 0..n-1 (an i32 counter), as one ``stablehlo.while``."""
        init = [self.const(0, _I32)] + list(state)
        types = [v.type for v in init]
        op = ir.Operation.create("stablehlo.while", results=types, operands=init, regions=2, loc=self.loc,
                                 ip=self.ip)
        with self.loc:
            cond_block = op.regions[0].blocks.append(*types)
            body_block = op.regions[1].blocks.append(*types)
        cond = _Emit(self.loc, ir.InsertionPoint(cond_block))
        more = cond.cmp(cond_block.arguments[0], cond.const(n, _I32), "LT")
        ir.Operation.create("stablehlo.return", results=[], operands=[more], loc=self.loc, ip=cond.ip)
        inner = _Emit(self.loc, ir.InsertionPoint(body_block))
        k, *carry = body_block.arguments
        outs = body(inner, k, carry)
        next_k = inner.add(k, inner.const(1, _I32))
        ir.Operation.create("stablehlo.return", results=[], operands=[next_k] + list(outs), loc=self.loc,
                            ip=inner.ip)
        return list(op.results)[1:]


def _shape(x):
    return aval_of_type(x.type).shape


def _dtype(x):
    return aval_of_type(x.type).dtype


def _emitter(ctx):
    return _Emit(ctx.loc, ctx.ip)


def _as_stack(e, x):
    """``x`` as a stack of matrices in its computing dtype (float32 for half precision)."""
    shape = _shape(x)
    dtype = _dtype(x)
    x = e.convert(x, _F32) if dtype in _HALF else x
    return e.reshape(x, (int(np.prod(shape[:-2], dtype=np.int64)),) + tuple(shape[-2:]))


def _from_stack(e, x, aval):
    return e.convert(e.reshape(x, aval.shape), aval.dtype)
