"""Lowering of ``tile`` (a broadcast to ``(r0, d0, r1, d1, ...)`` then a reshape, as JAX's ``_tile_lower``),
``unstack`` (unit slices), ``mulhi`` (JAX's widening or 32-bit split), ``optimization_barrier`` (StableHLO's own)
and ``approx_top_k`` (exact, as XLA's CPU fallback: ``top_k``'s sort, of the negation for the smallest)."""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.extras import platform_branch

from .lower_sort import _top_k
from .to_stablehlo import lowering


@lowering("tile")
def _tile(ctx, x, *, reps):
    aval = aval_of_type(x.type)
    shape = tuple(k for pair in zip(reps, aval.shape) for k in pair)
    wide = ctx.emit1("stablehlo.broadcast_in_dim", [x], tensor_type(shape, aval.dtype),
                     broadcast_dimensions=list(range(1, 2 * aval.ndim, 2)))
    return ctx.emit1("stablehlo.reshape", [wide])


@lowering("unstack")
def _unstack(ctx, x, *, axis):
    """A unit slice per index, reshaped (JAX's ``_unstack_lower``)."""
    shape = aval_of_type(x.type).shape
    outs = []
    for i, result in enumerate(ctx.op.results):
        starts = [i if d == axis else 0 for d in range(len(shape))]
        limits = [i + 1 if d == axis else n for d, n in enumerate(shape)]
        piece = ctx.emit1("stablehlo.slice", [x], tensor_type(tuple(limit - start for start, limit in zip(
            starts, limits)), aval_of_type(x.type).dtype), start_indices=starts, limit_indices=limits,
            strides=[1] * len(shape))
        outs.append(ctx.emit1("stablehlo.reshape", [piece], result.type))
    return outs


@lowering("mulhi")
def _mulhi(ctx, x, y):
    """JAX's ``_mulhi_impl``: a widened product shifted down, or for 64 bits the four 32-bit partial products
    (unsigned, then the signed correction)."""
    out = ctx.result_avals[0]
    shape, dtype = out.shape, out.dtype
    x, y = ctx.broadcast(x, shape), ctx.broadcast(y, shape)
    bits, signed = dtype.itemsize * 8, dtype.kind == "i"

    def op(name, *values):
        return ctx.emit1(f"stablehlo.{name}", list(values), values[0].type)

    def convert(v, to):
        return ctx.emit1("stablehlo.convert", [v], tensor_type(shape, to))
    if bits < 64:
        wide = np.dtype(f"{dtype.kind}{2 * dtype.itemsize}")
        prod = op("multiply", convert(x, wide), convert(y, wide))
        shift = "shift_right_arithmetic" if signed else "shift_right_logical"
        return convert(op(shift, prod, ctx.constant(bits, wide, shape)), dtype)
    u64 = np.dtype(np.uint64)
    xu, yu = convert(x, u64), convert(y, u64)
    mask, half = ctx.constant(0xFFFFFFFF, u64, shape), ctx.constant(32, u64, shape)
    x_lo, x_hi = op("and", xu, mask), op("shift_right_logical", xu, half)
    y_lo, y_hi = op("and", yu, mask), op("shift_right_logical", yu, half)
    lo_hi, hi_lo = op("multiply", x_lo, y_hi), op("multiply", x_hi, y_lo)
    cross = op("add", op("add", op("and", lo_hi, mask), op("and", hi_lo, mask)),
               op("shift_right_logical", op("multiply", x_lo, y_lo), half))
    high = op("add", op("multiply", x_hi, y_hi), op("add", op("shift_right_logical", lo_hi, half), op(
        "add", op("shift_right_logical", hi_lo, half), op("shift_right_logical", cross, half))))
    high = convert(high, dtype)
    if signed:
        sign = ctx.constant(63, dtype, shape)
        high = op("add", high, op("add", op("multiply", op("shift_right_arithmetic", x, sign), y),
                                  op("multiply", op("shift_right_arithmetic", y, sign), x)))
    return high


@lowering("optimization_barrier")
def _optimization_barrier(ctx, *xs):
    return list(ctx.emit("stablehlo.optimization_barrier", xs, [x.type for x in xs]).results)


@lowering("device_put")
def _device_put(ctx, *xs, **params):
    return list(xs)


@lowering("platform_index")
def _platform_index(ctx, *, platforms):
    return ctx.constant(platform_branch(platforms), np.int32)


@lowering("approx_top_k")
def _approx_top_k(ctx, x, *, k, reduction_dimension, is_max_k, **params):
    axis = reduction_dimension % len(aval_of_type(x.type).shape)
    k = ctx.result_avals[0].shape[axis]  # the candidates aggregate_to_topk=False keeps, as XLA counts them
    if is_max_k:
        return _top_k(ctx, x, k=k, axis=axis)
    values, indices = _top_k(ctx, ctx.emit1("stablehlo.negate", [x], x.type), k=k, axis=axis)
    return [ctx.emit1("stablehlo.negate", [values], values.type), indices]
