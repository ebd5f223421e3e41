"""The smaller ``jax.lax`` functions against JAX: ``tile``, ``unstack`` (also ``stack``'s transpose), ``mulhi``,
``optimization_barrier`` and ``approx_max_k`` / ``approx_min_k`` (primitives: values eagerly and under
``irax.jit``, ``make_jaxpr`` text, gradients, vmap); the compositions ``dtype``, ``broadcast_to_rank``,
``broadcast_like``, ``batch_matmul``, ``collapse``, ``dynamic_index_in_dim``, ``dynamic_update_index_in_dim``,
``index_take``, ``reduce`` (monoids), ``conv_general_dilated_patches`` and the conv shape tuples; ``jnp.tile`` and
``jnp.unstack`` on the primitives, ``jnp.broadcast_to``'s errors, and matmuls of bool operands under ``irax.jit``
(an IREE data-tiling failure worked around in the lowering).
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax import lax as ilax
from irax.config import enable_x64
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
from test_solves import _error, _text  # noqa: E402  (the same comparisons)

_rng = np.random.default_rng(1)
X = _rng.standard_normal((2, 3, 4)).astype(np.float32)
X23 = np.arange(6, dtype=np.float32).reshape(2, 3)
Y = _rng.standard_normal((2, 4, 5)).astype(np.float32)
I23 = np.arange(6, dtype=np.int32).reshape(2, 3)
WIDE = np.random.default_rng(5).standard_normal((3, 3000)).astype(np.float32)  # a 5000 sort: IREE stack limit
M57 = _rng.standard_normal((5, 7)).astype(np.float32)
ZEROS = np.array([1.0, -0.0, 0.0, 2.0], np.float32)
IMG = _rng.standard_normal((2, 3, 5, 6)).astype(np.float32)


def _close(got, want, tol=1e-5):
    got_leaves, want_leaves = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_leaves) == len(want_leaves)
    for g, w in zip(got_leaves, want_leaves):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=tol, atol=tol)


def _same_error(fn, *args):
    mine, theirs = _error(lambda: fn(ilax, inp, *args)), _error(lambda: fn(jax.lax, jnp, *args))
    assert theirs is not None and mine == theirs


# Programs as functions of (lax, numpy module, *args): each compared by text, eagerly and in one jit.
PROGRAMS = [
    ("tile", lambda lax, np_, x: lax.tile(x, (2, 1, 3)), (X,)),
    ("tile_zero", lambda lax, np_, x: lax.tile(x, (1, 0)), (X23,)),
    ("tile_scalar", lambda lax, np_, x: lax.tile(x, ()), (np.float32(2),)),
    ("tile_int", lambda lax, np_, x: lax.tile(x, (2, 2)), (I23,)),
    ("jnp_tile", lambda lax, np_, x: (np_.tile(x, 2), np_.tile(x, (2, 1, 3)), np_.tile(x, ())), (X23,)),
    ("unstack", lambda lax, np_, x: (lax.unstack(x, 1), lax.unstack(x), lax.unstack(x, -1), lax.unstack(x[:, :0]),
                                     np_.unstack(x, axis=1)), (X23,)),
    ("broadcast_to_rank_like", lambda lax, np_, x: (lax.broadcast_to_rank(x, 4), lax.broadcast_to_rank(x, 2),
                                                    lax.broadcast_like(x[0], x)), (X23,)),
    ("barrier", lambda lax, np_, x: lax.optimization_barrier((np_.sin(x), x * 2)), (X23,)),
    ("barrier_one", lambda lax, np_, x: lax.optimization_barrier(x), (I23,)),
    ("approx_max_k", lambda lax, np_, x: lax.approx_max_k(x, 3), (M57,)),
    ("approx_min_k_axis0", lambda lax, np_, x: lax.approx_min_k(x, 2, reduction_dimension=0), (M57,)),
    ("approx_signed_zeros", lambda lax, np_, x: (lax.approx_max_k(x, 3), lax.approx_min_k(x, 2)), (ZEROS,)),
    ("approx_candidates", lambda lax, np_, x: (  # aggregate_to_topk=False: XLA's count of the best, sorted
        lax.approx_max_k(x, 10, aggregate_to_topk=False), lax.approx_min_k(x, 1, aggregate_to_topk=False),
        lax.approx_max_k(x[0], 10, recall_target=0.9, aggregate_to_topk=False),
        lax.approx_max_k(x, 3, reduction_input_size_override=20000, aggregate_to_topk=False),
        lax.approx_min_k(x[:, :100], 5, aggregate_to_topk=False)), (WIDE,)),
    ("batch_matmul", lambda lax, np_, x, y: lax.batch_matmul(x, y, precision="highest"), (X, Y)),
    ("collapse", lambda lax, np_, x: (lax.collapse(x, 1), lax.collapse(x, 0, 2), lax.collapse(x, -2)), (X,)),
    ("dynamic_index", lambda lax, np_, x, i: (lax.dynamic_index_in_dim(x, i, 1),
                                              lax.dynamic_index_in_dim(x, i, -1, False)), (X, np.int32(-1))),
    ("dynamic_index_weak", lambda lax, np_, x, i: lax.dynamic_index_in_dim(x, i, 1, keepdims=False), (X, 2)),
    ("dynamic_update_index", lambda lax, np_, x, u, i: (lax.dynamic_update_index_in_dim(x, u, i, 1),
                                                        lax.dynamic_update_index_in_dim(x, u[:, None], i, 1)),
     (X, np.ones((2, 4), np.float32), np.int32(1))),
    ("index_take", lambda lax, np_, x, i: (lax.index_take(x, (i, i), (0, 1)), lax.index_take(x, (i,), (2,))),
     (X, np.array([0, 1, -1, 5], np.int32))),
    ("reduce_monoids", lambda lax, np_, x, i: (
        lax.reduce(x, 0., lax.add, (0,)), lax.reduce(x, 1., lax.mul, (1,)), lax.reduce(x, -np.inf, lax.max, (0, 1)),
        lax.reduce(x, np.inf, lax.min, (1,)), lax.reduce(i, 0, lax.bitwise_or, (0,)),
        lax.reduce(i, -1, lax.bitwise_and, (1,)), lax.reduce(i % 2 == 0, False, lax.bitwise_xor, (0,)),
        lax.reduce(i, np.iinfo(np.int32).min, lax.max, (1,)), lax.reduce(x, np.float32(0), lax.add, ())),
     (X23, I23)),
    ("patches", lambda lax, np_, x: (lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID"),
                                     lax.conv_general_dilated_patches(x, (2, 2), (2, 1), "SAME", rhs_dilation=(1, 2)),
                                     lax.conv_general_dilated_patches(x, (1, 1), (1, 1), "VALID",
                                                                      precision=lax.Precision.HIGHEST)), (IMG,)),
    ("patches_nhwc", lambda lax, np_, x: lax.conv_general_dilated_patches(
        x, (2, 3), (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")), (np.moveaxis(IMG, 1, -1).copy(),)),
    ("dot_bool_astype", lambda lax, np_, b, f: (b.astype(np_.float32) @ f, b @ f,
                                                lax.dot_general(b, b, (([1], [0]), ([], [])),
                                                                preferred_element_type=np_.int32),
                                                np_.matmul(b, b, preferred_element_type=np_.float32), b @ b),
     (np.ones((3, 3), bool), np.ones((3, 3), np.float32))),
]


@pytest.mark.parametrize("name,fn,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_text_and_eager_values(name, fn, args):
    mine = lambda *xs: fn(ilax, inp, *xs)  # noqa: E731
    theirs = lambda *xs: fn(jax.lax, jnp, *xs)  # noqa: E731
    _text(mine, theirs, *args)
    _close(mine(*args), theirs(*args))


def test_jit_values():
    """Every program in one compiled module."""
    compiled = irax.jit(lambda all_args: [fn(ilax, inp, *a) for (_, fn, _), a in zip(PROGRAMS, all_args)])
    got = compiled([args for _, _, args in PROGRAMS])
    for (name, fn, args), g in zip(PROGRAMS, got):
        _close(g, fn(jax.lax, jnp, *args))


DERIVATIVES = [
    ("tile", lambda lax, np_, x: (lax.tile(x, (2, 3)) ** 2).sum(), (X23,)),
    ("barrier", lambda lax, np_, x: lax.optimization_barrier((np_.sin(x), x))[0].sum(), (X23,)),
    ("unstack", lambda lax, np_, x: sum(t.sum() ** 2 for t in lax.unstack(x, 1)), (X23,)),
    ("stack", lambda lax, np_, x: (lax.stack([x, 2 * x], 1) ** 2).sum(), (X23[0],)),
    ("approx_max_k", lambda lax, np_, x: (lax.approx_max_k(x, 2)[0] ** 2).sum(), (M57,)),
    ("approx_min_k", lambda lax, np_, x: lax.approx_min_k(x, 3, reduction_dimension=0)[0].sum(), (M57,)),
    ("reduce", lambda lax, np_, x: lax.reduce(x * x, 0., lax.add, (0, 1)), (X23,)),
    ("dynamic_index", lambda lax, np_, x: (lax.dynamic_index_in_dim(x, 1, 1) ** 2).sum(), (X,)),
    ("patches", lambda lax, np_, x: (lax.conv_general_dilated_patches(x, (2, 3), (1, 1), "VALID") ** 2).sum(),
     (IMG[:1, :2],)),
]


@pytest.mark.parametrize("name,fn,args", DERIVATIVES, ids=[d[0] for d in DERIVATIVES])
def test_grads(name, fn, args):
    mine = lambda *xs: fn(ilax, inp, *xs)  # noqa: E731
    theirs = lambda *xs: fn(jax.lax, jnp, *xs)  # noqa: E731
    # JAX's approx_top_k JVP also returns a float0 zero for the indices, which irax leaves out; the grouped
    # convolution's transpose writes JAX's reshape with ``dimensions`` as a transpose and a reshape.
    if name not in ("approx_max_k", "patches"):
        _text(irax.grad(mine), jax.grad(theirs), *args)
    want = jax.grad(theirs)(*args)
    _close(irax.grad(mine)(*args), want)
    _close(irax.jit(irax.grad(mine))(*args), want)
    check_grads(mine, args, order=2, modes=["fwd", "rev"], atol=5e-2, rtol=5e-2)


VMAPS = [
    ("tile", lambda lax, np_, x: lax.tile(x, (2,)), 1, (X23,)),
    ("barrier", lambda lax, np_, x: lax.optimization_barrier((x, x[0])), 0, (X23,)),
    ("unstack", lambda lax, np_, x: lax.unstack(x, 0), 1, (X23,)),
    ("approx_min_k_axis0", lambda lax, np_, x: lax.approx_min_k(x, 2, reduction_dimension=0), 1, (M57,)),
    ("approx_max_k", lambda lax, np_, x: lax.approx_max_k(x, 3), 0, (M57,)),
    ("approx_candidates", lambda lax, np_, x: lax.approx_max_k(x, 10, aggregate_to_topk=False), 0, (WIDE,)),
    ("dynamic_index", lambda lax, np_, x, i: lax.dynamic_index_in_dim(x, i, 0, False), 0,
     (X, np.array([0, 2], np.int32))),
]


@pytest.mark.parametrize("name,fn,axis,args", VMAPS, ids=[v[0] for v in VMAPS])
def test_vmap(name, fn, axis, args):
    mine = irax.vmap(lambda *xs: fn(ilax, inp, *xs), axis)
    theirs = jax.vmap(lambda *xs: fn(jax.lax, jnp, *xs), axis)
    _text(mine, theirs, *args)
    _close(irax.jit(mine)(*args), theirs(*args))


ERRORS = [
    lambda lax, np_: lax.tile(X23, (2,)),
    lambda lax, np_: lax.unstack(np.float32(1)),
    lambda lax, np_: lax.approx_max_k(np_.ones(3), 0),
    lambda lax, np_: lax.approx_max_k(np_.ones(3), 9),
    lambda lax, np_: lax.approx_max_k(np_.ones(3, np_.int32), 2),
    lambda lax, np_: lax.approx_max_k(np_.ones(()), 1),
    lambda lax, np_: lax.batch_matmul(X, X[0]),
    lambda lax, np_: lax.batch_matmul(X[0, 0], X[0, 0]),
    lambda lax, np_: lax.collapse(X, 2, 1),
    lambda lax, np_: lax.reduce((X23, X23), (0.,), lax.add, (0,)),
    lambda lax, np_: lax.reduce((X23, X23), 0., lax.add, (0,)),
]


@pytest.mark.parametrize("case", ERRORS)
def test_errors(case):
    _same_error(case)


@pytest.mark.parametrize("shape,to", [((3,), (4,)), ((2, 3), (3,)), ((3,), (2, 4)), ((2, 1), (2, -1)), ((3,), 5),
                                      ((2,), (2.5,))])
def test_broadcast_to_errors(shape, to):
    _same_error(lambda lax, np_: np_.broadcast_to(np_.ones(shape), to))


def test_broadcast_to_values():
    for shape, to in [((1, 3), (0, 3)), ((3,), [2, 3]), ((), ()), ((1,), 4)]:
        _close(inp.broadcast_to(np.ones(shape, np.float32), to), jnp.broadcast_to(np.ones(shape, np.float32), to))


def _general_reductions(lax, np_):
    """(name, function of x) for ``lax.reduce`` of computations that are no monoid (JAX's general ``reduce``)."""
    def argmax(a, b):
        pick = a[0] >= b[0]
        return np_.maximum(a[0], b[0]), np_.where(pick, a[1], b[1])
    return [
        ("add_from_one", lambda x: lax.reduce(x, 1., lax.add, (0,))),
        ("nonassociative", lambda x: lax.reduce(x, np.float32(0.5), lambda a, b: a * 0.5 + np_.sin(b), (1,))),
        ("two_axes", lambda x: lax.reduce(x * x, np.float32(0), lambda a, b: a + b * 2, (0, 2))),
        ("pytree_argmax", lambda x: lax.reduce((x, np_.arange(x.size).reshape(x.shape).astype(np.int32)),
                                               (np.float32(-np.inf), np.int32(0)), argmax, (2,))[0]),
        ("empty_axis", lambda x: lax.reduce(x[:, :0], np.float32(3), lambda a, b: a * b + 1, (1,))),
    ]


@pytest.mark.parametrize("i", range(5), ids=[n for n, _ in _general_reductions(ilax, inp)])
def test_general_reduce_matches_jax(i):
    """Eager (the fold), jitted (stablehlo.reduce calling the computation), make_jaxpr text, vmap, and JAX's JVP
    (a tree reduction of the computation's JVP) against JAX."""
    x = (np.arange(24, dtype=np.float32).reshape(2, 3, 4) - 7) / 5
    name, ours = _general_reductions(ilax, inp)[i]
    theirs = _general_reductions(jax.lax, jnp)[i][1]
    want = theirs(x)
    _close(ours(x), want)
    _close(irax.jit(ours)(x), want)
    if name != "pytree_argmax":  # the arange constant prints as a constvar in JAX, a literal-built op in irax
        assert str(irax.make_jaxpr(ours)(x)) == str(jax.make_jaxpr(theirs)(x))
    stacked = np.stack([x, -x])
    _close(irax.vmap(ours)(stacked), jax.vmap(theirs)(stacked))
    if name == "pytree_argmax":  # JAX's own JVP fails on the integer operand (a float0 Zero reaches reshape)
        return
    t = np.cos(x)
    for got, expect in zip(irax.jvp(ours, (x,), (t,)), jax.jvp(theirs, (x,), (t,))):
        np.testing.assert_allclose(got, expect, rtol=2e-5, atol=2e-5)
    if name != "empty_axis":
        np.testing.assert_allclose(irax.jit(irax.grad(lambda a: ours(a).sum()))(x),
                                   jax.grad(lambda a: theirs(a).sum())(x), rtol=2e-5, atol=2e-5)


def test_empty_matches_jax():
    """``lax.empty``: JAX's primitive and text; its values are undefined, zeros on XLA's CPU as here."""
    for shape, dtype in [((2, 3), "float32"), ((3,), "int32"), ((), "bfloat16")]:  # JAX prints other forms raw
        _close(ilax.empty(shape, dtype), jax.lax.empty(shape, dtype))
        _close(irax.jit(lambda: ilax.empty(shape, dtype))(), jax.jit(lambda: jax.lax.empty(shape, dtype))())
        assert str(irax.make_jaxpr(lambda: ilax.empty(shape, dtype))()) == \
            str(jax.make_jaxpr(lambda: jax.lax.empty(shape, dtype))())


def test_general_reduce_errors_match_jax():
    x = np.ones((2, 3), np.float32)
    with pytest.raises(NotImplementedError, match="non-zero tangents for initial values"):
        irax.jvp(lambda i: ilax.reduce(x, i, lambda a, b: a * b, (0,)), (np.float32(1),), (np.float32(1),))
    weights = inp.arange(3.0)
    with pytest.raises(NotImplementedError, match="closes over arrays"):
        ilax.reduce(x, np.float32(0), lambda a, b: a + b * weights[1], (0,))


def test_conv_shape_tuples():
    cases = [((1, 3, 8, 8), (4, 3, 3, 3), (1, 1), "SAME", ("NCHW", "OIHW", "NCHW")),
             ((1, 8, 8, 3), (3, 3, 3, 4), (2, 1), "VALID", ("NHWC", "HWIO", "NHWC")),
             ((1, 8, 8, 3), (3, 3, 3, 4), (2, 1), ((1, 1), (0, 2)), ("NHWC", "HWIO", "NHWC"))]
    for args in cases:
        assert ilax.conv_general_shape_tuple(*args) == jax.lax.conv_general_shape_tuple(*args)
        assert ilax.conv_transpose_shape_tuple(*args) == jax.lax.conv_transpose_shape_tuple(*args)


def _mulhi_cases(dtypes):
    rng = np.random.default_rng(2)
    cases = []
    for dt in dtypes:
        info = np.iinfo(dt)
        x = rng.integers(info.min, info.max, size=16, dtype=dt, endpoint=True)
        y = rng.integers(info.min, info.max, size=16, dtype=dt, endpoint=True)
        x[:3], y[:3] = [info.min, info.max, 0], [info.min, info.max, info.max]
        cases.append((x, y))
    return cases


def test_mulhi():
    cases = _mulhi_cases([np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32])
    compiled = irax.jit(lambda cs: [ilax.mulhi(x, y) for x, y in cs])(cases)
    for (x, y), got in zip(cases, compiled):
        want = jax.lax.mulhi(x, y)
        _close(ilax.mulhi(x, y), want)
        _close(got, want)
    _text(ilax.mulhi, jax.lax.mulhi, *cases[4])
    _text(irax.vmap(ilax.mulhi, (0, None)), jax.vmap(jax.lax.mulhi, (0, None)), np.stack(cases[4]), cases[4][1])
    (x, y) = cases[4]
    xs, ys = np.stack([x, x[::-1]]), np.stack([y, y[::-1]])
    for axes in [(0, 0), (1, 0), (0, None)]:
        got = irax.jit(irax.vmap(ilax.mulhi, axes))(np.moveaxis(xs, 0, axes[0]), ys if axes[1] == 0 else ys[0])
        want = [jax.lax.mulhi(x, y if axes[1] == 0 else ys[0]) for x, y in zip(xs, ys)]
        _close(got, np.stack(want))
    for x, y in [(np.ones(3, np.uint32), 7), (np.ones(3, np.float32), np.ones(3, np.float32))]:
        assert type(_error(ilax.mulhi, x, y)[0]) is type(_error(jax.lax.mulhi, x, y)[0])


def test_mulhi_64_bit():
    """The 32-bit split of 64-bit products, against Python's integers."""
    with enable_x64():
        cases = _mulhi_cases([np.int64, np.uint64])
        compiled = irax.jit(lambda cs: [ilax.mulhi(x, y) for x, y in cs])(cases)
        for (x, y), got in zip(cases, compiled):
            want = np.array([(int(a) * int(b)) >> 64 for a, b in zip(x, y)], x.dtype)
            np.testing.assert_array_equal(np.asarray(ilax.mulhi(x, y)), want)
            np.testing.assert_array_equal(np.asarray(got), want)


def test_dtype():
    for x in [1.0, 1, True, 1j, np.float64(1), np.ones(2, np.int64), np.ones(2, np.uint8), jnp.ones(2, jnp.bfloat16)]:
        assert ilax.dtype(x) == jax.lax.dtype(x)


def test_reverse_of_a_strided_slice_compiles():
    """IREE failed to compile a reverse fused with a strided slice (JAX's dct takes one)."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    got = irax.jit(lambda a: (irax.lax.rev(a[1::2], (0,)), irax.lax.rev(a[::3, 1::2], (0, 1))))(x)
    np.testing.assert_array_equal(got[0], x[1::2][::-1])
    np.testing.assert_array_equal(got[1], x[::3, 1::2][::-1, ::-1])


def test_conj_of_real_and_complex_operands_as_jax():
    """``conj`` records its input dtype and takes real operands (a complex result), as JAX's."""
    jax = pytest.importorskip("jax")
    x, z = np.array([1.0, -2.0], np.float32), np.array([1 + 2j, -3j], np.complex64)

    def run(M, jnp):
        return {"real_text": str(M.make_jaxpr(M.lax.conj)(x)), "complex_text": str(M.make_jaxpr(jnp.conjugate)(z)),
                "grad_text": str(M.make_jaxpr(M.grad(lambda a: M.lax.conj(a).real.sum()))(x)),
                "vjp_text": str(M.make_jaxpr(M.vjp(M.lax.conj, z)[1])(z)),
                "eager": M.lax.conj(x), "jit": M.jit(M.lax.conj)(x), "jit_complex": M.jit(jnp.conj)(z),
                "grad": M.grad(lambda a: (M.lax.conj(a) * 3).real.sum())(x)}
    ours, theirs = run(irax, inp), run(jax, jax.numpy)
    for name, want in theirs.items():
        if isinstance(want, str):
            assert ours[name] == want, name
        else:
            assert ours[name].dtype == want.dtype, name
            np.testing.assert_array_equal(ours[name], want, err_msg=name)
    with pytest.raises(TypeError, match="conj does not accept dtype float16. Accepted dtypes are subtypes of "
                                        "float32, complexfloating, float64."):
        irax.lax.conj(np.ones(2, np.float16))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
def test_trigonometry_of_large_and_tiny_arguments(dtype):
    """Float32 sin, cos and tan within a few ulp to |x| = 1e4 and close beyond, with signed zeros (IREE's own
    reduce by one float32 pi: sin(1e4) was off by 2.5e-4 and sin(1e10) gave -6e21)."""
    fns = irax.jit(lambda v: (irax.lax.sin(v), irax.lax.cos(v), irax.lax.tan(v)))
    x = np.concatenate([np.linspace(-1e4, 1e4, 20001), [-3.1415927, 1.5707964, 1e5, -1e6, 1e8, 1e10, 8.7e-8]])
    x = x[np.abs(x) < np.finfo(dtype).max].astype(dtype)
    exact = np.sin(x.astype(np.float64)), np.cos(x.astype(np.float64)), np.tan(x.astype(np.float64))
    for got, want, name in zip(fns(x), exact, ("sin", "cos", "tan")):
        got = np.asarray(got, np.float64)
        scale = np.maximum(np.abs(want), 1.0 if name == "tan" else 2.0 ** -20)
        small = np.abs(x) <= (1e4 if dtype == np.float32 else 65504)
        ulps = np.abs(got - want) / scale / np.finfo(dtype).eps
        assert ulps[small].max() <= 4, (name, x[small][ulps[small].argmax()])
        assert np.all(np.abs(got[~small] - want[~small]) <= 1e-2 * np.maximum(np.abs(want[~small]), 1)), name
    zeros = np.array([0.0, -0.0, np.inf, np.nan], dtype)
    s, c, t = (np.asarray(v) for v in fns(zeros))
    assert list(np.signbit(s[:2])) == list(np.signbit(t[:2])) == [False, True] and list(c[:2]) == [1, 1]
    assert np.isnan(s[2:]).all() and np.isnan(c[2:]).all() and np.isnan(t[2:]).all()


def test_platform_dependent_runs_the_branch_of_this_platform_as_jax():
    def program(lax):
        return lambda x: lax.platform_dependent(x, cpu=lambda x: x * 2, cuda=lambda x: x * 5, default=lambda x: x * 3)
    for fn, jfn in ((program(irax.lax), program(jax.lax)), (irax.jit(program(irax.lax)), jax.jit(program(jax.lax)))):
        assert float(fn(np.float32(1.5))) == float(jfn(np.float32(1.5))) == 3.0
    assert float(irax.lax.platform_dependent(1.0, tpu=lambda x: x, default=lambda x: x - 1)) == 0.0


def _per_platform(lax, jnp):
    return lambda x: lax.platform_dependent(x, default=jnp.sin, mosaic=lambda x: jnp.cos(x) * x, cpu=jnp.tanh,
                                            cuda=jnp.tanh)


def test_platform_dependent_traces_jaxs_platform_index_and_cond():
    """Traced, every branch is staged under a cond on platform_index (JAX's jaxpr, through grad and vmap too); the
    values are the CPU branch's, eager, jitted, differentiated and batched."""
    x = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    fn, jfn = _per_platform(irax.lax, irax.numpy), _per_platform(jax.lax, jax.numpy)
    def grad_of(grad):
        return lambda f: grad(lambda x: f(x).sum())
    for transform, jtransform in ((lambda f: f, lambda f: f), (irax.vmap, jax.vmap),
                                  (grad_of(irax.grad), grad_of(jax.grad))):
        assert str(irax.make_jaxpr(transform(fn))(x)) == str(jax.make_jaxpr(jtransform(jfn))(x))
        expected = jtransform(jfn)(x)
        for run in (transform(fn), irax.jit(transform(fn))):
            np.testing.assert_allclose(run(x), expected, rtol=1e-6)
    assert "stablehlo.case" not in irax.jit(fn).lower(x).as_text(dialect="stablehlo")  # lowered: CPU's branch alone


def test_a_platform_index_without_this_platforms_branch_fails_when_lowered():
    traced = irax.make_jaxpr(lambda x: irax.lax.platform_dependent(x, tpu=lambda x: x + 1))(1.0)
    assert "platform_index[platforms=(('tpu',),)]" in str(traced)
    with pytest.raises(NotImplementedError, match=r"platform_index\(platforms=\(\('tpu',\),\)\)' not found"):
        irax.jit(lambda x: irax.lax.platform_dependent(x, tpu=lambda x: x + 1))(1.0)


@pytest.mark.parametrize("kwargs,error,message", [
    ({"tpu": lambda x: x}, NotImplementedError, r"platform_index\(platforms=\(\('tpu',\),\)\)' not found for platform"),
    ({"gpu": lambda x: x}, ValueError, "Use 'cuda' or 'rocm'"),
    ({"cpu": 3}, TypeError, "the 'cpu' branch must be a callable"),
    ({"default": 3}, TypeError, "the 'default' branch must be a callable"),
], ids=["no_branch", "gpu", "not_callable", "default_not_callable"])
def test_platform_dependent_bad_input_raises_as_jax(kwargs, error, message):
    for lax in (irax.lax, jax.lax):
        with pytest.raises(error, match=message):
            lax.platform_dependent(1.0, **kwargs)
