"""``unique`` (and the Array API's ``unique_*``), the set operations and the quantiles against ``jax.numpy``: values
eagerly (the NumPy rules) and under ``irax.jit`` (IREE) with ``size=``, ``make_jaxpr`` text, gradients and ``vmap``
of the quantiles, and JAX's errors (a value-dependent size under ``jit``, bad methods and arguments)."""
from __future__ import annotations

import itertools

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import errors

jax = pytest.importorskip("jax")
jnp = jax.numpy

RNG = np.random.RandomState(0)
F_NAN = np.array([3., 1., np.nan, 2., 1., np.nan, 3., -0.], np.float32)
I2 = np.array([[3, 1, 2], [1, 3, 2], [3, 1, 2], [0, 0, 5]], np.int32)
B = np.array([True, False, True, True])
EMPTY = np.zeros((0,), np.float32)
SCALAR = np.float32(2.)
UNIQUE_INPUTS = {"f_nan": F_NAN, "i2": I2, "bool": B, "empty": EMPTY, "scalar": SCALAR}
UNIQUE_OPTIONS = {
    "plain": {},
    "all": dict(return_index=True, return_inverse=True, return_counts=True),
    "all_nan_distinct": dict(return_index=True, return_inverse=True, return_counts=True, equal_nan=False),
    "size_fill": dict(return_index=True, return_inverse=True, return_counts=True, size=6, fill_value=-1),
    "size_short": dict(return_counts=True, size=2),
    "axis0": dict(return_index=True, return_inverse=True, return_counts=True, axis=0),
    "axis1_size": dict(return_inverse=True, return_counts=True, axis=1, size=4, fill_value=7),
}

SET_OPS = {
    "union1d": lambda m, a, b: m.union1d(a, b),
    "setdiff1d": lambda m, a, b: m.setdiff1d(a, b),
    "setdiff1d_unique": lambda m, a, b: m.setdiff1d(m.unique(a), m.unique(b), assume_unique=True),
    "setxor1d": lambda m, a, b: m.setxor1d(a, b),
    "setxor1d_unique": lambda m, a, b: m.setxor1d(m.unique(a), m.unique(b), assume_unique=True),
    "intersect1d": lambda m, a, b: m.intersect1d(a, b),
    "intersect1d_indices": lambda m, a, b: m.intersect1d(a, b, return_indices=True),
    "intersect1d_unique": lambda m, a, b: m.intersect1d(m.unique(a), m.unique(b), True, True),
}
SIZED_SET_OPS = {
    "union1d": lambda m, a, b: m.union1d(a, b, size=7),
    "union1d_fill": lambda m, a, b: m.union1d(a, b, size=9, fill_value=-9),
    "setdiff1d": lambda m, a, b: m.setdiff1d(a, b, size=4),
    "setdiff1d_fill": lambda m, a, b: m.setdiff1d(a, b, size=5, fill_value=9),
    "setxor1d": lambda m, a, b: m.setxor1d(a, b, size=5),
    "setxor1d_unique": lambda m, a, b: m.setxor1d(m.unique(a, size=a.size, fill_value=-9),
                                                  m.unique(b, size=b.size, fill_value=-8), True, size=5),
    "intersect1d": lambda m, a, b: m.intersect1d(a, b, return_indices=True, size=3),
    "intersect1d_fill": lambda m, a, b: m.intersect1d(a, b, size=4, fill_value=-1),
    "intersect1d_unique": lambda m, a, b: m.intersect1d(a[:3], b[:2], True, True, size=2),
}
SET_PAIRS = {
    "ints": (np.array([5, 1, 3, 1, 9, 3, 0], np.int32), np.array([3, 4, 0, 4, 8], np.int32)),
    "floats_nan": (F_NAN, np.array([2., np.nan, 7., 0.], np.float32)),
    "mixed_dtypes": (np.array([[1, 2], [2, 6]], np.int32), np.array([2., 2.5, 6.], np.float32)),
    "bools": (B, np.array([True, True])),
    "empty": (np.zeros(0, np.int32), np.array([1, 2], np.int32)),
}


def _same(actual, expected, rtol=0., atol=0.):
    actual, expected = jax.tree.leaves(actual), jax.tree.leaves(expected)
    assert len(actual) == len(expected)
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert (a.dtype, a.shape) == (e.dtype, e.shape)
        np.testing.assert_allclose(a, e, rtol=rtol, atol=atol, equal_nan=True)


def _same_or_same_error(fn, *args, jit=False, message=True, rtol=0., atol=0.):
    """``fn`` in irax (eagerly or under ``irax.jit``) gives JAX's values, or JAX's exception class (and
    message)."""
    mine = irax.jit(lambda *a: fn(inp, *a)) if jit else (lambda *a: fn(inp, *a))
    try:
        expected = fn(jnp, *args)
    except Exception as jax_error:  # noqa: BLE001 -- the same class (and message) is the assertion
        with pytest.raises(type(jax_error)) as info:
            mine(*args)
        if message:
            assert str(info.value) == str(jax_error)
        return
    _same(mine(*args), expected, rtol, atol)


@pytest.mark.parametrize("option", sorted(UNIQUE_OPTIONS))
@pytest.mark.parametrize("name", sorted(UNIQUE_INPUTS))
def test_unique_eagerly(name, option):
    arr, kwargs = UNIQUE_INPUTS[name], UNIQUE_OPTIONS[option]
    if "axis" in kwargs and np.ndim(arr) < 2:
        return
    _same_or_same_error(lambda m, a: m.unique(a, **kwargs), arr)


@pytest.mark.parametrize("name", ["f_nan", "i2"])
def test_unique_with_size_under_jit(name):
    """Every ``size=`` form in one compile per input: IREE's results are JAX's."""
    arr = UNIQUE_INPUTS[name]

    def fn(m, a):
        out = [m.unique(a, **UNIQUE_OPTIONS["size_fill"]), m.unique(a, **UNIQUE_OPTIONS["size_short"]),
               tuple(m.unique_all(a, size=5, fill_value=0)), tuple(m.unique_counts(a, size=3)),
               tuple(m.unique_inverse(a, size=3)), m.unique_values(a, size=4)]
        if np.ndim(a) == 2:
            out.append(m.unique(a, **UNIQUE_OPTIONS["axis1_size"]))
        return out
    expected = fn(jnp, arr)
    actual = irax.jit(lambda a: fn(inp, a))(arr)
    _same(actual, expected)


@pytest.mark.parametrize("name", ["unique_all", "unique_counts", "unique_inverse", "unique_values"])
def test_array_api_unique_eagerly(name):
    for arr in (F_NAN, I2, B, EMPTY):
        expected, actual = getattr(jnp, name)(arr), getattr(inp, name)(arr)
        _same(list(actual) if isinstance(actual, tuple) else actual,
              list(expected) if isinstance(expected, tuple) else expected)
        if isinstance(expected, tuple):
            assert actual._fields == expected._fields


@pytest.mark.parametrize("op", sorted(SET_OPS))
@pytest.mark.parametrize("pair", sorted(SET_PAIRS))
def test_set_ops_eagerly(op, pair):
    _same_or_same_error(SET_OPS[op], *SET_PAIRS[pair])


@pytest.mark.parametrize("pair", ["bools", "empty", "mixed_dtypes"])
def test_set_ops_with_size_eagerly(pair):
    fn = lambda m, a, b: [f(m, a, b) for _, f in sorted(SIZED_SET_OPS.items())]  # noqa: E731
    _same_or_same_error(lambda m, a, b: jax.tree.leaves(fn(m, a, b)), *SET_PAIRS[pair])


@pytest.mark.parametrize("pair,ops", [("ints", sorted(SIZED_SET_OPS)), ("floats_nan", ["intersect1d", "union1d"])])
def test_set_ops_with_size_under_jit(pair, ops):
    """The sized set operations in one compile per input pair: IREE's results are JAX's."""
    fn = lambda m, a, b: [SIZED_SET_OPS[op](m, a, b) for op in ops]  # noqa: E731
    expected = jax.tree.leaves(fn(jnp, *SET_PAIRS[pair]))
    _same(jax.tree.leaves(irax.jit(lambda a, b: fn(inp, a, b))(*SET_PAIRS[pair])), expected)


def test_isin_methods_eagerly():
    a, b = SET_PAIRS["ints"]
    for method, invert, assume_unique in itertools.product(["auto", "compare_all", "binary_search", "sort"],
                                                           [False, True], [False, True]):
        fn = lambda m, x, y: m.isin(x, y, assume_unique, invert, method=method)  # noqa: E731
        _same(fn(inp, a.reshape(1, 7), b), fn(jnp, a.reshape(1, 7), b))
    _same_or_same_error(lambda m, x, y: m.isin(x, y, method="hash"), a, b)


@pytest.mark.parametrize("library", ["irax", "jax"])
def test_value_dependent_sizes_raise_under_jit(library):
    lib, m = (irax, inp) if library == "irax" else (jax, jnp)
    a = np.array([3, 1, 3], np.int32)
    cases = {
        lambda x: m.unique(x): "The error arose for the first argument of jnp.unique(). To make jnp.unique()",
        lambda x: m.unique(x, size=x.sum()): "The error arose for the size argument of jnp.unique().",
        lambda x: m.union1d(x, x): "The error arose in union1d()",
        lambda x: m.setdiff1d(x, x): "The error arose in setdiff1d()",
        lambda x: m.intersect1d(x, x): "The error arose for the first argument of jnp.unique().",
        lambda x: m.setxor1d(x, x): "The error arose for the first argument of jnp.unique().",
        lambda x: m.unique_values(x): "The error arose for the first argument of jnp.unique().",
    }
    for fn, context in cases.items():
        with pytest.raises((errors if lib is irax else jax.errors).ConcretizationTypeError) as info:
            lib.jit(fn)(a)
        first, second = str(info.value).splitlines()[:2]
        assert first.startswith("Abstract tracer value encountered where concrete value is expected: traced array")
        assert second.startswith(context)
    with pytest.raises(ValueError, match="for zero-sized input with nonzero size argument, fill_value must be"):
        m.unique(np.zeros(0), size=3)


@pytest.mark.parametrize("name", ["unique", "union1d", "setxor1d", "intersect1d", "setdiff1d"])
def test_vmap_of_sized_set_ops(name):
    x = np.array([[3, 1, 3, 2], [0, 0, 1, 0], [7, 7, 7, 7]], np.int32)
    fns = {
        "unique": lambda m, a: m.unique(a, return_index=True, return_inverse=True, return_counts=True, size=3,
                                        fill_value=-1),
        "union1d": lambda m, a: m.union1d(a, a[:2] + 1, size=5),
        "setxor1d": lambda m, a: m.setxor1d(a, a[:2] + 1, size=4),
        "intersect1d": lambda m, a: m.intersect1d(a, a[:2] + 1, size=3, return_indices=True),
        "setdiff1d": lambda m, a: m.setdiff1d(a, a[:2] + 1, size=3),
    }
    fn = fns[name]
    _same(jax.tree.leaves(irax.vmap(lambda a: fn(inp, a))(x)), jax.tree.leaves(jax.vmap(lambda a: fn(jnp, a))(x)))


QX = RNG.randn(3, 4, 5).astype(np.float32)
QX[0, 1, 2] = np.nan
QX[1, :, 3] = np.nan
QI = RNG.randint(-5, 5, (4, 5)).astype(np.int32)
METHODS = ["linear", "lower", "higher", "midpoint", "nearest", "inverted_cdf"]
AXES = [None, 0, -1, (0, 2), (1,)]
QS = {"scalar": np.float32(0.3), "vector": np.array([0., 0.25, 0.9, 1.], np.float32)}


def _quantile_cases():
    """A deterministic sample of name x method x axis x keepdims x q: every value of each appears."""
    names = ["quantile", "nanquantile", "percentile", "nanpercentile"]
    cases = []
    for k, (name, method) in enumerate(itertools.product(names, METHODS)):
        for j, (axis, q) in enumerate(itertools.product(AXES, sorted(QS))):
            if (j + k) % 4 == 0:
                cases.append((name, method, axis, bool((j + k) % 2), q))
    return cases


def _percent(name, q):
    # q below 1 keeps q / 100 * (n - 1) off integers, where XLA's division by 100 rounds differently
    return np.minimum(q, 0.9) * 100 if "percent" in name else q


@pytest.mark.parametrize("name,method,axis,keepdims,q", _quantile_cases())
def test_quantiles_eagerly(name, method, axis, keepdims, q):
    qv = _percent(name, QS[q])
    fn = lambda m, a, p: getattr(m, name)(a, p, axis=axis, method=method, keepdims=keepdims)  # noqa: E731
    for arr in (QX, QI) if axis in (None, 0) else (QX,):
        _same(fn(inp, arr, qv), fn(jnp, arr, qv), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("name", ["median", "nanmedian"])
def test_medians_eagerly(name):
    for arr, axis, keepdims in itertools.product([QX, QX[:, :, :4], np.float32(3.), np.ones((2, 0), np.float32)],
                                                 [None, 0, -1, (0, 2)], [False, True]):
        if np.ndim(arr) == 0 and axis is not None or np.ndim(arr) == 2 and axis == (0, 2):
            continue
        _same_or_same_error(lambda m, a: getattr(m, name)(a, axis=axis, keepdims=keepdims), arr)
    _same(getattr(inp, name)(QI), getattr(jnp, name)(QI))


def test_inverted_cdf_weights_eagerly():
    w = np.abs(RNG.randn(4)).astype(np.float32)
    bad = w.copy()
    bad[1] = -1.
    for name, weights, q in itertools.product(["quantile", "nanquantile", "percentile", "nanpercentile"],
                                              [w, bad], [QS["scalar"], QS["vector"]]):
        fn = lambda m, a, p, wt: getattr(m, name)(a, p, axis=1, method="inverted_cdf", weights=wt)  # noqa: E731
        _same(fn(inp, QX, _percent(name, q), weights), fn(jnp, QX, _percent(name, q), weights), rtol=1e-6)
    full = np.abs(RNG.randn(*QX.shape)).astype(np.float32)
    _same(inp.quantile(QX, 0.4, method="inverted_cdf", weights=full),
          jnp.quantile(QX, 0.4, method="inverted_cdf", weights=full))


def test_quantiles_under_jit():
    """A sample of functions and methods, on floats with NaN and on integers, in one compile."""
    def fn(m, a, ai, q):
        return [m.median(a, axis=1), m.nanmedian(a, axis=(0, 2), keepdims=True), m.median(ai),
                m.quantile(a, q, axis=-1), m.nanquantile(a, q[1], axis=0, method="nearest"),
                m.percentile(ai, q * 90, method="inverted_cdf", keepdims=True),
                m.nanpercentile(a, q * 90, axis=(1,), method="midpoint"), m.quantile(ai, q, axis=0, method="lower")]
    args = (QX, QI, QS["vector"])
    _same(irax.jit(lambda *a: fn(inp, *a))(*args), fn(jnp, *args), rtol=1e-5, atol=1e-5)


GRAD_CASES = {
    "median": lambda m, a: m.median(a, axis=0).sum(),
    "quantile": lambda m, a: (m.quantile(a, np.array([0.2, 0.7], np.float32), axis=1) ** 2).sum(),
    "nanpercentile": lambda m, a: m.nanpercentile(a, 30., axis=None),
    "nearest": lambda m, a: m.quantile(a, 0.3, axis=1, method="nearest").sum(),
    "nanmedian": lambda m, a: m.nanmedian(a, axis=(0, 1)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_quantile_gradients_and_vmap_match_jax(name):
    fn = GRAD_CASES[name]
    x = RNG.randn(4, 5).astype(np.float32)
    x[1, 2] = np.nan
    if name != "nanmedian":
        x = np.nan_to_num(x)
    expected = jax.grad(lambda a: fn(jnp, a))(x)
    _same(irax.grad(lambda a: fn(inp, a))(x), expected, atol=1e-6)
    batch = np.stack([x, 2 * x, -x])
    _same(irax.vmap(lambda a: fn(inp, a))(batch), jax.vmap(lambda a: fn(jnp, a))(batch), rtol=1e-5, atol=1e-6)


def test_quantile_gradient_under_jit():
    x = RNG.randn(4, 5).astype(np.float32)
    fn = lambda m, a: m.quantile(a, 0.35, axis=1).sum() + m.median(a)  # noqa: E731
    _same(irax.jit(irax.grad(lambda a: fn(inp, a)))(x), jax.grad(lambda a: fn(jnp, a))(x), atol=1e-6)


QUANTILE_ERRORS = {
    "bad_method": lambda m: m.quantile(QX, 0.5, method="cubic"),
    "overwrite_input": lambda m: m.quantile(QX, 0.5, overwrite_input=True),
    "nan_overwrite_input": lambda m: m.nanquantile(QX, 0.5, overwrite_input=True),
    "q_rank_2": lambda m: m.quantile(QX, np.ones((2, 2), np.float32)),
    "complex": lambda m: m.quantile(QX.astype(np.complex64), 0.5),
    "weights_linear": lambda m: m.quantile(QX, 0.5, weights=QX),
    "weights_complex": lambda m: m.quantile(QX, 0.5, method="inverted_cdf", weights=QX.astype(np.complex64)),
    "weights_shape": lambda m: m.quantile(QX, 0.5, axis=1, method="inverted_cdf", weights=np.ones(3)),
    "weights_axis_none": lambda m: m.quantile(QX, 0.5, method="inverted_cdf", weights=np.ones(3)),
    "repeated_axis": lambda m: m.median(QX, axis=(1, 1)),
    "q_out_of_range_is_clamped": lambda m: m.quantile(QX, np.array([-0.5, 1.5], np.float32), axis=1),
}


@pytest.mark.parametrize("name", sorted(QUANTILE_ERRORS))
def test_quantile_errors_as_jax(name):
    _same_or_same_error(lambda m: QUANTILE_ERRORS[name](m))


F23 = np.ones((3, 2, 2), np.float32)
Q2 = np.array([0.1, 0.5], np.float32)
I9 = np.array([3, 1, 2, 1, 3, 2, 3, 1, 2], np.int32)
# irax's lax.reshape with ``dimensions`` binds transpose + reshape where JAX binds one reshape, so quantiles over
# a tuple of axes print differently; everything else prints as JAX's.
TEXT_CASES = {
    "unique": (lambda m, a: m.unique(a, size=4), (F_NAN,)),
    "unique_all": (lambda m, a: m.unique(a, True, True, True, size=4, fill_value=0), (F_NAN,)),
    "union1d": (lambda m, a, b: m.union1d(a, b, size=6), (I9, I9[:3] + 1)),
    "setdiff1d": (lambda m, a, b: m.setdiff1d(a, b, size=6), (I9, I9[:3] + 1)),
    "setxor1d": (lambda m, a, b: m.setxor1d(a, b, size=6), (I9, I9[:3] + 1)),
    "intersect1d": (lambda m, a, b: m.intersect1d(a, b, size=6, return_indices=True), (I9, I9[:3] + 1)),
    "lexsort_array": (lambda m, a: m.lexsort(a), (F23[0],)),
    "bincount": (lambda m, a: m.bincount(a, length=4), (I9,)),
    "median": (lambda m, a: m.median(a, axis=0), (F23,)),
    "median_flat": (lambda m, a: m.median(a), (F23,)),
    "nanmedian": (lambda m, a: m.nanmedian(a, axis=1, keepdims=True), (F23,)),
    "quantile_int": (lambda m, a, q: m.quantile(a, q, axis=-1, method="lower", keepdims=True),
                     (F23.astype(np.int32), Q2)),
    "inverted_cdf": (lambda m, a, q: m.quantile(a, q, axis=1, method="inverted_cdf"), (F23, Q2)),
    "inverted_cdf_weights": (lambda m, a, q, w: m.nanquantile(a, q[0], axis=1, method="inverted_cdf", weights=w,
                                                              keepdims=True), (F23, Q2, F23[0, :, 0])),
}


@pytest.mark.parametrize("name", sorted(TEXT_CASES))
def test_make_jaxpr_text_matches_jax(name):
    fn, args = TEXT_CASES[name]
    assert str(irax.make_jaxpr(lambda *a: fn(inp, *a))(*args)) == str(jax.make_jaxpr(lambda *a: fn(jnp, *a))(*args))
