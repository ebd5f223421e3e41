"""gather and the scatters (scatter, scatter-add, -sub, -mul, -min, -max) against JAX: values eagerly and under
``irax.jit`` (one compile per dtype), every out-of-bounds mode, ``make_jaxpr`` text (with grad and vmap), gradients
(``check_grads`` and JAX's), vmap, and JAX's errors for bad dimension numbers.

The geometries cover XLA's general semantics: collapsed and kept window dimensions, partial windows, windows
placed before the batch dimensions, index vectors addressing several operand dimensions or none, operand/indices
batching dimensions, and empty index sets.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import irax
from irax import lax
from irax.test_util import check_grads

jax = pytest.importorskip("jax")

MODES = ("clip", "fill", "promise_in_bounds")
SCATTERS = ("scatter", "scatter_add", "scatter_sub", "scatter_mul", "scatter_min", "scatter_max")
DTYPES = (np.dtype(np.float32), np.dtype(np.int32), np.dtype(np.float16), np.dtype(np.bool_))


@dataclasses.dataclass(frozen=True)
class Geometry:
    """A gather (operand shape, indices, dimension numbers, slice sizes) and the scatter that inverts it."""

    id: str
    operand: tuple
    indices: tuple          # nested lists of ints, the index vector last
    offset_dims: tuple
    collapsed: tuple
    index_map: tuple
    slice_sizes: tuple
    operand_batching: tuple = ()
    indices_batching: tuple = ()

    def gather_dims(self, lx):
        return lx.GatherDimensionNumbers(self.offset_dims, self.collapsed, self.index_map, self.operand_batching,
                                         self.indices_batching)

    def scatter_dims(self, lx):
        return lx.ScatterDimensionNumbers(self.offset_dims, self.collapsed, self.index_map, self.operand_batching,
                                          self.indices_batching)

    def index_array(self):
        return np.asarray(self.indices, np.int32).reshape(np.shape(self.indices) if self.indices else (0, 1))

    def updates_shape(self):
        return jax.eval_shape(lambda x, i: jax.lax.gather(x, i, self.gather_dims(jax.lax), self.slice_sizes),
                              jax.ShapeDtypeStruct(self.operand, np.float32),
                              jax.ShapeDtypeStruct(self.index_array().shape, np.int32)).shape


# Indices include negative and too-large starts, so every mode's out-of-bounds rule is exercised.
GEOMETRIES = [
    Geometry("rows", (5, 3), [[1], [-1], [4], [7], [0]], (1,), (0,), (0,), (1, 3)),
    Geometry("partial_rows", (5, 4), [[3], [0], [4], [-2]], (1,), (0,), (0,), (1, 2)),
    Geometry("columns", (3, 6), [[5], [2], [9]], (0,), (1,), (1,), (3, 1)),
    Geometry("two_dims", (4, 5, 3), [[[0, 2], [3, 0], [1, 1]], [[5, 1], [2, -1], [3, 2]]], (2,), (0, 2), (0, 2),
             (1, 5, 1)),
    Geometry("blocks", (6, 5), [[0, 0], [4, 3], [5, 4], [2, 1]], (1, 2), (), (0, 1), (2, 3)),
    Geometry("batching", (2, 5, 3), [[[0], [4], [-1], [2]], [[1], [3], [9], [0]]], (2,), (1,), (1,), (1, 1, 3),
             (0,), (0,)),
    Geometry("no_index", (5, 3), [[], []], (1, 2), (), (), (2, 3)),
    Geometry("empty", (5, 3), [], (1,), (0,), (0,), (1, 3)),
]
# Indices whose windows never overlap, even once clipped (a plain scatter's winner is unspecified).
UNIQUE = {"rows": [[1], [3], [9], [0]], "partial_rows": [[3], [-2], [1]], "columns": [[5], [2], [-4]],
          "two_dims": [[[0, 2], [3, 0], [1, 1]], [[5, 1], [2, 0], [3, 2]]], "blocks": [[0, 0], [4, 3], [2, 2]],
          "batching": [[[1], [4], [-1], [2]], [[1], [3], [9], [0]]], "no_index": [[]]}


def _values(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random(shape) < 0.5
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-9, 10, shape).astype(dtype)
    return (rng.standard_normal(shape) * 2).astype(dtype)


def _unique(g):
    return dataclasses.replace(g, indices=UNIQUE.get(g.id, g.indices))


def _gather_cases():
    for g in GEOMETRIES:
        for mode in MODES:
            yield f"gather-{g.id}-{mode}", g, "gather", mode, {}
    yield "gather-rows-fill7", GEOMETRIES[0], "gather", "fill", {"fill_value": 7}


def _scatter_cases():
    for g in GEOMETRIES:
        for name in SCATTERS:
            for mode in MODES:
                yield f"{name}-{g.id}-{mode}", _unique(g) if name == "scatter" else g, name, mode, {}


CASES = list(_gather_cases()) + list(_scatter_cases())


def _supported(name, dtype):
    if dtype == np.bool_:
        return name in ("gather", "scatter", "scatter_min", "scatter_max")
    return True


def _run(lx, case, dtype, operand=None, updates=None):
    _, g, name, mode, kw = case
    x = _values(g.operand, dtype, 0) if operand is None else operand
    i = g.index_array()
    if name == "gather":
        return lx.gather(x, i, g.gather_dims(lx), g.slice_sizes, mode=mode, **kw)
    u = _values(g.updates_shape(), dtype, 1) if updates is None else updates
    return getattr(lx, name)(x, i, u, g.scatter_dims(lx), mode=mode)


def _assert_same(actual, expected, what):
    actual, expected = np.asarray(actual), np.asarray(expected)
    assert actual.dtype == expected.dtype and actual.shape == expected.shape, \
        f"{what}: {actual.dtype}{actual.shape} != {expected.dtype}{expected.shape}"
    if np.issubdtype(actual.dtype, np.inexact):
        np.testing.assert_allclose(actual.astype(np.float64), expected.astype(np.float64), rtol=2e-3, atol=2e-3,
                                   err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


PARAMS = [(c, d) for c in CASES for d in DTYPES if _supported(c[2], d)]
IDS = [f"{c[0]}-{d.name}" for c, d in PARAMS]


def _all_cases(library, dtype):
    """Every case of one dtype in one jitted function of ``library`` (irax or jax): one compile per dtype."""
    cases = [c for c, d in PARAMS if d == dtype]
    out = library.jit(lambda: [_run(library.lax, c, dtype) for c in cases])()
    return {c[0]: np.asarray(o) for c, o in zip(cases, out)}


def _jitted(shared, dtype):
    """Once per run (conftest.py's ``shared``): the module of a dtype takes seconds to compile."""
    return shared(f"gather_scatter-irax-{dtype.name}", lambda: _all_cases(irax, dtype))


def _jax_results(shared, dtype):
    """JAX's results, jitted as irax's are: eager JAX compiles every gather and scatter it runs."""
    return shared(f"gather_scatter-jax-{dtype.name}", lambda: _all_cases(jax, dtype))


@pytest.mark.parametrize("case,dtype", PARAMS, ids=IDS)
def test_eager_matches_jax(case, dtype, shared):
    _assert_same(_run(lax, case, dtype), _jax_results(shared, dtype)[case[0]], case[0])


@pytest.mark.parametrize("case,dtype", PARAMS, ids=IDS)
def test_jit_matches_eager(case, dtype, shared):
    _assert_same(_jitted(shared, dtype)[case[0]], _run(lax, case, dtype), case[0])


def test_out_of_bounds_modes():
    """clip clamps whole windows into range, fill gives fill_value (default NaN) and drops scatter windows,
    promise_in_bounds clamps gathers and drops scatter windows (as XLA)."""
    x = np.arange(10, dtype=np.float32).reshape(5, 2)
    i = np.array([[-3], [4], [5], [2]], np.int32)
    dn = lax.GatherDimensionNumbers((1,), (0,), (0,))
    clip = lax.gather(x, i, dn, (1, 2), mode="clip")
    np.testing.assert_array_equal(clip, x[[0, 4, 4, 2]])
    fill = np.asarray(lax.gather(x, i, dn, (1, 2), mode="fill"))
    assert np.isnan(fill[[0, 2]]).all() and (fill[[1, 3]] == x[[4, 2]]).all()
    np.testing.assert_array_equal(lax.gather(x, i, dn, (1, 2), mode="fill", fill_value=-1)[2], [-1, -1])
    assert lax.gather(np.arange(5, dtype=np.int32), i, lax.GatherDimensionNumbers((), (0,), (0,)), (1,),
                      mode="fill")[0] == np.iinfo(np.int32).min
    np.testing.assert_array_equal(lax.gather(x, i, dn, (1, 2), mode="promise_in_bounds"), clip)
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    ones = np.ones((4, 2), np.float32)
    expected_drop = x.copy()
    expected_drop[[4, 2]] += 1
    expected_clip = x.copy()
    np.add.at(expected_clip, [0, 4, 4, 2], 1)
    for f in (lambda x: lax.scatter_add(x, i, ones, sdn, mode="fill"),
              lambda x: lax.scatter_add(x, i, ones, sdn, mode="promise_in_bounds")):
        np.testing.assert_array_equal(f(x), expected_drop)
        np.testing.assert_array_equal(irax.jit(f)(x), expected_drop)
    np.testing.assert_array_equal(lax.scatter_add(x, i, ones, sdn, mode="clip"), expected_clip)
    # a partial window hanging over the edge is dropped whole
    window = lax.scatter(x, np.array([[4]], np.int32), np.ones((1, 2, 2), np.float32),
                         lax.ScatterDimensionNumbers((1, 2), (), (0,)), mode="fill")
    np.testing.assert_array_equal(window, x)


def test_scalar_operand():
    """Every update lands on the one element (XLA, and so JAX, fails to compile this; IREE crashes unless the
    lowering widens the operand to a vector)."""
    x, i, u = np.float32(2.0), np.zeros((3, 0), np.int32), np.array([1.0, 5.0, 3.0], np.float32)
    dn = lax.ScatterDimensionNumbers((), (), ())

    def ops():
        return [lax.scatter_add(x, i, u, dn), lax.scatter_max(x, i, u, dn), lax.scatter_mul(x, i, u, dn),
                lax.gather(x, i, lax.GatherDimensionNumbers((), (), ()), (), mode="fill")]
    expected = [np.float32(11), np.float32(5), np.float32(30), np.full(3, 2, np.float32)]
    for eager, jitted, want in zip(ops(), irax.jit(ops)(), expected):
        np.testing.assert_array_equal(eager, want)
        np.testing.assert_array_equal(jitted, want)


# --- make_jaxpr text ----------------------------------------------------------------------------------------------

def _text_programs(lx, api):
    gdn = lx.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,))
    sdn = lx.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                     scatter_dims_to_operand_dims=(0,))

    def gather(x, i, **kw):
        return lx.gather(x, i, gdn, (1, 3), **kw)

    def take(x, idx):
        """``jnp.take(x, idx, axis=0)`` as JAX builds it from lax calls (negative indices wrap)."""
        idx = lx.select(lx.lt(idx, 0), lx.add(idx, 5), idx)
        return lx.gather(x, lx.broadcast_in_dim(idx, (idx.shape[0], 1), (0,)), gdn, (1, 3), mode="fill",
                         fill_value=np.nan)

    def at_add(x, idx, u):
        return lx.scatter_add(x, lx.broadcast_in_dim(idx, (idx.shape[0], 1), (0,)), u, sdn)

    return {
        "gather": (lambda x, i: gather(x, i), "xi"),
        "gather_clip": (lambda x, i: gather(x, i, mode="clip", indices_are_sorted=True), "xi"),
        "gather_fill": (lambda x, i: gather(x, i, mode="fill", fill_value=2), "xi"),
        "take": (take, "xk"),
        "at_add": (at_add, "xku"),
        "scatters": (lambda x, i, u: [getattr(lx, n)(x, i, u, sdn) for n in SCATTERS], "xiu"),
        "scatter_unique": (lambda x, i, u: lx.scatter(x, i, u, sdn, unique_indices=True, mode="clip"), "xiu"),
        "two_adds": (lambda x, i, u: [lx.scatter_add(x, i, u, sdn), lx.scatter_add(x, i, u * 2, sdn)], "xiu"),
        "int_scatter_max": (lambda x, i, u: lx.scatter_max(x.astype(np.int32), i, u.astype(np.int32), sdn), "xiu"),
        "grad_gather": (api.grad(lambda x, i: gather(x, i, mode="clip").sum()), "xi"),
        "grad_take": (api.grad(lambda x, k: (take(x, k) ** 2).sum()), "xk"),
        "grad_scatter_add": (api.grad(lambda x, u, i: (lx.scatter_add(x, i, u, sdn) ** 2).sum(), (0, 1)), "xui"),
        "grad_scatter": (api.grad(lambda x, u, i: (lx.scatter(x, i, u, sdn) ** 2).sum(), (0, 1)), "xui"),
        "grad_scatter_unique": (api.grad(lambda x, u, i: (lx.scatter(x, i, u, sdn, unique_indices=True) ** 2).sum(),
                                         (0, 1)), "xui"),
        "grad_scatter_mul": (api.grad(lambda x, u, i: (lx.scatter_mul(x, i, u, sdn, unique_indices=True) ** 2).sum(),
                                      (0, 1)), "xui"),
        "grad_scatter_max": (api.grad(lambda x, u, i: (lx.scatter_max(x, i, u, sdn) ** 2).sum(), (0, 1)), "xui"),
        "grad_mixed": (api.grad(lambda x, u, i: (gather(lx.scatter_add(x, i, u, sdn), i) ** 2).sum()), "xui"),
        "jvp_scatter_sub": (lambda x, u, i: api.jvp(lambda x, u: lx.scatter_sub(x, i, u, sdn), (x, u), (x, u)),
                            "xui"),
        "vmap_gather_operand": (api.vmap(lambda x, i: gather(x, i, mode="clip"), (0, None)), "Xi"),
        "vmap_gather_indices": (api.vmap(lambda x, i: gather(x, i, mode="fill"), (None, 0)), "xI"),
        "vmap_gather_both": (api.vmap(lambda x, i: gather(x, i), (0, 0)), "XI"),
        "vmap_scatter_operand": (api.vmap(lambda x, i, u: lx.scatter_add(x, i, u, sdn), (0, None, 0)), "XiU"),
        "vmap_scatter_indices": (api.vmap(lambda x, i, u: lx.scatter(x, i, u, sdn), (None, 0, None)), "xIu"),
        "vmap_scatter_both": (api.vmap(lambda x, i, u: lx.scatter_min(x, i, u, sdn), (1, 0, 0)), "YIU"),
        "vmap_grad_gather": (api.vmap(api.grad(lambda x, i: gather(x, i).sum()), (0, 0)), "XI"),
    }


_ARGS = {"x": np.linspace(-2, 2, 15, dtype=np.float32).reshape(5, 3), "i": np.array([[1], [3]], np.int32),
         "k": np.array([1, -2], np.int32), "u": np.array([[1, 2, 3], [4, 5, 6]], np.float32),
         "X": np.linspace(-1, 1, 30, dtype=np.float32).reshape(2, 5, 3), "Y": np.ones((5, 2, 3), np.float32),
         "I": np.array([[[0], [4]], [[2], [2]]], np.int32), "U": np.arange(12, dtype=np.float32).reshape(2, 2, 3)}
TEXT_CASES = list(_text_programs(lax, irax))


@pytest.mark.parametrize("name", TEXT_CASES)
def test_make_jaxpr_text_matches_jax(name):
    fn, spec = _text_programs(lax, irax)[name]
    jfn, _ = _text_programs(jax.lax, jax)[name]
    args = [_ARGS[c] for c in spec]
    assert str(irax.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*args))
    for ours, theirs in zip(irax.tree_util.tree_leaves(fn(*args)), jax.tree_util.tree_leaves(jfn(*args))):
        _assert_same(ours, theirs, name)


def test_text_programs_jit():
    """The same programs (derivatives and vmaps included) compiled by IREE, in one module."""
    programs = _text_programs(lax, irax)
    names = [n for n in programs if n not in ("scatters", "grad_scatter")]  # their winners are unspecified

    def everything():
        return [programs[n][0](*[_ARGS[c] for c in programs[n][1]]) for n in names]
    for name, jitted, eager in zip(names, irax.jit(everything)(), everything()):
        for a, b in zip(irax.tree_util.tree_leaves(jitted), irax.tree_util.tree_leaves(eager)):
            _assert_same(a, b, name)


# --- gradients ----------------------------------------------------------------------------------------------------

def _grad_cases():
    """(id, fn(lax, x, u)): each differentiable op in a geometry with overlapping and out-of-bounds indices."""
    cases = []
    for g in GEOMETRIES[:6]:
        for mode in MODES:
            cases.append((f"gather-{g.id}-{mode}", g, lambda lx, x, u, g=g, mode=mode: lx.gather(
                x, g.index_array(), g.gather_dims(lx), g.slice_sizes, mode=mode, fill_value=0)))
            for name in ("scatter_add", "scatter_sub", "scatter_max", "scatter_min"):
                cases.append((f"{name}-{g.id}-{mode}", g, lambda lx, x, u, g=g, mode=mode, name=name: getattr(
                    lx, name)(x, g.index_array(), u, g.scatter_dims(lx), mode=mode)))
            ug = _unique(g)
            for name in ("scatter", "scatter_mul"):
                cases.append((f"{name}-{g.id}-{mode}", ug, lambda lx, x, u, g=ug, mode=mode, name=name: getattr(
                    lx, name)(x, g.index_array(), u, g.scatter_dims(lx), mode=mode, unique_indices=True)))
        cases.append((f"scatter_overlapping-{g.id}", g, lambda lx, x, u, g=g: lx.scatter(
            x, g.index_array(), u, g.scatter_dims(lx))))
    return cases


GRAD_CASES = _grad_cases()


def _grad_args(g):
    rng = np.random.default_rng(3)
    x = rng.standard_normal(g.operand).astype(np.float32)
    u = (rng.standard_normal(g.updates_shape()) + 3).astype(np.float32)  # away from the operand: no max/min ties
    return x, u


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_grad_matches_jax(case):
    name, g, fn = case
    x, u = _grad_args(g)
    w = np.random.default_rng(4).standard_normal(jax.eval_shape(lambda x, u: fn(jax.lax, x, u), x, u).shape)
    w = w.astype(np.float32)

    def loss(lx, api):
        return api.grad(lambda x, u: (fn(lx, x, u) * w).sum(), (0, 1))
    ours, theirs = loss(lax, irax)(x, u), jax.jit(loss(jax.lax, jax))(x, u)  # JAX eager compiles every op
    for a, b in zip(ours, theirs):
        _assert_same(a, b, name)
    # Overlapping scatters, max and min jump where updates tie; promise_in_bounds gradients are wrong out of bounds
    # (JAX's too). JAX's own check_grads fails at second order for some out-of-bounds fill and clip cases.
    if not name.startswith(("scatter_overlapping", "scatter_max", "scatter_min")) and "promise" not in name:
        check_grads(lambda x, u: fn(lax, x, u), (x, u), order=2 if g.id == "rows" else 1, modes=("fwd", "rev"),
                    atol=1e-2, rtol=1e-2)


def test_grad_jit():
    cases = [c for c in GRAD_CASES[::3] if not c[0].startswith("scatter_overlapping")]

    def grads():
        return [irax.grad(lambda x, u, fn=fn: (fn(lax, x, u) ** 2).sum(), (0, 1))(*_grad_args(g))
                for _, g, fn in cases]
    for (name, _, _), jitted, eager in zip(cases, irax.jit(grads)(), grads()):
        for a, b in zip(jitted, eager):
            _assert_same(a, b, name)


def test_scatter_mul_grad_needs_unique_indices():
    sdn = lax.ScatterDimensionNumbers((1,), (0,), (0,))
    i = np.array([[1], [1]], np.int32)
    with pytest.raises(NotImplementedError, match="scatter_mul gradients are only implemented if"):
        irax.grad(lambda u: lax.scatter_mul(np.ones((3, 2), np.float32), i, u, sdn).sum())(np.ones((2, 2), np.float32))


# --- vmap ---------------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("axes", [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, 0), (1, 0, None),
                                  (None, 1, 1)], ids=str)
@pytest.mark.parametrize("name", ["gather", "scatter_add", "scatter"])
def test_vmap_matches_jax(name, axes):
    g = GEOMETRIES[5] if name != "scatter" else _unique(GEOMETRIES[3])
    rng = np.random.default_rng(5)

    def batched(value, axis):
        return value if axis is None else np.stack([value + k for k in range(3)], axis)
    x = batched(rng.standard_normal(g.operand).astype(np.float32), axes[0])
    i = batched(g.index_array(), axes[1]) if name == "scatter" or axes[1] is None else np.stack(
        [np.roll(g.index_array(), k) for k in range(3)], axes[1])
    u = batched(rng.standard_normal(g.updates_shape()).astype(np.float32), axes[2])

    def fn(lx):
        if name == "gather":
            return lambda x, i, u: lx.gather(x, i, g.gather_dims(lx), g.slice_sizes, mode="fill")
        return lambda x, i, u: getattr(lx, name)(x, i, u, g.scatter_dims(lx), mode="fill")
    ours, theirs = irax.vmap(fn(lax), axes), jax.vmap(fn(jax.lax), axes)
    _assert_same(ours(x, i, u), theirs(x, i, u), name)
    assert str(irax.make_jaxpr(ours)(x, i, u)) == str(jax.make_jaxpr(theirs)(x, i, u))
    _assert_same(irax.jit(ours)(x, i, u), theirs(x, i, u), name)


# --- errors -------------------------------------------------------------------------------------------------------

def _bad_gathers(lx):
    x, i = np.ones((5, 3), np.float32), np.ones((2, 1), np.int32)
    dn = lx.GatherDimensionNumbers
    return [
        lambda: lx.gather(x, i, dn((1,), (0,), (0,)), (1, 3, 1)),
        lambda: lx.gather(x, i, dn((1,), (0,), (0,)), (2, 3)),
        lambda: lx.gather(x, i, dn((1, 0), (0,), (0,)), (1, 3)),
        lambda: lx.gather(x, i, dn((1,), (0,), (0, 1)), (1, 3)),
        lambda: lx.gather(x, i, dn((1,), (0,), (5,)), (1, 3)),
        lambda: lx.gather(x, i, dn((3,), (0,), (0,)), (1, 3)),
        lambda: lx.gather(x, i, dn((1,), (4,), (0,)), (1, 3)),
        lambda: lx.gather(x, i, dn((1,), (0,), (0,)), (1, 4)),
        lambda: lx.gather(x, i, dn((1,), (), (0,)), (1, 3)),
        lambda: lx.gather(x, i, dn((1,), (1,), (0,), (0,), (0,)), (1, 1)),
        lambda: lx.gather(x, i.astype(np.float32), dn((1,), (0,), (0,)), (1, 3)),
        lambda: lx.gather(x, i, dn((1,), (0,), (0,)), (1, 3), mode="nearest"),
    ]


def _bad_scatters(lx):
    x, i, u = np.ones((5, 3), np.float32), np.ones((2, 1), np.int32), np.ones((2, 3), np.float32)
    dn = lx.ScatterDimensionNumbers
    return [
        lambda: lx.scatter_add(x, i, np.ones((2, 3, 1), np.float32), dn((1,), (0,), (0,))),
        lambda: lx.scatter_add(x, i, u, dn((1,), (0,), (0, 1))),
        lambda: lx.scatter_add(x, i, u, dn((1,), (), (0,))),
        lambda: lx.scatter_add(x, i, u, dn((1,), (0,), (4,))),
        lambda: lx.scatter_add(x, i, np.ones((2, 4), np.float32), dn((1,), (0,), (0,))),
        lambda: lx.scatter_add(x, i, np.ones((3, 3), np.float32), dn((1,), (0,), (0,))),
        lambda: lx.scatter_add(x, i, u, dn((1,), (3,), (0,))),
        lambda: lx.scatter_add(x, i, u.astype(np.int32), dn((1,), (0,), (0,))),
        lambda: lx.scatter(x, i.astype(np.float32), u, dn((1,), (0,), (0,))),
        lambda: lx.scatter_max(x, i, u, dn((1,), (0,), (0,)), mode="wrap"),
        lambda: lx.scatter_add(x > 0, i, u > 0, dn((1,), (0,), (0,))),
        lambda: lx.scatter_mul(x > 0, i, u > 0, dn((1,), (0,), (0,))),
    ]


@pytest.mark.parametrize("k", range(len(_bad_gathers(jax.lax))))
def test_bad_gather_raises_as_jax(k):
    with pytest.raises((TypeError, ValueError)) as expected:
        _bad_gathers(jax.lax)[k]()
    with pytest.raises(expected.type) as got:
        _bad_gathers(lax)[k]()
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("k", range(len(_bad_scatters(jax.lax))))
def test_bad_scatter_raises_as_jax(k):
    with pytest.raises((TypeError, ValueError)) as expected:
        _bad_scatters(jax.lax)[k]()
    with pytest.raises(expected.type) as got:
        _bad_scatters(lax)[k]()
    assert str(got.value) == str(expected.value)


def test_complex_scatters_under_jit_match_jax():
    """IREE 3.13 wrote two complex scatter-adds into equal zero operands (a complex gather's transpose, taken
    twice) into one buffer, doubling a gradient; a complex pad beside a scatter crashed its compiler."""
    perm = np.array([2, 0, 3, 1], np.int32)
    a = np.arange(16, dtype=np.float32).reshape(4, 4)

    def loss(lib):
        def f(a):
            c = a.astype(np.complex64) * (1 + 2j)
            return (c[perm] * (1 - 1j)).real.sum() + (c[perm] * 1j).imag.sum()
        return f
    np.testing.assert_allclose(irax.jit(irax.grad(loss(irax)))(a), jax.grad(loss(jax))(a))

    def scatters(lib):
        def f(u):
            z = lib.numpy.zeros((4, 4), np.complex64)
            return z.at[perm].add(u) + z.at[perm[::-1]].set(u * 2j) - z.at[perm].add(-u)
        return f
    u = (np.arange(16).reshape(4, 4) * (1 - 0.5j)).astype(np.complex64)
    np.testing.assert_allclose(irax.jit(scatters(irax))(u), jax.jit(scatters(jax))(u))


@pytest.mark.parametrize("method", ["set", "add", "mul", "min", "max"])
def test_whole_operand_updates_compile(method):
    """``x.at[:]`` and ``x.at[...]`` scatter with no index component (IREE rejected the empty dimension map)."""
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 2.5, np.float32)
    want = {"set": y, "add": x + y, "mul": x * y, "min": np.minimum(x, y), "max": np.maximum(x, y)}[method]
    np.testing.assert_array_equal(irax.jit(lambda a, b: getattr(a.at[...], method)(b))(x, y), want)
    np.testing.assert_array_equal(irax.jit(lambda a, b: getattr(a.at[:], method)(b))(x[0], y[0]), want[0])
