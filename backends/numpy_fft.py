"""NumPy rule of ``fft``: ``numpy.fft``'s n-dimensional transforms over the trailing axes, cast to the dtype JAX
gives (complex64 from float32, float32 from complex64)."""
from __future__ import annotations

import numpy as np

from irax.ir.fft import FftType, check_rank

from .numpy_rules import RULES

_TRANSFORMS = {FftType.FFT: np.fft.fftn, FftType.IFFT: np.fft.ifftn, FftType.RFFT: np.fft.rfftn,
               FftType.IRFFT: np.fft.irfftn}


def _out_shape(x, fft_type, fft_lengths):
    lead = x.shape[:x.ndim - len(fft_lengths)]
    if fft_type == FftType.RFFT:
        return lead + fft_lengths[:-1] + (fft_lengths[-1] // 2 + 1,)
    return lead + fft_lengths


def _fft(x, *, fft_type, fft_lengths):
    fft_type, fft_lengths = FftType(fft_type), tuple(fft_lengths)
    check_rank(fft_lengths)
    shape = _out_shape(x, fft_type, fft_lengths)
    dtype = np.result_type(x.dtype, np.complex64) if fft_type != FftType.IRFFT else np.finfo(x.dtype).dtype
    if 0 in fft_lengths or 0 in shape:  # numpy.fft rejects empty transforms; XLA's give zeros
        return np.zeros(shape, dtype)
    axes = tuple(range(x.ndim - len(fft_lengths), x.ndim))
    return _TRANSFORMS[fft_type](x, s=fft_lengths, axes=axes).astype(dtype)


RULES["fft"] = _fft
