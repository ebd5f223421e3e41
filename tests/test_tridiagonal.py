"""``lax.linalg.tridiagonal_solve`` (LAPACK gtsv's elimination with row interchanges; jaxlib's perturbed kernel with
``perturb_singular``) and ``scipy.linalg.eigh_tridiagonal``'s eigenvectors (inverse iteration on it), against JAX:
values eagerly (bit for bit with JAX's CPU kernels) and under ``irax.jit``, batched, empty, one and two rows, rows
needing interchanges, singular systems (NaN, or finite when perturbed), NaN and inf, float64 and complex;
``make_jaxpr`` texts of the op, its JVP, gradient and batching; gradients; vmap against stacking; JAX's errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.scipy.linalg as isl
from irax.config import enable_x64
from irax.lax.linalg import tridiagonal_solve
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.scipy.linalg as jsl  # noqa: E402
from jax.lax.linalg import tridiagonal_solve as jax_tridiagonal_solve  # noqa: E402

_rng = np.random.default_rng(0)


def _system(batch, n, k, dtype=np.float32, rounded=False):
    """``(dl, d, du, b)``; ``rounded`` draws small integers, so that exact zero pivots and ties occur."""
    def draw(*shape):
        x = _rng.standard_normal(shape)
        if rounded:
            x = np.round(x)
        if np.issubdtype(dtype, np.complexfloating):
            x = x + 1j * _rng.standard_normal(shape)
        return x.astype(dtype)
    return draw(*batch, n), draw(*batch, n), draw(*batch, n), draw(*batch, n, k)


def _shifted_by_eigenvalues(n):
    """A symmetric tridiagonal matrix shifted by each of its eigenvalues: numerically singular systems, as inverse
    iteration solves them."""
    d, e = _rng.standard_normal(n).astype(np.float32), _rng.standard_normal(n - 1).astype(np.float32)
    w = np.linalg.eigvalsh(np.diag(d) + np.diag(e, 1) + np.diag(e, -1)).astype(np.float32)
    dl, du = np.broadcast_to(np.pad(e, (1, 0)), (n, n)), np.broadcast_to(np.pad(e, (0, 1)), (n, n))
    return np.ascontiguousarray(dl), d[None, :] - w[:, None], np.ascontiguousarray(du), \
        _rng.standard_normal((n, n, 1)).astype(np.float32)


_PIVOTING = _system((), 4, 2)
_PIVOTING[1][0] = 0.0  # the first pivot is zero: gtsv swaps the first two rows
_ZERO = tuple(np.zeros(s, np.float32) for s in ((2, 3), (2, 3), (2, 3), (2, 3, 2)))
_NAN = tuple(np.where(np.arange(4) == 1, np.nan, x) if x.ndim == 1 else x for x in _system((), 4, 1))
_INF = tuple(np.where(np.arange(4) == 2, np.inf, x) if x.ndim == 1 else x for x in _system((), 4, 1))

# (id, arguments, perturb_singular)
CASES = [
    ("f32", _system((), 6, 2), False),
    ("batched", _system((2, 3), 5, 3), False),
    ("rounded_batch", _system((16,), 5, 2, rounded=True), False),
    ("complex64", _system((2,), 5, 2, np.complex64), False),
    ("one_row", _system((3,), 1, 2), False),
    ("two_rows", _system((2,), 2, 1, np.complex64), False),
    ("no_rows", _system((2,), 0, 3), False),
    ("no_columns", _system((2,), 3, 0), False),
    ("no_systems", _system((0,), 3, 2), False),
    ("needs_interchange", _PIVOTING, False),
    ("singular_is_nan", _ZERO, False),
    ("nan", _NAN, False),
    ("inf", _INF, False),
    ("perturbed", _system((2,), 6, 2), True),
    ("perturbed_rounded", _system((16,), 5, 2, rounded=True), True),
    ("perturbed_zero", _ZERO, True),
    ("perturbed_shifted", _shifted_by_eigenvalues(7), True),
    ("perturbed_one_row", (np.zeros((2, 1), np.float32),) * 3 + (np.ones((2, 1, 2), np.float32),), True),
    ("perturbed_complex", _system((2,), 4, 2, np.complex64, rounded=True), True),
]


def _solve(perturb):
    return lambda *args: tridiagonal_solve(*args, perturb_singular=perturb)


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_eager_is_jax_s_kernel_bit_for_bit(case):
    """Real systems bit for bit; complex ones to rounding (LAPACK divides complex numbers its own way)."""
    _, args, perturb = case
    want = np.asarray(jax_tridiagonal_solve(*args, perturb_singular=perturb))
    got = _solve(perturb)(*args)
    assert got.shape == want.shape and got.dtype == want.dtype
    if np.iscomplexobj(want):
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(np.asarray(got), want)


def _directions(x):
    """Each solution column over its norm, its sign fixed by its largest entry: the perturbed solutions of
    singular systems are huge, and how huge (and their sign) hangs on the rounding of a tiny pivot."""
    x = np.moveaxis(np.asarray(x), -1, -2)
    x = x / np.linalg.norm(x, axis=-1, keepdims=True)
    big = np.take_along_axis(x, np.argmax(np.abs(x), axis=-1)[..., None], -1)
    return x * np.conj(big / np.abs(big))


# Compiled for a subset (each case is a module of its own: a few seconds of IREE's time).
JIT_CASES = [c for c in CASES if c[0] in {"batched", "two_rows", "one_row", "no_rows", "needs_interchange",
                                          "singular_is_nan", "perturbed_shifted", "perturbed_one_row",
                                          "perturbed_complex"}]


@pytest.mark.parametrize("case", JIT_CASES, ids=[c[0] for c in JIT_CASES])
def test_jit_matches_eager(case):
    name, args, perturb = case
    got, want = irax.jit(_solve(perturb))(*args), _solve(perturb)(*args)
    if name == "perturbed_shifted":
        np.testing.assert_allclose(_directions(got), _directions(want), atol=1e-4)
        return
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=2e-5, atol=1e-5, equal_nan=True)


def test_float64_under_x64():
    with enable_x64():
        jax.config.update("jax_enable_x64", True)
        try:
            for perturb in (False, True):
                args = _system((3,), 5, 2, np.float64, rounded=True)
                want = np.asarray(jax_tridiagonal_solve(*args, perturb_singular=perturb))
                np.testing.assert_array_equal(np.asarray(_solve(perturb)(*args)), want)
                np.testing.assert_allclose(np.asarray(irax.jit(_solve(perturb))(*args)), want, rtol=1e-12)
        finally:
            jax.config.update("jax_enable_x64", False)


# --- jaxpr texts, gradients, vmap --------------------------------------------------------------------------------

_X, _B = np.ones(3, np.float32), np.ones((3, 2), np.float32)


def _grad(solve):
    return lambda *args: solve(*args).sum()


TEXT_CASES = [
    ("op", lambda m, s: s, (_X, _X, _X, _B)),
    ("perturbed", lambda m, s: lambda *a: s(*a, perturb_singular=True), (_X, _X, _X, _B)),
    ("jvp", lambda m, s: lambda p, t: m.jvp(s, p, t), ((_X, _X, _X, _B),) * 2),
    ("jvp_batched", lambda m, s: lambda p, t: m.jvp(s, p, t), ((_X[None], _X[None], _X[None], _B[None]),) * 2),
    ("jvp_of_b", lambda m, s: lambda p, t: m.jvp(lambda b: s(_X, _X, _X, b), (p,), (t,)), (_B, _B)),
    ("grad", lambda m, s: m.grad(_grad(s), argnums=(0, 1, 2, 3)), (_X, _X, _X, _B)),
    ("vmap_b", lambda m, s: m.vmap(s, in_axes=(None, None, None, 1)), (_X, _X, _X, np.ones((3, 4, 2), np.float32))),
    ("vmap_dl", lambda m, s: m.vmap(s, in_axes=(0, None, None, 1)),
     (np.ones((4, 3), np.float32), _X, _X, np.ones((3, 4, 2), np.float32))),
]


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_jaxpr_text_matches_jax(case):
    _, fn, args = case
    want = str(jax.make_jaxpr(fn(jax, jax_tridiagonal_solve))(*args))
    assert str(irax.make_jaxpr(fn(irax, tridiagonal_solve))(*args)) == want


_DOMINANT = _system((2,), 4, 2)
_DOMINANT[1][...] += 4.0  # diagonally dominant: well conditioned, finite differences are accurate


def test_grads_check_and_match_jax():
    check_grads(tridiagonal_solve, _DOMINANT, order=2, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
    weights = _rng.standard_normal(_DOMINANT[3].shape).astype(np.float32)
    argnums = (0, 1, 2, 3)
    want = jax.grad(lambda *a: (jax_tridiagonal_solve(*a) * weights).sum(), argnums)(*_DOMINANT)
    loss = irax.grad(lambda *a: (tridiagonal_solve(*a) * weights).sum(), argnums)
    for got in (loss(*_DOMINANT), irax.jit(loss)(*_DOMINANT)):
        for g, w in zip(got, want):
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("in_axes", [(None, None, None, 1), (0, None, 0, 0), (1, 1, 1, 2)], ids=str)
def test_vmap_matches_stacking(in_axes):
    args = _system((), 4, 2)
    args = [x if ax is None else np.stack([x * (i + 1) for i in range(3)], ax) for x, ax in zip(args, in_axes)]
    out = irax.vmap(tridiagonal_solve, in_axes=in_axes)(*args)
    for i in range(3):
        one = [x if ax is None else np.take(x, i, ax) for x, ax in zip(args, in_axes)]
        np.testing.assert_allclose(np.asarray(out[i]), np.asarray(tridiagonal_solve(*one)), rtol=1e-6)


# --- errors ------------------------------------------------------------------------------------------------------

_V3, _M32 = np.ones(3, np.float32), np.ones((3, 2), np.float32)
ERROR_CASES = [
    ("b_a_vector", (_V3, _V3, _V3, _V3)),
    ("scalar_diagonal", (np.float32(1), _V3, _V3, _M32)),
    ("short_dl", (_V3[:2], _V3, _V3, _M32)),
    ("short_b", (_V3, _V3, _V3, _M32[:2])),
    ("integer", (np.ones(3, np.int32),) * 3 + (np.ones((3, 2), np.int32),)),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_as_jax(case):
    _, args = case
    with pytest.raises(TypeError) as theirs:
        jax_tridiagonal_solve(*args)
    with pytest.raises(TypeError) as mine:
        tridiagonal_solve(*args)
    assert str(mine.value) == str(theirs.value)


def test_batch_mismatch_names_the_batch_dimensions():
    """JAX fails inside its sharding rule here ("Batching dimension 0_0 corresponds to two sizes"); irax says
    what its other decompositions say."""
    with pytest.raises(TypeError, match=r"All inputs to tridiagonal_solve must have the same batch dimensions, "
                                        r"but got \[\(2,\), \(2,\), \(2,\), \(3,\)\]"):
        tridiagonal_solve(*(np.ones((2, 3), np.float32),) * 3, np.ones((3, 3, 2), np.float32))


def test_mixed_dtypes_and_half_precision_as_jax():
    with enable_x64():
        with pytest.raises(TypeError, match="lax.tridiagonal_solve requires arguments to have the same dtypes, got "
                                            "float32, float32, float64, float32."):
            tridiagonal_solve(_V3, _V3, _V3.astype(np.float64), _M32)
    half = (_V3.astype(np.float16),) * 3 + (_M32.astype(np.float16),)
    for solve in (tridiagonal_solve, irax.jit(tridiagonal_solve)):
        with pytest.raises(NotImplementedError, match="Unsupported dtype float16."):
            solve(*half)
    assert "tridiagonal_solve" in str(irax.make_jaxpr(tridiagonal_solve)(*half))


# --- eigh_tridiagonal's eigenvectors -----------------------------------------------------------------------------

def _tridiagonal(d, e):
    return np.diag(d) + np.diag(e, 1) + np.diag(np.conj(e), -1)


EIGH_CASES = [
    ("n1", np.array([2.0], np.float32), np.zeros(0, np.float32), {}),
    ("n2", np.array([1.0, -1.0], np.float32), np.array([0.5], np.float32), {}),
    ("n8", _rng.standard_normal(8).astype(np.float32), _rng.standard_normal(7).astype(np.float32), {}),
    ("cluster", np.array([1, 1, 1, 2, 2], np.float32), np.array([0, 0, 1e-8, 0], np.float32), {}),
    ("select_i", _rng.standard_normal(6).astype(np.float32), _rng.standard_normal(5).astype(np.float32),
     {"select": "i", "select_range": (1, 3)}),
    ("hermitian", _rng.standard_normal(5).astype(np.complex64),
     (_rng.standard_normal(4) + 1j * _rng.standard_normal(4)).astype(np.complex64), {}),
    ("key", _rng.standard_normal(6).astype(np.float32), _rng.standard_normal(5).astype(np.float32),
     {"key": 7}),
]


@pytest.mark.parametrize("case", EIGH_CASES, ids=[c[0] for c in EIGH_CASES])
def test_eigh_tridiagonal_eigenvectors(case):
    name, d, e, kw = case
    mine = dict(kw, key=irax.random.key(kw["key"])) if "key" in kw else kw
    theirs = dict(kw, key=jax.random.key(kw["key"])) if "key" in kw else kw
    w_want, v_want = jsl.eigh_tridiagonal(d, e, **theirs)
    t = _tridiagonal(np.real(d) if np.iscomplexobj(d) else d, e)
    results = [isl.eigh_tridiagonal(d, e, **mine)]
    if name in ("n8", "hermitian"):  # compiled for two cases: the bisection and inverse iteration take seconds
        results.append(irax.jit(lambda d, e: isl.eigh_tridiagonal(d, e, **mine))(d, e))
    for w, v in results:
        w, v = np.asarray(w), np.asarray(v)
        assert w.dtype == w_want.dtype and v.shape == v_want.shape and v.dtype == v_want.dtype
        np.testing.assert_allclose(w, w_want, atol=1e-5)
        np.testing.assert_allclose(t @ v, v * w, atol=1e-4)
        np.testing.assert_allclose(v.conj().T @ v, np.eye(v.shape[1]), atol=1e-5)
        if name != "cluster":  # a cluster's vectors are any basis of its space
            np.testing.assert_allclose(_directions(v), _directions(v_want), atol=1e-4)
    if name not in ("cluster", "hermitian"):  # eagerly, JAX's vectors themselves (a complex phase is rounding's)
        np.testing.assert_allclose(np.asarray(isl.eigh_tridiagonal(d, e, **mine)[1]), v_want, atol=1e-5)
