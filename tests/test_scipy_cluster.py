"""``irax.scipy.cluster.vq.vq`` against JAX's: 2-D and 1-D observations, integer inputs, ties (the first code
wins); eager values, ``irax.jit``, ``make_jaxpr`` text, and JAX's exceptions.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.scipy.cluster as icl

jax = pytest.importorskip("jax")
import jax.scipy.cluster as jcl  # noqa: E402

RNG = np.random.default_rng(0)
OBS, BOOK = RNG.standard_normal((6, 3)).astype(np.float32), RNG.standard_normal((4, 3)).astype(np.float32)


def _close(got, want):
    for g, w in zip(got, want, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


CASES = [(OBS, BOOK), (OBS[:, 0], BOOK[:, 0]), (RNG.integers(-5, 5, (5, 2)).astype(np.int32),
                                                RNG.integers(-5, 5, (3, 2)).astype(np.int32)),
         (np.array([[0.0], [1.0]], np.float32), np.array([[0.5], [0.5], [2.0]], np.float32)),
         (OBS[:1], BOOK[:1]), (np.zeros((0, 3), np.float32), BOOK)]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_vq(case):
    obs, book = CASES[case]
    _close(icl.vq.vq(obs, book), jcl.vq.vq(obs, book))


def test_jit_and_jaxpr_text():
    _close(irax.jit(icl.vq.vq)(OBS, BOOK), jcl.vq.vq(OBS, BOOK))
    assert str(irax.make_jaxpr(icl.vq.vq)(OBS, BOOK)) == str(jax.make_jaxpr(jcl.vq.vq)(OBS, BOOK))


def test_errors():
    for module in (jcl, icl):
        with pytest.raises(ValueError, match="Observation and code_book should have the same rank"):
            module.vq.vq(OBS, BOOK[0])
        with pytest.raises(ValueError, match="ndim different than 1 or 2 are not supported"):
            module.vq.vq(OBS[None], BOOK[None])
        with pytest.raises(TypeError, match=re.escape(
                "scipy.cluster.vq.vq requires ndarray or scalar arguments, got <class 'list'> at position 1.")):
            module.vq.vq(OBS, [[1.0, 2.0, 3.0]])
