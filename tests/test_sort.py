"""``sort`` and ``top_k`` (``lax.sort``, ``lax.sort_key_val``, ``lax.top_k``) and the ``jax.numpy`` functions on top
of them (``sort``, ``argsort``, ``lexsort``, ``partition``, ``argpartition``, ``sort_complex``, the array methods),
against JAX: values eagerly (NumPy rules) and under ``irax.jit`` (IREE, one compile per group), bit for bit, over
dtypes, shapes with empty axes, NaN of both signs, infinities and signed zeros; float64 in a child process with
x64; gradients (``check_grads`` and JAX's); vmap (against stacking and JAX); ``make_jaxpr`` text of the functions,
their gradients and their vmaps; and JAX's exception classes for bad arguments.
"""
from __future__ import annotations

import functools
import os
import subprocess
import sys

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
jnp = jax.numpy

SPECIALS = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 1.0, 2.5, -2.5, 0.0, 1e-45]
SHAPES = [(7,), (3, 5), (2, 3, 4), (2, 0, 3), (0,), (4, 1)]
DTYPES = ["float32", "int32", "bool", "float16", "bfloat16", "uint8", "int8", "complex64"]


def _draw(shape, dtype, seed=0):
    """Values with ties, and for floats the specials (NaN of both signs, infinities, signed zeros)."""
    rng = np.random.default_rng(seed)
    n = int(np.prod(shape))
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        lo = 0 if np.issubdtype(dtype, np.unsignedinteger) else -3
        return rng.integers(lo, 4, shape).astype(dtype)
    base = np.round(rng.normal(size=n) * 2, 1)
    values = np.array([SPECIALS[i] if i < len(SPECIALS) and rng.random() < 0.5 else base[i] for i in range(n)])
    rng.shuffle(values)
    if np.issubdtype(dtype, np.complexfloating):
        out = np.empty(n, dtype)
        out.real, out.imag = values, rng.choice(np.array([0.0, 1.0, -np.nan, np.nan, -0.0]), size=n)
        return out.reshape(shape)
    return values.astype(dtype).reshape(shape)


def _bits(x):
    """An array's bit patterns (NaN payloads and signs of zero included), for exact comparisons."""
    x = np.asarray(x)
    if x.dtype.kind in "fcV" or x.dtype == np.dtype("bfloat16"):
        return np.ascontiguousarray(x).view(np.dtype(f"u{x.dtype.itemsize // (2 if x.dtype.kind == 'c' else 1)}"))
    return x


def assert_same(actual, expected, what=""):
    actual = actual if isinstance(actual, (tuple, list)) else [actual]
    expected = expected if isinstance(expected, (tuple, list)) else [expected]
    assert len(actual) == len(expected), what
    for a, e in zip(actual, expected):
        a, e = np.asarray(a), np.asarray(e)
        assert a.dtype == e.dtype and a.shape == e.shape, f"{what}: {a.dtype}{a.shape} != {e.dtype}{e.shape}"
        np.testing.assert_array_equal(_bits(a), _bits(e), err_msg=f"{what}\n{a}\n{e}")


# --- values: eager, jitted and JAX's ---------------------------------------------------------------------------

def _lax_cases(dtype):
    """(id, fn(lax, *args), args) for one dtype: single and multi-operand sorts on every axis, and top_k."""
    cases = []
    for shape in SHAPES:
        x = _draw(shape, dtype)
        for d in range(len(shape)):
            cases.append((f"sort{shape}d{d}", functools.partial(lambda d, L, x: L.sort(x, d), d), (x,)))
            y = _draw(shape, "int32", 1)
            cases.append((f"kv{shape}d{d}", functools.partial(lambda d, L, x, y: L.sort_key_val(x, y, d), d), (x, y)))
            if dtype != "complex64":
                k = min(shape[d], 3)
                cases.append((f"top_k{shape}d{d}", functools.partial(lambda d, k, L, x: L.top_k(x, k, axis=d), d, k),
                              (x,)))
    x, y, z = _draw((4, 9), dtype, 2), _draw((4, 9), "int32", 3), _draw((4, 9), "float32", 4)
    cases += [
        ("num_keys2", lambda L, x, y, z: L.sort((x, y, z), num_keys=2), (x, y, z)),
        ("num_keys3", lambda L, x, y, z: L.sort((y, x, z), dimension=0, num_keys=3), (x, y, z)),
        ("same_operand_twice", lambda L, x, y, z: L.sort((x, x, y), num_keys=1), (x, y, z)),
        ("unstable", lambda L, x, y, z: L.sort(x, 0, is_stable=False), (x, y, z)),
        ("argsort_chain", lambda L, x, y, z: L.sort_key_val(
            L.sort_key_val(x, L.broadcasted_iota(np.int32, x.shape, 1))[1],
            L.broadcasted_iota(np.int32, x.shape, 1))[1][:, :4], (x, y, z)),
    ]
    if dtype != "complex64":
        cases += [("top_k_all", lambda L, x, y, z: L.top_k(x, 9), (x, y, z)),
                  ("top_k_0", lambda L, x, y, z: L.top_k(x, 0), (x, y, z)),
                  ("top_k_chain", lambda L, x, y, z: L.top_k(L.convert_element_type(L.top_k(x, 9)[1], np.float32),
                                                             2, axis=0), (x, y, z))]
    return cases


@functools.cache
def _jax_results(dtype):
    return [jax.device_get(fn(jax.lax, *args)) for _, fn, args in _lax_cases(dtype)]


@pytest.mark.parametrize("dtype", DTYPES)
def test_lax_eager_matches_jax(dtype):
    for (cid, fn, args), expected in zip(_lax_cases(dtype), _jax_results(dtype)):
        assert_same(fn(lax, *args), expected, f"{dtype} {cid}")


@pytest.mark.parametrize("dtype", DTYPES)
def test_lax_jit_matches_jax(dtype):
    """Every case of the dtype in one jitted function (one IREE compile)."""
    cases = _lax_cases(dtype)
    flat = [a for _, _, args in cases for a in args]

    def everything(*flat):
        outs, k = [], 0
        for _, fn, args in cases:
            outs.append(fn(lax, *flat[k:k + len(args)]))
            k += len(args)
        return outs

    for (cid, _, _), got, expected in zip(cases, irax.jit(everything)(*flat), _jax_results(dtype)):
        assert_same(got, expected, f"jit {dtype} {cid}")


def test_sort_orders_nan_last_and_keeps_signed_zeros_in_place():
    x = np.array([0.0, -np.nan, -0.0, 1.0, np.nan, -np.inf, 0.0, -0.0], np.float32)
    for out in (lax.sort(x), irax.jit(lax.sort)(x)):
        assert_same(out, np.array([-np.inf, 0.0, -0.0, 0.0, -0.0, 1.0, -np.nan, np.nan], np.float32))


def test_top_k_orders_by_the_bits_total_order():
    """As XLA's TopK: NaN first, -NaN last, 0.0 before -0.0, the lower index first among equals."""
    x = np.array([1.0, np.nan, 3.0, -np.nan, -0.0, 0.0, -np.inf, np.inf, 3.0], np.float32)
    expected = (np.array([np.nan, np.inf, 3, 3, 1, 0.0, -0.0, -np.inf, -np.nan], np.float32),
                np.array([1, 7, 2, 8, 0, 5, 4, 6, 3], np.int32))
    for out in (lax.top_k(x, 9), irax.jit(lambda x: lax.top_k(x, 9))(x)):
        assert_same(out, expected)


def test_sort_lowers_to_stablehlo_sort():
    text = irax.jit(lambda x: (lax.sort(x), lax.top_k(x, 2))).lower(np.ones((2, 5), np.float32)).as_text()
    assert text.count('"stablehlo.sort"') == 2 and "chlo.top_k" not in text


X64_SCRIPT = r"""
import numpy as np, jax, irax
from irax import lax
import irax.numpy as inp
assert irax.config.jax_enable_x64
x = np.array([[0.0, -np.nan, -0.0, 1e300, np.nan, -np.inf, 5e-324, -0.0, 3.0, 3.0]] * 2)
c = np.empty(x.shape, np.complex128)
c.real, c.imag = x, x[:, ::-1]
i = np.array([[3, -2**40, 2**40, 0, 3, 1, -1, 0, 7, 7]] * 2, np.int64)
cases = [lambda L, x, c, i: L.sort(x), lambda L, x, c, i: L.sort_key_val(x, i),
         lambda L, x, c, i: L.sort((i, x), num_keys=2), lambda L, x, c, i: L.top_k(x, 10),
         lambda L, x, c, i: L.top_k(i, 4), lambda L, x, c, i: L.sort(c),
         lambda L, x, c, i: L.sort_key_val(x, c, 0)]
bits = lambda a: np.ascontiguousarray(np.asarray(a)).view(np.uint64) if np.asarray(a).dtype.kind in "fc" \
    else np.asarray(a)
def same(got, want, what):
    for g, w in zip(got if isinstance(got, (tuple, list)) else [got], want if isinstance(want, (tuple, list))
                    else [want]):
        g, w = np.asarray(g), np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (what, g.dtype, w.dtype)
        assert np.array_equal(bits(g), bits(w)), (what, g, w)
jitted = irax.jit(lambda x, c, i: [f(lax, x, c, i) for f in cases])(x, c, i)
for k, f in enumerate(cases):
    want = f(jax.lax, x, c, i)
    same(f(lax, x, c, i), want, f"eager {k}")
    same(jitted[k], want, f"jit {k}")
same(inp.argsort(x, descending=True), jax.numpy.argsort(x, descending=True), "argsort")
print("ok")
"""


def test_float64_and_int64_under_x64():
    """x64 is process-global: the checks run in a child process with JAX_ENABLE_X64=1."""
    env = dict(os.environ, JAX_ENABLE_X64="1")
    run = subprocess.run([sys.executable, "-c", X64_SCRIPT], env=env, capture_output=True, text=True, timeout=600)
    assert run.returncode == 0 and run.stdout.strip().endswith("ok"), run.stdout[-3000:] + run.stderr[-3000:]


# --- jax.numpy ---------------------------------------------------------------------------------------------------

_F = _draw((3, 6), "float32", 5)
_I = _draw((3, 6), "int32", 6)
_U = _draw((3, 6), "uint8", 7)
_B = _draw((3, 6), "bool", 8)
_C = _draw((3, 6), "complex64", 9)
NUMPY_CASES = {
    "sort": (lambda m, x: m.sort(x), [_F, _I, _B, _C]),
    "sort_axis0": (lambda m, x: m.sort(x, axis=0), [_F, _I]),
    "sort_axis_none": (lambda m, x: m.sort(x, axis=None), [_F, _I]),
    "sort_descending": (lambda m, x: m.sort(x, descending=True), [_F, _I, _C]),
    "sort_unstable": (lambda m, x: m.sort(x, stable=False), [_F]),
    "sort_scalar": (lambda m, x: m.sort(x[0, 0], axis=None), [_F]),
    "argsort": (lambda m, x: m.argsort(x), [_F, _I, _B, _U, _C]),
    "argsort_axis0": (lambda m, x: m.argsort(x, axis=0), [_F, _I]),
    "argsort_axis_none": (lambda m, x: m.argsort(x, axis=None), [_F]),
    "argsort_descending": (lambda m, x: m.argsort(x, descending=True), [_F, _I, _B]),
    "argsort_descending_axis0": (lambda m, x: m.argsort(x, axis=0, descending=True), [_F, _I]),
    "argsort_dtype": (lambda m, x: m.argsort(x, dtype=m.int16), [_F]),
    "argsort_empty": (lambda m, x: m.argsort(x[:, :0]), [_F]),
    "lexsort": (lambda m, x: m.lexsort([x, x > 0]), [_F, _I]),
    "lexsort_three_axis0": (lambda m, x: m.lexsort((x, -x, x > 1), axis=0), [_F, _I]),
    "lexsort_scalar": (lambda m, x: m.lexsort([x[0, 0]]), [_F]),
    "partition": (lambda m, x: m.partition(x, 2), [_F, _I, _U]),
    "partition_axis0": (lambda m, x: m.partition(x, -1, axis=0), [_F, _I, _U]),
    "argpartition": (lambda m, x: m.argpartition(x, 3), [_F, _I, _U]),
    "argpartition_axis0": (lambda m, x: m.argpartition(x, 0, axis=0), [_F, _I]),
    "sort_complex": (lambda m, x: m.sort_complex(x), [_F, _I, _C]),
    "method_sort": (lambda m, x: m.asarray(x).sort(axis=0), [_F, _I]),
    "method_argsort": (lambda m, x: m.asarray(x).argsort(descending=True), [_F, _I]),
}
NUMPY_PARAMS = [pytest.param(name, k, id=f"{name}-{x.dtype}") for name, (_, xs) in NUMPY_CASES.items()
                for k, x in enumerate(xs)]


@pytest.mark.parametrize("name,k", NUMPY_PARAMS)
def test_numpy_eager_matches_jax(name, k):
    fn, xs = NUMPY_CASES[name]
    assert_same(fn(inp, xs[k]), fn(jnp, xs[k]), name)


def test_numpy_jit_matches_jax():
    """Every case in one jitted function."""
    params = [(NUMPY_CASES[p.values[0]][0], NUMPY_CASES[p.values[0]][1][p.values[1]]) for p in NUMPY_PARAMS]
    got = irax.jit(lambda *xs: [fn(inp, x) for (fn, _), x in zip(params, xs)])(*[x for _, x in params])
    for p, (fn, x), g in zip(NUMPY_PARAMS, params, got):
        assert_same(g, fn(jnp, x), f"jit {p.id}")


def test_argsort_descending_stable_keeps_ties_in_order():
    x = np.array([1, 3, 1, 3, 2, 1], np.int32)
    assert_same(inp.argsort(x, descending=True), np.array([1, 3, 4, 0, 2, 5], np.int32))


# --- make_jaxpr text -----------------------------------------------------------------------------------------------

_X = np.ones((3, 4), np.float32)
TEXT_PROGRAMS = {
    "sort": (lambda J, L, N: lambda x: L.sort(x, 0), [_X]),
    "sort_multi": (lambda J, L, N: lambda x, y: L.sort((x, y, x), 1, num_keys=2), [_X, _X]),
    "sort_key_val": (lambda J, L, N: lambda x, y: L.sort_key_val(x, y), [_X, _X.astype(np.int32)]),
    "top_k": (lambda J, L, N: lambda x: L.top_k(x, 3), [_X]),
    "top_k_axis0": (lambda J, L, N: lambda x: L.top_k(x, 2, axis=0), [_X]),
    "jnp_sort": (lambda J, L, N: lambda x: N.sort(x, axis=None, descending=True), [_X]),
    "argsort": (lambda J, L, N: lambda x: N.argsort(x), [_X]),
    "argsort_descending": (lambda J, L, N: lambda x: N.argsort(x, axis=0, descending=True), [_X]),
    "argsort_descending_unstable": (lambda J, L, N: lambda x: N.argsort(x, descending=True, stable=False), [_X]),
    "lexsort": (lambda J, L, N: lambda x, y: N.lexsort([x, y]), [_X, _X]),
    "partition": (lambda J, L, N: lambda x: N.partition(x, 1), [_X]),
    "partition_uint": (lambda J, L, N: lambda x: N.partition(x, 2, axis=0), [_X.astype(np.uint8)]),
    "argpartition": (lambda J, L, N: lambda x: N.argpartition(x, 2), [_X]),
    "sort_complex": (lambda J, L, N: lambda x: N.sort_complex(x), [_X]),
    "grad_sort": (lambda J, L, N: J.grad(lambda x: (L.sort(x, 0) * x).sum()), [_X]),
    "grad_sort_multi": (lambda J, L, N: J.grad(lambda x, y: L.sort((x, y), num_keys=1)[1].sum(), (0, 1)), [_X, _X]),
    "grad_top_k": (lambda J, L, N: J.grad(lambda x: L.top_k(x, 3)[0].sum()), [_X]),
    "grad_jnp_sort": (lambda J, L, N: J.grad(lambda x: N.sort(x, axis=0)[0].sum()), [_X]),
    "jvp_sort": (lambda J, L, N: lambda x, t: J.jvp(lambda x: L.sort(x), (x,), (t,)), [_X, _X]),
    "jvp_top_k": (lambda J, L, N: lambda x, t: J.jvp(lambda x: L.top_k(x, 2)[0], (x,), (t,)), [_X, _X]),
    "vmap_sort": (lambda J, L, N: J.vmap(lambda x: L.sort(x, 0), in_axes=1), [_X]),
    "vmap_sort_shared": (lambda J, L, N: J.vmap(lambda x, y: L.sort_key_val(x, y, 0), in_axes=(1, None)),
                         [_X, _X[:, 0]]),
    "vmap_top_k": (lambda J, L, N: J.vmap(lambda x: L.top_k(x, 2), in_axes=1), [_X]),
    "vmap_argsort": (lambda J, L, N: J.vmap(N.argsort), [_X]),
    "vmap_grad_sort": (lambda J, L, N: J.vmap(J.grad(lambda x: (L.sort(x) * x).sum())), [_X]),
    "grad_vmap_top_k": (lambda J, L, N: J.grad(lambda x: J.vmap(lambda r: L.top_k(r, 2)[0])(x).sum()), [_X]),
}


@pytest.mark.parametrize("name", sorted(TEXT_PROGRAMS))
def test_jaxpr_text_matches_jax(name):
    build, args = TEXT_PROGRAMS[name]
    ours = str(irax.make_jaxpr(build(irax, lax, inp))(*args))
    theirs = str(jax.make_jaxpr(build(jax, jax.lax, jnp))(*args))
    assert ours == theirs, f"irax:\n{ours}\njax:\n{theirs}"


# --- gradients ------------------------------------------------------------------------------------------------------

_D = np.random.default_rng(10).permutation(24).reshape(2, 3, 4).astype(np.float32) / 4 - 3  # distinct: no ties
GRAD_CASES = {
    "sort": (lambda L, x: L.sort(x, 1) * np.arange(3, dtype=np.float32)[:, None], (_D,)),
    "sort_last": (lambda L, x: L.sort(x) ** 2, (_D,)),
    "sort_multi": (lambda L, x, y: L.sort((x, y), 2, num_keys=1)[1] * L.sort((x, y), 2, num_keys=1)[0],
                   (_D, _D[::-1] * 2)),
    "sort_two_keys": (lambda L, y: L.sort((_D.round(), y), 0, num_keys=2)[1], (_D,)),
    "top_k": (lambda L, x: L.top_k(x, 2)[0] * L.top_k(x, 2)[0], (_D,)),
    "top_k_axis": (lambda L, x: L.top_k(x, 3, axis=1)[0] * 1.5, (_D,)),
    "jnp_sort_desc": (lambda L, x: (inp if L is lax else jnp).sort(x, axis=None, descending=True)[:5], (_D,)),
    "partition": (lambda L, x: (inp if L is lax else jnp).partition(x, 1, axis=1) ** 3, (_D,)),
}


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_check_grads(name):
    fn, args = GRAD_CASES[name]
    check_grads(functools.partial(fn, lax), args, order=2, modes=("fwd", "rev"), eps=1e-2)


def _weighted(fn, module):
    def scalar(*args):
        out = fn(module, *args)
        w = np.linspace(0.5, 1.5, int(np.prod(out.shape)), dtype=np.float32).reshape(out.shape)
        return (out * w).sum()
    return scalar


@pytest.mark.parametrize("name", sorted(GRAD_CASES))
def test_grad_matches_jax_eager_and_jitted(name):
    fn, args = GRAD_CASES[name]
    argnums = tuple(range(len(args)))
    expected = jax.grad(_weighted(fn, jax.lax), argnums)(*args)
    ours = irax.grad(_weighted(fn, lax), argnums)
    for got in (ours(*args), irax.jit(ours)(*args)):
        for g, e in zip(got, expected):
            np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-6, atol=1e-6)


def test_grad_of_sort_with_ties_and_nan_follows_the_permutation():
    """Ties keep their order (stable), so each output's cotangent goes back to the entry it came from."""
    x = np.array([2.0, np.nan, 1.0, 2.0, -0.0, 0.0], np.float32)
    w = np.arange(1, 7, dtype=np.float32)
    f = lambda L: lambda x: (L.sort(x) * w).sum()  # noqa: E731
    expected = jax.grad(f(jax.lax))(x)
    assert_same(irax.grad(f(lax))(x), expected)
    assert_same(irax.jit(irax.grad(f(lax)))(x), expected)


# --- vmap ----------------------------------------------------------------------------------------------------------

_V = _draw((4, 3, 5), "float32", 11)
_VI = _draw((4, 3, 5), "int32", 12)
VMAP_CASES = {
    "sort_d0_axis0": (lambda L, x: L.sort(x, 0), (_V,), 0),
    "sort_d1_axis2": (lambda L, x: L.sort(x, 1), (_V,), 2),
    "sort_d0_axis1": (lambda L, x: L.sort(x, 0), (_V,), 1),
    "kv_mixed": (lambda L, x, y: L.sort_key_val(x, y, 1), (_V, np.moveaxis(_VI, 0, 2)), (0, 2)),
    "kv_shared_values": (lambda L, x, y: L.sort_key_val(x, y, 0), (_V, _VI[0]), (0, None)),
    "kv_shared_keys": (lambda L, x, y: L.sort_key_val(x, y, 1), (_V[0], _VI), (None, 0)),
    "multi_keys": (lambda L, x, y: L.sort((y, x), 1, num_keys=2), (_V, _VI), (1, 1)),
    "top_k_axis0": (lambda L, x: L.top_k(x, 2), (_V,), 0),
    "top_k_axis2": (lambda L, x: L.top_k(x, 2, axis=0), (_V,), 2),
    "top_k_axis1": (lambda L, x: L.top_k(x, 3, axis=1), (_V,), 1),
    "argsort": (lambda L, x: (inp if L is lax else jnp).argsort(x, axis=0, descending=True), (_V,), 1),
    "argpartition": (lambda L, x: (inp if L is lax else jnp).argpartition(x, 2), (_V,), 0),
    "empty_batch": (lambda L, x: L.top_k(x, 2), (_V[:0],), 0),
}


@pytest.mark.parametrize("name", sorted(VMAP_CASES))
def test_vmap_matches_stacking_and_jax(name):
    fn, args, axes = VMAP_CASES[name]
    axes = axes if isinstance(axes, tuple) else (axes,)
    got = irax.vmap(functools.partial(fn, lax), in_axes=axes)(*args)
    size = next(np.shape(a)[d] for a, d in zip(args, axes) if d is not None)
    if size:
        per_example = [fn(lax, *[a if d is None else np.take(a, i, axis=d) for a, d in zip(args, axes)])
                       for i in range(size)]
        stacked = [np.stack(r) for r in zip(*[p if isinstance(p, (tuple, list)) else [p] for p in per_example])]
        assert_same(got, stacked, f"{name} vs stacking")
    expected = jax.vmap(functools.partial(fn, jax.lax), in_axes=axes)(*args)
    assert_same(got, expected, f"{name} vs jax")
    assert_same(irax.jit(irax.vmap(functools.partial(fn, lax), in_axes=axes))(*args), expected, f"jit {name}")


# --- errors ----------------------------------------------------------------------------------------------------------

ERRORS = {
    "dimension_out_of_range": lambda L, N: L.sort(_X, 2),
    "negative_dimension_out_of_range": lambda L, N: L.sort(_X, -3),
    "sort_scalar": lambda L, N: L.sort(np.float32(1)),
    "different_shapes": lambda L, N: L.sort((_X, _X[0])),
    "kv_different_shapes": lambda L, N: L.sort_key_val(_X, _X[:, :2]),
    "no_operands": lambda L, N: L.sort(()),
    "num_keys_too_large": lambda L, N: L.sort((_X, _X), num_keys=3),
    "num_keys_zero": lambda L, N: L.sort((_X, _X), num_keys=0),
    "num_keys_single_operand": lambda L, N: L.sort(_X, num_keys=2),
    "k_too_large": lambda L, N: L.top_k(_X, 5),
    "k_negative": lambda L, N: L.top_k(_X, -1),
    "top_k_axis_out_of_range": lambda L, N: L.top_k(_X, 1, axis=2),
    "top_k_scalar": lambda L, N: L.top_k(np.float32(1), 1),
    "top_k_complex": lambda L, N: L.top_k(_X.astype(np.complex64), 1),
    "jnp_sort_kind": lambda L, N: N.sort(_X, kind="stable"),
    "jnp_argsort_order": lambda L, N: N.argsort(_X, order="x"),
    "jnp_sort_axis": lambda L, N: N.sort(_X, axis=2),
    "jnp_sort_scalar": lambda L, N: N.sort(np.float32(1)),
    "jnp_sort_list": lambda L, N: N.sort([3.0, 1.0]),
    "lexsort_no_keys": lambda L, N: N.lexsort([]),
    "lexsort_shapes": lambda L, N: N.lexsort([_X, _X[0]]),
    "partition_kth": lambda L, N: N.partition(_X, 4),
    "partition_complex": lambda L, N: N.partition(_X.astype(np.complex64), 1),
    "argpartition_axis": lambda L, N: N.argpartition(_X, 1, axis=-3),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_are_jaxs(name):
    fn = ERRORS[name]
    with pytest.raises(Exception) as theirs:
        fn(jax.lax, jnp)
    with pytest.raises(type(theirs.value)):
        fn(lax, inp)
    with pytest.raises(type(theirs.value)):
        irax.jit(lambda: fn(lax, inp))()
