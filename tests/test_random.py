"""``irax.random`` against JAX's: the same key, shape and dtype give the same bits, eagerly, under ``jit`` and
under ``vmap``. Samplers built only of integer ops and exact float ops (bits, uniform, randint, bernoulli, ...)
are compared bit for bit; those ending in a transcendental function (log, tan, erf_inv) agree to the last ulp
of that function, whose float32 approximations differ between XLA's CPU backend, IREE and NumPy."""
import numpy as np
import pytest

import irax
from irax import random as R

jax = pytest.importorskip("jax")
JR = jax.random

SEEDS = [0, 1, 42, -7, 2 ** 31 - 1]


def _bits_of(x):
    x = np.asarray(x)
    return x.view(np.dtype(f"u{x.dtype.itemsize}")) if x.dtype.kind == "f" or x.dtype.name == "bfloat16" else x


def assert_bits_equal(actual, expected):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, (actual, expected)
    assert np.array_equal(_bits_of(actual), _bits_of(expected)), (actual, expected)


def assert_ulp_close(actual, expected):
    """Within a few ulp of the dtype: what differing transcendental approximations leave."""
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    eps = float(np.finfo(expected.dtype).eps) if expected.dtype.name != "bfloat16" else 2.0 ** -7
    wide = np.complex128 if expected.dtype.kind == "c" else np.float64
    np.testing.assert_allclose(actual.astype(wide), expected.astype(wide), rtol=4 * eps, atol=4 * eps)


# Each case: name, irax/JAX function of (random module, key), and whether the result is exact.
EXACT_CASES = [
    ("split", lambda M, k: M.split(k)),
    ("split3", lambda M, k: M.split(k, 3)),
    ("split_shape", lambda M, k: M.split(k, (2, 3))),
    ("fold_in", lambda M, k: M.fold_in(k, 7)),
    ("fold_in_big", lambda M, k: M.fold_in(k, 2 ** 31 + 5)),
    ("bits_scalar", lambda M, k: M.bits(k)),
    ("bits", lambda M, k: M.bits(k, (2, 3))),
    ("bits_odd", lambda M, k: M.bits(k, (7,))),
    ("bits_u8", lambda M, k: M.bits(k, (5,), "uint8")),
    ("bits_u16", lambda M, k: M.bits(k, (3, 2), "uint16")),
    ("uniform_scalar", lambda M, k: M.uniform(k)),
    ("uniform", lambda M, k: M.uniform(k, (3, 4))),
    ("uniform_range", lambda M, k: M.uniform(k, (5,), minval=-2.0, maxval=3.5)),
    ("uniform_array_bounds", lambda M, k: M.uniform(k, (2, 3), minval=np.array([0.0, 1.0, 2.0], np.float32),
                                                    maxval=np.float32(4.0))),
    ("uniform_f16", lambda M, k: M.uniform(k, (9,), "float16")),
    ("uniform_bf16", lambda M, k: M.uniform(k, (9,), "bfloat16", minval=-1.0)),
    ("uniform_f16_range", lambda M, k: M.uniform(k, (50,), "float16", minval=0.3, maxval=2.7)),
    ("randint", lambda M, k: M.randint(k, (10,), 0, 10)),
    ("randint_neg", lambda M, k: M.randint(k, (2, 5), -100, 100)),
    ("randint_empty_span", lambda M, k: M.randint(k, (4,), 5, 3)),
    ("randint_array_bounds", lambda M, k: M.randint(k, (3,), np.array([0, 10, 20]), np.array([5, 1000, 21]))),
    ("randint_int8", lambda M, k: M.randint(k, (6,), -128, 128, "int8")),
    ("randint_uint8_256", lambda M, k: M.randint(k, (6,), 0, 256, "uint8")),
    ("randint_int16", lambda M, k: M.randint(k, (6,), -1000, 30000, "int16")),
    ("randint_full", lambda M, k: M.randint(k, (6,), -2 ** 31, 2 ** 31 - 1)),
    ("bernoulli", lambda M, k: M.bernoulli(k, 0.3, (8,))),
    ("bernoulli_default", lambda M, k: M.bernoulli(k)),
    ("bernoulli_array_p", lambda M, k: M.bernoulli(k, np.array([0.1, 0.5, 0.9], np.float32))),
    ("bernoulli_high", lambda M, k: M.bernoulli(k, 0.25, (6,), mode="high")),
    ("bernoulli_f16", lambda M, k: M.bernoulli(k, np.float16(0.7), (5,))),
    ("rademacher", lambda M, k: M.rademacher(k, (7,))),
    ("rademacher_f32", lambda M, k: M.rademacher(k, (2, 2), "float32")),
    ("categorical", lambda M, k: M.categorical(k, np.array([0.0, 1.0, 2.0, -1.0], np.float32))),
    ("categorical_batch", lambda M, k: M.categorical(k, np.log(np.array([[0.2, 0.8], [0.5, 0.5], [0.9, 0.1]],
                                                                         np.float32)), shape=(4, 3))),
    ("categorical_axis0", lambda M, k: M.categorical(k, np.array([[0.0, 3.0], [1.0, 0.0], [2.0, 1.0]], np.float32),
                                                     axis=0)),
    ("categorical_no_replace", lambda M, k: M.categorical(k, np.zeros(5, np.float32), shape=(3,), replace=False)),
    ("categorical_no_replace_axis0", lambda M, k: M.categorical(
        k, np.array([[0.0, 3.0], [1.0, 0.0], [2.0, 1.0]], np.float32), axis=0, shape=(2, 2), replace=False)),
]
ULP_CASES = [
    ("normal", lambda M, k: M.normal(k, (3, 4))),
    ("normal_f16", lambda M, k: M.normal(k, (6,), "float16")),
    ("normal_bf16", lambda M, k: M.normal(k, (6,), "bfloat16")),
    ("normal_complex", lambda M, k: M.normal(k, (4,), "complex64")),
    ("truncated_normal", lambda M, k: M.truncated_normal(k, -1.0, 2.0, (8,))),
    ("truncated_normal_broadcast", lambda M, k: M.truncated_normal(k, np.array([-1.0, 0.0], np.float32), 1.0)),
    ("exponential", lambda M, k: M.exponential(k, (8,))),
    ("gumbel", lambda M, k: M.gumbel(k, (8,))),
    ("gumbel_high", lambda M, k: M.gumbel(k, (8,), mode="high")),
    ("gumbel_highest", lambda M, k: M.gumbel(k, (8,), mode="highest")),
    ("laplace", lambda M, k: M.laplace(k, (8,))),
    ("logistic", lambda M, k: M.logistic(k, (8,))),
    ("cauchy", lambda M, k: M.cauchy(k, (8,))),
]
ALL_CASES = EXACT_CASES + ULP_CASES
EXACT_NAMES = {name for name, _ in EXACT_CASES}


def _compare(name, actual, expected):
    (assert_bits_equal if name in EXACT_NAMES else assert_ulp_close)(actual, expected)


@pytest.mark.parametrize("seed", SEEDS)
def test_prng_key_is_jaxs(seed):
    assert_bits_equal(R.PRNGKey(seed), JR.PRNGKey(seed))


@pytest.mark.parametrize("seed", [2 ** 40 + 3, np.uint32(4000000000), np.int32(-5), np.uint8(200)])
def test_prng_key_of_wide_or_typed_seeds(seed):
    assert_bits_equal(R.PRNGKey(seed), JR.PRNGKey(seed))


@pytest.mark.parametrize("name,fn", ALL_CASES, ids=[c[0] for c in ALL_CASES])
@pytest.mark.parametrize("seed", [0, 42, -7])
def test_eager_matches_jax(name, fn, seed):
    _compare(name, fn(R, R.PRNGKey(seed)), fn(JR, JR.PRNGKey(seed)))


@pytest.mark.parametrize("name,fn", EXACT_CASES, ids=[c[0] for c in EXACT_CASES])
def test_typed_keys_match_jax(name, fn):
    actual, expected = fn(R, R.key(11)), fn(JR, JR.key(11))
    if isinstance(actual, R.PRNGKeyArray):
        assert actual.shape == expected.shape and str(actual.dtype) == str(expected.dtype) == "key<fry>"
        actual, expected = R.key_data(actual), JR.key_data(expected)
    assert_bits_equal(actual, expected)


@pytest.mark.xfail(strict=True, reason="IREE's erf_inv (a Giles polynomial over its own log1p) is not XLA CPU's: "
                                       "last-ulp differences in about 2% of samples")
def test_normal_is_bit_identical():
    assert_bits_equal(R.normal(R.PRNGKey(0), (1000,)), JR.normal(JR.PRNGKey(0), (1000,)))


@pytest.mark.xfail(strict=True, reason="IREE's log approximation is not XLA CPU's: last-ulp differences")
def test_jitted_exponential_is_bit_identical():
    assert_bits_equal(irax.jit(lambda k: R.exponential(k, (1000,)))(R.PRNGKey(0)),
                      JR.exponential(JR.PRNGKey(0), (1000,)))


@pytest.mark.xfail(strict=True, reason="IREE computes a chain of bfloat16 ops in float32 without rounding between "
                                       "them; XLA rounds every op to bfloat16")
def test_bfloat16_uniform_of_any_range_is_bit_identical():
    assert_bits_equal(R.uniform(R.PRNGKey(1), (300,), "bfloat16", 0.3, 2.7),
                      JR.uniform(JR.PRNGKey(1), (300,), "bfloat16", 0.3, 2.7))


def test_jit_matches_jax():
    """One compiled module for every case and two keys, so that IREE compiles once."""
    def cases(M, keys):
        return {f"{name}/{i}": fn(M, k) for i, k in enumerate(keys) for name, fn in ALL_CASES}
    actual = irax.jit(lambda a, b: cases(R, (a, b)))(R.PRNGKey(0), R.PRNGKey(-7))
    expected = jax.jit(lambda a, b: cases(JR, (a, b)))(JR.PRNGKey(0), JR.PRNGKey(-7))
    for case, value in expected.items():
        _compare(case.split("/")[0], actual[case], value)


def test_jit_with_constant_key_and_seed_argument():
    """A key made inside the program: constant-folded keys need const-expr hoisting off (DESIGN.md)."""
    def f(M, seed):
        k = M.PRNGKey(seed)
        return M.uniform(M.PRNGKey(5), (4,)), M.split(k), M.randint(M.fold_in(k, 3), (3,), 0, 7)
    for a, b in zip(irax.jit(lambda s: f(R, s))(np.int32(9)), jax.jit(lambda s: f(JR, s))(np.int32(9))):
        assert_bits_equal(a, b)


def test_vmap_over_keys_matches_jax():
    def cases(M, key):
        keys = M.split(key, 5)
        return [jax_vmap(M)(lambda k: M.uniform(k, (3,)))(keys),
                jax_vmap(M)(lambda k: M.bits(k, (2, 2)))(keys),
                jax_vmap(M)(lambda k: M.randint(k, (4,), 0, 100))(keys),
                jax_vmap(M)(lambda k: M.split(k))(keys),
                jax_vmap(M)(lambda k: M.fold_in(k, 3))(keys),
                jax_vmap(M)(lambda k, d: M.fold_in(k, d))(keys, np.arange(5, dtype=np.uint32)),
                jax_vmap(M)(lambda k: M.bernoulli(k, 0.5, (3,)))(keys),
                jax_vmap(M)(lambda k: M.uniform(k, (2,), "bfloat16"))(keys)]
    for a, b in zip(cases(R, R.PRNGKey(3)), cases(JR, JR.PRNGKey(3))):
        assert_bits_equal(a, b)
    assert_ulp_close(irax.vmap(lambda k: R.normal(k, (3,)))(R.split(R.PRNGKey(3), 5)),
                     jax.vmap(lambda k: JR.normal(k, (3,)))(JR.split(JR.PRNGKey(3), 5)))


def jax_vmap(M):
    return irax.vmap if M is R else jax.vmap


def test_vmap_of_typed_keys_and_in_jit():
    keys, jkeys = R.split(R.key(1), 4), JR.split(JR.key(1), 4)
    assert keys.shape == jkeys.shape == (4,)
    assert_bits_equal(irax.vmap(lambda k: R.uniform(k, (2,)))(keys), jax.vmap(lambda k: JR.uniform(k, (2,)))(jkeys))
    assert_bits_equal(irax.jit(irax.vmap(lambda k: R.bits(k, (3,))))(R.split(R.PRNGKey(2), 3)),
                      jax.jit(jax.vmap(lambda k: JR.bits(k, (3,))))(JR.split(JR.PRNGKey(2), 3)))
    assert_bits_equal(R.key_data(irax.jit(lambda k: R.split(k, 3))(R.key(4))),
                      JR.key_data(jax.jit(lambda k: JR.split(k, 3))(JR.key(4))))


def test_key_data_round_trip():
    data = R.key_data(R.key(42))
    assert_bits_equal(data, JR.key_data(JR.key(42)))
    assert_bits_equal(R.key_data(R.wrap_key_data(data)), data)
    assert_bits_equal(R.key_data(R.PRNGKey(1)), R.PRNGKey(1))
    k1, k2 = R.split(R.key(0))
    j1, j2 = JR.split(JR.key(0))
    assert_bits_equal(R.key_data(k2), JR.key_data(j2))
    assert R.key_impl(R.key(0)) == str(JR.key_impl(JR.key(0))) == "threefry2x32"


@pytest.mark.parametrize("kind", ["prng_key", "extended", "integer", "generic", "key dtype", "float32"])
def test_key_dtype_classes_as_jax(kind):
    def answer(mod, jnp):
        target = {"prng_key": mod.dtypes.prng_key, "extended": mod.dtypes.extended, "integer": jnp.integer,
                  "generic": jnp.generic, "key dtype": mod.random.key(1).dtype, "float32": jnp.float32}[kind]
        return (mod.dtypes.issubdtype(mod.random.key(0).dtype, target), jnp.issubdtype(jnp.float32, target),
                mod.dtypes.issubdtype(target, mod.dtypes.extended))
    import irax.numpy as inp
    import jax.numpy as jnp
    assert answer(irax, inp) == answer(jax, jnp)


BAD_INPUTS = [
    ("PRNGKey of an array", lambda M: M.PRNGKey(np.zeros(2, np.int32))),
    ("PRNGKey of a float", lambda M: M.PRNGKey(1.5)),
    ("key of a key", lambda M: M.key(M.key(0))),
    ("key data of the wrong shape", lambda M: M.uniform(np.zeros(3, np.uint32))),
    ("key data of the wrong dtype", lambda M: M.uniform(np.zeros(2, np.int32))),
    ("scalar key data", lambda M: M.bits(np.uint32(0))),
    ("a batch of keys", lambda M: M.uniform(M.split(M.PRNGKey(0)))),
    ("a batch of typed keys", lambda M: M.normal(M.split(M.key(0)))),
    ("wrap_key_data of the wrong shape", lambda M: M.wrap_key_data(np.zeros(3, np.uint32))),
    ("uniform of an int dtype", lambda M: M.uniform(M.PRNGKey(0), (2,), np.int32)),
    ("bits of a signed dtype", lambda M: M.bits(M.PRNGKey(0), (2,), np.int32)),
    ("randint of a float dtype", lambda M: M.randint(M.PRNGKey(0), (2,), 0, 3, np.float32)),
    ("bernoulli of an int p", lambda M: M.bernoulli(M.PRNGKey(0), 1)),
    ("bernoulli of a bad mode", lambda M: M.bernoulli(M.PRNGKey(0), 0.5, mode="middle")),
    ("fold_in of an array", lambda M: M.fold_in(M.PRNGKey(0), np.arange(2))),
    ("shape not broadcastable", lambda M: M.randint(M.PRNGKey(0), (3,), np.zeros(2, np.int32), 5)),
    ("gumbel of a bad mode", lambda M: M.gumbel(M.PRNGKey(0), mode="x")),
    ("an unsupported key type", lambda M: M.uniform("key")),
]


@pytest.mark.parametrize("what,fn", BAD_INPUTS, ids=[c[0] for c in BAD_INPUTS])
def test_bad_input_raises_as_jax(what, fn):
    with pytest.raises((TypeError, ValueError)) as expected:
        fn(JR)
    with pytest.raises(expected.type):
        fn(R)


def test_categorical_without_replacement_needs_enough_categories():
    for M in (R, JR):
        with pytest.raises(ValueError, match="cannot exceed number of categories"):
            M.categorical(M.PRNGKey(0), np.zeros(4, np.float32), shape=(5,), replace=False)


_TEXT_CAUSE = ("JAX traces keys as key<fry> values through random_wrap/random_bits/random_split primitives inside "
               "jit[name=_uniform]; irax keys are uint32 data and those primitives' threefry2x32 expansion is inline")


@pytest.mark.xfail(strict=True, reason=_TEXT_CAUSE)
@pytest.mark.parametrize("fn", [lambda M, k: M.uniform(k, (3,)), lambda M, k: M.split(k),
                                lambda M, k: M.bits(k, (2,))], ids=["uniform", "split", "bits"])
def test_make_jaxpr_text_matches_jax(fn):
    assert str(irax.make_jaxpr(lambda k: fn(R, k))(R.PRNGKey(0))) == str(jax.make_jaxpr(
        lambda k: fn(JR, k))(JR.PRNGKey(0)))


def test_make_jaxpr_shows_the_threefry_primitive():
    text = str(irax.make_jaxpr(lambda k: R.bits(k, (3,)))(R.PRNGKey(0)))
    assert "u32[3] = threefry2x32 " in text and "xor" in text


def test_threefry2x32_primitive_is_jaxs():
    from jax._src.random.threefry2x32 import threefry2x32_p
    from irax.core import bind
    args = [np.uint32(0x12345678), np.uint32(99), np.arange(6, dtype=np.uint32).reshape(3, 2),
            np.full((3, 2), 0xFFFFFFFF, np.uint32)]
    expected = threefry2x32_p.bind(*map(jax.numpy.asarray, args))
    for a, b in zip(bind("threefry2x32", *args), expected):
        assert_bits_equal(a, b)
    for a, b in zip(irax.jit(lambda *xs: bind("threefry2x32", *xs))(*args), expected):
        assert_bits_equal(a, b)
    with pytest.raises(TypeError, match="uint32"):
        bind("threefry2x32", np.int32(1), *args[1:])


def test_clone_and_key_dtype_as_jax():
    jax = pytest.importorskip("jax")
    key = irax.random.key(7)
    np.testing.assert_array_equal(np.asarray(irax.random.key_data(irax.random.clone(key))),
                                  np.asarray(jax.random.key_data(jax.random.clone(jax.random.key(7)))))
    np.testing.assert_array_equal(np.asarray(irax.random.normal(irax.jit(irax.random.clone)(key), (3,))),
                                  np.asarray(jax.random.normal(jax.random.key(7), (3,))))
    raw = irax.random.clone(irax.random.PRNGKey(1))
    np.testing.assert_array_equal(np.asarray(raw), np.asarray(jax.random.PRNGKey(1)))
    assert str(irax.random.key_dtype()) == str(jax.random.key_dtype()) == str(key.dtype)
    with pytest.raises(NotImplementedError, match="rbg"):
        irax.random.key_dtype("rbg")
