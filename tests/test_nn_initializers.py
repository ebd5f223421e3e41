"""``irax.nn.initializers`` against ``jax.nn.initializers``: the same bits for several keys, shapes and dtypes
(normal draws within an ulp: irax.random.normal's erf_inv may round differently; bfloat16 only for the uniform
ones: irax.random.truncated_normal differs from JAX's in bfloat16), the fans of
``variance_scaling``, its errors; and ``irax.nn.dot_product_attention`` against JAX's, with every mask."""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.nn.initializers as ii

jax = pytest.importorskip("jax")
import jax.nn.initializers as ji  # noqa: E402

KEYS = [0, 123]
SHAPES = [(3, 4), (2, 3, 5)]
DTYPES = ["float32", "float16", "bfloat16"]
EXACT = {"uniform": (0.5,), "truncated_normal": (0.3,), "glorot_uniform": (), "he_uniform": (), "lecun_uniform": (),
         "xavier_uniform": (), "kaiming_uniform": (), "glorot_normal": (), "he_normal": (), "lecun_normal": (),
         "xavier_normal": (), "kaiming_normal": (), "constant": (2.5,)}
NEAR = {"normal": (0.5,)}


def _draw(lib, name, args, seed, shape, dtype):
    module, random = (ii, irax.random) if lib == "irax" else (ji, jax.random)
    return np.asarray(getattr(module, name)(*args)(random.key(seed), shape, dtype))


@pytest.mark.parametrize("name", sorted(EXACT))
def test_bits_equal_jax(name):
    for seed in KEYS:
        for shape in SHAPES:
            for dtype in DTYPES if "uniform" in name or name == "constant" else DTYPES[:2]:
                actual = _draw("irax", name, EXACT[name], seed, shape, dtype)
                expected = _draw("jax", name, EXACT[name], seed, shape, dtype)
                assert actual.dtype == expected.dtype, (name, dtype)
                np.testing.assert_array_equal(actual, expected, err_msg=f"{name} {seed} {shape} {dtype}")


@pytest.mark.parametrize("name", sorted(NEAR))
def test_normal_within_an_ulp(name):
    for seed in KEYS:
        for shape in SHAPES:
            actual = _draw("irax", name, NEAR[name], seed, shape, "float32")
            expected = _draw("jax", name, NEAR[name], seed, shape, "float32")
            np.testing.assert_array_max_ulp(actual, expected, maxulp=2)


@pytest.mark.parametrize("name", ["zeros", "ones"])
def test_constant_initializers(name):
    for dtype in DTYPES:
        actual = getattr(ii, name)(irax.random.key(0), (2, 3), dtype)
        expected = getattr(ji, name)(jax.random.key(0), (2, 3), dtype)
        assert np.asarray(actual).dtype == np.asarray(expected).dtype
        np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))
    assert np.asarray(ii.zeros(irax.random.key(0), (2,))).dtype == np.float32


@pytest.mark.parametrize("mode", ["fan_in", "fan_out", "fan_avg", "fan_geo_avg"])
@pytest.mark.parametrize("distribution", ["truncated_normal", "uniform"])
def test_variance_scaling_fans(mode, distribution):
    kw = dict(in_axis=(0, 1), out_axis=-1, batch_axis=())
    actual = ii.variance_scaling(2.0, mode, distribution, **kw)(irax.random.key(3), (2, 3, 4))
    expected = ji.variance_scaling(2.0, mode, distribution, **kw)(jax.random.key(3), (2, 3, 4))
    np.testing.assert_array_equal(np.asarray(actual), np.asarray(expected))


def test_under_jit():
    fn = irax.jit(lambda k: ii.glorot_uniform()(k, (5, 7)))
    np.testing.assert_array_equal(np.asarray(fn(irax.random.key(1))),
                                  np.asarray(ji.glorot_uniform()(jax.random.key(1), (5, 7))))


def test_errors_as_jax():
    for module, random in ((ii, irax.random), (ji, jax.random)):
        with pytest.raises(ValueError, match="invalid mode for variance scaling initializer"):
            module.variance_scaling(1.0, "fan_max", "normal")(random.key(0), (2, 3))
        with pytest.raises(ValueError, match="invalid distribution for variance scaling initializer"):
            module.variance_scaling(1.0, "fan_in", "cauchy")(random.key(0), (2, 3))
        with pytest.raises(ValueError, match="Can't compute input and output sizes"):
            module.lecun_normal()(random.key(0), (3,))


def test_importable_as_a_module():
    import importlib
    assert importlib.import_module("irax.nn.initializers") is irax.nn.initializers


# --- dot_product_attention ----------------------------------------------------------------------------------------

_rng = np.random.RandomState(0)
Q = _rng.randn(2, 5, 4, 8).astype(np.float32)
K = _rng.randn(2, 6, 2, 8).astype(np.float32)
V = _rng.randn(2, 6, 2, 8).astype(np.float32)
BIAS = _rng.randn(2, 1, 5, 6).astype(np.float32)
MASK = _rng.rand(2, 4, 5, 6) > 0.3
ATTENTION_CASES = {
    "plain": {}, "causal": {"is_causal": True}, "window": {"local_window_size": (2, 1)},
    "lengths": {"query_seq_lengths": np.array([2, 5], np.int32), "key_value_seq_lengths": np.array([3, 6], np.int32)},
    "scale": {"scale": 0.3},
}


@pytest.mark.parametrize("case", sorted(ATTENTION_CASES))
def test_dot_product_attention(case):
    kw = ATTENTION_CASES[case]
    expected = jax.nn.dot_product_attention(Q, K, V, **kw)
    eager = irax.nn.dot_product_attention(Q, K, V, **kw)
    np.testing.assert_allclose(np.asarray(eager), np.asarray(expected), rtol=1e-5, atol=1e-6)
    jitted = irax.jit(lambda q, k, v: irax.nn.dot_product_attention(q, k, v, **kw))(Q, K, V)
    np.testing.assert_allclose(np.asarray(jitted), np.asarray(expected), rtol=1e-5, atol=1e-6)


def test_dot_product_attention_bias_mask_residual_and_3d():
    expected = jax.nn.dot_product_attention(Q, K, V, BIAS, MASK, return_residual=True)
    actual = irax.nn.dot_product_attention(Q, K, V, BIAS, MASK, return_residual=True)
    for a, e in zip(actual, expected):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(np.asarray(irax.nn.dot_product_attention(Q[0], K[0], V[0])),
                               np.asarray(jax.nn.dot_product_attention(Q[0], K[0], V[0])), rtol=1e-5, atol=1e-6)
    grad = irax.grad(lambda q: irax.nn.dot_product_attention(q, K, V, is_causal=True).sum())(Q)
    jgrad = jax.grad(lambda q: jax.nn.dot_product_attention(q, K, V, is_causal=True).sum())(Q)
    np.testing.assert_allclose(np.asarray(grad), np.asarray(jgrad), rtol=1e-4, atol=1e-5)


def test_dot_product_attention_errors():
    for nn in (irax.nn, jax.nn):
        with pytest.raises(ValueError, match="number of query heads must be a multiple"):
            nn.dot_product_attention(Q[:, :, :3], K, V)
        with pytest.raises(ValueError, match="mask dtype should be bool"):
            nn.dot_product_attention(Q, K, V, mask=MASK.astype(np.int32))
    with pytest.raises(NotImplementedError, match="cudnn"):
        irax.nn.dot_product_attention(Q, K, V, implementation="cudnn")
