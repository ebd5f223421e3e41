"""``irax.scipy.signal`` against ``jax.scipy.signal``: convolutions and correlations (N-D, 2-D, FFT) over every mode
and method, integer, float32 and complex64 inputs, swapped and length-1 operands; ``detrend`` with breakpoints;
``welch``, ``csd``, ``stft`` and ``istft`` over their options; eager values, one ``irax.jit`` compile of a group of
them, gradients, ``vmap``, ``make_jaxpr`` text, and JAX's exceptions (type and message) for bad arguments.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import irax
import irax.scipy.signal as isig

jax = pytest.importorskip("jax")
import jax.scipy.signal as jsig  # noqa: E402

RNG = np.random.default_rng(0)


def _arr(shape, dtype):
    if dtype == np.int32:
        return RNG.integers(-5, 6, shape).astype(np.int32)
    if dtype == np.complex64:
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)
    return RNG.standard_normal(shape).astype(dtype)


def _close(got, want, rtol=1e-5):
    """Equal dtypes and shapes; values to ``rtol`` (and ``rtol`` absolute, relative to the largest magnitude of
    ``want``: an FFT's float32 rounding errors scale with the whole signal, not with each output element)."""
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        scale = max(1.0, float(np.abs(w).max())) if w.size else 1.0
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * scale)


def _both(fn, rtol=1e-5):
    """``fn(isig)`` against ``fn(jsig)``, warnings (nperseg longer than the input, complex input) ignored. JAX's
    result comes from one unoptimized ``jax.jit`` compile: its eager mode would compile every operation for every
    new shape, seconds per spectral case."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = _jax(lambda: fn(jsig))
        got = fn(isig)
    _close(got, want, rtol)


_FAST_XLA = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _jax(thunk):
    return jax.jit(thunk, compiler_options=_FAST_XLA)()


def _raises_both(fn, exc, msg):
    """The same exception from both, JAX's raised while tracing a ``jax.jit`` (no compile)."""
    with pytest.raises(exc, match=re.escape(msg)):
        jax.jit(lambda: fn(jsig)).trace()
    with pytest.raises(exc, match=re.escape(msg)):
        fn(isig)


SHAPES = [((7,), (3,)), ((3,), (7,)), ((5,), (5,)), ((1,), (1,)), ((6,), (1,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)),
          ((3, 4, 5), (2, 2, 2))]
DTYPES = [np.int32, np.float32, np.complex64]
MODES = ["full", "same", "valid"]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_convolve_correlate(shapes, dtype):
    x, y = _arr(shapes[0], dtype), _arr(shapes[1], dtype)

    def direct(m):
        out = [f(x, y, mode, method) for mode in MODES for f in (m.convolve, m.correlate) for method in ("direct",
                                                                                                         "auto")]
        return out + [f(x, y, mode) for mode in MODES for f in (m.convolve2d, m.correlate2d) if x.ndim == 2]
    _both(direct)
    # The FFT paths round like an FFT: errors relative to the largest output.
    _both(lambda m: [f(x, y, mode, "fft") for mode in MODES for f in (m.convolve, m.correlate)]
          + [m.fftconvolve(x, y, mode) for mode in MODES], rtol=1e-4)


def test_convolve_mixed_dtypes_and_precision():
    x, y, z = _arr((6,), np.int32), _arr((3,), np.float32), _arr((2,), np.complex64)
    _both(lambda m: m.convolve(x, y))
    _both(lambda m: m.convolve(y, z, precision="highest"))
    a, b = _arr((3, 3), np.float32), _arr((3, 3), np.float32)
    _both(lambda m: m.correlate2d(a, b, "valid"))


def test_fftconvolve_axes():
    x, y = _arr((3, 8, 2), np.float32), _arr((3, 4, 2), np.float32)
    for mode in MODES:
        _both(lambda m: m.fftconvolve(x, y, mode, axes=1), rtol=1e-4)
        _both(lambda m: m.fftconvolve(x, y, mode, axes=(-2,)), rtol=1e-4)
    z = _arr((3, 5), np.complex64)
    _both(lambda m: m.fftconvolve(x[:, :, 0], z, axes=[0, 1]), rtol=1e-4)


def test_convolve_errors():
    x, y = _arr((3, 8), np.float32), _arr((3, 4), np.float32)
    _raises_both(lambda m: m.convolve(x, y, "bad"), ValueError, "mode must be one of ['full', 'same', 'valid']")
    _raises_both(lambda m: m.convolve(x, y, method="bad"), ValueError,
                 "Got method='bad'; expected 'auto', 'fft', or 'direct'.")
    _raises_both(lambda m: m.convolve(x, y[0]), ValueError, "in1 and in2 must have the same number of dimensions")
    _raises_both(lambda m: m.convolve(x, _arr((4, 2), np.float32)), ValueError,
                 "One input must be smaller than the other in every dimension.")
    _raises_both(lambda m: m.convolve(np.zeros((0,), np.float32), y[0]), ValueError,
                 "zero-size arrays not supported in convolutions, got shapes (0,) and (4,).")
    _raises_both(lambda m: m.fftconvolve(x, y[0]), ValueError, "in1 and in2 should have the same dimensionality")
    _raises_both(lambda m: m.fftconvolve(x, y, "bad"), ValueError, "mode must be one of ['same', 'full', 'valid']")
    _raises_both(lambda m: m.fftconvolve(x, _arr((4, 2), np.float32), "valid"), ValueError,
                 "For 'valid' mode, One input must be at least as large as the other in every dimension.")
    _raises_both(lambda m: m.fftconvolve(x, _arr((2, 4), np.float32), axes=1), ValueError,
                 "mapped axes must have same shape; got in1.shape=(3, 8) in2.shape=(2, 4) axes=(1,)")
    _raises_both(lambda m: m.fftconvolve([1.0], y[0]), TypeError,
                 "fftconvolve requires ndarray or scalar arguments, got <class 'list'> at position 0.")
    _raises_both(lambda m: m.convolve2d(x[0], y[0]), ValueError, "convolve2d() only supports 2-dimensional inputs.")
    _raises_both(lambda m: m.correlate2d(x[0], y[0]), ValueError, "correlate2d() only supports 2-dimensional inputs.")
    _raises_both(lambda m: m.convolve2d(x, y, boundary="wrap"), NotImplementedError,
                 "convolve2d() only supports boundary='fill', fillvalue=0")
    _raises_both(lambda m: m.correlate2d(x, y, fillvalue=1), NotImplementedError,
                 "correlate2d() only supports boundary='fill', fillvalue=0")


@pytest.mark.parametrize("dtype", [np.int32, np.float32], ids=lambda d: np.dtype(d).name)
def test_detrend(dtype):
    one, row, rows = np.ones((1,), dtype), _arr((20,), dtype), _arr((3, 20), dtype)
    _both(lambda m: [m.detrend(d, axis, "constant") for d in (row, rows) for axis in (-1, 0)]
          + [m.detrend(one, type="constant")])
    # A least-squares fit (an SVD): float32 errors relative to the largest value.
    _both(lambda m: [m.detrend(d, axis, "linear") for d in (row, rows) for axis in (-1, 0)]
          + [m.detrend(d, bp=[3, 11]) for d in (row, rows)], rtol=1e-4)


def test_detrend_errors():
    data = _arr((5,), np.float32)
    _raises_both(lambda m: m.detrend(data, type="quadratic"), ValueError, "Trend type must be 'linear' or 'constant'.")
    _raises_both(lambda m: m.detrend(data, bp=[7]), ValueError,
                 "Breakpoints must be non-negative and less than length of data along given axis.")
    _raises_both(lambda m: m.detrend(data, overwrite_data=True), NotImplementedError,
                 "overwrite_data argument not implemented.")


SIGNAL = _arr((2, 300), np.float32)

WELCH_OPTIONS = [{}, dict(nperseg=64), dict(nperseg=64, noverlap=10, nfft=100), dict(nperseg=33, detrend="linear"),
                 dict(nperseg=64, average="median"), dict(nperseg=64, scaling="spectrum", return_onesided=False),
                 dict(nperseg=64, window="hamming"), dict(window=np.hanning(50).astype(np.float32)),
                 dict(nperseg=64, axis=0), dict(nperseg=1, noverlap=0), dict(nperseg=64, detrend=False),
                 dict(nperseg=64, detrend=lambda d: d - d.mean(-1, keepdims=True)), dict(nperseg=20, fs=3.0)]


@pytest.mark.parametrize("options", WELCH_OPTIONS, ids=lambda options: ",".join(
    f"{k}={'function' if callable(v) else v}" for k, v in options.items()))
def test_welch_csd(options):
    if isinstance(options.get("window"), str):
        pytest.importorskip("scipy")
    _both(lambda m: m.welch(SIGNAL, **options), rtol=1e-4)
    _both(lambda m: m.csd(SIGNAL, SIGNAL[::-1] * 2, **options), rtol=1e-4)


def test_welch_csd_inputs():
    ints, cplx = _arr((100,), np.int32), _arr((100,), np.complex64)
    _both(lambda m: m.welch(ints, nperseg=16), rtol=1e-4)
    _both(lambda m: m.welch(cplx, nperseg=16), rtol=1e-4)
    _both(lambda m: m.csd(SIGNAL[0, :100], cplx, nperseg=16, average="median"), rtol=1e-4)
    _both(lambda m: m.csd(SIGNAL[0], SIGNAL[1, :80], nperseg=16), rtol=1e-4)
    three = _arr((3, 100), np.float32)
    _both(lambda m: m.csd(three, SIGNAL[:1, :100], nperseg=16), rtol=1e-4)
    _both(lambda m: m.welch(SIGNAL[:, :16], nperseg=16), rtol=1e-4)
    _both(lambda m: m.welch(np.zeros((0,), np.float32)))
    _both(lambda m: m.csd(np.zeros((2, 0), np.float32), SIGNAL[:1]))
    _both(lambda m: m.welch(SIGNAL[0, :10]), rtol=1e-4)  # nperseg=None: the whole signal, one segment


def test_welch_warnings():
    cplx = _arr((20,), np.complex64)
    cases = [(lambda m: m.welch(SIGNAL[0, :10], nperseg=64),
              "nperseg=64 is greater than input_length=10, using nperseg=10"),
             (lambda m: m.welch(cplx, nperseg=8), "Input data is complex, switching to return_onesided=False")]
    for fn, msg in cases:
        # JAX warns while tracing: under jax.jit, one compile where its eager mode compiles every operation.
        for run in (jax.jit(lambda: fn(jsig)), lambda: fn(isig)):
            with pytest.warns(UserWarning, match=re.escape(msg)):
                run()


def test_spectral_errors():
    x = SIGNAL[0]
    _raises_both(lambda m: m.welch(x, nperseg=64, average="mode"), ValueError,
                 'average must be "median" or "mean", got mode')
    _raises_both(lambda m: m.welch(x, nperseg=64, noverlap=64), ValueError, "noverlap must be less than nperseg.")
    _raises_both(lambda m: m.welch(x, nperseg=64, nfft=32), ValueError,
                 "nfft must be greater than or equal to nperseg.")
    _raises_both(lambda m: m.welch(x, nperseg=0), ValueError, "nperseg must be a positive integer")
    _raises_both(lambda m: m.welch(x, nperseg=8, scaling="power"), ValueError, "Unknown scaling: power")
    _raises_both(lambda m: m.welch(x, nperseg=8, detrend=1), ValueError, "Unsupported detrend type: 1")
    _raises_both(lambda m: m.welch(x, window=np.ones((2, 2))), ValueError, "window must be 1-D")
    _raises_both(lambda m: m.welch(x[:4], window=np.ones(8)), ValueError, "window is longer than input signal")
    _raises_both(lambda m: m.welch(x, window=np.ones(8), nperseg=4), ValueError,
                 "value specified for nperseg is different from length of window")
    _raises_both(lambda m: m.csd(SIGNAL, x[None, None]), ValueError, "two-arguments must have the same rank")
    _raises_both(lambda m: m.csd(SIGNAL, _arr((3, 300), np.float32)), ValueError,
                 "x and y cannot be broadcast together.")
    _raises_both(lambda m: m.csd(x, [1.0]), TypeError,
                 "spectral_helper requires ndarray or scalar arguments, got <class 'list'> at position 1.")
    _raises_both(lambda m: m.stft(x, nperseg=8, boundary="wrap"), ValueError,
                 "Unknown boundary option 'wrap', must be one of: ['even', 'odd', 'constant', 'zeros', None]")


STFT_OPTIONS = [{}, dict(nperseg=32), dict(nperseg=32, boundary=None, padded=False), dict(nperseg=31, boundary="even"),
                dict(nperseg=32, boundary="odd"), dict(nperseg=32, boundary="constant"),
                dict(nperseg=32, return_onesided=False), dict(nperseg=32, axis=0),
                dict(nperseg=32, noverlap=20, nfft=50, detrend="constant", fs=2.0)]


@pytest.mark.parametrize("options", STFT_OPTIONS, ids=str)
def test_stft(options):
    _both(lambda m: m.stft(SIGNAL, **options), rtol=1e-4)


Z = np.asarray(jsig.stft(SIGNAL, nperseg=32)[2])
Z_ODD = np.asarray(jsig.stft(SIGNAL, nperseg=31)[2])
ISTFT_CASES = [(Z, {}), (Z, dict(nperseg=32)), (Z, dict(nperseg=32, boundary=False)), (Z, dict(input_onesided=False)),
               (Z, dict(nperseg=32, noverlap=8, fs=4.0)), (Z, dict(time_axis=-2, freq_axis=-1)),
               (Z, dict(time_axis=0, freq_axis=1)), (Z, dict(window=np.ones(32, np.float32))), (Z[0], {}),
               (Z_ODD, dict(nperseg=31, nfft=31)), (Z.real.astype(np.float32), {})]


@pytest.mark.parametrize("case", range(len(ISTFT_CASES)))
def test_istft(case):
    zxx, options = ISTFT_CASES[case]
    _both(lambda m: m.istft(zxx, **options), rtol=1e-4)


def test_istft_inverts_stft():
    _, _, zxx = isig.stft(SIGNAL[0], nperseg=32)
    _, x = isig.istft(zxx, nperseg=32)
    np.testing.assert_allclose(np.asarray(x)[:300], SIGNAL[0], rtol=1e-4, atol=1e-4)


def test_istft_errors():
    _raises_both(lambda m: m.istft(Z[0, 0]), ValueError, "Input stft must be at least 2d!")
    _raises_both(lambda m: m.istft(Z, time_axis=-1, freq_axis=2), ValueError,
                 "Must specify differing time and frequency axes!")
    _raises_both(lambda m: m.istft(Z, nperseg=32, noverlap=32), ValueError, "noverlap must be less than nperseg.")
    _raises_both(lambda m: m.istft(Z, nperseg=32, nfft=20), ValueError,
                 "FFT length (20) must be longer than nperseg (32).")
    _raises_both(lambda m: m.istft(Z, nperseg=-3), ValueError, "nperseg must be a positive integer")
    _raises_both(lambda m: m.istft(Z, window=np.ones((32, 1))), ValueError, "window must be 1-D")
    _raises_both(lambda m: m.istft(Z, window=np.ones(31)), ValueError, "window must have length of 32")


def _jit_cases(m):
    """The functions compiled together by ``test_jit``: one compile for all of them."""
    def run(x, y, s, zxx, d):
        out = [m.convolve(x, y, mode) for mode in MODES]
        out += [m.convolve(x, y, method="fft"), m.correlate2d(d, d[:2, :3], "same"), m.detrend(d, type="constant")]
        out += [m.welch(s, nperseg=16), m.csd(s, s[::-1], nperseg=16, average="median"), m.stft(s, nperseg=16),
                m.istft(zxx)]
        return out
    return run


def test_jit():
    args = (_arr((9,), np.float32), _arr((4,), np.float32), SIGNAL[0, :100], Z[0], _arr((4, 5), np.float32))
    _close(irax.jit(_jit_cases(isig))(*args), _jax(lambda: _jit_cases(jsig)(*args)), rtol=1e-4)


def test_grad():
    x, y = _arr((9,), np.float32), _arr((4,), np.float32)
    for mode in MODES:
        for method in ("direct", "fft"):
            def loss(m, grad):
                return grad(lambda a, b: (m.convolve(a, b, mode, method) ** 2).sum(), (0, 1))(x, y)
            _close(loss(isig, irax.grad), _jax(lambda: loss(jsig, jax.grad)), rtol=1e-4)
    x2, y2 = _arr((4, 5), np.float32), _arr((2, 3), np.float32)
    _close(irax.grad(lambda a: isig.correlate2d(a, y2).sum())(x2),
           _jax(lambda: jax.grad(lambda a: jsig.correlate2d(a, y2).sum())(x2)))


def test_vmap():
    x, y = _arr((3, 9), np.float32), _arr((3, 4), np.float32)
    _close(irax.vmap(isig.convolve)(x, y), _jax(lambda: jax.vmap(jsig.convolve)(x, y)))
    _close(irax.vmap(isig.detrend)(x), _jax(lambda: jax.vmap(jsig.detrend)(x)), rtol=1e-4)


@pytest.mark.parametrize("name", ["convolve", "convolve_same", "convolve_fft", "correlate", "convolve2d",
                                  "correlate2d", "fftconvolve_axes", "detrend"])
def test_jaxpr_text(name):
    x, y, a, b = _arr((5,), np.float32), _arr((3,), np.float32), _arr((4, 5), np.float32), _arr((2, 3), np.float32)
    fun, args = {
        "convolve": (lambda m: m.convolve, (x, y)),
        "convolve_same": (lambda m: lambda p, q: m.convolve(p, q, "same"), (x, y)),
        "convolve_fft": (lambda m: lambda p, q: m.convolve(p, q, method="fft"), (x, y)),
        "correlate": (lambda m: m.correlate, (x, y)),
        "convolve2d": (lambda m: m.convolve2d, (a, b)),
        "correlate2d": (lambda m: m.correlate2d, (a, b)),
        "fftconvolve_axes": (lambda m: lambda p, q: m.fftconvolve(p, q, axes=1), (a, _arr((4, 2), np.float32))),
        "detrend": (lambda m: m.detrend, (x,)),
    }[name]
    assert str(irax.make_jaxpr(fun(isig))(*args)) == str(jax.make_jaxpr(fun(jsig))(*args))
