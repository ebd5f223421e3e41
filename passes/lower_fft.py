"""Lowering of ``fft`` to StableHLO that IREE 3.13 compiles for every type, length and rank.

IREE's own ``stablehlo.fft`` (measured) compiles only float32/complex64, one transformed axis and a power-of-two
length (IRFFT: 2 to 8192 points; float64: never). So every transform here becomes 1-D complex transforms along the
last axis (each transformed axis moved there by a transpose), on (real, imaginary) pairs of real tensors, by:

- IREE's ``stablehlo.fft`` for float32 parts and a power-of-two length;
- a matmul with the DFT matrix for short lengths (both parts in one real matmul of twice the width);
- Cooley-Tukey's four-step split of a composite length n = n1 n2 (transforms of length n1, a twiddle, transforms
  of length n2), recursively;
- Bluestein's chirp-z for a long prime length: a circular convolution of a power-of-two length, whose kernel's
  transform is a constant.

RFFT and IRFFT of short lengths are one real matmul each; of an even length they pack the even and odd samples
into one complex signal of half the length (half the work of IREE's own RFFT, which costs a full complex FFT).
Twiddles are computed in float64 from exact integer angles (``j k mod n``), so float32 results stay within a few
ulps times log n of ``numpy.fft``. IRFFT ignores the imaginary parts of the DC and Nyquist terms, as
``numpy.fft.irfft`` does.
"""
from __future__ import annotations

import math

import numpy as np

from irax.ir.dialect import aval_of_type, tensor_type
from irax.ir.fft import FftType, check_rank
from irax.ir.params import dense_attr

from .to_stablehlo import lowering

_DIRECT_MAX = 64  # longest length transformed by a DFT matmul


def _pow2(n):
    return n & (n - 1) == 0


def _smallest_factor(n):
    return next((p for p in range(2, math.isqrt(n) + 1) if n % p == 0), n)


def _split(n):
    """The divisor of n nearest below its square root (1 for a prime)."""
    return max(d for d in range(1, math.isqrt(n) + 1) if n % d == 0)


class _Emitter:
    """Real tensor ops of one float dtype in front of the lowered op; complex values are (re, im) pairs."""

    def __init__(self, ctx, dtype):
        self.ctx, self.dtype = ctx, np.dtype(dtype)
        self.native = self.dtype == np.float32

    def shape(self, x):
        return aval_of_type(x.type).shape

    def op(self, name, operands, shape, dtype=None, **attrs):
        return self.ctx.emit1(name, operands, tensor_type(tuple(shape), dtype or self.dtype), **attrs)

    def const(self, array):
        array = np.asarray(array, self.dtype)
        t = tensor_type(array.shape, self.dtype)
        return self.ctx.emit("stablehlo.constant", [], [t], {"value": dense_attr(array, t)}).result

    def binary(self, name, x, y):
        shape = self.shape(x)
        if self.shape(y) != shape:
            y = self.ctx.broadcast(y, shape)
        return self.op(f"stablehlo.{name}", [x, y], shape)

    def complex_const(self, w):
        return self.const(w.real), self.const(w.imag)

    def scale(self, z, factor):
        return tuple(self.binary("multiply", part, self.const(factor)) for part in z)

    def transpose(self, x, perm):
        shape = self.shape(x)
        if list(perm) == list(range(len(shape))):
            return x
        return self.op("stablehlo.transpose", [x], [shape[p] for p in perm], permutation=list(perm))

    def reshape(self, x, shape):
        return self.op("stablehlo.reshape", [x], shape)

    def slice_last(self, x, start, stop):
        shape = self.shape(x)
        if (start, stop) == (0, shape[-1]):
            return x
        return self.op("stablehlo.slice", [x], shape[:-1] + (stop - start,), start_indices=[0] * (len(shape) - 1)
                       + [start], limit_indices=list(shape[:-1]) + [stop], strides=[1] * len(shape))

    def pad_last(self, x, length):
        shape = self.shape(x)
        extra = length - shape[-1]
        if extra == 0:
            return x
        zero = self.const(0)
        return self.op("stablehlo.pad", [x, zero], shape[:-1] + (length,), edge_padding_low=[0] * len(shape),
                       edge_padding_high=[0] * (len(shape) - 1) + [extra], interior_padding=[0] * len(shape))

    def concat_last(self, xs):
        shapes = [self.shape(x) for x in xs]
        return self.op("stablehlo.concatenate", xs, shapes[0][:-1] + (sum(s[-1] for s in shapes),),
                       dimension=len(shapes[0]) - 1)

    def reverse_last(self, x):
        return self.op("stablehlo.reverse", [x], self.shape(x), dimensions=[len(self.shape(x)) - 1])

    def matmul_last(self, x, matrix):
        shape, m = self.shape(x), self.const(matrix)
        attr = (f"#stablehlo.dot<lhs_contracting_dimensions = [{len(shape) - 1}], "
                "rhs_contracting_dimensions = [0]>")
        return self.op("stablehlo.dot_general", [x, m], shape[:-1] + (matrix.shape[1],), dot_dimension_numbers=attr)

    def split(self, z):
        shape = self.shape(z)
        return self.op("stablehlo.real", [z], shape), self.op("stablehlo.imag", [z], shape)

    def join(self, z):
        ctype = np.result_type(self.dtype, np.complex64)
        return self.op("stablehlo.complex", list(z), self.shape(z[0]), ctype)

    def native_fft(self, x, kind, length, out_shape, out_dtype):
        return self.op("stablehlo.fft", [x], out_shape, out_dtype, fft_type=f"#stablehlo<fft_type {kind}>",
                       fft_length=[length])


def _twiddles(n, rows, cols, sign):
    """exp(sign 2 pi i r c / n) over the outer product of ``rows`` and ``cols``, from exact angles."""
    return np.exp(sign * 2j * np.pi * (np.multiply.outer(rows, cols) % n) / n)


def _cmul(e, a, b):
    """The product of two (re, im) pairs (b broadcast over a's leading axes)."""
    (ar, ai), (br, bi) = a, b
    mul = lambda x, y: e.binary("multiply", x, y)  # noqa: E731
    return e.binary("subtract", mul(ar, br), mul(ai, bi)), e.binary("add", mul(ar, bi), mul(ai, br))


def _direct(e, z, n, sign):
    """Both parts through one real matmul with [[C, sS], [-sS, C]] (W = C + i s S)."""
    w = _twiddles(n, np.arange(n), np.arange(n), sign)
    matrix = np.block([[w.real, w.imag], [-w.imag, w.real]])
    y = e.matmul_last(e.concat_last(list(z)), matrix)
    return e.slice_last(y, 0, n), e.slice_last(y, n, 2 * n)


def _native(e, z, n, sign):
    kind = "FFT" if sign < 0 else "IFFT"
    shape = e.shape(z[0])
    ctype = np.result_type(e.dtype, np.complex64)
    out = e.split(e.native_fft(e.join(z), kind, n, shape, ctype))
    return out if sign < 0 else e.scale(out, float(n))


def _four_step(e, z, n, sign):
    """n = n1 n2; input index n2 j1 + j2, output index k1 + n1 k2."""
    n1 = _split(n)
    n2 = n // n1
    lead = e.shape(z[0])[:-1]
    r = len(lead)
    z = [e.transpose(e.reshape(p, lead + (n1, n2)), [*range(r), r + 1, r]) for p in z]  # (j2, j1)
    z = _complex_dft(e, z, n1, sign)  # (j2, k1)
    z = _cmul(e, z, e.complex_const(_twiddles(n, np.arange(n2), np.arange(n1), sign)))
    z = [e.transpose(p, [*range(r), r + 1, r]) for p in z]  # (k1, j2)
    z = _complex_dft(e, z, n2, sign)  # (k1, k2)
    return tuple(e.reshape(e.transpose(p, [*range(r), r + 1, r]), lead + (n,)) for p in z)


def _bluestein(e, z, n, sign):
    """X_k = c_k sum_j (z_j c_j) conj(c_{k-j}), c_k = exp(sign i pi k^2 / n): a circular convolution of a
    power-of-two length m >= 2n - 1, through transforms of length m."""
    m = 1 << (2 * n - 2).bit_length()
    k = np.arange(n)
    chirp = np.exp(sign * 1j * np.pi * ((k * k) % (2 * n)) / n)
    kernel = np.zeros(m, np.complex128)
    kernel[:n] = chirp.conj()
    kernel[m - n + 1:] = chirp.conj()[1:][::-1]
    a = [e.pad_last(p, m) for p in _cmul(e, z, e.complex_const(chirp))]
    spectrum = _cmul(e, _complex_dft(e, a, m, -1), e.complex_const(np.fft.fft(kernel) / m))
    conv = _complex_dft(e, spectrum, m, 1)
    return _cmul(e, [e.slice_last(p, 0, n) for p in conv], e.complex_const(chirp))


def _complex_dft(e, z, n, sign):
    """sum_j z_j exp(sign 2 pi i j k / n) along the last axis (unnormalized both ways)."""
    if n == 1:
        return tuple(z)
    if e.native and _pow2(n):
        return _native(e, z, n, sign)
    if n <= _DIRECT_MAX:
        return _direct(e, z, n, sign)
    if _smallest_factor(n) == n:
        return _bluestein(e, z, n, sign)
    return _four_step(e, z, n, sign)


def _along(e, z, axis, fn):
    """``fn`` applied along ``axis`` of every part, moved to the last axis and back."""
    rank = len(e.shape(z[0]))
    perm = [d for d in range(rank) if d != axis] + [axis]
    inverse = list(np.argsort(perm))
    return tuple(e.transpose(p, inverse) for p in fn([e.transpose(p, perm) for p in z]))


def _complex_axes(e, z, axes, lengths, inverse):
    for axis, n in zip(axes, lengths):
        z = _along(e, z, axis, lambda parts, n=n: _complex_dft(e, parts, n, 1 if inverse else -1))
        if inverse:
            z = e.scale(z, 1.0 / n)
    return z


def _neg(e, x):
    return e.op("stablehlo.negate", [x], e.shape(x))


def _mirror(e, z):
    """conj(z_{(M - k) mod M}) for k = 0..M, from z of length M + 1 whose last term repeats the first."""
    re, im = (e.reverse_last(p) for p in z)
    return re, _neg(e, im)


def _half_twiddles(e, n, sign):
    return e.complex_const(_twiddles(n, 1, np.arange(n // 2 + 1), sign))


def _deinterleave(e, x, m):
    """The even and the odd samples of the last axis (length 2 m)."""
    lead = e.shape(x)[:-1]
    pairs = e.reshape(x, lead + (m, 2))
    r = len(lead)
    return [e.reshape(e.op("stablehlo.slice", [pairs], lead + (m, 1), start_indices=[0] * r + [0, i],
                           limit_indices=list(lead) + [m, i + 1], strides=[1] * (r + 2)), lead + (m,))
            for i in (0, 1)]


def _interleave(e, even, odd):
    lead, m = e.shape(even)[:-1], e.shape(even)[-1]
    parts = [e.reshape(p, lead + (m, 1)) for p in (even, odd)]
    return e.reshape(e.op("stablehlo.concatenate", parts, lead + (m, 2), dimension=len(lead) + 1), lead + (2 * m,))


def _rfft_direct(e, x, n):
    """x times [C, -S] (n by 2 (n // 2 + 1)): both parts of the half spectrum from one real matmul."""
    w = _twiddles(n, np.arange(n), np.arange(n // 2 + 1), -1)
    y = e.matmul_last(x, np.concatenate([w.real, w.imag], axis=1))
    return e.slice_last(y, 0, n // 2 + 1), e.slice_last(y, n // 2 + 1, 2 * (n // 2 + 1))


def _irfft_direct(e, z, n):
    """[Re X, Im X] times the real inverse DFT of the Hermitian spectrum: the terms mirrored in the dropped half
    counted twice, the imaginary parts of DC and Nyquist not at all."""
    half = n // 2 + 1
    weights = np.full(half, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    w = _twiddles(n, np.arange(half), np.arange(n), 1) * (weights / n)[:, None]
    imag_rows = -w.imag
    imag_rows[0] = 0
    if n % 2 == 0:
        imag_rows[-1] = 0
    z = [e.slice_last(e.pad_last(p, max(half, e.shape(p)[-1])), 0, half) for p in z]
    return e.matmul_last(e.concat_last(z), np.concatenate([w.real, imag_rows], axis=0))


def _rfft_last(e, x, n):
    """An even length packs the even and odd samples into one complex signal of length M = n / 2, whose transform
    Z gives both halves' transforms E and O, and X_k = E_k + w^k O_k: half the work of a length-n transform."""
    if n <= _DIRECT_MAX:
        return _rfft_direct(e, x, n)
    if n % 2:
        zero = e.binary("multiply", x, e.const(0.0))
        return tuple(e.slice_last(p, 0, n // 2 + 1) for p in _complex_dft(e, (x, zero), n, -1))
    z = [e.concat_last([p, e.slice_last(p, 0, 1)]) for p in _complex_dft(e, _deinterleave(e, x, n // 2), n // 2, -1)]
    mirrored = _mirror(e, z)
    even = [e.binary("multiply", e.binary("add", a, b), e.const(0.5)) for a, b in zip(z, mirrored)]
    dr, di = (e.binary("multiply", e.binary("subtract", a, b), e.const(0.5)) for a, b in zip(z, mirrored))
    odd = _cmul(e, (di, _neg(e, dr)), _half_twiddles(e, n, -1))  # O = -i (Z - conj Z') / 2
    return tuple(e.binary("add", a, b) for a, b in zip(even, odd))


def _half_spectrum(e, z, n):
    """The first n // 2 + 1 terms (zero-padded), without the imaginary parts of DC and, for an even length,
    Nyquist (``numpy.fft.irfft`` ignores them)."""
    half = n // 2 + 1
    z = [e.slice_last(e.pad_last(p, max(half, e.shape(p)[-1])), 0, half) for p in z]
    keep = np.ones(half)
    keep[0] = 0
    if n % 2 == 0:
        keep[-1] = 0
    return z[0], e.binary("multiply", z[1], e.const(keep))


def _irfft_last(e, z, n):
    """The inverse of ``_rfft_last``'s packing for an even length: E_k + i O_k from X_k and conj(X_{M-k}),
    transformed back at length M = n / 2 into the even (real part) and odd (imaginary part) samples."""
    if n <= _DIRECT_MAX:
        return _irfft_direct(e, z, n)
    z = _half_spectrum(e, z, n)
    if n % 2:
        re, im = (e.reverse_last(e.slice_last(p, 1, n // 2 + 1)) for p in z)
        full = e.concat_last([z[0], re]), e.concat_last([z[1], _neg(e, im)])
        return e.scale(_complex_dft(e, full, n, 1), 1.0 / n)[0]
    m = n // 2
    mirrored = _mirror(e, z)
    even = [e.binary("add", a, b) for a, b in zip(z, mirrored)]
    odd = _cmul(e, [e.binary("subtract", a, b) for a, b in zip(z, mirrored)], _half_twiddles(e, n, 1))
    packed = [e.slice_last(p, 0, m) for p in (e.binary("subtract", even[0], odd[1]), e.binary("add", even[1], odd[0]))]
    return _interleave(e, *e.scale(_complex_dft(e, packed, m, 1), 0.5 / m))


def _native_case(x_aval, fft_type, fft_lengths):
    """A complex transform IREE's own ``stablehlo.fft`` computes as it is (RFFT and IRFFT are cheaper packed)."""
    return (x_aval.dtype == np.complex64 and len(fft_lengths) == 1 and _pow2(fft_lengths[0])
            and fft_type in (FftType.FFT, FftType.IFFT))


@lowering("fft")
def _fft(ctx, x, *, fft_type, fft_lengths):
    fft_type, fft_lengths = FftType(fft_type), tuple(fft_lengths)
    check_rank(fft_lengths)
    (out,), x_aval = ctx.result_avals, aval_of_type(x.type)
    if out.size == 0 or x_aval.size == 0:
        return ctx.constant(0, out.dtype, out.shape)
    e = _Emitter(ctx, np.finfo(out.dtype).dtype)
    if _native_case(x_aval, fft_type, fft_lengths):
        return e.native_fft(x, fft_type.name, fft_lengths[-1], out.shape, out.dtype)
    rank, k = len(out.shape), len(fft_lengths)
    axes = list(range(rank - k, rank))
    if fft_type == FftType.RFFT:
        z = _rfft_last(e, x, fft_lengths[-1])
        return e.join(_complex_axes(e, z, axes[:-1], fft_lengths[:-1], inverse=False))
    z = e.split(x)
    if fft_type == FftType.IRFFT:
        z = _complex_axes(e, z, axes[:-1], fft_lengths[:-1], inverse=True)
        return _irfft_last(e, z, fft_lengths[-1])
    return e.join(_complex_axes(e, z, axes, fft_lengths, inverse=fft_type == FftType.IFFT))
