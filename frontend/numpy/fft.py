"""``irax.numpy.fft``: a port of ``jax/_src/numpy/fft.py`` over ``lax.fft``, with the same ``n``/``s`` pads and
slices, axis moves, norm multiplies and errors, so that ``make_jaxpr`` prints JAX's text."""
from __future__ import annotations

import operator
from collections.abc import Sequence

import numpy as np

from irax import dtypes
from irax.lax import FftType
from irax.lax import fft as _lax_fft

from ._creation import arange, array, asarray
from ._pad import pad
from ._reductions import prod
from ._shape import moveaxis, roll
from ._ufuncs import conj, sqrt
from ._util import ensure_arraylike, promote_dtypes_inexact

__all__ = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn",
           "rfftn", "irfftn", "fftfreq", "rfftfreq", "fftshift", "ifftshift"]


def _fft_norm(s, func_name, norm):
    if norm == "backward":
        return array(1)
    s, = promote_dtypes_inexact(s)
    if norm == "ortho":
        return sqrt(prod(s)) if func_name.startswith("i") else 1 / sqrt(prod(s))
    if norm == "forward":
        return prod(s) if func_name.startswith("i") else 1 / prod(s)
    raise ValueError(f'Invalid norm value {norm}; should be "backward","ortho" or "forward".')


def _sized_input(arr, fft_type, s, axes):
    """The input sliced and zero-padded to ``s`` along ``axes`` (IRFFT: the last to its half spectrum)."""
    in_s = list(arr.shape)
    for axis, x in zip(axes, s, strict=True):
        in_s[axis] = x
    if fft_type == FftType.IRFFT:
        in_s[-1] = in_s[-1] // 2 + 1
    arr = arr[tuple(slice(n) for n in in_s)]
    return pad(arr, [(0, x - y) for x, y in zip(in_s, arr.shape)])


def _fft_core(func_name, fft_type, a, s, axes, norm):
    full_name = f"jax.numpy.fft.{func_name}"
    arr = ensure_arraylike(full_name, a)
    if s is not None:
        s = tuple(map(operator.index, s))
        if np.any(np.less_equal(s, 0)):
            raise ValueError("Shape should be positive.")
    if s is not None and axes is not None and len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    orig_axes = axes
    if axes is None:
        axes = range(arr.ndim) if s is None else range(arr.ndim - len(s), arr.ndim)
    if len(axes) != len(set(axes)):
        raise ValueError(f"{full_name} does not support repeated axes. Got axes {axes}.")
    if orig_axes is not None:
        axes = tuple(range(arr.ndim - len(axes), arr.ndim))
        arr = moveaxis(arr, orig_axes, axes)
    if s is not None:
        arr = _sized_input(arr, fft_type, s, axes)
    elif fft_type == FftType.IRFFT:
        s = [arr.shape[axis] for axis in axes[:-1]]
        if axes:
            s += [max(0, 2 * (arr.shape[axes[-1]] - 1))]
    else:
        s = [arr.shape[axis] for axis in axes]
    transformed = _fft_core_nd(arr, fft_type, s)
    if norm is not None:
        transformed *= _fft_norm(array(s, dtype=transformed.dtype), func_name, norm)
    if orig_axes is not None:
        transformed = moveaxis(transformed, axes, orig_axes)
    return transformed


def _fft_core_nd(arr, fft_type, s):
    """XLA transforms at most 3 axes at once: more are split into FFTs of the leading ones."""
    if len(s) <= 3:
        return _lax_fft(arr, fft_type, tuple(s))
    n = 2 if len(s) == 4 else 3
    src = tuple(range(arr.ndim - len(s), arr.ndim - n))
    dst = tuple(range(arr.ndim - len(s) + n, arr.ndim))
    if fft_type in {FftType.RFFT, FftType.FFT}:
        arr = _lax_fft(arr, fft_type, tuple(s)[-n:])
        arr = moveaxis(arr, src, dst)
        arr = _fft_core_nd(arr, FftType.FFT, s[:-n])
        return moveaxis(arr, dst, src)
    arr = moveaxis(arr, src, dst)
    arr = _fft_core_nd(arr, FftType.IFFT, s[:-n])
    arr = moveaxis(arr, dst, src)
    return _lax_fft(arr, fft_type, tuple(s)[-n:])


def _nd(func_name, fft_type, doc):
    def fn(a, s: Sequence[int] | None = None, axes: Sequence[int] | None = None, norm: str | None = None):
        return _fft_core(func_name, fft_type, a, s, axes, norm)
    fn.__name__ = fn.__qualname__ = func_name
    fn.__doc__ = f"{doc} over ``axes`` (all, or the last ``len(s)``), as ``numpy.fft.{func_name}``."
    return fn


def _axis_check_1d(func_name, axis):
    full_name = f"jax.numpy.fft.{func_name}"
    if isinstance(axis, (list, tuple)):
        raise ValueError(f"{full_name} does not support multiple axes. Please use {full_name}n. Got axis = {axis!r}.")


def _fft_core_1d(func_name, fft_type, a, n, axis, norm):
    _axis_check_1d(func_name, axis)
    return _fft_core(func_name, fft_type, a, None if n is None else [n], None if axis is None else [axis], norm)


def _1d(func_name, fft_type, doc):
    def fn(a, n: int | None = None, axis: int = -1, norm: str | None = None):
        return _fft_core_1d(func_name, fft_type, a, n, axis, norm)
    fn.__name__ = fn.__qualname__ = func_name
    fn.__doc__ = f"{doc} along ``axis`` (cut or zero-padded to ``n``), as ``numpy.fft.{func_name}``."
    return fn


def _2d(func_name, fft_type, doc):
    def fn(a, s: Sequence[int] | None = None, axes: Sequence[int] = (-2, -1), norm: str | None = None):
        if len(axes) != 2:
            raise ValueError(f"jax.numpy.fft.{func_name} only supports 2 axes. Got axes = {axes!r}.")
        return _fft_core(func_name, fft_type, a, s, axes, norm)
    fn.__name__ = fn.__qualname__ = func_name
    fn.__doc__ = f"{doc} over two ``axes``, as ``numpy.fft.{func_name}``."
    return fn


fft = _1d("fft", FftType.FFT, "The discrete Fourier transform")
ifft = _1d("ifft", FftType.IFFT, "The inverse discrete Fourier transform")
rfft = _1d("rfft", FftType.RFFT, "The transform of a real signal (the non-negative frequencies)")
irfft = _1d("irfft", FftType.IRFFT, "The real inverse of ``rfft``")
fft2 = _2d("fft2", FftType.FFT, "The discrete Fourier transform")
ifft2 = _2d("ifft2", FftType.IFFT, "The inverse discrete Fourier transform")
rfft2 = _2d("rfft2", FftType.RFFT, "The transform of a real signal")
irfft2 = _2d("irfft2", FftType.IRFFT, "The real inverse of ``rfft2``")
fftn = _nd("fftn", FftType.FFT, "The discrete Fourier transform")
ifftn = _nd("ifftn", FftType.IFFT, "The inverse discrete Fourier transform")
rfftn = _nd("rfftn", FftType.RFFT, "The transform of a real signal")
irfftn = _nd("irfftn", FftType.IRFFT, "The real inverse of ``rfftn``")


def hfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The transform of a Hermitian-symmetric signal given by its first half (a real spectrum)."""
    conj_a = conj(a)
    _axis_check_1d("hfft", axis)
    nn = (conj_a.shape[axis] - 1) * 2 if n is None else n
    return _fft_core_1d("hfft", FftType.IRFFT, conj_a, n, axis, norm) * nn


def ihfft(a, n: int | None = None, axis: int = -1, norm: str | None = None):
    """The inverse of ``hfft``: the half spectrum of a real signal, conjugated and scaled by 1/n."""
    _axis_check_1d("ihfft", axis)
    arr = asarray(a)
    nn = arr.shape[axis] if n is None else n
    output = _fft_core_1d("ihfft", FftType.RFFT, arr, n, axis, norm)
    return conj(output) * (1 / nn)


def _check_freq_args(func_name, n, d):
    if isinstance(n, (list, tuple)):
        raise ValueError(f"The n argument of jax.numpy.fft.{func_name} only takes an int. Got n = {list(n)}.")
    if isinstance(d, (list, tuple)):
        raise ValueError(f"The d argument of jax.numpy.fft.{func_name} only takes a single value. "
                         f"Got d = {list(d)}.")


def fftfreq(n, d=1.0, *, dtype=None, device=None):
    """The sample frequencies of an ``n``-point transform with spacing ``d``: [0, 1, ..., -1] / (d n)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("fftfreq", n, d)
    out_dtype = dtype
    dtype = dtypes.finfo(dtypes.to_inexact_dtype(dtype)).dtype
    i = arange(n, dtype=dtype, device=device)
    k = ((i + n // 2) % n - n // 2)
    result = k.astype(dtype) / array(d * n, dtype=dtype)
    return result.astype(out_dtype)


def rfftfreq(n, d=1.0, *, dtype=None, device=None):
    """The non-negative sample frequencies of an ``n``-point real transform: [0, 1, ..., n // 2] / (d n)."""
    dtype = dtype or dtypes.default_float_dtype()
    _check_freq_args("rfftfreq", n, d)
    k = arange(0, (n if n % 2 == 0 else n - 1) // 2 + 1, dtype=dtype)
    return k / array(d * n, dtype=dtype)


def _shifts(x, axes, sign):
    if axes is None:
        return tuple(range(x.ndim)), [sign * (dim // 2) for dim in x.shape]
    if isinstance(axes, int):
        return axes, sign * (x.shape[axes] // 2)
    return axes, [sign * (x.shape[ax] // 2) for ax in axes]


def fftshift(x, axes: None | int | Sequence[int] = None):
    """The zero frequency moved to the centre of ``axes`` (all by default)."""
    x = ensure_arraylike("fftshift", x)
    axes, shift = _shifts(x, axes, 1)
    return roll(x, shift, axes)


def ifftshift(x, axes: None | int | Sequence[int] = None):
    """The inverse of ``fftshift``."""
    x = ensure_arraylike("ifftshift", x)
    axes, shift = _shifts(x, axes, -1)
    return roll(x, shift, axes)
