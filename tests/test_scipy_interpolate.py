"""``irax.scipy.interpolate.RegularGridInterpolator`` against JAX's: linear and nearest, points inside, on and
outside the grid (NaN, a given fill value, or none), trailing value dimensions, points as one array or a tuple
of arrays, integer values; eager values, ``irax.jit`` with the interpolator as a pytree argument, a gradient,
``vmap``, and JAX's exceptions.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.scipy.interpolate as iip

jax = pytest.importorskip("jax")
import jax.scipy.interpolate as jip  # noqa: E402

RNG = np.random.default_rng(0)
GRID = (np.array([0.0, 1.0, 2.5, 4.0], np.float32), np.array([1.0, 2.0, 3.0], np.float32))
VALUES = RNG.standard_normal((4, 3)).astype(np.float32)
# Inside, on the grid points and edges, and outside on every side.
POINTS = np.concatenate([RNG.uniform(-1, 5, (6, 2)), [[0, 1], [4, 3], [2.5, 2], [1.75, 2.5], [-0.1, 2], [2, 3.5]]])
POINTS = POINTS.astype(np.float32)


def _close(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def _jax(thunk):
    """JAX's result of ``thunk`` by one unoptimized ``jax.jit`` compile (its eager mode compiles every operation)."""
    return jax.jit(thunk, compiler_options={"xla_backend_optimization_level": 0})()


def _both(make, call):
    _close(call(make(iip)), _jax(lambda: call(make(jip))))


CASES = [
    (lambda m: m.RegularGridInterpolator(GRID, VALUES), lambda f: f(POINTS)),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES, method="nearest"), lambda f: f(POINTS)),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES), lambda f: f(POINTS, method="nearest")),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES, fill_value=None), lambda f: f(POINTS)),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES, fill_value=-7), lambda f: f(POINTS)),
    (lambda m: m.RegularGridInterpolator(GRID, np.stack([VALUES, 2 * VALUES], -1)), lambda f: f(POINTS)),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES), lambda f: f((POINTS[:, 0], POINTS[:, 1]))),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES), lambda f: f(POINTS.reshape(3, 4, 2))),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES), lambda f: f(POINTS[0])),
    (lambda m: m.RegularGridInterpolator(GRID[:1], VALUES), lambda f: f(POINTS[:, 0])),
    (lambda m: m.RegularGridInterpolator(GRID, VALUES.astype(np.int32) * 3), lambda f: f(POINTS)),
    (lambda m: m.RegularGridInterpolator((np.arange(4), np.arange(3)), VALUES), lambda f: f(POINTS)),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_regular_grid_interpolator(case):
    _both(*CASES[case])


def test_jit_grad_vmap():
    _close(irax.jit(lambda f, p: f(p))(iip.RegularGridInterpolator(GRID, VALUES), POINTS),
           _jax(lambda: jip.RegularGridInterpolator(GRID, VALUES)(POINTS)))
    inside = POINTS[:6].clip([0, 1], [4, 3])
    _close(irax.grad(lambda v: iip.RegularGridInterpolator(GRID, v)(inside).sum())(VALUES),
           _jax(lambda: jax.grad(lambda v: jip.RegularGridInterpolator(GRID, v)(inside).sum())(VALUES)))
    _close(irax.vmap(iip.RegularGridInterpolator(GRID, VALUES))(POINTS[:, None]),
           _jax(lambda: jax.vmap(jip.RegularGridInterpolator(GRID, VALUES))(POINTS[:, None])))


def test_errors():
    for module in (jip, iip):
        with pytest.raises(ValueError, match="method 'cubic' is not defined"):
            module.RegularGridInterpolator(GRID, VALUES, method="cubic")
        with pytest.raises(ValueError, match="method 'cubic' is not defined"):
            module.RegularGridInterpolator(GRID, VALUES)(POINTS, method="cubic")
        with pytest.raises(NotImplementedError, match="`bounds_error` takes no effect under JIT"):
            module.RegularGridInterpolator(GRID, VALUES, bounds_error=True)
        with pytest.raises(ValueError, match="there are 3 point arrays, but values has 2 dimensions"):
            module.RegularGridInterpolator(GRID + GRID[:1], VALUES)
        with pytest.raises(ValueError, match=re.escape(
                "fill_value must be either 'None' or of a type compatible with values")):
            module.RegularGridInterpolator(GRID, VALUES, fill_value=1j)
        with pytest.raises(ValueError, match=re.escape(
                "the requested sample points xi have dimension 3, but this RegularGridInterpolator has dimension 2")):
            module.RegularGridInterpolator(GRID, VALUES)(np.ones((4, 3), np.float32))
        with pytest.raises(TypeError, match=re.escape(
                "RegularGridInterpolator requires ndarray or scalar arguments, got <class 'list'> at position 0.")):
            module.RegularGridInterpolator(GRID, VALUES, fill_value=[1.0])
