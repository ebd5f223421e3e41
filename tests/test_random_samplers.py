"""``irax.random``'s sort-, loop- and gamma-based samplers against JAX's, for the same keys, eagerly, under ``jit``
and under ``vmap`` over keys. Samplers made of integer ops, sorts, exact float ops and sqrt compare bit for bit; the
gamma family and those ending in log, exp, pow or erf_inv compare to a few ulp, the gap between IREE's float32
approximations of those functions and XLA's (the rejection loops accept the same candidates for these keys, so
the ulp gaps don't grow into different samples)."""
import re

import numpy as np
import pytest

import irax
from irax import random as R
from test_random import assert_bits_equal, assert_ulp_close

jax = pytest.importorskip("jax")
JR = jax.random


def f32(*values):
    return np.array(values, np.float32)


P5 = f32(0.1, 0.2, 0.3, 0.25, 0.15)
A34 = np.arange(12, dtype=np.int32).reshape(3, 4)

EXACT_CASES = [
    ("permutation_int", lambda M, k: M.permutation(k, 10)),
    ("permutation_empty", lambda M, k: M.permutation(k, 0)),
    ("permutation_two_rounds", lambda M, k: M.permutation(k, 2000)),
    ("permutation_array", lambda M, k: M.permutation(k, f32(0.5, 1.5, 2.5, 3.5, 4.5, 5.5))),
    ("permutation_f16", lambda M, k: M.permutation(k, np.arange(7, dtype=np.float16))),
    ("permutation_rows", lambda M, k: M.permutation(k, A34)),
    ("permutation_axis1", lambda M, k: M.permutation(k, A34, axis=1)),
    ("permutation_independent", lambda M, k: M.permutation(k, A34, axis=-1, independent=True)),
    ("choice_scalar", lambda M, k: M.choice(k, 5)),
    ("choice_int", lambda M, k: M.choice(k, 5, (3,))),
    ("choice_empty", lambda M, k: M.choice(k, A34, (2, 0))),
    ("choice_array_axis1", lambda M, k: M.choice(k, A34, (2, 3), axis=1)),
    ("choice_no_replace", lambda M, k: M.choice(k, 10, (2, 3), replace=False)),
    ("choice_no_replace_all", lambda M, k: M.choice(k, A34, (3,), replace=False)),
    ("choice_no_replace_axis1", lambda M, k: M.choice(k, A34, (2,), replace=False, axis=1)),
    ("choice_p", lambda M, k: M.choice(k, 5, (3, 2), p=P5)),
    ("choice_p_array", lambda M, k: M.choice(k, f32(1, 2, 3, 4, 5), (4,), p=P5)),
    ("choice_p_no_replace", lambda M, k: M.choice(k, 5, (3,), replace=False, p=P5)),
    ("poisson", lambda M, k: M.poisson(k, f32(0.5, 3.0, 0.0, 15.0, 100.0), (2, 5))),
    ("poisson_int16", lambda M, k: M.poisson(k, 4.0, (6,), "int16")),
    ("poisson_empty", lambda M, k: M.poisson(k, 4.0, (0,))),
    ("binomial", lambda M, k: M.binomial(k, f32(3, 10, 50, 200, 5, 7), f32(0.3, 0.5, 0.9, 0.4, 0.0, 1.0))),
    ("binomial_invalid", lambda M, k: M.binomial(k, f32(np.nan, -1, np.inf, 4), f32(0.5, 0.5, 0.5, np.nan))),
    ("multinomial", lambda M, k: M.multinomial(k, 20.0, f32(0.2, 0.5, 0.3))),
    ("multinomial_batch", lambda M, k: M.multinomial(k, f32(5, 30), np.array([[0.1, 0.9], [0.6, 0.4]], np.float32))),
    ("geometric", lambda M, k: M.geometric(k, 0.3, (6,))),
    ("geometric_array_p", lambda M, k: M.geometric(k, f32(0.05, 0.5, 0.99))),
]
ULP_CASES = [
    ("triangular", lambda M, k: M.triangular(k, 0.0, f32(0.5, 1.0), 3.0, (3, 2))),
    ("gamma", lambda M, k: M.gamma(k, f32(0.2, 0.5, 1.0, 3.0, 30.0), (2, 5))),
    ("gamma_scalar", lambda M, k: M.gamma(k, 2.0)),
    ("gamma_empty", lambda M, k: M.gamma(k, 1.0, (2, 0))),
    ("gamma_f16", lambda M, k: M.gamma(k, 2.0, (5,), "float16")),
    ("gamma_bf16", lambda M, k: M.gamma(k, 0.5, (5,), "bfloat16")),
    ("loggamma", lambda M, k: M.loggamma(k, f32(0.01, 0.3, 1.0, 5.0))),
    ("beta", lambda M, k: M.beta(k, f32(0.5, 2.0, 3.0), 1.5)),
    ("dirichlet", lambda M, k: M.dirichlet(k, f32(0.5, 2.0, 3.0), (2,))),
    ("t", lambda M, k: M.t(k, 3.0, (5,))),
    ("chisquare", lambda M, k: M.chisquare(k, f32(1.0, 4.0))),
    ("f", lambda M, k: M.f(k, 3.0, 5.0, (4,))),
    ("generalized_normal", lambda M, k: M.generalized_normal(k, 1.5, (4,))),
    ("ball", lambda M, k: M.ball(k, 3, 2, (2,))),
    ("pareto", lambda M, k: M.pareto(k, 2.0, (5,))),
    ("rayleigh", lambda M, k: M.rayleigh(k, f32(1.0, 2.0))),
    ("wald", lambda M, k: M.wald(k, 2.0, (5,))),
    ("lognormal", lambda M, k: M.lognormal(k, 0.5, (5,))),
    ("lognormal_f16", lambda M, k: M.lognormal(k, np.float16(0.5), (5,), "float16")),
    ("maxwell", lambda M, k: M.maxwell(k, (5,))),
    ("double_sided_maxwell", lambda M, k: M.double_sided_maxwell(k, 1.0, f32(2.0, 3.0), (3,))),
    ("weibull_min", lambda M, k: M.weibull_min(k, 2.0, 1.5, (5,))),
]
ALL_CASES = EXACT_CASES + ULP_CASES
EXACT_NAMES = {name for name, _ in EXACT_CASES}
# One of each loop and sort, cheap enough to compile together.
JIT_CASES = [c for c in ALL_CASES if c[0] in (
    "permutation_two_rounds", "permutation_axis1", "permutation_independent", "choice_int", "choice_no_replace_axis1",
    "choice_p", "choice_p_no_replace", "poisson", "geometric", "triangular", "gamma", "wald")]


def _compare(name, actual, expected):
    (assert_bits_equal if name in EXACT_NAMES else assert_ulp_close)(actual, expected)


# Samplers with loops take seconds to compile per xdist worker: one seed each (the jit test adds a second).
LOOPS = ("poisson", "binomial", "multinomial", "gamma", "loggamma", "beta", "dirichlet", "t", "chisquare", "f",
         "generalized_normal", "ball")
EAGER = [(seed, name, fn) for name, fn in ALL_CASES
         for seed in ([0] if name.split("_")[0] in LOOPS or name in LOOPS else [0, 42, -7])]


@pytest.mark.parametrize("seed,name,fn", EAGER, ids=[f"{c[1]}-{c[0]}" for c in EAGER])
def test_eager_matches_jax(name, fn, seed):
    _compare(name, fn(R, R.PRNGKey(seed)), fn(JR, JR.PRNGKey(seed)))


def test_typed_keys_match_jax():
    for fn in (lambda M, k: M.permutation(k, 6), lambda M, k: M.choice(k, 9, (3,), replace=False),
               lambda M, k: M.geometric(k, 0.5, (4,))):
        assert_bits_equal(fn(R, R.key(11)), fn(JR, JR.key(11)))
    assert_ulp_close(R.gamma(R.key(11), 2.0, (3,)), JR.gamma(JR.key(11), 2.0, (3,)))


def test_jit_matches_jax():
    """One compiled module for the cases, over key arguments."""
    def cases(M, key):
        return {name: fn(M, k) for name, fn in JIT_CASES for k in [M.fold_in(key, len(name))]}
    ours, theirs = irax.jit(lambda k: cases(R, k)), jax.jit(lambda k: cases(JR, k))
    for seed in (0, -7):
        actual, expected = ours(R.PRNGKey(seed)), theirs(JR.PRNGKey(seed))
        for name, value in expected.items():
            _compare(name, actual[name], value)


def test_vmap_over_keys_matches_jax():
    def cases(M, V, key):
        keys = M.split(key, 3)
        return {"permutation": V(lambda k: M.permutation(k, 7))(keys),
                "permutation_axis1": V(lambda k: M.permutation(k, A34, axis=1))(keys),
                "choice_no_replace": V(lambda k: M.choice(k, 9, (4,), replace=False))(keys),
                "choice_p": V(lambda k: M.choice(k, 5, (3,), p=P5))(keys),
                "poisson": V(lambda k: M.poisson(k, f32(2.0, 30.0)))(keys),
                "binomial": V(lambda k: M.binomial(k, 20.0, f32(0.3, 0.8)))(keys),
                "gamma": V(lambda k: M.gamma(k, f32(0.5, 3.0)))(keys),
                "gamma_batched_a": V(lambda k, a: M.gamma(k, a))(keys, f32(0.5, 2.0, 7.0))}
    actual, expected = cases(R, irax.vmap, R.PRNGKey(1)), cases(JR, jax.vmap, JR.PRNGKey(1))
    for name, value in expected.items():
        (assert_ulp_close if name.startswith("gamma") else assert_bits_equal)(actual[name], value)


def test_vmap_of_gamma_is_per_key_gamma():
    """JAX's batching rule moves the key batch to the front and splits every key as the unbatched sampler does."""
    keys = R.split(R.PRNGKey(5), 2)
    batched = irax.vmap(lambda k: R.gamma(k, f32(0.5, 3.0)))(keys)
    for i in range(2):
        assert_bits_equal(batched[i], R.gamma(keys[i], f32(0.5, 3.0)))


def test_gamma_gradient_matches_jax():
    """The implicit reparameterization gradient, through random_gamma_grad (a series with its own ulp gaps)."""
    a = f32(0.3, 1.0, 5.0)
    for name in ("gamma", "loggamma", "beta"):
        def loss(M, a):
            sample = M.beta(M.PRNGKey(3), a, 2.0) if name == "beta" else getattr(M, name)(M.PRNGKey(3), a)
            return sample.sum()
        np.testing.assert_allclose(irax.grad(lambda a: loss(R, a))(a), jax.grad(lambda a: loss(JR, a))(a), rtol=2e-5)


def test_gamma_samples_are_positive_and_loggamma_is_their_log():
    samples = R.gamma(R.PRNGKey(2), f32(0.2, 1.0, 4.0, 50.0))
    assert np.all(np.asarray(samples) > 0)
    np.testing.assert_allclose(np.exp(np.asarray(R.loggamma(R.PRNGKey(2), f32(0.2, 1.0, 4.0, 50.0)))), samples,
                               rtol=1e-5)


def test_choice_without_replacement_draws_distinct_elements():
    draws = np.asarray(R.choice(R.PRNGKey(4), 2000, (1500,), replace=False))
    assert len(set(draws.tolist())) == 1500 and draws.min() >= 0 and draws.max() < 2000


BAD_INPUTS = [
    ("choice of more than the population", lambda M: M.choice(M.PRNGKey(0), 3, (4,), replace=False)),
    ("choice with an int shape", lambda M: M.choice(M.PRNGKey(0), 3, 4)),
    ("choice p of the wrong shape", lambda M: M.choice(M.PRNGKey(0), 3, (2,), p=f32(0.5, 0.5))),
    ("choice from nothing", lambda M: M.choice(M.PRNGKey(0), 0, (2,))),
    ("choice of a batch of keys", lambda M: M.choice(M.split(M.PRNGKey(0)), 3)),
    ("permutation of a float scalar", lambda M: M.permutation(M.PRNGKey(0), 3.0)),
    ("permutation of a list", lambda M: M.permutation(M.PRNGKey(0), [1, 2, 3])),
    ("permutation along a missing axis", lambda M: M.permutation(M.PRNGKey(0), A34, axis=2)),
    ("gamma of an int dtype", lambda M: M.gamma(M.PRNGKey(0), 1.0, (2,), np.int32)),
    ("gamma shape against a", lambda M: M.gamma(M.PRNGKey(0), f32(1.0, 2.0), (3,))),
    ("beta shape against a and b", lambda M: M.beta(M.PRNGKey(0), f32(1.0, 2.0), 1.0, (3,))),
    ("dirichlet of a scalar alpha", lambda M: M.dirichlet(M.PRNGKey(0), 1.0)),
    ("dirichlet shape against alpha", lambda M: M.dirichlet(M.PRNGKey(0), np.ones((2, 3), np.float32), (4,))),
    ("poisson lam against shape", lambda M: M.poisson(M.PRNGKey(0), f32(1.0, 2.0), (3,))),
    ("geometric of a float dtype", lambda M: M.geometric(M.PRNGKey(0), 0.5, (2,), np.float32)),
    ("binomial of an int dtype", lambda M: M.binomial(M.PRNGKey(0), 5, 0.5, (2,), np.int32)),
    ("pareto narrowing its parameter", lambda M: M.pareto(M.PRNGKey(0), f32(2.0), dtype=np.float16)),
    ("t shape against df", lambda M: M.t(M.PRNGKey(0), f32(2.0, 3.0), (3,))),
    ("ball of a fractional dimension", lambda M: M.ball(M.PRNGKey(0), 2.5)),
    ("lognormal's float32 sigma in float16", lambda M: M.lognormal(M.PRNGKey(0), shape=(2,), dtype=np.float16)),
    ("maxwell of an int dtype", lambda M: M.maxwell(M.PRNGKey(0), (2,), np.int32)),
]

# Raised by jnp.broadcast_to, whose message is irax.numpy's.
JNP_MESSAGES = {"poisson lam against shape"}


def _first_words(error):
    """The start of JAX's message, up to its first number: what irax must say too."""
    return re.escape(re.split(r"[0-9(]", str(error))[0])


@pytest.mark.parametrize("what,fn", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_as_jax(what, fn):
    with pytest.raises((TypeError, ValueError)) as expected:
        fn(JR)
    words = None if what in JNP_MESSAGES else _first_words(expected.value)
    with pytest.raises((TypeError, ValueError), match=words) as actual:
        fn(R)
    assert type(actual.value).__name__ == type(expected.value).__name__
