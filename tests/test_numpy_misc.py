"""``nonzero``, ``flatnonzero``, ``argwhere``, ``where(condition)``, ``compress``, ``extract``, ``place``, ``gcd``,
``lcm``, ``interp``, ``apply_along_axis``, ``vectorize``, ``i0``, ``kaiser``, ``r_``, ``c_``, ``mgrid``, ``ogrid``,
``s_`` and ``index_exp`` against ``jax.numpy``: values eagerly and under ``irax.jit``, ``make_jaxpr`` text where
irax's building blocks print as JAX's, and JAX's errors (a value-dependent size under jit, ``place`` in place)."""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import errors

jax = pytest.importorskip("jax")
jnp = jax.numpy

A = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
XP = np.array([0., 1., 2., 4.], np.float32)
FP = np.array([1., 3., 2., 0.], np.float32)
X = np.array([-1., 0.5, 1.5, 3., 5., np.nan], np.float32)
COND = np.array([True, False, True])

# name -> (function of the numpy module, arguments, whether its jaxpr prints as JAX's). irax's bincount and
# searchsorted (under nonzero and interp) and where's scalar literal print differently from JAX's.
CASES = {
    "nonzero": (lambda m, a: m.nonzero(a, size=5, fill_value=-1), (A,), False),
    "flatnonzero": (lambda m, a: m.flatnonzero(a, size=4), (A,), False),
    "argwhere": (lambda m, a: m.argwhere(a, size=4, fill_value=9), (A,), False),
    "where1": (lambda m, a: m.where(a, size=3), (A,), False),
    "compress": (lambda m, c, a: m.compress(c, a, axis=1, size=2), (COND, A), False),
    "extract": (lambda m, c, a: m.extract(c, a, size=3), (A > 0, A), False),
    "place": (lambda m, a, msk, v: m.place(a, msk, v, inplace=False), (A, A == 0, np.array([7, 8])), False),
    "gcd": (lambda m, a, b: m.gcd(a, b), (np.array([12, 18, -24, 0, 7]), np.array([5, 10, 15, 0, 21])), True),
    "lcm": (lambda m, a, b: m.lcm(a, b), (np.array([12, 18, -24, 0, 7]), np.array([5, 10, 15, 0, 21])), True),
    "gcd_broadcast": (lambda m, a, b: m.gcd(a, b), (np.array([12]), np.array([[6], [9], [0]])), True),
    "interp": (lambda m, x, xp, fp: m.interp(x, xp, fp), (X, XP, FP), False),
    "interp_lr": (lambda m, x, xp, fp: m.interp(x, xp, fp, left=-5., right="extrapolate"), (X, XP, FP), False),
    "interp_period": (lambda m, x, xp, fp: m.interp(x, xp, fp, period=3.), (X, XP, FP), False),
    "apply_along_axis": (lambda m, a: m.apply_along_axis(lambda v: v.sum() * v[0], 1, a), (A,), True),
    "i0": (lambda m, x: m.i0(x), (np.array([-3., 0., 0.5, 9., 30.], np.float32),), True),
    "kaiser": (lambda m, b: m.kaiser(6, b), (np.float32(2.5),), True),
    "vectorize_signature": (lambda m, u, v: m.vectorize(lambda p, q: m.dot(p, q), signature="(n),(n)->()")(u, v),
                            (np.ones((3, 4), np.float32), np.arange(4, dtype=np.float32)), True),
    "vectorize_broadcast": (lambda m, u, v: m.vectorize(lambda p, q: p * 2 + q)(u, v),
                            (np.ones((3, 1), np.float32), np.arange(4, dtype=np.float32)), True),
}


def _leaves(x):
    return list(x) if isinstance(x, (tuple, list)) else [x]


def _same(actual, expected):
    for a, e in zip(_leaves(actual), _leaves(expected)):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape, (a.dtype, e.dtype, a.shape, e.shape)
        np.testing.assert_allclose(a, e, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", sorted(CASES))
def test_eager_and_jit_match_jax(name):
    fn, args, same_text = CASES[name]
    expected = fn(jnp, *args)
    _same(fn(inp, *args), expected)
    _same(irax.jit(lambda *a: fn(inp, *a))(*args), expected)
    if same_text:
        assert str(irax.make_jaxpr(lambda *a: fn(inp, *a))(*args)) == str(jax.make_jaxpr(lambda *a: fn(jnp, *a))(*args))


@pytest.mark.parametrize("name", ["nonzero", "flatnonzero", "argwhere"])
def test_value_dependent_sizes_eagerly(name):
    for a in (A, np.zeros((2, 0), np.int32), np.array([True, False, True]), np.zeros(3)):
        _same(getattr(inp, name)(a), getattr(jnp, name)(a))
    _same(inp.argwhere(np.int32(3)), jnp.argwhere(np.int32(3)))
    _same(inp.compress(COND, A), jnp.compress(COND, A))


@pytest.mark.parametrize("library", ["irax", "jax"])
def test_errors_as_jax(library):
    lib = irax if library == "irax" else jax
    m = lib.numpy
    concretization = errors.ConcretizationTypeError if library == "irax" else jax.errors.ConcretizationTypeError
    with pytest.raises(concretization, match="The size argument of jnp.nonzero must be statically specified"):
        lib.jit(lambda a: m.nonzero(a))(A)
    with pytest.raises(ValueError, match="cannot modify arrays in-place"):
        m.place(A, A == 0, 1)
    with pytest.raises(ValueError, match="Calling nonzero on 0d arrays is not allowed"):
        m.nonzero(np.int32(1))
    with pytest.raises(ValueError, match="Arguments to jax.numpy.gcd must be integers"):
        m.gcd(np.ones(2), np.ones(2))
    with pytest.raises(ValueError, match="the only valid string value of `left` is 'extrapolate'"):
        m.interp(X, XP, FP, left="nearest")
    with pytest.raises(ValueError, match="condition must be a 1D array"):
        m.compress(A > 0, A)


def test_index_tricks():
    for key in [np.s_[1:4, [7, 8], 0], np.s_["0,2", [1, 2], [3, 4]], np.s_["r", 1:3], np.s_[0:1:5j, [2.5]]]:
        _same(inp.r_[key], jnp.r_[key])
    for key in [np.s_[np.ones(2), np.zeros(2)], np.s_[[1, 2], [[3], [4]]]]:
        _same(inp.c_[key], jnp.c_[key])
    for key in [np.s_[0:2, 0:3], np.s_[0:1:3j, 2:4], np.s_[0:5:2]]:
        _same(inp.mgrid[key], jnp.mgrid[key])
        _same(inp.ogrid[key], jnp.ogrid[key])
    assert inp.s_[1:2, ::3] == jnp.s_[1:2, ::3] and inp.index_exp[2] == jnp.index_exp[2]
    with pytest.raises(ValueError, match="string directive must be placed at the beginning"):
        inp.r_[1, "0,2"]


def test_i0_derivative_as_jax():
    x = np.array([-3., 0., 0.5, 9.], np.float32)
    t = np.ones(4, np.float32)
    for actual, expected in zip(irax.jvp(inp.i0, (x,), (t,)), jax.jvp(jnp.i0, (x,), (t,))):
        _same(actual, expected)


def test_i0_reverse_mode():
    """i0's custom JVP rule applies a jit (where) to tangents: linearize splits that call by its unknown operands."""
    x = np.array([-3., 0., 0.5, 9.], np.float32)
    _same(irax.grad(lambda v: inp.i0(v).sum())(x), jax.grad(lambda v: jnp.i0(v).sum())(x))


@pytest.mark.parametrize("name", ["int", "float", "bool", "complex", "np-scalar", "0d-array", "0d-Array", "list",
                                  "None", "object", "str", "function", "1d-array", "tuple", "slice"])
def test_isscalar_matches_jax(name):
    """Objects that are not array-like are not scalars (irax said True for None, functions, objects)."""
    values = {"int": 1, "float": 1.0, "bool": True, "complex": 1j, "np-scalar": np.float32(1), "0d-array": np.array(1),
              "0d-Array": "array", "list": [1], "None": None, "object": object, "str": "a", "function": len,
              "1d-array": np.array([1]), "tuple": (), "slice": slice(10)}
    value = values[name]
    ours, theirs = (inp.array(1), jax.numpy.array(1)) if value == "array" else (value, value)
    assert inp.isscalar(ours) == jax.numpy.isscalar(theirs)
