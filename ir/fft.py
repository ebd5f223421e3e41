"""The ``fft`` primitive's type enum and shape rule, as ``jax/_src/lax/fft.py`` declares them (same errors).

``FftType`` lives in the dialect, not the frontend, because the op's ``fft_type`` param holds it (printed as its
integer value, as JAX's ``IntEnum`` prints)."""
from __future__ import annotations

import enum

import numpy as np

from .avals import ShapedArray
from .shapes import complex_dtype, issubdtype, real_dtype


class FftType(enum.IntEnum):
    """Describes which FFT operation to perform."""

    FFT = 0
    IFFT = 1
    RFFT = 2
    IRFFT = 3


def check_rank(fft_lengths):
    """XLA's limit, which JAX meets when it lowers (not when it traces): ``jnp.fft`` splits longer ones."""
    if not 1 <= len(fft_lengths) <= 3:
        raise ValueError(f"fft: rank must be between 1 and 3, but got {len(fft_lengths)}.")


def fft_shape(name, avals_in, *, fft_type, fft_lengths):
    """JAX's ``fft_abstract_eval``: RFFT takes float32/64 to complex with the last length halved plus one;
    IRFFT takes complex to real of the given lengths; FFT/IFFT keep a complex shape."""
    (x,) = avals_in
    fft_type, fft_lengths = FftType(fft_type), tuple(fft_lengths)
    if len(fft_lengths) > x.ndim:
        raise ValueError(f"FFT input shape {x.shape} must have at least as many "
                         f"input dimensions as fft_lengths {fft_lengths}.")
    if fft_type == FftType.RFFT:
        if x.dtype not in (np.float32, np.float64):
            raise ValueError(f"RFFT input must be float32 or float64, got {x.dtype}")
        if x.shape[-len(fft_lengths):] != fft_lengths:
            raise ValueError(f"RFFT input shape {x.shape} minor dimensions must "
                             f"be equal to fft_lengths {fft_lengths}")
        shape = x.shape[:-len(fft_lengths)] + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
        return [ShapedArray(shape, complex_dtype(x.dtype), x.weak_type)]
    if not issubdtype(x.dtype, np.complexfloating):
        kind = "IRFFT" if fft_type == FftType.IRFFT else "FFT"
        raise ValueError(f"{kind} input must be complex64 or complex128, got {x.dtype}")
    if fft_type == FftType.IRFFT:
        if x.shape[-len(fft_lengths):-1] != fft_lengths[:-1]:
            raise ValueError(f"IRFFT input shape {x.shape} minor dimensions must "
                             f"be equal to all except the last fft_length, got {fft_lengths=}")
        return [ShapedArray(x.shape[:-len(fft_lengths)] + fft_lengths, real_dtype(x.dtype), x.weak_type)]
    if x.shape[-len(fft_lengths):] != fft_lengths:
        raise ValueError(f"FFT input shape {x.shape} minor dimensions must "
                         f"be equal to fft_lengths {fft_lengths}")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]
