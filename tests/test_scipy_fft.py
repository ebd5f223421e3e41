"""``irax.scipy.fft`` (``dct``, ``dctn``, ``idct``, ``idctn``) against ``jax.scipy.fft``: integer, float32 and
complex64 inputs, every axis, padding and truncating ``n``/``s``, every norm, length-1 axes; eager values, one
``irax.jit`` compile of a group, ``vmap``, a gradient, ``make_jaxpr`` text, and JAX's
exceptions.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.scipy.fft as ifft

jax = pytest.importorskip("jax")
import jax.scipy.fft as jfft  # noqa: E402

RNG = np.random.default_rng(0)


def _arr(shape, dtype):
    if dtype == np.int32:
        return RNG.integers(-5, 6, shape).astype(np.int32)
    if dtype == np.complex64:
        return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)
    return RNG.standard_normal(shape).astype(dtype)


def _close(got, want, rtol=1e-4):
    """Equal dtypes and shapes; values to ``rtol`` of the largest magnitude of ``want`` (a DCT is an FFT: its
    float32 rounding errors scale with the whole input, not with each output element)."""
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=rtol * max(1.0, float(np.abs(w).max())))


def _jax(thunk):
    """JAX's result of ``thunk`` by one unoptimized ``jax.jit`` compile (its eager mode compiles every operation for
    every new shape: seconds per case)."""
    return jax.jit(thunk, compiler_options=_FAST_XLA)()


def _both(fn):
    _close(fn(ifft), _jax(lambda: fn(jfft)))


_FAST_XLA = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _raises_both(fn, exc, msg):
    for module in (jfft, ifft):
        with pytest.raises(exc, match=re.escape(msg)):
            fn(module)


X = {np.dtype(d).name: _arr((4, 5, 6), d) for d in (np.int32, np.float32, np.complex64)}


def test_dct_idct():
    x = X["float32"]
    _both(lambda m: [f(x, n=n, axis=axis, norm=norm) for f in (m.dct, m.idct) for n in (None, 3, 8)
                     for axis in (-1, 0, 1) for norm in (None, "ortho")] + [m.idct(x, norm="backward")])


S_AXES = [(None, None), ([3], None), ([3], [0]), ([3, 7], None), (None, [0, 2]), (None, (1,)), (2, None),
          ([2, 3, 4], None), (None, 1), (None, [-1, 0, 1])]


def test_dctn_idctn():
    x = X["float32"]
    _both(lambda m: [f(x, s=s, axes=axes, norm=norm) for f in (m.dctn, m.idctn) for s, axes in S_AXES
                     for norm in (None, "ortho")])


@pytest.mark.parametrize("dtype", ["int32", "complex64"])
def test_other_dtypes(dtype):
    """Integers promote to float32 and complex numbers transform their parts apart: a few cases suffice."""
    x = X[dtype]
    _both(lambda m: [m.dct(x), m.idct(x), m.dct(x, n=3, axis=0, norm="ortho"), m.idct(x, n=8, axis=1, norm="ortho"),
                     m.dctn(x), m.idctn(x, norm="ortho"), m.dctn(x, s=[3, 7], norm="ortho"),
                     m.idctn(x, axes=[0, 2]), m.dctn(x, s=[2, 3, 4])])


def test_length_one_and_roundtrip():
    one, row = _arr((1,), np.float32), _arr((3, 1), np.float32)
    _both(lambda m: (m.dct(one), m.idct(one), m.dct(one, norm="ortho"), m.dctn(row), m.idctn(row, norm="ortho")))
    x = X["float32"]
    np.testing.assert_allclose(ifft.idctn(ifft.dctn(x)), x, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(ifft.idct(ifft.dct(x, norm="ortho"), norm="ortho"), x, rtol=1e-4, atol=1e-4)


def test_errors():
    x = X["float32"]
    for name in ("dct", "idct", "dctn", "idctn"):
        _raises_both(lambda m: getattr(m, name)(x, type=3), NotImplementedError, "Only DCT type 2 is implemented.")
        _raises_both(lambda m: getattr(m, name)(x, norm="forward"), ValueError,
                     f"jax.scipy.fft.{name}: norm='forward' is not implemented")
        _raises_both(lambda m: getattr(m, name)([1.0, 2.0]), TypeError,
                     f"{name} requires ndarray or scalar arguments, got <class 'list'> at position 0.")
    for name in ("dctn", "idctn"):
        _raises_both(lambda m: getattr(m, name)(x, s=[2, 2, 2, 2]), ValueError,
                     "s must have at most x.ndim (3) elements, got 4")
        _raises_both(lambda m: getattr(m, name)(x, axes=[0, -3]), ValueError, "repeated axis: (0, 0)")
        _raises_both(lambda m: getattr(m, name)(x, axes=[3]), ValueError,
                     "axis 3 is out of bounds for array of dimension 3")
    _raises_both(lambda m: m.dct(x, axis=-4), ValueError, "axis -4 is out of bounds for array of dimension 3")


def _jit_cases(m):
    """A few transforms in one ``irax.jit`` (IREE compiles for about a second per transform)."""
    return lambda x, c: [m.dct(x), m.idct(x, n=8, axis=0, norm="ortho"), m.dctn(c)]


def test_jit_vmap_grad():
    x, c = X["float32"][0], X["complex64"][0]
    _close(irax.jit(_jit_cases(ifft))(x, c), _jit_cases(jfft)(x, c))
    _close(irax.vmap(ifft.dct)(x), _jax(lambda: jax.vmap(jfft.dct)(x)))
    _close(irax.vmap(ifft.idctn, in_axes=2)(X["float32"]), _jax(lambda: jax.vmap(jfft.idctn, in_axes=2)(X["float32"])))
    w = np.linspace(-1, 1, 6).astype(np.float32)
    _close(irax.grad(lambda a: (ifft.dctn(a, norm="ortho") * w).sum())(x),
           _jax(lambda: jax.grad(lambda a: (jfft.dctn(a, norm="ortho") * w).sum())(x)))


@pytest.mark.parametrize("name", ["dct", "dctn", "idct", "idctn"])
def test_jaxpr_text(name):
    x = X["float32"][0]
    fun = lambda m: lambda a: getattr(m, name)(a, norm="ortho")  # noqa: E731
    assert str(irax.make_jaxpr(fun(ifft))(x)) == str(jax.make_jaxpr(fun(jfft))(x))
