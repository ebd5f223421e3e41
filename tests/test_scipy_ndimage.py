"""``irax.scipy.ndimage.map_coordinates`` against JAX's: orders 0 and 1, every boundary mode, float32, integer and
complex64 inputs, coordinates outside the array on both sides, 1-D to 3-D; eager values, one ``irax.jit``
compile, gradients with respect to the input and the coordinates, ``vmap``, ``make_jaxpr`` text (JAX's
``_map_coordinates`` jit), and JAX's exceptions.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.scipy.ndimage as inde

jax = pytest.importorskip("jax")
import jax.scipy.ndimage as jnde  # noqa: E402

RNG = np.random.default_rng(0)
MODES = ["constant", "nearest", "wrap", "mirror", "reflect"]
_FAST_XLA = {"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True}


def _close(got, want):
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want), strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def _jax(thunk):
    """JAX's result of ``thunk`` by one unoptimized ``jax.jit`` compile (its eager mode compiles every operation)."""
    return jax.jit(thunk, compiler_options=_FAST_XLA)()


def _both(fn):
    _close(fn(inde), _jax(lambda: fn(jnde)))


IMAGES = {"float32": RNG.standard_normal((5, 6)).astype(np.float32),
          "int32": RNG.integers(-9, 10, (5, 6)).astype(np.int32),
          "complex64": (RNG.standard_normal((5, 6)) + 1j * RNG.standard_normal((5, 6))).astype(np.complex64)}
COORDS = [RNG.uniform(-3, 8, (3, 4)).astype(np.float32), RNG.uniform(-3, 9, (3, 4)).astype(np.float32)]
# Half-integers, where order 0 rounds half away from zero, and the edges.
EXACT = [np.array([-1.5, -0.5, 0, 0.5, 2.5, 4, 4.5, 5.5], np.float32), np.array([-0.5, 0.5, 1.5, 5, 5.5, 6, 6.5, 7],
                                                                                 np.float32)]


@pytest.mark.parametrize("dtype", list(IMAGES))
def test_map_coordinates(dtype):
    img = IMAGES[dtype]
    _both(lambda m: [m.map_coordinates(img, c, order, mode, cval=1.5) for order in (0, 1) for mode in MODES
                     for c in (COORDS, EXACT)])


def test_ranks_and_coordinate_dtypes():
    line, cube = RNG.standard_normal(7).astype(np.float32), RNG.standard_normal((3, 4, 5)).astype(np.float32)
    ints = [np.array([-2, 0, 3, 6, 9])]
    cube_coords = [RNG.uniform(-1, s, 6).astype(np.float32) for s in (3, 4, 5)]
    _both(lambda m: [m.map_coordinates(line, ints, 0), m.map_coordinates(line, ints, 1, "wrap"),
                     m.map_coordinates(line, [np.float32(2.25)], 1), m.map_coordinates(line, [[1.5, 2.5]], 1),
                     m.map_coordinates(cube, cube_coords, 1, "mirror"), m.map_coordinates(cube, cube_coords, 0),
                     m.map_coordinates(line[:1], [np.array([-1.0, 0.0, 0.4, 2.0], np.float32)], 1, "nearest")])


def test_errors():
    img = IMAGES["float32"]
    for module in (jnde, inde):
        with pytest.raises(ValueError, match=re.escape("coordinates must be a sequence of length input.ndim, but "
                                                       "1 != 2")):
            module.map_coordinates(img, COORDS[:1], 1)
        with pytest.raises(NotImplementedError, match=re.escape(
                "jax.scipy.ndimage.map_coordinates does not yet support mode grid-wrap. Currently supported modes "
                "are {")):
            module.map_coordinates(img, COORDS, 1, "grid-wrap")
        with pytest.raises(NotImplementedError, match=re.escape(
                "jax.scipy.ndimage.map_coordinates currently requires order<=1")):
            module.map_coordinates(img, COORDS, 3)


def test_jit_grad_vmap():
    img, c = IMAGES["float32"], COORDS

    def run(m):
        return lambda a, c0, c1: [m.map_coordinates(a, [c0, c1], 1, mode) for mode in MODES]
    _close(irax.jit(run(inde))(img, *c), _jax(lambda: run(jnde)(img, *c)))
    for mode in ("constant", "reflect"):
        def loss(m, grad):
            return grad(lambda a, c0, c1: (m.map_coordinates(a, [c0, c1], 1, mode) ** 2).sum(), (0, 1, 2))(img, *c)
        _close(loss(inde, irax.grad), _jax(lambda: loss(jnde, jax.grad)))
    batch = np.stack([img, img * 2, -img])
    _close(irax.vmap(lambda a: inde.map_coordinates(a, c, 1))(batch),
           _jax(lambda: jax.vmap(lambda a: jnde.map_coordinates(a, c, 1))(batch)))
    _close(irax.vmap(lambda c0: inde.map_coordinates(img, [c0, c[1][0]], 0))(c[0]),
           _jax(lambda: jax.vmap(lambda c0: jnde.map_coordinates(img, [c0, c[1][0]], 0))(c[0])))


@pytest.mark.parametrize("order, mode", [(1, "constant"), (0, "wrap"), (1, "reflect")])
def test_jaxpr_text(order, mode):
    img, c = IMAGES["float32"], COORDS

    def fun(m):
        return lambda a, c0, c1: m.map_coordinates(a, [c0, c1], order, mode)
    assert str(irax.make_jaxpr(fun(inde))(img, *c)) == str(jax.make_jaxpr(fun(jnde))(img, *c))
