"""A jitted program never writes into its arguments' buffers or its closed-over constants' (IREE 3.13 sorted
and updated them in place: ``jit(jnp.sort)(x)`` sorted ``x``, and a jitted sampler's constant came back permuted
on the next call). Each program runs twice on device arrays; the arguments and results must not change."""
import numpy as np
import pytest

import irax
import irax.numpy as jnp
from irax import lax

X = np.array([3.0, 1.0, 2.0, 0.0], np.float32)
KEYS = np.array([3, 2, 1, 0], np.int32)
M = np.arange(12, dtype=np.float32).reshape(3, 4)

PROGRAMS = {
    "sort": (lax.sort, X),
    "sort_with_payload": (lambda k, x: lax.sort((k, x), num_keys=1), KEYS, X),
    "jnp_sort_of_reshape": (lambda m: jnp.sort(m.reshape(4, 3), axis=0), M),
    "dynamic_update_slice": (lambda x: lax.dynamic_update_slice(x, jnp.ones(2, x.dtype), (1,)), X),
    "update_in_loop_carry": (lambda x: lax.fori_loop(
        0, 2, lambda i, c: lax.dynamic_update_slice(c, jnp.ones(1, x.dtype), (i,)), x), X),
    "sort_in_loop_carry": (lambda x: lax.fori_loop(0, 2, lambda i, c: -lax.sort(c), x), X),
    "sort_in_scan_carry": (lambda x: lax.scan(lambda c, _: (lax.sort(c) * 2, None), x, None, length=2)[0], X),
    "sort_in_nested_jit": (lambda x: irax.jit(jnp.sort)(x), X),
    "vmapped_sort": (irax.vmap(jnp.sort), M),
    "choice_without_replacement": (lambda k: irax.random.choice(k, X, (3,), replace=False), irax.random.key(1)),
    "sort_of_closed_over_constant": (lambda k: lax.sort((k, M), num_keys=1)[1], np.tile(KEYS, (3, 1))),
    "independent_permutation_of_constant": (
        lambda k: irax.random.permutation(k, M, axis=-1, independent=True), irax.random.key(0)),
}


def _device_copy(x):
    return irax.jit(lambda a: a * 1)(jnp.asarray(x)) if isinstance(x, np.ndarray) else irax.jit(lambda a: a)(x)


def _host(tree):
    """The values in the device buffers (read by a program: ``np.asarray`` of an array may answer from a host copy)."""
    def read(x):
        if irax.dtypes.issubdtype(x.dtype, irax.dtypes.prng_key):
            return np.asarray(irax.jit(irax.random.key_data)(x))
        return np.asarray(irax.jit(lambda a: a * 1)(x))
    return [read(x) for x in irax.tree_util.tree_leaves(tree)]


@pytest.mark.parametrize("name", PROGRAMS)
def test_arguments_and_constants_are_left_unchanged(name):
    fn, *args = PROGRAMS[name]
    args = [_device_copy(a) for a in args]
    before = _host(args)
    jitted = irax.jit(fn)
    first, second = _host(jitted(*args)), _host(jitted(*args))
    for a, b in zip(first, second):
        np.testing.assert_array_equal(a, b)
    for a, b in zip(_host(args), before):
        np.testing.assert_array_equal(a, b)
    eager = _host(fn(*args))
    for a, b in zip(first, eager):
        np.testing.assert_array_equal(a, b)


def test_donated_argument_may_be_sorted_in_place():
    x = irax.jit(lambda a: a * 1)(X)
    out = irax.jit(jnp.sort, donate_argnums=0)(x)
    np.testing.assert_array_equal(out, np.sort(X))
    assert x.is_deleted()


def test_programs_without_in_place_ops_get_no_copy():
    assert "optimization_barrier" not in irax.jit(lambda x: jnp.cumsum(x) + 1).lower(X).as_text()
    assert "optimization_barrier" in irax.jit(jnp.sort).lower(X).as_text()


def test_a_shared_constant_is_not_sorted_under_its_other_reader():
    """A sort by a broadcast iota that is also read elsewhere: IREE sorted the constant in place, so the sort
    gave [0, 0, 0] and the other reader the sorted values."""
    def f(x):
        i = jnp.broadcast_to(jnp.arange(3, dtype=np.int32), (1, 3))
        return lax.sort((x, i), dimension=1, num_keys=1)[1], i + 0
    x = np.array([[3.0, 1.0, 2.0]], np.float32)
    for got, expected in zip(irax.jit(f)(x), ([[1, 2, 0]], [[0, 1, 2]])):
        np.testing.assert_array_equal(got, expected)
