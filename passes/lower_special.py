"""StableHLO lowerings of the special functions CHLO lacks, or that IREE does not compile.

``bessel_i1e`` is ``chlo.bessel_i1e`` and ``zeta`` ``chlo.zeta`` (IREE compiles both, float32 and float64; zeta with
a fix for negative q), and ``reduce_precision`` is ``stablehlo.reduce_precision``. ``igamma``, ``igammac``,
``igamma_grad_a``, ``regularized_incomplete_beta`` and ``bessel_i0e`` have no CHLO op: JAX lowers them by tracing
its own series and continued fractions, and so does this module, running the algorithms of
``backends/numpy_special.py`` on values that emit StableHLO (loops as ``stablehlo.while``). Half-precision operands
are computed in float32, as JAX does; float64 ``lgamma``, ``digamma`` and ``log1p`` come from ``f64_math`` (IREE's
own call libm or lose precision).
"""
from __future__ import annotations

import contextlib
import functools
import types

import numpy as np

from irax.backends import numpy_special as NS
from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.mlir import ir
from irax.ir.params import dense_attr

from . import f64_math
from .to_stablehlo import _HALF, _convert_to, lowering

_F32, _F64, _BOOL = np.dtype(np.float32), np.dtype(np.float64), np.dtype(np.bool_)
_EMITTERS: list = []  # the innermost region being filled: every op goes there, captured values included


class _Emitter:
    def __init__(self, loc, ip, shape):
        self.loc, self.ip, self.shape = loc, ip, tuple(shape)
        self._consts = {}

    @contextlib.contextmanager
    def active(self):
        _EMITTERS.append(self)
        try:
            yield self
        finally:
            _EMITTERS.pop()

    def create(self, name, operands, result_types, attributes=None, regions=0):
        return ir.Operation.create(name, results=list(result_types), operands=[f64_math._value(o) for o in operands],
                                   attributes=attributes or {}, regions=regions, loc=self.loc, ip=self.ip)

    def op(self, name, operands, dtype, **attributes):
        attrs = {k: ir.Attribute.parse(v) for k, v in attributes.items()}
        return _Val(self.create(name, operands, [tensor_type(self.shape, dtype)], attrs).result, dtype)

    def const(self, value, dtype):
        key = (np.asarray(value, dtype).tobytes(), np.dtype(dtype))
        if key not in self._consts:
            t = tensor_type(self.shape, np.dtype(dtype))
            attr = dense_attr(np.full(self.shape, value, dtype), t)
            self._consts[key] = _Val(self.create("stablehlo.constant", [], [t], {"value": attr}).result, dtype)
        return self._consts[key]


def _em():
    return _EMITTERS[-1]


class _Val(f64_math._V):
    """A tensor of the lowering's shape whose operators emit StableHLO in the active region: the one being filled
    when the operator runs, so that a value captured from an outer region is used where it is needed."""

    __slots__ = ()
    __array_ufunc__ = None  # NumPy scalars on the left defer to the reflected operators
    em = property(lambda self: _em())

    def __init__(self, value, dtype):
        self.value, self.dtype = value, np.dtype(dtype)

    __eq__ = f64_math._V.eq
    __ne__ = f64_math._V.ne
    __hash__ = None


def _unary(name):
    return lambda x: _em().op(name, [x], x.dtype)


def _f64_or(name, hlo_name):
    """f64_math's expansion of ``name`` in float64, else the StableHLO/CHLO op."""
    def fn(x):
        if x.dtype == _F64:
            return _Val(f64_math.expand(_em(), name, _F64, _em().shape, [x.value]), _F64)
        return _em().op(hlo_name, [x], x.dtype)
    return fn


def _where(cond, a, b):
    ref = a if isinstance(a, _Val) else b
    return _em().op("stablehlo.select", [cond, ref.lift(a), ref.lift(b)], ref.dtype)


def _any(pred):
    em = _em()
    scalar = tensor_type((), _BOOL)
    if not em.shape:
        return pred.value
    init = em.create("stablehlo.constant", [], [scalar], {"value": ir.DenseElementsAttr.get_splat(
        scalar, ir.BoolAttr.get(False))}).result
    op = em.create("stablehlo.reduce", [pred, init], [scalar],
                   {"dimensions": ir.DenseI64ArrayAttr.get(list(range(len(em.shape))))}, regions=1)
    with em.loc:
        block = op.regions[0].blocks.append(scalar, scalar)
    inner = _Emitter(em.loc, ir.InsertionPoint(block), ())
    either = inner.create("stablehlo.or", list(block.arguments), [scalar]).result
    inner.create("stablehlo.return", [either], [])
    return op.result


def _while_loop(cond, body, init):
    """A stablehlo.while running ``body`` while ``cond`` holds for any element (each elementwise, full shape)."""
    em = _em()
    types = [tensor_type(em.shape, v.dtype) for v in init]
    op = em.create("stablehlo.while", init, types, regions=2)
    for region, fn in ((op.regions[0], lambda vs: [_any(cond(vs))]), (op.regions[1], lambda vs: body(vs))):
        with em.loc:
            block = region.blocks.append(*types)
        with _Emitter(em.loc, ir.InsertionPoint(block), em.shape).active() as inner:
            values = tuple(_Val(a, v.dtype) for a, v in zip(block.arguments, init))
            inner.create("stablehlo.return", list(fn(values)), [])
    return tuple(_Val(r, v.dtype) for r, v in zip(op.results, init))


STABLEHLO = types.SimpleNamespace(
    where=_where, log=_unary("stablehlo.log"), exp=_unary("stablehlo.exponential"),
    log1p=_f64_or("log1p", "stablehlo.log_plus_one"), sqrt=_unary("stablehlo.sqrt"), abs=_unary("stablehlo.abs"),
    floor=_unary("stablehlo.floor"), isnan=lambda x: x != x, lgamma=_f64_or("lgamma", "chlo.lgamma"),
    digamma=_f64_or("digamma", "chlo.digamma"), while_loop=_while_loop,
    full_like=lambda x, v: _em().const(v, x.dtype))


def _expanded(algorithm):
    """A lowering running ``algorithm(m, *operands, finfo, single)`` in float32 or float64 on broadcast operands."""
    def lower(ctx, *xs):
        out = ctx.result_avals[0]
        if 0 in out.shape:  # IREE rejects a stablehlo.while carrying empty tensors
            return ctx.constant(0, out.dtype, out.shape)
        dtype = _F64 if out.dtype == _F64 else _F32
        single = int(np.prod(out.shape)) == 1
        shape = (2,) if single else out.shape  # IREE fails to compile these loops on one-element tensors (below)
        operands = [_Val(_convert_to(ctx, _spread(ctx, ctx.broadcast(x, out.shape), shape), dtype), dtype)
                    for x in xs]
        with _Emitter(ctx.loc, ctx.ip, shape).active():
            result = algorithm(STABLEHLO, *operands, np.finfo(dtype), dtype == _F32).value
        if single:
            first = ctx.emit1("stablehlo.slice", [result], tensor_type((1,), dtype), start_indices=[0],
                              limit_indices=[1], strides=[1])
            result = ctx.emit1("stablehlo.reshape", [first], tensor_type(out.shape, dtype))
        return _convert_to(ctx, result, out.dtype)
    return lower


def _spread(ctx, x, shape):
    """A one-element ``x`` as ``shape``: IREE 3.13 rejects betainc's loop on one element ("'scf.while' op ... region
    branch point has 8 operands, but region successor needs 10 inputs") and igamma_grad_a's ("circular dependency:
    input operation uses partition output"); two elements compile."""
    aval = aval_of_type(x.type)
    if aval.shape == tuple(shape):
        return x
    return ctx.broadcast(ctx.emit1("stablehlo.reshape", [x], tensor_type((), aval.dtype)), shape)


lowering("igamma")(_expanded(lambda m, a, x, finfo, single: NS.igamma(m, a, x, finfo)))
lowering("igammac")(_expanded(lambda m, a, x, finfo, single: NS.igammac(m, a, x, finfo)))
lowering("igamma_grad_a")(_expanded(lambda m, a, x, finfo, single: NS.igamma_derivative(m, a, x, finfo,
                                                                                         NS.DERIVATIVE)))
lowering("regularized_incomplete_beta")(_expanded(NS.betainc))
lowering("bessel_i0e")(_expanded(lambda m, x, finfo, single: NS.bessel_i0e(m, x, single)))


def _chlo(name):
    """The CHLO op, computed in float32 for half-precision operands."""
    def lower(ctx, *xs):
        out = ctx.result_avals[0]
        dtype = _F32 if out.dtype in _HALF else out.dtype
        xs = [_convert_to(ctx, ctx.broadcast(x, out.shape), dtype) for x in xs]
        return _convert_to(ctx, ctx.emit1(name, xs, tensor_type(out.shape, dtype)), out.dtype)
    return lower




@lowering("zeta")
def _zeta(ctx, x, q):
    """chlo.zeta, whose expansion IREE compiles with a ``stablehlo.power`` that is NaN for negative bases: a
    negative non-integer q with an integer x (a finite zeta) is first shifted past zero,
    zeta(x, q) = zeta(x, q + n) + sum over k < n of (q + k) ** -x, in a loop."""
    out = ctx.result_avals[0]
    if 0 in out.shape:
        return ctx.constant(0, out.dtype, out.shape)
    dtype = _F32 if out.dtype in _HALF else out.dtype
    x, q = (_convert_to(ctx, ctx.broadcast(v, out.shape), dtype) for v in (x, q))
    with _Emitter(ctx.loc, ctx.ip, out.shape).active() as em:
        xv, qv = _Val(x, dtype), _Val(q, dtype)
        floor = STABLEHLO.floor
        shift = (qv < 0.0) & (xv == floor(xv)) & (qv != floor(qv))
        odd = xv - 2.0 * floor(xv * 0.5) != 0.0

        def body(vals):
            qk, acc = vals
            active = shift & (qk < 0.0)
            magnitude = STABLEHLO.exp(-xv * STABLEHLO.log(STABLEHLO.abs(qk)))
            term = _where(odd & (qk < 0.0), -magnitude, magnitude)
            return _where(active, qk + 1.0, qk), _where(active, acc + term, acc)

        shifted, acc = _while_loop(lambda v: shift & (v[0] < 0.0), body, (qv, em.const(0.0, dtype)))
        zeta = em.op("chlo.zeta", [xv, shifted], dtype)
        result = _where(shift, zeta + acc, zeta)
    return _convert_to(ctx, result.value, out.dtype)
lowering("bessel_i1e")(_chlo("chlo.bessel_i1e"))


@lowering("reduce_precision")
def _reduce_precision(ctx, x, *, exponent_bits, mantissa_bits):
    i32 = functools.partial(ir.IntegerAttr.get, ir.IntegerType.get_signless(32))
    return ctx.emit1("stablehlo.reduce_precision", [x], exponent_bits=i32(exponent_bits),
                     mantissa_bits=i32(mantissa_bits))

