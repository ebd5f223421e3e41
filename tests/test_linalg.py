"""The linear-algebra primitives (``cholesky``, ``triangular_solve``, ``lu``, ``lu_pivots_to_permutation``,
``symmetric_product``, ``householder_product``, ``hessenberg``, ``geqrf``, ``ormqr``) and ``jnp.linalg`` /
``scipy.linalg`` on them, against JAX: values eagerly (NumPy rules) and under ``irax.jit`` (IREE's while loops),
batched, empty and 1x1 matrices, NaN where JAX gives NaN, ``make_jaxpr`` text, gradients (``check_grads`` and
``jax.grad``), vmap against stacking, JAX's errors, and a Gaussian-process posterior as one program."""
from __future__ import annotations


import numpy as np
import pytest

import irax
import irax.numpy as inp
import irax.scipy.linalg as isl
from irax import lax as ilax
from irax.config import enable_x64
from irax.test_util import check_grads

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402

_rng = np.random.default_rng(0)


def _spd(*shape):
    a = _rng.standard_normal(shape).astype(np.float32)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1], dtype=np.float32)).astype(np.float32)


def _tri(*shape, lower=True):
    a = _rng.standard_normal(shape).astype(np.float32) + 3 * np.eye(shape[-1], dtype=np.float32)
    return np.tril(a) if lower else np.triu(a)


A4 = _rng.standard_normal((4, 4)).astype(np.float32)
A3B = _rng.standard_normal((2, 3, 3)).astype(np.float32)
S4, S3B = _spd(4, 4), _spd(2, 3, 3)
L4, U4 = _tri(4, 4), _tri(4, 4, lower=False)
B42, V4 = _rng.standard_normal((4, 2)).astype(np.float32), _rng.standard_normal(4).astype(np.float32)
B3B = _rng.standard_normal((2, 3, 2)).astype(np.float32)
R34 = _rng.standard_normal((3, 4)).astype(np.float32)
C3B = (A3B + 1j * np.swapaxes(A3B, -1, -2)).astype(np.complex64)
CB3B = (B3B - 1j * B3B[::-1]).astype(np.complex64)
E0, ONE = np.zeros((2, 0, 0), np.float32), np.full((1, 1), 2.5, np.float32)
NOT_PD = np.array([[1.0, 2.0], [2.0, 1.0]], np.float32)
SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]], np.float32)
# geqrf's reflectors and scale factors (JAX's), for ormqr: a real 4x3 and a complex batch of 3x3
(H43, T3), (HC3B, TC3B) = ((np.swapaxes(np.asarray(h), -1, -2), np.asarray(t))
                           for h, t in (jnp.linalg.qr(A4[:, :3], mode="raw"), jnp.linalg.qr(C3B, mode="raw")))


class _Numpy:
    """``jnp`` with ``linalg`` functions (``cholesky``, ``lu``) at the top, for cases that mix them."""

    def __init__(self, np_, lax_):
        self.np, self.lax = np_, lax_

    def __getattr__(self, name):
        if name in ("cholesky", "lu"):
            return getattr(self.np.linalg if name == "cholesky" else self.lax.linalg, name)
        return getattr(self.np, name)


def _modules(kind):
    """irax's and JAX's module of one family."""
    if kind == "jnp":
        return _Numpy(inp, ilax), _Numpy(jnp, jax.lax)
    return {"lax": (ilax.linalg, jax.lax.linalg), "scipy": (isl, jsl)}[kind]


# (id, family, fn(module, *arrays), arrays)
CASES = [
    ("cholesky", "lax", lambda m, x: m.cholesky(x), (S4,)),
    ("cholesky_batched", "lax", lambda m, x: m.cholesky(x), (S3B,)),
    ("cholesky_lower_only", "lax", lambda m, x: m.cholesky(x, symmetrize_input=False),
     (np.tril(S4) + 7 * np.triu(A4, 1),)),
    ("cholesky_not_pd", "lax", lambda m, x: m.cholesky(x), (NOT_PD,)),
    ("cholesky_empty", "lax", lambda m, x: m.cholesky(x), (E0,)),
    ("cholesky_1x1", "lax", lambda m, x: m.cholesky(x), (ONE,)),
    ("ts_left_lower", "lax", lambda m, a, b: m.triangular_solve(a, b, left_side=True, lower=True), (L4, B42)),
    ("ts_left_upper_t", "lax", lambda m, a, b: m.triangular_solve(a, b, left_side=True, lower=False,
                                                                  transpose_a=True), (U4, B42)),
    ("ts_right_lower_unit", "lax", lambda m, a, b: m.triangular_solve(a, b, lower=True, unit_diagonal=True),
     (L4, B42.T.copy())),
    ("ts_right_upper_t", "lax", lambda m, a, b: m.triangular_solve(a, b, transpose_a=True), (U4, B42.T.copy())),
    ("ts_vector", "lax", lambda m, a, b: m.triangular_solve(a, b, left_side=True, lower=True), (L4, V4)),
    ("ts_batched", "lax", lambda m, a, b: m.triangular_solve(a, b, left_side=True, lower=True),
     (np.tril(S3B), B3B)),
    ("ts_zero_pivot", "lax", lambda m, a, b: m.triangular_solve(a, b, left_side=True, lower=True),
     (np.tril(NOT_PD) * np.array([[0.0], [1.0]], np.float32), np.ones((2, 1), np.float32))),
    ("lu", "lax", lambda m, x: m.lu(x), (A4,)),
    ("lu_batched", "lax", lambda m, x: m.lu(x), (A3B,)),
    ("lu_wide", "lax", lambda m, x: m.lu(x), (R34,)),
    ("lu_tall", "lax", lambda m, x: m.lu(x), (R34.T.copy(),)),
    ("lu_singular", "lax", lambda m, x: m.lu(x), (SINGULAR,)),
    ("lu_empty", "lax", lambda m, x: m.lu(x), (E0,)),
    ("lu_pivots_to_permutation", "lax", lambda m, p, q: (m.lu_pivots_to_permutation(p, 5),
                                                         m.lu_pivots_to_permutation(q, 3)),
     (np.array([[2, -1, 7, 3], [0, 1, 2, 3]], np.int32), np.array([-7, 3, 0], np.int32))),
    ("lu_pivots_to_permutation_empty", "lax", lambda m, p, q: (m.lu_pivots_to_permutation(p, 2),
                                                               m.lu_pivots_to_permutation(q, 0)),
     (np.zeros((3, 0), np.int32), np.zeros((0, 0), np.int32))),
    ("symmetric_product", "lax", lambda m, a, c, ah, ch: (
        m.symmetric_product(a, c, alpha=2.0, beta=0.5), m.symmetric_product(a, c, symmetrize_output=True),
        m.symmetric_product(ah, ch, alpha=-1.5)),
     (A3B[..., :2], A3B, A4.astype(np.float16), S4.astype(np.float16))),
    ("householder_product", "lax", lambda m, a, t, c, u: (m.householder_product(a, t), m.householder_product(c, u),
                                                          m.householder_product(a, t[:0])),
     (A4[:, :3], V4[:2], C3B, CB3B[..., 0])),
    ("hessenberg", "lax", lambda m, a, c: (m.hessenberg(a), m.hessenberg(c), m.hessenberg(ONE)), (A4, C3B)),
    ("scipy_hessenberg", "scipy", lambda m, a, c: (m.hessenberg(a), m.hessenberg(c, calc_q=True),
                                                   m.hessenberg(np.zeros((0, 0), np.float32), calc_q=True)),
     (A4, C3B)),
    ("qr_pivoting", "lax", lambda m, a, w, c: (m.qr(a, pivoting=True), m.qr(a, pivoting=True, full_matrices=False),
                                               m.qr(w, pivoting=True), m.qr(c, pivoting=True),
                                               m.qr(a[:0], pivoting=True)), (A4[:, :3], R34, C3B)),
    ("qr_raw", "jnp", lambda m, a, w, c: tuple(m.linalg.qr(x, mode="raw") for x in (a, w, c, a[:0])),
     (A4[:, :3], R34, C3B)),
    ("ormqr", "lax", lambda m, h, t, b, hc, tc, bc: (
        m.ormqr(h, t, b), m.ormqr(h, t, b, transpose=True), m.ormqr(h, t, b.T, left=False),
        m.ormqr(h, t[:2], b.T, left=False, transpose=True), m.ormqr(hc, tc, bc, transpose=True),
        m.ormqr(hc, tc, np.swapaxes(bc, -1, -2), left=False)), (H43, T3, B42, HC3B, TC3B, CB3B)),
    ("tridiagonal", "lax", lambda m, a, c: (m.tridiagonal(a), m.tridiagonal(a, lower=False), m.tridiagonal(c),
                                            m.tridiagonal(c, lower=False), m.tridiagonal(ONE)), (A4, C3B)),
    ("cholesky_update", "lax", lambda m, r, w: (m.cholesky_update(r, w), m.cholesky_update(r, 0 * w)),
     (np.triu(U4), V4)),
    ("jnp_cholesky_upper", "jnp", lambda m, x: m.linalg.cholesky(x, upper=True), (S3B,)),
    ("solve", "jnp", lambda m, a, b: m.linalg.solve(a, b), (A4, B42)),
    ("solve_vector", "jnp", lambda m, a, b: m.linalg.solve(a, b), (A4, V4)),
    ("solve_broadcast", "jnp", lambda m, a, b: m.linalg.solve(a, b), (A3B, B3B[0])),
    ("solve_singular", "jnp", lambda m, a, b: m.linalg.solve(a, b),
     (np.array([[1, 2], [2, 4]], np.float32), np.ones(2, np.float32))),
    ("inv", "jnp", lambda m, a: m.linalg.inv(a), (A3B,)),
    ("inv_1x1", "jnp", lambda m, a: m.linalg.inv(a), (ONE,)),
    ("det", "jnp", lambda m, a: m.linalg.det(a), (A4,)),
    ("det_small", "jnp", lambda m, a, b: (m.linalg.det(a), m.linalg.det(b[:, :2, :2])), (A3B, A3B)),
    ("det_singular", "jnp", lambda m, a: m.linalg.det(a), (np.stack([SINGULAR[[0, 1, 2, 2]][:, [0, 1, 2, 0]]] * 2),)),
    ("det_empty", "jnp", lambda m, a: m.linalg.det(a), (E0,)),
    ("slogdet", "jnp", lambda m, a: tuple(m.linalg.slogdet(a)), (A3B,)),
    ("slogdet_singular", "jnp", lambda m, a: tuple(m.linalg.slogdet(a)), (SINGULAR,)),
    ("matrix_power", "jnp", lambda m, a: tuple(m.linalg.matrix_power(a, n) for n in (5, -2, 0, 1, 3)), (A3B,)),
    ("norm", "jnp", lambda m, a, v: (m.linalg.norm(a), m.linalg.norm(a, 1, axis=(1, 2)),
                                     m.linalg.norm(a, -np.inf, axis=(2, 1)),
                                     m.linalg.norm(a, "fro", axis=(1, 2), keepdims=True), m.linalg.norm(v, 3),
                                     m.linalg.norm(v, 0), m.linalg.norm(v, -np.inf), m.linalg.norm(a, axis=1)),
     (A3B, V4)),
    ("array_api", "jnp", lambda m, a, v: (m.linalg.diagonal(a, offset=1), m.linalg.trace(a, offset=-1),
                                          m.linalg.outer(v, v), m.linalg.matmul(a, a), m.linalg.vecdot(a, a),
                                          m.linalg.matrix_transpose(a), m.linalg.tensordot(a, v[:3], axes=1)),
     (A3B, V4)),
    ("solve_triangular", "scipy", lambda m, a, b: m.solve_triangular(a, b, lower=True), (L4, B42)),
    ("solve_triangular_trans", "scipy", lambda m, a, b: (m.solve_triangular(a, b, trans=1),
                                                         m.solve_triangular(a, b, trans="C", unit_diagonal=True)),
     (U4, V4)),
    ("cho_factor_solve", "scipy", lambda m, a, b: m.cho_solve(m.cho_factor(a), b), (S3B, B3B)),
    ("cho_solve_lower", "scipy", lambda m, a, b: m.cho_solve(m.cho_factor(a, lower=True), b), (S4, V4)),
    ("scipy_cholesky", "scipy", lambda m, a: (m.cholesky(a), m.cholesky(a, lower=True)), (S4,)),
    ("lu_factor_solve", "scipy", lambda m, a, b: (m.lu_factor(a), m.lu_solve(m.lu_factor(a), b),
                                                  m.lu_solve(m.lu_factor(a), b, trans=1)), (A4, B42)),
    ("scipy_lu", "scipy", lambda m, a: (m.lu(a), m.lu(a, permute_l=True)), (A4,)),
    ("expm", "scipy", lambda m, a, b, u: (m.expm(a), m.expm(30 * b), m.expm(u, upper_triangular=True)),
     (A3B, A4, U4)),
    ("complex", "jnp", lambda m, a, b: (m.cholesky(a @ m.conj(m.swapaxes(a, -1, -2)) + 3 * m.eye(3)),
                                        m.linalg.solve(a, b), m.linalg.slogdet(a)[0], m.lu(a)),
     (C3B, CB3B)),
    ("scipy_det_inv_solve", "scipy", lambda m, a, b, s: (m.det(a), m.inv(a), m.solve(a, b),
                                                         m.solve(s, b, assume_a="pos"),
                                                         m.solve(s, b[:, 0], assume_a="pos", lower=True)),
     (A4, B42, S4)),
    ("scipy_special_matrices", "scipy", lambda m, a, c, r, cb: (
        m.block_diag(a[:2], 3, r[0], np.ones((2, 2), np.int32)), m.block_diag(), m.toeplitz(c, r), m.toeplitz(cb),
        m.toeplitz(c + 1j * c), m.hankel(c, r), m.hankel(cb), m.circulant(cb), m.fiedler(c), m.hilbert(4)),
     (A4, V4[:3], np.arange(5, dtype=np.float32), B3B[..., 0])),
    ("jnp_linalg_products", "jnp", lambda m, a, b, v, t, w: (
        m.linalg.multi_dot([a, b, v[:2]]), m.linalg.multi_dot([v, a, b]), m.linalg.cross(t, w),
        m.linalg.tensorinv(np.reshape(a, (4, 2, 2)), ind=1), m.linalg.tensorsolve(np.reshape(a, (2, 2, 4)), b[:, 0]
                                                                                  .reshape(2, 2))),
     (A4, B42, V4, B3B[..., 0].reshape(2, 3), A3B[..., 0].reshape(2, 3))),
    ("complex_triangular", "scipy", lambda m, a, b: (m.solve_triangular(a, b, trans=2, lower=True),
                                                     m.cho_solve((a, True), b)), (np.tril(C3B) + 3 * np.eye(3), CB3B)),
]


def _leaves(tree):
    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def _close(got, want, tol=2e-4):
    got, want = _leaves(got), _leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.shape == w.shape and g.dtype == w.dtype, (g.shape, g.dtype, w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol * max(1.0, float(np.nanmax(np.abs(
            np.where(np.isfinite(w), w, 0)), initial=0.0))))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_values_eager_jit_and_jax(case):
    _, family, fn, args = case
    mine, theirs = _modules(family)
    want = jax.jit(lambda *xs: fn(theirs, *xs))(*args)
    _close(fn(mine, *args), want)
    _close(irax.jit(lambda *xs: fn(mine, *xs))(*args), want)


def test_cholesky_not_positive_definite_is_nan_and_upper_zero():
    for out in (inp.linalg.cholesky(NOT_PD), irax.jit(inp.linalg.cholesky)(NOT_PD)):
        out = np.asarray(out)
        assert np.isnan(out[1, 1]) and np.isnan(out[0, 0]) and out[0, 1] == 0


def test_float64_under_x64():
    a, b = A4.astype(np.float64), B42.astype(np.float64)
    s = _spd(4, 4).astype(np.float64)
    with enable_x64(), jax.enable_x64(True):
        def program(m, sl):
            return lambda s, a, b: (m.linalg.cholesky(s), m.linalg.solve(a, b), sl.solve_triangular(s, b, lower=True),
                                    m.linalg.slogdet(a)[1], sl.expm(a), sl.expm(a / 10))
        want = jax.jit(program(jnp, jsl))(s, a, b)
        for got in (program(inp, isl)(s, a, b), irax.jit(program(inp, isl))(s, a, b)):
            _close(got, want, tol=1e-10)


# --- make_jaxpr text ---------------------------------------------------------------------------------------------

TEXT_CASES = [
    ("lax_cholesky", "lax", lambda m, x: m.cholesky(x), (S4,)),
    ("lax_cholesky_batched", "lax", lambda m, x: m.cholesky(x, symmetrize_input=False), (S3B,)),
    ("jnp_cholesky", "jnp", lambda m, x: m.cholesky(x), (S4,)),
    ("triangular_solve", "lax", lambda m, a, b: m.triangular_solve(a, b, left_side=True, lower=True,
                                                                   transpose_a=True), (L4, B42)),
    ("triangular_solve_vector", "lax", lambda m, a, b: m.triangular_solve(a, b, unit_diagonal=True), (L4, V4)),
    ("solve_triangular", "scipy", lambda m, a, b: m.solve_triangular(a, b, lower=True), (L4, B42)),
    ("solve_triangular_vector", "scipy", lambda m, a, b: m.solve_triangular(a, b, trans=1), (U4, V4)),
    ("lu", "lax", lambda m, x: m.lu(x), (A4,)),
    ("lu_batched", "lax", lambda m, x: m.lu(x), (A3B,)),
    ("cho_factor", "scipy", lambda m, x: m.cho_factor(x), (S4,)),
    ("cho_solve", "scipy", lambda m, a, b: m.cho_solve((a, True), b), (L4, B42)),
    ("lu_factor", "scipy", lambda m, x: m.lu_factor(x), (A4,)),
    ("lu_solve", "scipy", lambda m, x, b: m.lu_solve(m.lu_factor(x), b), (A3B, B3B)),
    ("lu_pivots_to_permutation", "lax", lambda m, p: _vmap(m)(lambda q: m.lu_pivots_to_permutation(q, 4))(p),
     (np.zeros((2, 3), np.int32),)),
    ("symmetric_product", "lax", lambda m, a, c: m.symmetric_product(a, c, alpha=2.0, beta=0.5,
                                                                     symmetrize_output=True), (A3B[..., :2], A3B)),
    ("householder_product", "lax", lambda m, a, t: m.householder_product(a, t), (A4[:, :3], V4[:2])),
    ("vmap_householder_product", "lax", lambda m, a, t: _vmap(m)(m.householder_product, in_axes=(0, None))(a, t),
     (A3B, V4[:2])),
    ("hessenberg", "lax", lambda m, a: m.hessenberg(a), (A4,)),
    ("cholesky_update", "lax", lambda m, r, w: m.cholesky_update(r, w), (U4, V4)),
    ("tridiagonal", "lax", lambda m, a: m.tridiagonal(a, lower=False), (A4,)),
    ("vmap_tridiagonal", "lax", lambda m, a: _vmap(m)(m.tridiagonal)(a), (A3B,)),
    ("qr_raw", "jnp", lambda m, a: m.linalg.qr(a, mode="raw"), (A3B,)),
    ("qr_pivoting", "lax", lambda m, a: m.qr(a, pivoting=True, full_matrices=False), (A3B,)),
    ("scipy_qr_pivoting", "scipy", lambda m, a: m.qr(a, pivoting=True, mode="r"), (R34,)),
    ("ormqr", "lax", lambda m, h, t, b: m.ormqr(h, t, b.T, left=False, transpose=True), (H43, T3, B42)),
    ("vmap_ormqr", "lax", lambda m, h, t, b: _vmap(m)(m.ormqr, in_axes=(None, None, 0))(h, t, b),
     (H43, T3, np.stack([B42] * 2))),
    ("vmap_hessenberg", "lax", lambda m, a: _vmap(m)(m.hessenberg)(a), (A3B,)),
    ("scipy_hessenberg", "scipy", lambda m, a: m.hessenberg(a, calc_q=True), (A3B,)),
    ("vmap_symmetric_product", "lax", lambda m, a, c: _vmap(m)(m.symmetric_product)(a, c), (A3B[..., :2], A3B)),
    ("vmap_triangular_solve_shared_a", "lax", lambda m, a, b: _vmap(m)(
        lambda b: m.triangular_solve(a, b, left_side=True, lower=True))(b), (L4, np.stack([B42] * 3))),
    ("vmap_cholesky", "lax", lambda m, x: _vmap(m)(m.cholesky)(x), (S3B,)),
    ("scipy_cholesky", "scipy", lambda m, x: m.cholesky(x), (S4,)),
    ("det_3x3", "jnp", lambda m, x: m.linalg.det(x), (A3B,)),
    ("matrix_power", "jnp", lambda m, x: m.linalg.matrix_power(x, 6), (A3B,)),
    ("norms", "jnp", lambda m, x, v: (m.linalg.norm(x), m.linalg.norm(x, 1, axis=(1, 2)),
                                      m.linalg.norm(x, -np.inf, axis=(2, 1), keepdims=True), m.linalg.norm(v, 3),
                                      m.linalg.norm(v, 0), m.linalg.norm(x, axis=-1)), (A3B, V4)),
]


def _vmap(module):
    return irax.vmap if module is ilax.linalg else jax.vmap


@pytest.mark.parametrize("case", TEXT_CASES, ids=[c[0] for c in TEXT_CASES])
def test_jaxpr_text_matches_jax(case):
    _, family, fn, args = case
    mine, theirs = _modules(family)
    assert str(irax.make_jaxpr(lambda *xs: fn(mine, *xs))(*args)) == \
        str(jax.make_jaxpr(lambda *xs: fn(theirs, *xs))(*args))


def test_jvp_jaxpr_text_matches_jax():
    """JAX's rules ask for ``precision=HIGHEST`` dots, as irax's do."""
    def programs(lx, api):
        return [
            (lambda x, t: api.jvp(lambda y: lx.linalg.cholesky(y, symmetrize_input=False), (x,), (t,)), (S4, A4)),
            (lambda a, b, ta, tb: api.jvp(lambda a, b: lx.linalg.triangular_solve(a, b, left_side=True, lower=True),
                                          (a, b), (ta, tb)), (L4, B42, A4, B42)),
            (lambda x, t: api.jvp(lambda y: lx.linalg.lu(y)[0], (x,), (t,)), (A4, A4)),
            (api.grad(lambda a, b: lx.linalg.triangular_solve(a, b, lower=True).sum(), argnums=(0, 1)),
             (L4, B42.T.copy())),
        ]
    for (fn, args), (jfn, _) in zip(programs(ilax, irax), programs(jax.lax, jax)):
        assert str(irax.make_jaxpr(fn)(*args)) == str(jax.make_jaxpr(jfn)(*args))


# --- gradients ---------------------------------------------------------------------------------------------------

GRAD_CASES = [
    ("cholesky", lambda m, x: m.linalg.cholesky(x @ x.T + 4 * m.eye(3)), (A3B[0],)),
    ("triangular_solve", lambda m, a, b: m.linalg.triangular_solve(a + 4 * m.eye(4), b, left_side=True, lower=True),
     (L4, B42)),
    ("triangular_solve_right_t", lambda m, a, b: m.linalg.triangular_solve(a + 4 * m.eye(4), b, transpose_a=True),
     (U4, B42.T.copy())),
    ("lu", lambda m, x: m.linalg.lu(x)[0], (A4,)),
    ("lu_wide", lambda m, x: m.linalg.lu(x)[0], (R34,)),
]


def _lax_and_np(api_lax, api_np):
    class M:
        linalg = api_lax.linalg
        eye = staticmethod(api_np.eye)
    return M


@pytest.mark.parametrize("case", GRAD_CASES, ids=[c[0] for c in GRAD_CASES])
def test_primitive_grads(case):
    _, fn, args = case
    mine, theirs = _lax_and_np(ilax, inp), _lax_and_np(jax.lax, jnp)
    check_grads(lambda *xs: fn(mine, *xs), args, order=1, modes=("fwd", "rev"), atol=5e-2, rtol=5e-2)
    weights = _rng.standard_normal(np.shape(fn(theirs, *args))).astype(np.float32)
    argnums = tuple(range(len(args)))
    want = jax.grad(lambda *xs: (fn(theirs, *xs) * weights).sum(), argnums)(*args)
    got = irax.grad(lambda *xs: (fn(mine, *xs) * weights).sum(), argnums)(*args)
    _close(got, want, tol=1e-3)


JNP_GRAD_CASES = [
    ("jnp_cholesky", lambda m, x: m.linalg.cholesky(x), (S3B,)),
    ("solve", lambda m, a, b: m.linalg.solve(a, b), (A4, B42)),
    ("inv", lambda m, a: m.linalg.inv(a), (A3B,)),
    ("det", lambda m, a: m.linalg.det(a), (A4,)),
    ("det_rank_deficient", lambda m, a: m.linalg.det(a), (np.array(
        [[1, 2, 3, 4], [2, 4, 6, 8], [1, 1, 1, 1], [0, 1, 0, 1]], np.float32),)),
    ("slogdet", lambda m, a: m.linalg.slogdet(a)[1], (A3B,)),
    ("cho_solve", lambda m, a, b: m.scipy.linalg.cho_solve(m.scipy.linalg.cho_factor(a), b), (S4, B42)),
    ("expm", lambda m, a: m.scipy.linalg.expm(a), (A4,)),
]


@pytest.mark.parametrize("case", JNP_GRAD_CASES, ids=[c[0] for c in JNP_GRAD_CASES])
def test_function_grads_match_jax(case):
    _, fn, args = case

    class Mine:
        linalg, scipy = inp.linalg, irax.scipy

    class Theirs:
        linalg, scipy = jnp.linalg, jax.scipy
    weights = _rng.standard_normal(np.shape(fn(Theirs, *args))).astype(np.float32)
    argnums = tuple(range(len(args)))
    want = jax.grad(lambda *xs: (fn(Theirs, *xs) * weights).sum(), argnums)(*args)
    loss = irax.grad(lambda *xs: (fn(Mine, *xs) * weights).sum(), argnums)
    _close(loss(*args), want, tol=1e-3)
    if case[0] == "det":
        _close(irax.jit(loss)(*args), want, tol=1e-3)


# --- vmap ----------------------------------------------------------------------------------------------------------

def test_vmap_matches_stacking():
    cases = [
        (lambda x: ilax.linalg.cholesky(x), (S3B,), 0),
        (lambda x: ilax.linalg.lu(x), (A3B,), 0),
        (lambda a, b: ilax.linalg.triangular_solve(a, b, left_side=True, lower=True), (np.tril(S3B), B3B), 0),
        (lambda b: ilax.linalg.triangular_solve(L4[:3, :3], b, left_side=True), (B3B,), 0),
        (lambda b: ilax.linalg.triangular_solve(L4[:2, :2], b, lower=True), (B3B,), 1),
        (lambda a: ilax.linalg.triangular_solve(a, B3B[0], left_side=True, lower=True), (np.tril(S3B),), 0),
    ]
    for fn, args, axis in cases:
        in_axes = axis if len(args) == 1 else (axis,) * len(args)
        stacked = [fn(*[np.take(x, i, axis) for x in args]) for i in range(args[0].shape[axis])]
        want = jax.tree_util.tree_map(lambda *xs: np.stack([np.asarray(x) for x in xs]), *stacked)
        _close(irax.vmap(fn, in_axes=in_axes)(*args), want, tol=1e-5)
    _close(irax.jit(irax.vmap(lambda b: ilax.linalg.triangular_solve(L4, b, left_side=True)))(np.stack([B42] * 2)),
           jax.vmap(lambda b: jax.lax.linalg.triangular_solve(L4, b, left_side=True))(np.stack([B42] * 2)))


# --- errors --------------------------------------------------------------------------------------------------------

ERROR_CASES = [
    ("cholesky_not_square", lambda m, lx: lx.linalg.cholesky(R34)),
    ("cholesky_rank1", lambda m, lx: lx.linalg.cholesky(V4, symmetrize_input=False)),
    ("cholesky_int", lambda m, lx: lx.linalg.cholesky(np.eye(3, dtype=np.int32), symmetrize_input=False)),
    ("ts_not_square", lambda m, lx: lx.linalg.triangular_solve(R34, B42, left_side=True)),
    ("ts_mismatch", lambda m, lx: lx.linalg.triangular_solve(L4, B42, left_side=False)),
    ("ts_dtypes", lambda m, lx: lx.linalg.triangular_solve(L4, B42.astype(np.int32), left_side=True)),
    ("lu_rank1", lambda m, lx: lx.linalg.lu(V4)),
    ("pivots_scalar", lambda m, lx: lx.linalg.lu_pivots_to_permutation(np.int32(1), 3)),
    ("pivots_float", lambda m, lx: lx.linalg.lu_pivots_to_permutation(V4, 4)),
    ("pivots_too_many", lambda m, lx: lx.linalg.lu_pivots_to_permutation(np.zeros(3, np.int32), 2)),
    ("householder_product_wide", lambda m, lx: lx.linalg.householder_product(R34, V4[:2])),
    ("householder_product_taus", lambda m, lx: lx.linalg.householder_product(A4[:, :3], V4)),
    ("householder_product_dtypes", lambda m, lx: lx.linalg.householder_product(C3B, B3B[..., 0])),
    ("hessenberg_not_square", lambda m, lx: lx.linalg.hessenberg(R34)),
    ("qr_raw_vector", lambda m, lx: m.linalg.qr(V4, mode="raw")),
    ("ormqr_left_rows", lambda m, lx: lx.linalg.ormqr(H43, T3, B42.T)),
    ("ormqr_right_columns", lambda m, lx: lx.linalg.ormqr(H43, T3, B42, left=False)),
    ("ormqr_batch", lambda m, lx: lx.linalg.ormqr(H43, T3, np.stack([B42] * 2))),
    ("ormqr_int", lambda m, lx: lx.linalg.ormqr(H43.astype(np.int32), T3, B42)),
    ("tridiagonal_empty", lambda m, lx: lx.linalg.tridiagonal(E0)),
    ("tridiagonal_not_square", lambda m, lx: lx.linalg.tridiagonal(R34)),
    ("cholesky_update_size", lambda m, lx: lx.linalg.cholesky_update(U4, V4[:3])),
    ("cholesky_update_complex", lambda m, lx: lx.linalg.cholesky_update(C3B[0], C3B[0, 0])),
    ("cholesky_update_batched", lambda m, lx: lx.linalg.cholesky_update(A3B, B3B[..., 0])),
    ("cholesky_update_vmap", lambda m, lx: (irax if m is inp else jax).vmap(lx.linalg.cholesky_update)(
        A3B, B3B[..., 0])),
    ("hessenberg_vector", lambda m, lx: lx.linalg.hessenberg(V4)),
    ("symmetric_product_shapes", lambda m, lx: lx.linalg.symmetric_product(R34, A4)),
    ("symmetric_product_complex", lambda m, lx: lx.linalg.symmetric_product(C3B, C3B)),
    ("symmetric_product_dtypes", lambda m, lx: lx.linalg.symmetric_product(A4, S4.astype(np.float16))),
    ("solve_shapes", lambda m, lx: m.linalg.solve(A4, R34)),
    ("solve_1d", lambda m, lx: m.linalg.solve(V4, V4)),
    ("inv_not_square", lambda m, lx: m.linalg.inv(R34)),
    ("det_not_square", lambda m, lx: m.linalg.det(R34)),
    ("slogdet_not_square", lambda m, lx: m.linalg.slogdet(R34)),
    ("matrix_power_not_square", lambda m, lx: m.linalg.matrix_power(R34, 2)),
    ("multi_dot_one", lambda m, lx: m.linalg.multi_dot([A4])),
    ("multi_dot_3d", lambda m, lx: m.linalg.multi_dot([A4, A3B])),
    ("multi_dot_mismatch", lambda m, lx: m.linalg.multi_dot([A4, R34])),
    ("cross_not_3", lambda m, lx: m.linalg.cross(V4, V4)),
    ("tensorinv_ind", lambda m, lx: m.linalg.tensorinv(A4, ind=0)),
    ("tensorinv_shape", lambda m, lx: m.linalg.tensorinv(R34, ind=1)),
    ("tensorsolve_shape", lambda m, lx: m.linalg.tensorsolve(A4, V4[:3])),
]


@pytest.mark.parametrize("case", ERROR_CASES, ids=[c[0] for c in ERROR_CASES])
def test_errors_as_jax(case):
    _, fn = case
    with pytest.raises(Exception) as theirs:
        fn(jnp, jax.lax)
    with pytest.raises(theirs.type):
        fn(inp, ilax)


def test_hessenberg_of_empty_matrices_is_empty():
    """JAX's own lowering fails here (a taus vector of size -1); irax gives empty results."""
    for fn in (ilax.linalg.hessenberg, irax.jit(ilax.linalg.hessenberg)):
        h, taus = fn(E0)
        assert h.shape == (2, 0, 0) and taus.shape == (2, 0)


def test_geqp3_takes_marked_columns_first_as_lapack():
    """LAPACK swaps each marked column to the next place at the front (not a stable partition), factors those in
    order, then pivots the rest by their partial norms."""
    from jax._src.lax.linalg import geqp3 as jax_geqp3
    a = _rng.standard_normal((3, 5, 4)).astype(np.float32)
    marks = np.array([[0, 0, 1, 0], [0, 1, 0, 1], [0, 2, 0, -1]], np.int32)
    want = jax_geqp3(a, marks)
    for fn in (ilax.linalg.geqp3, irax.jit(ilax.linalg.geqp3)):
        _close(fn(a, marks), want, tol=1e-5)
    with pytest.raises(ValueError, match="geqp3 expects a column permutation of size 4"):
        ilax.linalg.geqp3(a, marks[:, :3])
    with pytest.raises(TypeError, match="geqp3 does not accept dtype float32 at position 1"):
        ilax.linalg.geqp3(a, marks.astype(np.float32))


def test_pivoted_qr_derivatives():
    """Against JAX's for a tall and a square matrix; for a wide one against finite differences: JAX's JVP takes
    R's trailing columns from the unpermuted matrix there, and is wrong."""
    t4 = _rng.standard_normal((4, 4)).astype(np.float32)
    for a, t in ((A4[:, :3], t4[:, :3]), (A4, t4)):
        got = irax.jvp(lambda a: ilax.linalg.qr(a, pivoting=True)[:2], (a,), (t,))
        want = jax.jvp(lambda a: jax.lax.linalg.qr(a, pivoting=True)[:2], (a,), (t,))
        _close(got, want, tol=1e-4)
    a, t = R34.astype(np.float64), t4[:3].astype(np.float64)
    with enable_x64():
        _, dr = irax.jvp(lambda a: ilax.linalg.qr(a, pivoting=True)[1], (a,), (t,))
        eps = 1e-6
        r_plus, r_minus = (ilax.linalg.qr(a + s * eps * t, pivoting=True)[1] for s in (1, -1))
        np.testing.assert_allclose(dr, (np.asarray(r_plus) - np.asarray(r_minus)) / (2 * eps), atol=1e-6)


def test_tridiagonal_of_a_large_complex_upper_matrix_keeps_lapacks_last_diagonal_entry():
    """From n = 33 LAPACK's hetrd runs blocked, and leaves the last diagonal entry of an upper matrix as it came."""
    a = (_rng.standard_normal((33, 33)) + 1j * _rng.standard_normal((33, 33))).astype(np.complex64)
    want = jax.lax.linalg.tridiagonal(a, lower=False)
    assert want[0][32, 32] == a[32, 32]
    for fn in (ilax.linalg.tridiagonal, irax.jit(ilax.linalg.tridiagonal, static_argnames="lower")):
        _close(fn(a, lower=False), want, tol=1e-4)


_SECOND_OPERAND = {"symmetric_product": (S4,), "householder_product": (V4[:2],), "hessenberg": (),
                   "ormqr": (V4[:3], B42), "cholesky_update": (V4,), "tridiagonal": ()}


@pytest.mark.parametrize("name", sorted(_SECOND_OPERAND))
def test_not_differentiable_as_in_jax(name):
    for api, lx in ((jax, jax.lax), (irax, ilax)):
        fn = getattr(lx.linalg, name)
        with pytest.raises(NotImplementedError, match=f"Differentiation rule for '{name}' not implemented"):
            api.grad(lambda a: fn(a, *_SECOND_OPERAND[name])[0].sum())(A4)


@pytest.mark.parametrize("name", ["householder_product", "hessenberg", "ormqr", "tridiagonal"])
def test_half_precision_is_unsupported_as_in_jax(name):
    """JAX's CPU lowerings call LAPACK's orgqr, gehrd, ormqr and sytrd, which have no half precision (the ops themselves
    trace)."""
    args = (A4.astype(np.float16),) + tuple(x.astype(np.float16) for x in _SECOND_OPERAND[name])
    for fn in (getattr(jax.lax.linalg, name), getattr(ilax.linalg, name), irax.jit(getattr(ilax.linalg, name))):
        with pytest.raises(NotImplementedError, match="Unsupported dtype float16."):
            fn(*args)
    assert name in str(irax.make_jaxpr(getattr(ilax.linalg, name))(*args))


# --- a whole program ---------------------------------------------------------------------------------------------

def _gp_posterior(np_, sl, x, y, xs, log_scale):
    """A Gaussian-process posterior mean and variance (RBF kernel, Cholesky and two triangular solves) and the
    log marginal likelihood."""
    def kernel(a, b):
        return np_.exp(-0.5 * (a[:, None] - b[None, :]) ** 2 / np_.exp(2 * log_scale))
    k = kernel(x, x) + 1e-2 * np_.eye(x.shape[0])
    chol = np_.linalg.cholesky(k)
    alpha = sl.cho_solve((chol, True), y)
    ks = kernel(x, xs)
    mean = ks.T @ alpha
    v = sl.solve_triangular(chol, ks, lower=True)
    var = 1.0 - np_.sum(v * v, axis=0)
    log_ml = -0.5 * y @ alpha - np_.sum(np_.log(np_.diagonal(chol))) - 0.5 * x.shape[0] * np_.log(2 * np_.pi)
    return mean, var, log_ml


def test_gaussian_process_posterior_program():
    x = np.linspace(-2, 2, 12).astype(np.float32)
    y = np.sin(2 * x).astype(np.float32)
    xs = np.linspace(-2.5, 2.5, 7).astype(np.float32)
    scale = np.float32(-0.5)
    want = jax.jit(lambda *a: _gp_posterior(jnp, jsl, *a))(x, y, xs, scale)
    _close(irax.jit(lambda *a: _gp_posterior(inp, isl, *a))(x, y, xs, scale), want, tol=1e-3)
    _close(_gp_posterior(inp, isl, x, y, xs, scale), want, tol=1e-3)
    want_g = jax.grad(lambda s: _gp_posterior(jnp, jsl, x, y, xs, s)[2])(scale)
    got_g = irax.jit(irax.grad(lambda s: _gp_posterior(inp, isl, x, y, xs, s)[2]))(scale)
    _close(got_g, want_g, tol=1e-3)


@pytest.mark.parametrize("n", [2, 40])
def test_one_module_with_repeated_solves_of_one_shape(n):
    """Regressions for IREE 3.13: two LU solves of one shape in a module, right-hand sides made by a gather, 1x1
    slices, at a size within one panel and one past it (loops; see passes/lower_blocked.py)."""
    a = _rng.standard_normal((n, n)).astype(np.float32) + n * np.eye(n, dtype=np.float32)
    b, perm = _rng.standard_normal(n).astype(np.float32), _rng.permutation(n).astype(np.int32)

    def program(m):
        return lambda a, b, p: [m.linalg.solve(a, b[p]), m.linalg.solve(2 * a, b),
                                m.linalg.solve(a[None], b[None, :, None]), m.linalg.cholesky(a @ a.T)]
    _close(irax.jit(program(inp))(a, b, perm), jax.jit(program(jnp))(a, b, perm))


def _relative_error(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return float(np.linalg.norm(got - want) / max(np.linalg.norm(want), 1e-30))


def test_blocked_lu_matches_jax_beyond_one_panel():
    """Matrices wider than the LU's panel (whole panels in the loop and a narrower last one): JAX's pivots and
    permutation exactly, its factors to float32 rounding; batched, wide, tall and complex."""
    cases = [_rng.standard_normal((2, 37, 37)).astype(np.float32),
             _rng.standard_normal((20, 45)).astype(np.float32),
             _rng.standard_normal((45, 20)).astype(np.float32),
             (_rng.standard_normal((33, 33)) + 1j * _rng.standard_normal((33, 33))).astype(np.complex64)]
    got_all = irax.jit(lambda *xs: [ilax.linalg.lu(x) for x in xs])(*cases)
    for x, got in zip(cases, got_all):
        want = jax.lax.linalg.lu(x)
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
        np.testing.assert_array_equal(np.asarray(got[2]), np.asarray(want[2]))
        assert _relative_error(got[0], want[0]) < 1e-5
        eager = ilax.linalg.lu(x)
        np.testing.assert_array_equal(np.asarray(eager[1]), np.asarray(got[1]))


def test_blocked_lu_zero_column_and_nan_as_the_numpy_rule():
    """A zero column (no pivot: the column stays undivided) and a NaN (it wins the pivot search) past the first
    panel: the pivots of the eager NumPy rule, its values where both are finite, NaN in the same columns (the
    block row's product with its inverse triangle spreads a NaN up its column, where substitution does not)."""
    zero_col = _rng.standard_normal((40, 40)).astype(np.float32)
    zero_col[:, 20] = 0
    with_nan = _rng.standard_normal((40, 40)).astype(np.float32)
    with_nan[30, 25] = np.nan
    got_all = irax.jit(lambda a, b: [ilax.linalg.lu(a), ilax.linalg.lu(b)])(zero_col, with_nan)
    for x, got in zip((zero_col, with_nan), got_all):
        want = ilax.linalg.lu(x)
        for g, w in zip(got[1:], want[1:]):
            np.testing.assert_array_equal(np.asarray(g), np.asarray(w))
        got_lu, want_lu = np.asarray(got[0]), np.asarray(want[0])
        np.testing.assert_array_equal(np.isnan(got_lu).any(0), np.isnan(want_lu).any(0))
        finite = np.isfinite(want_lu) & np.isfinite(got_lu)
        np.testing.assert_allclose(got_lu[finite], want_lu[finite], rtol=1e-3, atol=1e-3)
    assert not np.isnan(np.asarray(got_all[0][0])).any()
    np.testing.assert_array_equal(np.asarray(got_all[0][1]), np.asarray(jax.lax.linalg.lu(zero_col)[1]))


def test_blocked_triangular_solve_matches_jax():
    """A 70x70 system (whole blocks of rows and a narrower one) with every side, triangle, transpose and unit
    diagonal, in one module; complex with conjugation."""
    import itertools
    a = _tri(70, 70) + np.triu(_tri(70, 70, lower=False), 1)
    flags = list(itertools.product([True, False], repeat=4))

    def solves(ilax_, a, b, bt):
        return [ilax_.linalg.triangular_solve(a, b if left else bt, left_side=left, lower=lower, transpose_a=tr,
                                              unit_diagonal=unit) for left, lower, tr, unit in flags]
    b, bt = _rng.standard_normal((70, 3)).astype(np.float32), _rng.standard_normal((3, 70)).astype(np.float32)
    got = irax.jit(lambda *xs: solves(ilax, *xs))(a, b, bt)
    want = solves(jax.lax, a, b, bt)
    for flag, g, w in zip(flags, got, want):
        assert _relative_error(g, w) < 1e-4, flag
    c = (a + 1j * np.tril(a, -1)).astype(np.complex64)
    cb = (b - 2j * b).astype(np.complex64)
    kw = dict(left_side=True, lower=True, transpose_a=True, conjugate_a=True)
    assert _relative_error(irax.jit(lambda a, b: ilax.linalg.triangular_solve(a, b, **kw))(c, cb),
                           jax.lax.linalg.triangular_solve(c, cb, **kw)) < 1e-4


def test_blocked_cholesky_matches_jax_beyond_one_panel():
    """Cholesky of matrices past one panel (a narrower panel, then whole ones in the loop): JAX's factor to float32
    rounding, batched and complex; a non-positive pivot in a later panel makes the factor all NaN, as JAX's."""
    def spd(n, batch=(), complex_=False):
        a = _rng.standard_normal(batch + (n, n))
        if complex_:
            a = a + 1j * _rng.standard_normal(batch + (n, n))
        return (a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)).astype(np.complex64 if complex_ else np.float32)
    not_pd = spd(40)
    not_pd[30, 30] = -1e4
    cases = [spd(37), spd(32, (2,)), spd(21, complex_=True), not_pd]
    got_all = irax.jit(lambda *xs: [ilax.linalg.cholesky(x) for x in xs])(*cases)
    for x, got in zip(cases, got_all):
        want = np.asarray(jax.lax.linalg.cholesky(x))
        if np.isnan(want).any():
            np.testing.assert_array_equal(np.isnan(np.asarray(got)), np.isnan(want))
        else:
            assert _relative_error(got, want) < 1e-5
