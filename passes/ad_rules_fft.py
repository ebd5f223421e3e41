"""JVP and transpose of ``fft``, ports of ``jax/_src/lax/fft.py``'s ``ad.deflinear2(fft_p, _fft_transpose_rule)``.

FFT and IFFT transpose to themselves (the DFT matrix is symmetric); RFFT and IRFFT transpose to each other, with a
mask that weighs the terms RFFT keeps once for two (all but DC and Nyquist). JAX's rules call the jitted
``lax.fft`` (and a jitted ``_rfft_transpose``), so these emit the same nested ``jit``s and ``make_jaxpr`` prints
JAX's text."""
from __future__ import annotations

import math

import numpy as np

from irax.ir.fft import FftType
from irax.ir.mlir import ir

from . import funcs
from .builder import Builder, aval
from .jvp import deflinear
from .transpose import TRANSPOSE_RULES


def _staged(b, name, fn, operands):
    """``fn(builder, *operands)`` inside a ``jit`` named ``name``: a private function of the module, called."""
    func, block = funcs.new_function(b.module, name, [v.type for v in operands], after=b.ip.block.owner, loc=b.loc)
    func.attributes["sym_visibility"] = ir.StringAttr.get("private")
    funcs.finish(func, block, [fn(Builder(ir.InsertionPoint(block), b.loc, b.module), *block.arguments)])
    return b.call(func, operands, name=name)[0]


def staged_fft(b, x, fft_type, fft_lengths):
    """``lax.fft``: its own ``jit`` named ``fft``."""
    return _staged(b, "fft", lambda inner, x: inner.fft(x, fft_type=fft_type, fft_lengths=fft_lengths), [x])


def _hermitian_mask(b, like, fft_length):
    """2 along the last axis, 1 at DC and (even lengths) Nyquist, as JAX's dynamic_update_slices; expanded to the
    rank of ``like`` (size-1 axes that the binary ops broadcast)."""
    shape, dtype = aval(like).shape, aval(like).dtype
    n = shape[-1]
    mask = b.dynamic_update_slice(b.full((n,), dtype, 2.0), b.full((1,), dtype, 1.0), b.literal(0, np.int32))
    if fft_length % 2 == 0:
        mask = b.dynamic_update_slice(mask, b.full((1,), dtype, 1.0), b.literal(n - 1, np.int32))
    if len(shape) == 1:
        return mask
    return b.broadcast_in_dim(mask, shape=(1,) * (len(shape) - 1) + (n,), broadcast_dimensions=(len(shape) - 1,))


def _rfft_transpose(b, t, fft_lengths):
    mask = _hermitian_mask(b, t, fft_lengths[-1])
    out = staged_fft(b, b.div(b.conj(t), mask), FftType.IRFFT, fft_lengths)
    return b.mul(b.literal(math.prod(fft_lengths), aval(out).dtype), out)


def _irfft_transpose(b, t, fft_lengths):
    x = staged_fft(b, t, FftType.RFFT, fft_lengths)
    mask = _hermitian_mask(b, x, fft_lengths[-1])
    return b.conj(b.mul(b.mul(b.literal(1 / math.prod(fft_lengths), aval(x).dtype), mask), x))


def _fft_transpose(b, t, operand, *, fft_type, fft_lengths):
    fft_type = FftType(fft_type)
    if fft_type == FftType.RFFT:
        return [_staged(b, "_rfft_transpose", lambda inner, t: _rfft_transpose(inner, t, fft_lengths), [t])]
    if fft_type == FftType.IRFFT:
        return [_irfft_transpose(b, t, fft_lengths)]
    return [staged_fft(b, t, fft_type, fft_lengths)]


deflinear("fft")
TRANSPOSE_RULES["fft"] = _fft_transpose
