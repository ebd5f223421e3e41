"""``irax.scipy.signal``: JAX's ``jax.scipy.signal``, ported from ``jax/_src/scipy/signal.py`` (and
``third_party/scipy/signal_helper.py``) so that each function binds JAX's primitives in JAX's order.

As in JAX, none of these functions is jitted as a whole: a jaxpr shows the jits of the ``jax.numpy`` functions they
call (``_flip``, ``fft``, ``_pad``...) and the bare primitives in between.
"""
from __future__ import annotations

import math
import operator
import warnings
from functools import partial

import numpy as np

from irax import lax
from irax import numpy as jnp
from irax.batching import vmap
from irax.numpy import fft as jnp_fft
from irax.numpy import linalg
from irax.numpy._setops import concrete_or_error
from irax.numpy._util import canonicalize_axis, check_arraylike, ensure_arraylike, promote_dtypes_inexact
from irax.scipy.fft import _promote_dtypes_complex, _to_complex_dtype

__all__ = ["convolve", "convolve2d", "correlate", "correlate2d", "csd", "detrend", "fftconvolve", "istft", "stft",
           "welch"]

_MODES = ("full", "same", "valid")


def _ensure_index_tuple(x):
    """JAX's ``api_util._ensure_index_tuple``: axes must be known at trace time."""
    x = concrete_or_error(None, x, "expected a static index or sequence of indices.")
    try:
        return (operator.index(x),)
    except TypeError:
        return tuple(map(operator.index, x))


def _tuple_delete(t, idx):
    return t[:idx] + t[idx + 1:]


def _tuple_insert(t, idx, val):
    return t[:idx] + (val,) + t[idx:]


def fftconvolve(in1, in2, mode="full", axes=None):
    """N-dimensional convolution by FFT; ``axes`` not convolved over are mapped over with ``vmap``, so their
    sizes must agree."""
    check_arraylike("fftconvolve", in1, in2)
    in1, in2 = promote_dtypes_inexact(in1, in2)
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 should have the same dimensionality")
    if mode not in ["same", "full", "valid"]:
        raise ValueError("mode must be one of ['same', 'full', 'valid']")
    _fftconvolve = partial(_fftconvolve_unbatched, mode=mode)
    if axes is None:
        return _fftconvolve(in1, in2)
    axes = _ensure_index_tuple(axes)
    axes = tuple(canonicalize_axis(ax, in1.ndim) for ax in axes)
    mapped_axes = set(range(in1.ndim)) - set(axes)
    if any(in1.shape[i] != in2.shape[i] for i in mapped_axes):
        raise ValueError(f"mapped axes must have same shape; got {in1.shape=} {in2.shape=} {axes=}")
    for ax in sorted(mapped_axes):
        _fftconvolve = vmap(_fftconvolve, in_axes=ax, out_axes=ax)
    return _fftconvolve(in1, in2)


def _fftconvolve_unbatched(in1, in2, mode):
    full_shape = tuple(s1 + s2 - 1 for s1, s2 in zip(in1.shape, in2.shape))
    fft_shape = full_shape

    if mode == "valid":
        no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
        swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
        if not (no_swap or swap):
            raise ValueError("For 'valid' mode, One input must be at least as large as the other in every dimension.")
        if swap:
            in1, in2 = in2, in1

    if all(s1 == 1 or s2 == 1 for s1, s2 in zip(in1.shape, in2.shape)):
        conv = in1 * in2
    else:
        if jnp.iscomplexobj(in1):
            fft, ifft = jnp_fft.fftn, jnp_fft.ifftn
        else:
            fft, ifft = jnp_fft.rfftn, jnp_fft.irfftn
        sp1 = fft(in1, fft_shape)
        sp2 = fft(in2, fft_shape)
        conv = ifft(sp1 * sp2, fft_shape)

    if mode == "full":
        out_shape = full_shape
    elif mode == "same":
        out_shape = in1.shape
    else:
        out_shape = tuple(s1 - s2 + 1 for s1, s2 in zip(in1.shape, in2.shape))

    start_indices = tuple((full_size - out_size) // 2 for full_size, out_size in zip(full_shape, out_shape))
    return lax.dynamic_slice(conv, start_indices, out_shape)


def _convolve_nd(in1, in2, mode, *, precision):
    """One ``conv_general_dilated`` with a single feature and batch (JAX's padding differs from
    ``jnp.convolve``'s for mode 'same')."""
    if mode not in ["full", "same", "valid"]:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    if in1.ndim != in2.ndim:
        raise ValueError("in1 and in2 must have the same number of dimensions")
    if in1.size == 0 or in2.size == 0:
        raise ValueError(f"zero-size arrays not supported in convolutions, got shapes {in1.shape} and {in2.shape}.")
    in1, in2 = promote_dtypes_inexact(in1, in2)

    no_swap = all(s1 >= s2 for s1, s2 in zip(in1.shape, in2.shape))
    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    if not (no_swap or swap):
        raise ValueError("One input must be smaller than the other in every dimension.")

    shape_o = in2.shape
    if swap:
        in1, in2 = in2, in1
    shape = in2.shape
    in2 = jnp.flip(in2)

    if mode == "valid":
        padding = [(0, 0) for s in shape]
    elif mode == "same":
        padding = [(s - 1 - (s_o - 1) // 2, s - s_o + (s_o - 1) // 2) for (s, s_o) in zip(shape, shape_o)]
    else:
        padding = [(s - 1, s - 1) for s in shape]

    strides = tuple(1 for s in shape)
    result = lax.conv_general_dilated(in1[None, None], in2[None, None], strides, padding, precision=precision)
    return result[0, 0]


def convolve(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional convolution; ``method='auto'`` is 'direct' (``conv_general_dilated``), as in JAX."""
    if method == "fft":
        return fftconvolve(in1, in2, mode=mode)
    elif method in ["direct", "auto"]:
        return _convolve_nd(in1, in2, mode, precision=precision)
    else:
        raise ValueError(f"Got {method=}; expected 'auto', 'fft', or 'direct'.")


def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D convolution; only zero filling at the boundary, as in JAX."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("convolve2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("convolve2d() only supports 2-dimensional inputs.")
    return _convolve_nd(in1, in2, mode, precision=precision)


def correlate(in1, in2, mode="full", method="auto", precision=None):
    """N-dimensional cross-correlation: the convolution with ``in2`` conjugated and reversed."""
    return convolve(in1, jnp.flip(in2.conj()), mode, precision=precision, method=method)


def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0, precision=None):
    """2-D cross-correlation, with SciPy's choice of which input slides over the other."""
    if boundary != "fill" or fillvalue != 0:
        raise NotImplementedError("correlate2d() only supports boundary='fill', fillvalue=0")
    if np.ndim(in1) != 2 or np.ndim(in2) != 2:
        raise ValueError("correlate2d() only supports 2-dimensional inputs.")

    swap = all(s1 <= s2 for s1, s2 in zip(in1.shape, in2.shape))
    same_shape = all(s1 == s2 for s1, s2 in zip(in1.shape, in2.shape))

    if mode == "same":
        in1, in2 = jnp.flip(in1), in2.conj()
        result = jnp.flip(_convolve_nd(in1, in2, mode, precision=precision))
    elif mode == "valid":
        if swap and not same_shape:
            in1, in2 = jnp.flip(in2), in1.conj()
            result = _convolve_nd(in1, in2, mode, precision=precision)
        else:
            in1, in2 = jnp.flip(in1), in2.conj()
            result = jnp.flip(_convolve_nd(in1, in2, mode, precision=precision))
    else:
        if swap:
            in1, in2 = jnp.flip(in2), in1.conj()
            result = _convolve_nd(in1, in2, mode, precision=precision).conj()
        else:
            in1, in2 = jnp.flip(in1), in2.conj()
            result = jnp.flip(_convolve_nd(in1, in2, mode, precision=precision))
    return result


def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=None):
    """Removes the mean, or a least-squares line per segment between the (static) breakpoints ``bp``."""
    if overwrite_data is not None:
        raise NotImplementedError("overwrite_data argument not implemented.")
    if type not in ["constant", "linear"]:
        raise ValueError("Trend type must be 'linear' or 'constant'.")
    data_arr, = promote_dtypes_inexact(jnp.asarray(data))
    if type == "constant":
        return data_arr - data_arr.mean(axis, keepdims=True)
    N = data_arr.shape[axis]
    bp_arr = np.sort(np.unique(np.r_[0, bp, N]))
    if bp_arr[0] < 0 or bp_arr[-1] > N:
        raise ValueError("Breakpoints must be non-negative and less than length of data along given axis.")
    data_arr = jnp.moveaxis(data_arr, axis, 0)
    shape = data_arr.shape
    data_arr = data_arr.reshape(N, -1)
    for m in range(len(bp_arr) - 1):
        Npts = bp_arr[m + 1] - bp_arr[m]
        A = jnp.vstack([
            jnp.ones(Npts, dtype=data_arr.dtype),
            jnp.arange(1, Npts + 1, dtype=data_arr.dtype) / Npts.astype(data_arr.dtype)
        ]).T
        sl = slice(bp_arr[m], bp_arr[m + 1])
        coef, *_ = linalg.lstsq(A, data_arr[sl])
        data_arr = data_arr.at[sl].add(-jnp.matmul(A, coef, precision=lax.Precision.HIGHEST))
    return jnp.moveaxis(data_arr.reshape(shape), 0, axis)


def _hann(nperseg):
    """SciPy's periodic Hann window, the one window built without SciPy."""
    return jnp.array([1.0]) if nperseg == 1 else jnp.sin(jnp.linspace(0, np.pi, nperseg, endpoint=False)) ** 2


def _get_window(window, nperseg):
    if window == "hann":
        return _hann(nperseg)
    try:
        from scipy.signal import get_window
    except ImportError as err:
        raise ImportError(f"scipy must be available to use {window=}") from err
    return get_window(window, nperseg)


def _triage_segments(window, nperseg, input_length, dtype):
    """The window as an array and the segment length: a named window takes ``nperseg`` (at most the input's
    length), an array window sets it."""
    if isinstance(window, (str, tuple)):
        nperseg_int = input_length if nperseg is None else int(nperseg)
        if nperseg_int > input_length:
            warnings.warn(f"nperseg={nperseg_int} is greater than {input_length=}, using nperseg={input_length}")
            nperseg_int = input_length
        win = jnp.array(_get_window(window, nperseg_int), dtype=dtype)
    else:
        win = jnp.asarray(window, dtype=dtype)
        nperseg_int = win.size if nperseg is None else int(nperseg)
        if win.ndim != 1:
            raise ValueError("window must be 1-D")
        if input_length < win.size:
            raise ValueError("window is longer than input signal")
        if nperseg_int != win.size:
            raise ValueError("value specified for nperseg is different from length of window")
    return win, nperseg_int


def _median_bias(n):
    """The bias of the median of ``n`` periodograms relative to their mean (FINDCHIRP, appendix B)."""
    ii_2 = jnp.arange(2., n, 2)
    return 1 + jnp.sum(1. / (ii_2 + 1) - 1. / ii_2)


def _fft_helper(x, win, detrend_func, nperseg, noverlap, nfft, sides):
    """The windowed FFT of each segment, the segments cut by a ``vmap`` of ``dynamic_slice`` as in JAX."""
    if x.dtype.kind == "i":
        x = x.astype(win.dtype)

    *batch_shape, signal_length = x.shape
    if nperseg == 1 and noverlap == 0:
        result = x[..., np.newaxis]
    else:
        step = nperseg - noverlap
        starts = jnp.arange(signal_length - nperseg + 1, step=step)
        slice_func = partial(lax.dynamic_slice_in_dim, operand=x, slice_size=nperseg, axis=-1)
        result = vmap(slice_func, out_axes=-2)(start_index=starts)

    result = detrend_func(result)

    if jnp.iscomplexobj(win):
        result, = _promote_dtypes_complex(result)
    result = win.reshape((1,) * len(batch_shape) + (1, nperseg)) * result

    if sides == "twosided":
        return jnp_fft.fft(result, n=nfft)
    return jnp_fft.rfft(result.real, n=nfft)


def _odd_ext(x, n, axis=-1):
    """Odd extension by ``n`` points at both ends (SciPy's former ``signaltools.odd_ext``)."""
    if n < 1:
        return x
    if n > x.shape[axis] - 1:
        raise ValueError(f"The extension length n ({n}) is too big. "
                         f"It must not exceed x.shape[axis]-1, which is {x.shape[axis] - 1}.")
    left_end = lax.slice_in_dim(x, 0, 1, axis=axis)
    left_ext = jnp.flip(lax.slice_in_dim(x, 1, n + 1, axis=axis), axis=axis)
    right_end = lax.slice_in_dim(x, -1, None, axis=axis)
    right_ext = jnp.flip(lax.slice_in_dim(x, -(n + 1), -1, axis=axis), axis=axis)
    return jnp.concatenate((2 * left_end - left_ext, x, 2 * right_end - right_ext), axis=axis)


def _make_pad(mode, **kwargs):
    def pad(x, n, axis=-1):
        pad_width = [(0, 0) for _ in range(x.ndim)]
        pad_width[axis] = (n, n)
        return jnp.pad(x, pad_width, mode, **kwargs)
    return pad


_BOUNDARY_FUNCS = {
    "even": _make_pad("reflect"),
    "odd": _odd_ext,
    "constant": _make_pad("edge"),
    "zeros": _make_pad("constant", constant_values=0.0),
    None: lambda x, *args, **kwargs: x,
}


def _spectral_helper(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend_type="constant",
                     return_onesided=True, scaling="density", axis=-1, mode="psd", boundary=None, padded=False):
    """SciPy's ``_spectral_helper`` as JAX has it: ``y=None`` asks for the auto-spectrum of ``x``."""
    if mode not in ("psd", "stft"):
        raise ValueError(f"Unknown value for mode {mode}, must be one of: ('psd', 'stft')")

    if boundary not in _BOUNDARY_FUNCS:
        raise ValueError(f"Unknown boundary option '{boundary}', must be one of: {list(_BOUNDARY_FUNCS.keys())}")

    axis = concrete_or_error(operator.index, axis, "axis of windowed-FFT")
    axis = canonicalize_axis(axis, x.ndim)

    if y is None:
        check_arraylike("spectral_helper", x)
        x, = promote_dtypes_inexact(x)
        y_arr = x
        outershape = _tuple_delete(x.shape, axis)
    else:
        if mode != "psd":
            raise ValueError("two-argument mode is available only when mode=='psd'")
        check_arraylike("spectral_helper", x, y)
        x, y_arr = promote_dtypes_inexact(x, y)
        if x.ndim != y_arr.ndim:
            raise ValueError("two-arguments must have the same rank ({x.ndim} vs {y.ndim}).")
        try:
            outershape = jnp.broadcast_shapes(_tuple_delete(x.shape, axis), _tuple_delete(y_arr.shape, axis))
        except ValueError as err:
            raise ValueError("x and y cannot be broadcast together.") from err

    result_dtype = _to_complex_dtype(x.dtype)
    freq_dtype = np.finfo(result_dtype).dtype

    nperseg_int = 0
    if nperseg is not None:
        nperseg_int = concrete_or_error(int, nperseg, "nperseg of windowed-FFT")
        if nperseg_int < 1:
            raise ValueError("nperseg must be a positive integer")
    win, nperseg_int = _triage_segments(window, nperseg if nperseg is None else nperseg_int,
                                        input_length=x.shape[axis], dtype=x.dtype)

    if noverlap is None:
        noverlap_int = nperseg_int // 2
    else:
        noverlap_int = concrete_or_error(int, noverlap, "noverlap of windowed-FFT")

    if nfft is None:
        nfft_int = nperseg_int
    else:
        nfft_int = concrete_or_error(int, nfft, "nfft of windowed-FFT")

    if y is None:
        if x.size == 0:
            return jnp.zeros(x.shape, freq_dtype), jnp.zeros(x.shape, freq_dtype), jnp.zeros(x.shape, result_dtype)
    elif x.size == 0 or y_arr.size == 0:
        shape = _tuple_insert(outershape, min(x.shape[axis], y_arr.shape[axis]), axis)
        return jnp.zeros(shape, freq_dtype), jnp.zeros(shape, freq_dtype), jnp.zeros(shape, result_dtype)

    x = jnp.moveaxis(x, axis, -1)
    if y is not None and y_arr.ndim > 1:
        y_arr = jnp.moveaxis(y_arr, axis, -1)

    if y is not None and x.shape[-1] != y_arr.shape[-1]:
        if x.shape[-1] < y_arr.shape[-1]:
            pad_shape = list(x.shape)
            pad_shape[-1] = y_arr.shape[-1] - x.shape[-1]
            x = jnp.concatenate((x, jnp.zeros_like(x, shape=pad_shape)), -1)
        else:
            pad_shape = list(y_arr.shape)
            pad_shape[-1] = x.shape[-1] - y_arr.shape[-1]
            y_arr = jnp.concatenate((y_arr, jnp.zeros_like(x, shape=pad_shape)), -1)

    if nfft_int < nperseg_int:
        raise ValueError("nfft must be greater than or equal to nperseg.")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if boundary is not None:
        ext_func = _BOUNDARY_FUNCS[boundary]
        x = ext_func(x, nperseg_int // 2, axis=-1)
        if y is not None:
            y_arr = ext_func(y_arr, nperseg_int // 2, axis=-1)

    if padded:
        # Pad to a whole number of segments: x.shape[-1] == nperseg + (nseg - 1) * nstep.
        nadd = (-(x.shape[-1] - nperseg_int) % nstep) % nperseg_int
        x = jnp.concatenate((x, jnp.zeros_like(x, shape=(*x.shape[:-1], nadd))), axis=-1)
        if y is not None:
            y_arr = jnp.concatenate((y_arr, jnp.zeros_like(x, shape=(*y_arr.shape[:-1], nadd))), axis=-1)

    if isinstance(detrend_type, str):
        detrend_func = partial(detrend, type=detrend_type, axis=-1)
    elif callable(detrend_type):
        if axis != -1:
            # JAX hands the user's function segments with the time axis where it was in the input.
            def detrend_func(d):
                d = jnp.moveaxis(d, axis, -1)
                d = detrend_type(d)
                return jnp.moveaxis(d, -1, axis)
        else:
            detrend_func = detrend_type
    elif not detrend_type:
        def detrend_func(d):
            return d
    else:
        raise ValueError(f"Unsupported detrend type: {detrend_type}")

    if scaling == "density":
        scale = 1.0 / (fs * (win * win).sum())
    elif scaling == "spectrum":
        scale = 1.0 / win.sum()**2
    else:
        raise ValueError(f"Unknown scaling: {scaling}")
    if mode == "stft":
        scale = jnp.sqrt(scale)
    scale, = _promote_dtypes_complex(scale)

    if return_onesided:
        sides = "onesided"
        if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
            sides = "twosided"
            warnings.warn("Input data is complex, switching to return_onesided=False")
    else:
        sides = "twosided"

    if sides == "twosided":
        freqs = jnp_fft.fftfreq(nfft_int, 1 / fs, dtype=freq_dtype)
    else:
        freqs = jnp_fft.rfftfreq(nfft_int, 1 / fs, dtype=freq_dtype)

    result = _fft_helper(x, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)

    if y is not None:
        result_y = _fft_helper(y_arr, win, detrend_func, nperseg_int, noverlap_int, nfft_int, sides)
        result = jnp.conjugate(result) * result_y
    elif mode == "psd":
        result = jnp.conjugate(result) * result

    result *= scale

    if sides == "onesided" and mode == "psd":
        end = None if nfft_int % 2 else -1
        result = result.at[..., 1:end].mul(2)

    time = jnp.arange(nperseg_int / 2, x.shape[-1] - nperseg_int / 2 + 1, nperseg_int - noverlap_int,
                      dtype=freq_dtype) / fs
    if boundary is not None:
        time -= (nperseg_int / 2) / fs

    result = result.astype(result_dtype)

    if y is None and mode != "stft":
        result = result.real

    result = jnp.moveaxis(result, -1, axis)

    return freqs, time, result


def stft(x, fs=1.0, window="hann", nperseg=256, noverlap=None, nfft=None, detrend=False, return_onesided=True,
         boundary="zeros", padded=True, axis=-1):
    """Short-time Fourier transform: ``(f, t, Zxx)``."""
    return _spectral_helper(x, None, fs, window, nperseg, noverlap, nfft, detrend, return_onesided,
                            scaling="spectrum", axis=axis, mode="stft", boundary=boundary, padded=padded)


def csd(x, y, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant",
        return_onesided=True, scaling="density", axis=-1, average="mean"):
    """Cross power spectral density by Welch's method: ``(f, Pxy)``; ``y=None`` gives the PSD of ``x``, as
    ``csd(x, x.copy())`` does in SciPy."""
    freqs, _, Pxy = _spectral_helper(x, y, fs, window, nperseg, noverlap, nfft, detrend, return_onesided, scaling,
                                     axis, mode="psd")
    if y is not None:
        Pxy = Pxy + 0j

    if Pxy.ndim >= 2 and Pxy.size > 0:
        if Pxy.shape[-1] > 1:
            if average == "median":
                bias = _median_bias(Pxy.shape[-1]).astype(Pxy.dtype)
                if jnp.iscomplexobj(Pxy):
                    Pxy = jnp.median(jnp.real(Pxy), axis=-1) + 1j * jnp.median(jnp.imag(Pxy), axis=-1)
                else:
                    Pxy = jnp.median(Pxy, axis=-1)
                Pxy /= bias
            elif average == "mean":
                Pxy = Pxy.mean(axis=-1)
            else:
                raise ValueError(f'average must be "median" or "mean", got {average}')
        else:
            Pxy = jnp.reshape(Pxy, Pxy.shape[:-1])

    return freqs, Pxy


def welch(x, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, detrend="constant", return_onesided=True,
          scaling="density", axis=-1, average="mean"):
    """Power spectral density by Welch's method: ``(f, Pxx)``."""
    freqs, Pxx = csd(x, None, fs=fs, window=window, nperseg=nperseg, noverlap=noverlap, nfft=nfft, detrend=detrend,
                     return_onesided=return_onesided, scaling=scaling, axis=axis, average=average)
    return freqs, Pxx.real


def _overlap_and_add(x, step_size):
    """``tf.signal.overlap_and_add`` of ``(..., frames, frame_length)`` frames, by reshapes and one sum (no
    scatter): each frame's tail is pushed into the head of the next row of a skewed view."""
    check_arraylike("_overlap_and_add", x)
    step_size = concrete_or_error(int, step_size, "step_size for overlap_and_add")
    if x.ndim < 2:
        raise ValueError("Input must have (..., frames, frame_length) shape.")

    *batch_shape, nframes, segment_len = x.shape
    flat_batchsize = math.prod(batch_shape)
    x = x.reshape((flat_batchsize, nframes, segment_len))
    output_size = step_size * (nframes - 1) + segment_len
    nstep_per_segment = 1 + (segment_len - 1) // step_size

    padded_segment_len = nstep_per_segment * step_size
    x = jnp.pad(x, ((0, 0), (0, 0), (0, padded_segment_len - segment_len)))
    x = x.reshape((flat_batchsize, nframes, nstep_per_segment, step_size))

    x = x.transpose((0, 2, 1, 3))
    x = jnp.pad(x, ((0, 0), (0, 0), (0, nframes), (0, 0)))
    shrunken = x.shape[2] - 1
    x = x.reshape((flat_batchsize, -1))
    x = x[:, :(nstep_per_segment * shrunken * step_size)]
    x = x.reshape((flat_batchsize, nstep_per_segment, shrunken * step_size))

    x = x.sum(axis=1)[:, :output_size]
    return x.reshape(tuple(batch_shape) + (-1,))


def istft(Zxx, fs=1.0, window="hann", nperseg=None, noverlap=None, nfft=None, input_onesided=True, boundary=True,
          time_axis=-1, freq_axis=-2):
    """Inverse short-time Fourier transform: ``(t, x)``, the overlap-added segments divided by the summed squared
    window."""
    Zxx = ensure_arraylike("istft", Zxx)
    if Zxx.ndim < 2:
        raise ValueError("Input stft must be at least 2d!")
    freq_axis = canonicalize_axis(freq_axis, Zxx.ndim)
    time_axis = canonicalize_axis(time_axis, Zxx.ndim)
    if freq_axis == time_axis:
        raise ValueError("Must specify differing time and frequency axes!")

    Zxx = jnp.asarray(Zxx, dtype=_to_complex_dtype(Zxx.dtype))

    n_default = 2 * (Zxx.shape[freq_axis] - 1) if input_onesided else Zxx.shape[freq_axis]

    nperseg_int = concrete_or_error(int, nperseg or n_default, "nperseg: segment length of STFT")
    if nperseg_int < 1:
        raise ValueError("nperseg must be a positive integer")

    if nfft is None:
        nfft_int = n_default
        if input_onesided and nperseg_int == n_default + 1:
            nfft_int += 1  # odd nperseg, no FFT padding
    else:
        nfft_int = concrete_or_error(int, nfft, "nfft of STFT")
    if nfft_int < nperseg_int:
        raise ValueError(f"FFT length ({nfft_int}) must be longer than nperseg ({nperseg_int}).")

    noverlap_int = concrete_or_error(int, noverlap or nperseg_int // 2, "noverlap of STFT")
    if noverlap_int >= nperseg_int:
        raise ValueError("noverlap must be less than nperseg.")
    nstep = nperseg_int - noverlap_int

    if time_axis != Zxx.ndim - 1 or freq_axis != Zxx.ndim - 2:
        outer_idxs = tuple(idx for idx in range(Zxx.ndim) if idx not in {time_axis, freq_axis})
        Zxx = jnp.transpose(Zxx, outer_idxs + (freq_axis, time_axis))

    ifunc = jnp_fft.irfft if input_onesided else jnp_fft.ifft
    # xsubs: [..., T, N], N frames of length T. JAX passes the caller's nfft, not nfft_int.
    xsubs = ifunc(Zxx, axis=-2, n=nfft)[..., :nperseg_int, :]

    if isinstance(window, str) and window == "hann":
        win = _hann(nperseg_int).astype(xsubs.dtype)
    elif isinstance(window, (str, tuple)):
        win = jnp.array(_get_window(window, nperseg_int), dtype=xsubs.dtype)
    else:
        win = jnp.asarray(window)
        if len(win.shape) != 1:
            raise ValueError("window must be 1-D")
        if win.shape[0] != nperseg_int:
            raise ValueError(f"window must have length of {nperseg_int}")
    xsubs *= win.sum()  # undoes stft's 'spectrum' scaling

    win = lax.expand_dims(win, (*range(xsubs.ndim - 2), -1))
    x = _overlap_and_add((xsubs * win).swapaxes(-2, -1), nstep)
    win_squared = jnp.repeat((win * win), xsubs.shape[-1], axis=-1)
    norm = _overlap_and_add(win_squared.swapaxes(-2, -1), nstep)

    if boundary:
        x = x[..., nperseg_int // 2:-(nperseg_int // 2)]
        norm = norm[..., nperseg_int // 2:-(nperseg_int // 2)]
    x /= jnp.where(norm > 1e-10, norm, 1.0)

    if x.ndim > 1:
        if time_axis != Zxx.ndim - 1:
            if freq_axis < time_axis:
                time_axis -= 1
            x = jnp.moveaxis(x, -1, time_axis)

    time = jnp.arange(x.shape[0], dtype=np.finfo(x.dtype).dtype) / fs
    return time, x
