"""``lax.linalg.eig``, ``jnp.linalg.eig`` and ``eigvals`` (LAPACK's geev on the host, eagerly and from IREE-compiled
code, as JAX's CPU eig), against NumPy and JAX: eigenpairs of real, complex, batched, empty and non-finite
matrices, LAPACK's normalization of both kinds of eigenvectors, JVPs and gradients (eigenvalues, and eigenvectors
with ``enable_eigvec_derivs``), vmap, ``make_jaxpr`` text, ``jnp.poly`` of a matrix and JAX's errors.

Eigenvectors are compared up to sign: LAPACK builds differ in the sign of a real eigenvector (NumPy's and jaxlib's
do), and a tangent follows its vector's sign.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax.config import enable_x64
from irax.lax import linalg as ilinalg

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

_rng = np.random.default_rng(11)
A3 = np.array([[1.0, 2.0, 0.5], [3.0, 4.0, -1.0], [0.2, -2.0, 1.0]], np.float32)
ROTATION = np.array([[0.0, -1.0], [1.0, 0.0]], np.float32)  # eigenvalues +-i
CASES = [A3, ROTATION, _rng.standard_normal((1, 1)).astype(np.float32),
         _rng.standard_normal((2, 4, 4)).astype(np.float32),
         (_rng.standard_normal((3, 3)) + 1j * _rng.standard_normal((3, 3))).astype(np.complex64)]


def _signs(v, like):
    """``v``'s columns with the phase that makes them closest to ``like``'s (LAPACK builds differ in sign)."""
    v, like = np.asarray(v), np.asarray(like)
    phase = np.sum(np.conj(v) * like, axis=-2, keepdims=True)
    return v * np.where(np.abs(phase) > 0, phase / np.maximum(np.abs(phase), 1e-30), 1)


def _check_eig(a, w, vl, vr, tol=2e-5):
    scale = max(1.0, float(np.abs(a).max())) * a.shape[-1]
    a = a.astype(np.complex128)
    np.testing.assert_allclose(a @ vr, vr * w[..., None, :], atol=tol * scale)
    np.testing.assert_allclose(np.conj(np.swapaxes(vl, -1, -2)) @ a, w[..., :, None] * np.conj(np.swapaxes(vl, -1, -2)),
                               atol=tol * scale)
    for v in (vl, vr):  # LAPACK's normalization: unit norm, the largest component real
        np.testing.assert_allclose(np.linalg.norm(v, axis=-2), 1, atol=tol)
        largest = np.take_along_axis(v, np.argmax(np.abs(v), axis=-2)[..., None, :], axis=-2)
        np.testing.assert_allclose(largest.imag, 0, atol=tol)


@pytest.mark.parametrize("a", CASES, ids=lambda a: f"{a.dtype}{a.shape}")
def test_eig_eager_jit_numpy_jax(a):
    eager = ilinalg.eig(a)
    jitted = irax.jit(ilinalg.eig)(a)
    want = jax.lax.linalg.eig(a)
    for w, vl, vr in (eager, jitted):
        assert np.asarray(w).dtype == want[0].dtype
        _check_eig(a, np.asarray(w), np.asarray(vl), np.asarray(vr))
        np.testing.assert_allclose(w, want[0], rtol=1e-5, atol=1e-5)
        for got, ref in ((vl, want[1]), (vr, want[2])):
            np.testing.assert_allclose(_signs(got, ref), ref, atol=2e-5)
    np.testing.assert_allclose(irax.jit(inp.linalg.eigvals)(a), jnp.linalg.eigvals(a), rtol=1e-5, atol=1e-5)
    w, v = irax.jit(inp.linalg.eig)(a)
    np.testing.assert_allclose(_signs(v, want[2]), want[2], atol=2e-5)


def test_empty_non_finite_and_float64():
    for a in (np.zeros((0, 0), np.float32), np.zeros((2, 0, 0), np.float32)):
        for got, want in zip(irax.jit(inp.linalg.eig)(a), jnp.linalg.eig(a)):
            assert got.shape == want.shape and got.dtype == want.dtype
    bad = np.array([[np.nan, 1.0], [0.0, 1.0]], np.float32)
    for f in (inp.linalg.eigvals, irax.jit(inp.linalg.eigvals)):
        np.testing.assert_array_equal(f(bad), jnp.linalg.eigvals(bad))
    with enable_x64():
        a = _rng.standard_normal((5, 5))
        w = irax.jit(inp.linalg.eigvals)(a)
        assert w.dtype == np.complex128
        np.testing.assert_allclose(np.sort_complex(np.asarray(w)), np.sort_complex(np.linalg.eigvals(a)), rtol=1e-12)
    assert inp.linalg.eig(np.ones((2, 2), np.int32)).eigenvalues.dtype == np.complex64


def test_eigenvalue_derivatives_match_jax():
    t = _rng.standard_normal(A3.shape).astype(np.float32)
    for f in (lambda lib: lib.numpy.linalg.eigvals, lambda lib: lib.jit(lib.numpy.linalg.eigvals)):
        got = irax.jvp(f(irax), (A3,), (t,))
        want = jax.jvp(f(jax), (A3,), (t,))
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)

    def loss(lib):
        return lambda a: (lib.numpy.linalg.eigvals(a) ** 2).real.sum() + lib.numpy.linalg.eigvals(a).imag.sum()
    want = jax.grad(loss(jax))(CASES[3][0])
    for g in (irax.grad(loss(irax)), irax.jit(irax.grad(loss(irax)))):
        np.testing.assert_allclose(g(CASES[3][0]), want, rtol=1e-4, atol=1e-4)


def test_eigenvector_derivatives_match_jax():
    t = _rng.standard_normal(A3.shape).astype(np.float32)

    def f(lib):
        return lambda a: lib.lax.linalg.eig(a, enable_eigvec_derivs=True)
    (w, vl, vr), (dw, dvl, dvr) = irax.jit(lambda a, t: irax.jvp(f(irax), (a,), (t,)))(A3, t)
    (jw, jvl, jvr), (jdw, jdvl, jdvr) = jax.jvp(f(jax), (A3,), (t,))
    np.testing.assert_allclose(dw, jdw, rtol=1e-4, atol=1e-5)
    for v, dv, jv, jdv in ((vl, dvl, jvl, jdvl), (vr, dvr, jvr, jdvr)):
        sign = np.sign(np.real(np.sum(np.conj(np.asarray(v)) * np.asarray(jv), axis=-2, keepdims=True)))
        np.testing.assert_allclose(np.asarray(dv) * sign, jdv, rtol=1e-3, atol=1e-4)
    with pytest.raises(NotImplementedError, match="enable_eigvec_derivs=True"):
        irax.jvp(inp.linalg.eig, (A3,), (t,))


def test_vmap_text_poly_and_errors_match_jax():
    batch = CASES[3]
    np.testing.assert_allclose(irax.vmap(inp.linalg.eigvals)(batch), jax.vmap(jnp.linalg.eigvals)(batch),
                               rtol=1e-5, atol=1e-5)
    moved = np.moveaxis(batch, 0, 1)
    np.testing.assert_allclose(irax.jit(irax.vmap(inp.linalg.eigvals, in_axes=1))(moved),
                               jax.vmap(jnp.linalg.eigvals, in_axes=1)(moved), rtol=1e-5, atol=1e-5)
    for name in ("eig", "eigvals"):
        assert (str(irax.make_jaxpr(getattr(inp.linalg, name))(A3))
                == str(jax.make_jaxpr(getattr(jnp.linalg, name))(A3)))
    assert str(irax.make_jaxpr(ilinalg.eig)(A3)) == str(jax.make_jaxpr(jax.lax.linalg.eig)(A3))
    np.testing.assert_allclose(irax.jit(inp.poly)(A3), jnp.poly(A3), rtol=1e-4, atol=1e-4)
    with pytest.raises(ValueError, match=r"The input to eig must be a square matrix. Got shape \(2, 3\)."):
        inp.linalg.eig(np.ones((2, 3), np.float32))
    with pytest.raises(TypeError, match="Input 0 to eig must have rank at least 2"):
        inp.linalg.eigvals(np.ones(3, np.float32))
