"""``lax.fft`` with JAX's signature: a ``jit`` named ``fft`` that converts the operand (real for RFFT, complex
otherwise) and binds the ``fft`` primitive, as ``jax/_src/lax/fft.py`` does."""
from __future__ import annotations

import numpy as np

from irax.api import staged
from irax.core import bind

from . import convert_element_type
from ._scalars import as_operand
from irax.ir.fft import FftType

__all__ = ["FftType", "fft"]

_TYPE_NAMES = {name: t for t in FftType for name in (t.name, t.name.lower())}


def _fft_type(fft_type):
    if isinstance(fft_type, str):
        typ = _TYPE_NAMES.get(fft_type)
        if typ is None:
            raise ValueError(f"Unknown FFT type '{fft_type}'")
        return typ
    if isinstance(fft_type, FftType):
        return fft_type
    raise TypeError(f"Unknown FFT type value '{fft_type}'")


def _inexact_dtype(dtype):
    """JAX's ``to_inexact_dtype``: 64-bit integers become float64, narrower ones and bools float32."""
    if dtype.kind in "fc" or dtype.kind == "V":
        return dtype
    return np.dtype(np.float64 if dtype.itemsize == 8 else np.float32)


def _complex_dtype(dtype):
    return np.dtype(np.complex128 if _inexact_dtype(dtype) in (np.float64, np.complex128) else np.complex64)


def _fft_impl(x, fft_type, fft_lengths):
    typ = _fft_type(fft_type)
    x = as_operand(x)
    if typ == FftType.RFFT:
        if x.dtype.kind == "c":
            raise ValueError("only real valued inputs supported for rfft")
        x = convert_element_type(x, _inexact_dtype(x.dtype))
    else:
        x = convert_element_type(x, _complex_dtype(x.dtype))
    if len(fft_lengths) == 0:
        return x
    return bind("fft", x, fft_type=typ, fft_lengths=tuple(fft_lengths))[0]


_fft_impl.__name__ = _fft_impl.__qualname__ = "fft"
_staged_fft = staged(_fft_impl, static_argnums=(1, 2))


def fft(x, fft_type, fft_lengths):
    """The FFT of ``fft_type`` (an ``FftType`` or its name) over the trailing ``len(fft_lengths)`` axes of ``x``.

    Raises:
      ValueError: an unknown type name, a complex operand of RFFT, or lengths that do not match the operand.
      TypeError: a ``fft_type`` that is neither a string nor an ``FftType``.
    """
    return _staged_fft(x, fft_type, fft_lengths)
