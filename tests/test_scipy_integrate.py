"""``irax.scipy.integrate.trapezoid`` against JAX's: sample points or spacing (scalar or per-row), every axis,
integer inputs, one sample, an empty batch; eager values, ``irax.jit``, a gradient, ``make_jaxpr`` text (JAX's two
nested ``trapezoid`` jits), and JAX's exceptions.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.scipy.integrate as iint

jax = pytest.importorskip("jax")
import jax.scipy.integrate as jint  # noqa: E402

RNG = np.random.default_rng(0)
Y = RNG.standard_normal((3, 7)).astype(np.float32)
X = np.sort(RNG.uniform(0, 5, 7)).astype(np.float32)


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


CASES = [(Y[0], None, {}), (Y, None, dict(dx=0.5)), (Y, X, {}), (Y, np.tile(X, (3, 1)), {}),
         (Y, X[:3], dict(axis=0)), (Y, None, dict(dx=np.float32(2), axis=0)), (Y.T, None, dict(dx=X[:6, None], axis=0)),
         (RNG.integers(-5, 5, 6).astype(np.int32), None, {}), (Y[0], np.arange(7), {}), (Y[0, :1], None, {}),
         (np.zeros((0, 4), np.float32), None, {})]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_trapezoid(case):
    y, x, options = CASES[case]
    _close(iint.trapezoid(y, x, **options), jint.trapezoid(y, x, **options))


def test_jit_grad():
    _close(irax.jit(iint.trapezoid, static_argnames="axis")(Y, X[:3], axis=0), jint.trapezoid(Y, X[:3], axis=0))
    _close(irax.grad(lambda y, x: iint.trapezoid(y, x).sum(), (0, 1))(Y, X)[1],
           jax.grad(lambda y, x: jint.trapezoid(y, x).sum(), (0, 1))(Y, X)[1])


@pytest.mark.parametrize("with_x", [False, True])
def test_jaxpr_text(with_x):
    args = (Y, X) if with_x else (Y,)
    assert str(irax.make_jaxpr(iint.trapezoid)(*args)) == str(jax.make_jaxpr(jint.trapezoid)(*args))


def test_errors():
    for module in (jint, iint):
        with pytest.raises(TypeError, match=re.escape(
                "trapezoid requires ndarray or scalar arguments, got <class 'list'> at position 0.")):
            module.trapezoid([1.0, 2.0])
        with pytest.raises(ValueError, match=re.escape("axis 2 is out of bounds for array of dimension 2")):
            module.trapezoid(Y, axis=2)
        with pytest.raises(IndexError, match=re.escape("index is out of bounds for axis 0 with size 0")):
            module.trapezoid(np.zeros((0,), np.float32))
