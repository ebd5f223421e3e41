"""``lax.linalg.schur`` and ``scipy.linalg.schur`` (LAPACK's gees, ported to NumPy and run on the host, eagerly and
from IREE-compiled code, as JAX's CPU schur), against JAX: the Schur form's structure (quasi-triangular, 2x2 blocks
in LAPACK's standard form), ``A = Z T Z^H``, the eigenvalues in LAPACK's order on the diagonal, the invariant
subspaces of the leading Schur vectors, vmap, ``make_jaxpr`` text, non-finite and empty input, and JAX's errors.

Schur vectors are compared through the invariant subspaces they span, not entry by entry: a column's sign (its
phase, if complex) follows rounding in the last QR sweep, so two correct builds of LAPACK may differ there.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
from irax.config import enable_x64
from irax.lax import linalg as ilinalg
from irax.scipy import linalg as isl

jax = pytest.importorskip("jax")

_rng = np.random.default_rng(7)


def _random(shape, dtype):
    a = _rng.standard_normal(shape)
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * _rng.standard_normal(shape)
    return a.astype(dtype)


def _check_schur(a, t, z, tol):
    """``a = z t z^H`` with ``z`` unitary and ``t`` in LAPACK's (quasi-)triangular Schur form."""
    real = not np.iscomplexobj(np.asarray(t))
    a, t, z = (np.asarray(v).astype(np.complex128) for v in (a, t, z))
    n, scale = a.shape[-1], max(1.0, float(np.abs(a).max()))
    np.testing.assert_allclose(z @ t @ np.conj(np.swapaxes(z, -1, -2)), a, atol=tol * scale * n)
    np.testing.assert_allclose(np.conj(np.swapaxes(z, -1, -2)) @ z, np.broadcast_to(np.eye(n), a.shape), atol=tol * n)
    assert not np.tril(t, -2).any()
    sub = np.diagonal(t, -1, -2, -1)
    if not real:
        assert not sub.any()
        return
    assert not (sub[..., 1:] * sub[..., :-1]).any(), "two consecutive nonzero subdiagonal entries"
    for index in np.ndindex(*sub.shape):  # a 2x2 block: equal diagonal entries, off-diagonal ones of opposite signs
        if sub[index]:
            k = index[-1]
            block = t[index[:-1]][k:k + 2, k:k + 2].real
            assert block[0, 0] == block[1, 1] and block[0, 1] * block[1, 0] < 0


def _check_like_jax(got, want, tol):
    """The eigenvalues in the same order, and the same invariant subspaces (wherever no 2x2 block is cut)."""
    (t, z), (tj, zj) = ([np.asarray(v) for v in pair] for pair in (got, want))
    scale = max(1.0, float(np.abs(tj).max()))
    np.testing.assert_allclose(np.diagonal(t, 0, -2, -1), np.diagonal(tj, 0, -2, -1), atol=tol * scale)
    for index in np.ndindex(*t.shape[:-2]):
        for k in range(1, t.shape[-1]):
            if tj[index][k, k - 1] == 0:
                zk, zjk = z[index][:, :k], zj[index][:, :k]
                np.testing.assert_allclose(zk @ zk.conj().T, zjk @ zjk.conj().T, atol=tol * t.shape[-1])


ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)  # eigenvalues +-i: one standardized 2x2 block
DEFECTIVE = np.array([[2.0, 1.0, 0.0], [0.0, 2.0, 1.0], [0.0, 0.0, 2.0]], np.float32)
CASES = [ROTATION, DEFECTIVE, _random((1, 1), np.float32), _random((6, 6), np.float32),
         _random((2, 4, 4), np.float32), _random((5, 5), np.complex64)]


@pytest.mark.parametrize("a", CASES, ids=lambda a: f"{a.dtype}{a.shape}")
def test_schur_eager_jit_and_jax(a):
    want = jax.lax.linalg.schur(a)
    for got in (ilinalg.schur(a), irax.jit(ilinalg.schur)(a)):
        assert [v.dtype for v in got] == [v.dtype for v in want] and [v.shape for v in got] == [a.shape] * 2
        _check_schur(a, *got, tol=2e-6)
        _check_like_jax(got, want, tol=1e-5)


def test_float64_and_complex128_follow_lapack_order_on_larger_matrices():
    """With its exceptional shifts every tenth sweep, the port deflates in LAPACK's order: the diagonal and each
    leading invariant subspace agree with JAX's to rounding."""
    with enable_x64(), jax.enable_x64(True):
        for a in (_random((24, 24), np.float64), _random((12, 12), np.complex128), _random((3, 8, 8), np.float64)):
            got, want = irax.jit(ilinalg.schur)(a), jax.lax.linalg.schur(a)
            assert got[0].dtype == a.dtype
            _check_schur(a, *got, tol=1e-13)
            _check_like_jax(got, want, tol=1e-10)


def test_scipy_schur_real_and_complex_output():
    a = CASES[3]
    for output in ("real", "complex"):
        want = jax.scipy.linalg.schur(a, output=output)
        for f in (isl.schur, irax.jit(isl.schur, static_argnames="output")):
            got = f(a, output=output)
            assert got[0].dtype == want[0].dtype
            _check_schur(a, *got, tol=2e-6)
            _check_like_jax(got, want, tol=1e-5)
    t, z = isl.rsf2csf(*isl.schur(a))
    _check_schur(a, t, z, tol=1e-5)
    np.testing.assert_allclose(np.diag(np.asarray(t)), np.diag(jax.scipy.linalg.rsf2csf(*jax.scipy.linalg.schur(a))[0]),
                               atol=1e-5)
    assert isl.schur(np.eye(2, dtype=np.int32), output="complex")[0].dtype == np.complex64


def test_vmap_schur_only_and_text_match_jax():
    batch = CASES[4]
    got = irax.vmap(ilinalg.schur, in_axes=1)(np.moveaxis(batch, 0, 1))
    for i in range(len(batch)):
        np.testing.assert_array_equal(got[0][i], ilinalg.schur(batch[i])[0])
    (t,) = irax.jit(lambda a: ilinalg.schur(a, compute_schur_vectors=False))(CASES[3])
    np.testing.assert_array_equal(t, ilinalg.schur(CASES[3])[0])
    for f in (lambda lib: lib.lax.linalg.schur,
              lambda lib: lambda a: lib.lax.linalg.schur(a, compute_schur_vectors=False),
              lambda lib: lambda a: lib.scipy.linalg.schur(a, output="complex")):
        assert str(irax.make_jaxpr(f(irax))(CASES[3])) == str(jax.make_jaxpr(f(jax))(CASES[3]))


def test_non_finite_and_empty_matrices():
    bad = np.array([[np.nan, 1.0], [0.0, 1.0]], np.float32)
    stack = np.stack([bad, ROTATION])
    for f in (ilinalg.schur, irax.jit(ilinalg.schur)):
        t, z = f(stack)
        assert np.isnan(t[0]).all() and np.isnan(z[0]).all()
        np.testing.assert_array_equal(t[1], jax.lax.linalg.schur(ROTATION)[0])
    for a in (np.zeros((0, 0), np.float32), np.zeros((3, 0, 0), np.complex64)):
        for got, want in zip(irax.jit(ilinalg.schur)(a), jax.lax.linalg.schur(a)):
            assert got.shape == want.shape and got.dtype == want.dtype


def test_errors_match_jax():
    with pytest.raises(ValueError, match=r"The input to schur must be a square matrix. Got shape \(2, 3\)."):
        ilinalg.schur(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="Input 0 to schur must have rank at least 2"):
        ilinalg.schur(np.ones(3, np.float32))
    with pytest.raises(TypeError, match="schur does not accept dtype int32 at position 0. Accepted dtypes at "
                                        "position 0 are subtypes of floating, complexfloating."):
        ilinalg.schur(np.ones((2, 2), np.int32))
    with pytest.raises(ValueError, match="Expected 'output' to be either 'real' or 'complex', got output='x'."):
        isl.schur(ROTATION, output="x")
    for f in (ilinalg.schur, irax.jit(ilinalg.schur, static_argnames="sort_eig_vals")):
        with pytest.raises(NotImplementedError, match="The sort feature of LAPACK's gees routine is not implemented."):
            f(ROTATION, sort_eig_vals=True)
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur' not implemented"):
        irax.grad(lambda a: ilinalg.schur(a)[0].sum())(ROTATION)


# --- sqrtm, funm, solve_sylvester: JAX's loops on the complex Schur form ------------------------------------------

SPD = (CASES[3] @ CASES[3].T + np.eye(6, dtype=np.float32)).astype(np.float32)
B3, C63 = _random((3, 3), np.float32), _random((6, 3), np.float32)
MATRIX_FUNCTIONS = {
    "sqrtm": lambda lib, a: lib.scipy.linalg.sqrtm(a),
    "funm_exp": lambda lib, a: lib.scipy.linalg.funm(a, lib.numpy.exp),
    "funm_sin_error": lambda lib, a: lib.scipy.linalg.funm(a, lib.numpy.sin, disp=False),
    "solve_sylvester": lambda lib, a: lib.scipy.linalg.solve_sylvester(a, B3, C63),
    "solve_sylvester_eigen": lambda lib, a: lib.scipy.linalg.solve_sylvester(a, B3, C63, method="eigen"),
}


@pytest.mark.parametrize("name", MATRIX_FUNCTIONS)
def test_matrix_functions_text_and_values_match_jax(name):
    """A positive definite matrix keeps the square root principal whatever the rounding (a negative real eigenvalue
    comes out of the complex Schur form with an imaginary part of either sign, and its root with it)."""
    f = MATRIX_FUNCTIONS[name]
    assert str(irax.make_jaxpr(lambda a: f(irax, a))(SPD)) == str(jax.make_jaxpr(lambda a: f(jax, a))(SPD))
    got, want = jax.tree.leaves(f(irax, SPD)), jax.tree.leaves(f(jax, SPD))
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_allclose(g, w, rtol=2e-4, atol=2e-5 * float(np.abs(w).max()))


def test_matrix_functions_solve_their_equations():
    a = CASES[3]
    root = irax.jit(isl.sqrtm)(a)
    np.testing.assert_allclose(root @ root, a, atol=1e-4)
    np.testing.assert_allclose(isl.sqrtm(a), root, atol=1e-5)
    np.testing.assert_allclose(isl.funm(SPD, irax.numpy.log), np.asarray(jax.scipy.linalg.funm(SPD, jax.numpy.log)),
                               atol=1e-4)
    batch = np.stack([a, 2 * a])
    xs = isl.solve_sylvester(batch, B3, C63)
    np.testing.assert_allclose(batch @ xs + xs @ B3, np.broadcast_to(C63, xs.shape), atol=1e-4)
    eye = np.eye(2, dtype=np.float32)
    assert np.isnan(isl.solve_sylvester(eye, -eye, np.ones((2, 2), np.float32))).all()  # A and -B share eigenvalues


def test_matrix_function_errors_match_jax():
    with pytest.raises(NotImplementedError, match="Blocked version is not implemented yet."):
        isl.sqrtm(SPD, blocksize=2)
    with pytest.raises(ValueError, match="expected square array_like input"):
        isl.funm(np.ones((2, 3), np.float32), irax.numpy.exp)
    with pytest.raises(ValueError, match=r"Incompatible shapes for Sylvester equation:\nA: \(2, 2\)"):
        isl.solve_sylvester(np.ones((2, 2)), np.ones((3, 3)), np.ones((3, 2)))
    with pytest.raises(ValueError, match='Unrecognized method x. The two valid methods are either "schur" or "eigen".'):
        isl.solve_sylvester(ROTATION, ROTATION, ROTATION, method="x")
    with pytest.raises(NotImplementedError, match="Differentiation rule for 'schur' not implemented"):
        irax.grad(lambda a: isl.sqrtm(a).real.sum())(SPD)
