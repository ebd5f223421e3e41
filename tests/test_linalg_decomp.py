"""The decompositions ``eigh``, ``svd`` and ``qr`` and ``jnp.linalg`` on them, against NumPy and JAX: values
eagerly (NumPy rules) and under ``irax.jit`` (Jacobi sweeps and Householder steps in IREE while loops), 1x1,
batched, empty and 64x64 matrices, reconstruction and orthogonality, ``make_jaxpr`` text, JVPs and gradients vs
JAX, vmap vs JAX, and JAX's errors. Eigen- and singular vectors are compared up to sign.
"""
from __future__ import annotations

import numpy as np
import pytest

import irax
import irax.numpy as inp
from irax.lax import linalg as ilinalg

jax = pytest.importorskip("jax")
import jax.numpy as jnp  # noqa: E402

_rng = np.random.default_rng(7)


def _sym(*shape):
    a = _rng.standard_normal(shape).astype(np.float32)
    return ((a + np.swapaxes(a, -1, -2)) / 2).astype(np.float32)


def _mat(*shape):
    return _rng.standard_normal(shape).astype(np.float32)


def _signs_fixed(v):
    """Each column scaled to a positive entry of largest magnitude: vectors comparable up to sign."""
    v = np.asarray(v, np.float64)
    idx = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return v * np.sign(np.take_along_axis(v, idx, axis=-2))


def _eye_close(q, atol=2e-5):
    q = np.asarray(q)
    np.testing.assert_allclose(np.swapaxes(q, -1, -2) @ q, np.broadcast_to(np.eye(q.shape[-1]), q.shape[:-2] +
                                                                            (q.shape[-1],) * 2), atol=atol)


def _check_eigh(a, w, v, tol=2e-5):
    scale = max(1.0, float(np.abs(a).max()))
    np.testing.assert_allclose(w, np.linalg.eigvalsh(a.astype(np.float64)), atol=tol * scale * a.shape[-1])
    np.testing.assert_allclose(v @ (np.asarray(w)[..., None] * np.swapaxes(v, -1, -2)), a,
                               atol=tol * scale * a.shape[-1])
    _eye_close(v)


EIGH_CASES = [_sym(1, 1), _sym(3, 3), _sym(2, 4, 4), _sym(6, 6)]


@pytest.mark.parametrize("a", EIGH_CASES, ids=lambda a: "x".join(map(str, a.shape)))
def test_eigh_eager_jit_numpy(a):
    v, w = ilinalg.eigh(a)
    jv, jw = irax.jit(ilinalg.eigh)(a)
    _check_eigh(a, np.asarray(w), np.asarray(v))
    _check_eigh(a, np.asarray(jw), np.asarray(jv))
    np.testing.assert_allclose(jw, w, atol=1e-5)
    np.testing.assert_allclose(_signs_fixed(jv), _signs_fixed(v), atol=1e-4)
    rv, rw = jax.lax.linalg.eigh(a)
    np.testing.assert_allclose(_signs_fixed(jv), _signs_fixed(rv), atol=1e-4)
    assert jv.dtype == v.dtype == np.float32 and jw.shape == a.shape[:-1]


def test_eigh_options_and_triangles():
    a = _mat(4, 4)
    for lower in (True, False):
        w = irax.jit(lambda x: inp.linalg.eigh(x, UPLO="L" if lower else "U", symmetrize_input=False))(a)[0]
        tri = np.tril(a) if lower else np.triu(a)
        full = tri + np.swapaxes(tri, -1, -2) - np.diag(np.diag(a))
        np.testing.assert_allclose(w, np.linalg.eigvalsh(full), atol=1e-5)
    s = _sym(5, 5)
    v, w = irax.jit(lambda x: ilinalg.eigh(x, subset_by_index=(1, 4)))(s)
    np.testing.assert_allclose(w, np.linalg.eigvalsh(s)[1:4], atol=1e-5)
    assert v.shape == (5, 3)
    np.testing.assert_allclose(inp.linalg.eigvalsh(s), jnp.linalg.eigvalsh(s), atol=1e-5)


def test_eigh_64_accuracy_and_degenerate():
    a = _sym(64, 64)
    v, w = irax.jit(ilinalg.eigh)(a)
    _check_eigh(a, np.asarray(w), np.asarray(v), tol=1e-5)
    eye_v, eye_w = irax.jit(ilinalg.eigh)(np.eye(3, dtype=np.float32) * 2)
    np.testing.assert_array_equal(eye_w, [2, 2, 2])
    _eye_close(eye_v)


SVD_CASES = [_mat(1, 1), _mat(3, 2), _mat(2, 3), _mat(4, 4), _mat(2, 5, 3)]


def _check_svd(a, u, s, vt, full):
    k = min(a.shape[-2:])
    np.testing.assert_allclose(s, np.linalg.svd(a.astype(np.float64), compute_uv=False), atol=2e-5)
    rec = (np.asarray(u)[..., :, :k] * np.asarray(s)[..., None, :]) @ np.asarray(vt)[..., :k, :]
    np.testing.assert_allclose(rec, a, atol=3e-5)
    _eye_close(u)
    _eye_close(np.swapaxes(vt, -1, -2))
    m, n = a.shape[-2:]
    assert u.shape[-2:] == ((m, m) if full else (m, k)) and vt.shape[-2:] == ((n, n) if full else (k, n))


@pytest.mark.parametrize("a", SVD_CASES, ids=lambda a: "x".join(map(str, a.shape)))
def test_svd_eager_jit_numpy(a):
    def all_forms(x):
        return ilinalg.svd(x), ilinalg.svd(x, full_matrices=False), ilinalg.svd(x, compute_uv=False)
    eager, jitted = all_forms(a), irax.jit(all_forms)(a)
    for got in (eager, jitted):
        _check_svd(a, *got[0], full=True)
        _check_svd(a, *got[1], full=False)
        np.testing.assert_allclose(got[2], got[1][1], atol=1e-6)
    np.testing.assert_allclose(jitted[1][1], eager[1][1], atol=1e-5)
    np.testing.assert_allclose(_signs_fixed(jitted[1][0]), _signs_fixed(eager[1][0]), atol=1e-4)
    ru, _, _ = jax.lax.linalg.svd(a, full_matrices=False)
    np.testing.assert_allclose(_signs_fixed(jitted[1][0]), _signs_fixed(ru), atol=1e-4)


def test_svd_rank_deficient_and_64():
    a = _mat(5, 4)
    a[:, 3] = a[:, 0] - a[:, 1]
    u, s, vt = irax.jit(ilinalg.svd)(a)
    _check_svd(a, u, s, vt, full=True)
    assert abs(float(s[-1])) < 1e-5
    u2, s2, vt2 = irax.jit(lambda x: ilinalg.svd(x, full_matrices=False, subset_by_index=(1, 3)))(a)
    assert u2.shape == (5, 2) and vt2.shape == (2, 4)
    np.testing.assert_allclose(s2, s[1:3], atol=1e-5)
    np.testing.assert_allclose(_signs_fixed(u2), _signs_fixed(np.asarray(u)[:, 1:3]), atol=1e-4)
    b = _mat(64, 64)
    u, s, vt = irax.jit(lambda x: ilinalg.svd(x, full_matrices=False))(b)
    np.testing.assert_allclose(s, np.linalg.svd(b.astype(np.float64), compute_uv=False), atol=1e-4)
    np.testing.assert_allclose((np.asarray(u) * np.asarray(s)) @ np.asarray(vt), b, atol=1e-4)


QR_CASES = [_mat(1, 1), _mat(4, 3), _mat(3, 5), _mat(2, 4, 4)]


@pytest.mark.parametrize("a", QR_CASES, ids=lambda a: "x".join(map(str, a.shape)))
def test_qr_eager_jit_numpy_jax(a):
    def modes(x):
        return inp.linalg.qr(x), inp.linalg.qr(x, mode="complete"), inp.linalg.qr(x, mode="r")
    eager, jitted = modes(a), irax.jit(modes)(a)
    for got in (eager, jitted):
        for (q, r), mode in zip(got[:2], ("reduced", "complete")):
            rq, rr = np.linalg.qr(a, mode=mode)
            np.testing.assert_allclose(q, rq, atol=2e-5)
            np.testing.assert_allclose(r, rr, atol=2e-5)
            np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=2e-5)
            _eye_close(q)
            np.testing.assert_array_equal(np.tril(np.asarray(r), -1), 0)
        np.testing.assert_allclose(got[2], got[0][1], atol=1e-6)
    jq, jr = jnp.linalg.qr(a)
    np.testing.assert_allclose(jitted[0][0], jq, atol=2e-5)
    np.testing.assert_allclose(jitted[0][1], jr, atol=2e-5)


@pytest.mark.parametrize("shape", [(0, 0), (0, 3), (3, 0), (2, 0, 0)])
def test_empty_matrices_match_jax(shape):
    a = np.zeros(shape, np.float32)
    cases = [(lambda x: inp.linalg.svd(x), jnp.linalg.svd), (lambda x: inp.linalg.qr(x, mode="complete"),
                                                            lambda x: jnp.linalg.qr(x, mode="complete"))]
    if shape[-1] == shape[-2]:
        cases.append((inp.linalg.eigh, jnp.linalg.eigh))
    for mine, theirs in cases:
        want = jax.tree.leaves(theirs(a))
        for got in (mine(a), irax.jit(mine)(a)):
            for g, w in zip(jax.tree.leaves(got), want):
                assert g.shape == w.shape and g.dtype == w.dtype
                np.testing.assert_allclose(g, w)


def _jvp_both(fi, fj, x, t):
    _, ti = irax.jvp(fi, (x,), (t,))
    _, tj = jax.jvp(fj, (x,), (t,))
    for a, b in zip(jax.tree.leaves(ti), jax.tree.leaves(tj)):
        np.testing.assert_allclose(a, b, atol=5e-4, rtol=1e-3)


def test_eigh_svd_qr_jvp_match_jax():
    x, t = _mat(4, 4), _mat(4, 4)
    _jvp_both(lambda a: ilinalg.eigh(a)[1], lambda a: jax.lax.linalg.eigh(a)[1], x, t)
    _jvp_both(lambda a: abs(ilinalg.eigh(a)[0]), lambda a: abs(jax.lax.linalg.eigh(a)[0]), x, t)
    for shape in [(4, 3), (3, 4)]:
        y, ty = x[:shape[0], :shape[1]], t[:shape[0], :shape[1]]
        _jvp_both(lambda a: ilinalg.svd(a, compute_uv=False), lambda a: jax.lax.linalg.svd(a, compute_uv=False),
                  y, ty)
        _jvp_both(lambda a: [abs(o) for o in ilinalg.svd(a, full_matrices=False)],
                  lambda a: [abs(o) for o in jax.lax.linalg.svd(a, full_matrices=False)], y, ty)
        _jvp_both(lambda a: ilinalg.qr(a, full_matrices=False), lambda a: jax.lax.linalg.qr(a, full_matrices=False),
                  y, ty)
        _jvp_both(ilinalg.qr, jax.lax.linalg.qr, y, ty)


def test_grads_match_jax():
    x = _mat(3, 3)

    def loss(lib):
        la = lib.numpy.linalg
        return lambda a: (la.eigvalsh(a) ** 2).sum() + la.svd(a, compute_uv=False).sum() + \
            (la.qr(a)[1] ** 2).sum() + (la.pinv(a) ** 2).sum() + la.norm(a, 2)
    np.testing.assert_allclose(irax.jit(irax.grad(loss(irax)))(x), jax.grad(loss(jax))(x), atol=2e-3, rtol=2e-3)
    s = _sym(3, 3)

    def hermitian(lib):
        return lambda a: (lib.numpy.linalg.pinv(a, hermitian=True) ** 2).sum() + \
            lib.numpy.linalg.svd(a, hermitian=True, compute_uv=False).sum()
    np.testing.assert_allclose(irax.grad(hermitian(irax))(s), jax.grad(hermitian(jax))(s), atol=2e-3, rtol=2e-3)


def test_vmap_matches_jax():
    a, s = _mat(3, 4, 3), _sym(3, 3, 3)
    got = irax.vmap(lambda x: inp.linalg.svd(x, compute_uv=False), in_axes=2)(a)
    np.testing.assert_allclose(got, jax.vmap(lambda x: jnp.linalg.svd(x, compute_uv=False), in_axes=2)(a), atol=2e-5)
    got = irax.jit(irax.vmap(inp.linalg.eigvalsh, in_axes=1))(s)
    np.testing.assert_allclose(got, jax.vmap(jnp.linalg.eigvalsh, in_axes=1)(s), atol=2e-5)
    got = irax.vmap(lambda x: inp.linalg.qr(x, mode="r"), in_axes=0)(a)
    np.testing.assert_allclose(got, jax.vmap(lambda x: jnp.linalg.qr(x, mode="r"))(a), atol=2e-5)


def test_jnp_linalg_on_svd_match_jax():
    a, r = _mat(4, 3), _mat(5, 4)
    r[:, 3] = r[:, 0] + r[:, 1]
    cases = [(lambda m, x: m.linalg.pinv(x), a), (lambda m, x: m.linalg.matrix_rank(x), r),
             (lambda m, x: m.linalg.cond(x), a[:3]), (lambda m, x: m.linalg.cond(x, -2), a),
             (lambda m, x: m.linalg.norm(x, 2), a), (lambda m, x: m.linalg.norm(x, -2), a),
             (lambda m, x: m.linalg.norm(x, "nuc", keepdims=True), a), (lambda m, x: m.linalg.svdvals(x), a),
             (lambda m, x: m.linalg.lstsq(x, x[:, 0] + 1), a), (lambda m, x: m.linalg.matrix_rank(x[0]), r),
             (lambda m, x: m.linalg.svd(x @ x.T, hermitian=True, compute_uv=False), a),
             (lambda m, x: m.linalg.pinv(x @ x.T + 1, hermitian=True), a)]
    for fn, x in cases:
        want = jax.tree.leaves(fn(jnp, x))
        for got in (fn(inp, x), irax.jit(lambda y, fn=fn: fn(inp, y))(x)):
            for g, w in zip(jax.tree.leaves(got), want):
                assert g.shape == w.shape and g.dtype == w.dtype
                np.testing.assert_allclose(g, w, atol=5e-5, rtol=5e-5)


@pytest.mark.parametrize("name, args", [
    ("eigh", (lambda m: m.numpy.linalg.eigh, np.ones((3, 3), np.float32))),
    ("eigvalsh", (lambda m: m.numpy.linalg.eigvalsh, np.ones((2, 3, 3), np.float32))),
    ("svd", (lambda m: m.numpy.linalg.svd, np.ones((3, 2), np.float32))),
    ("svd_thin", (lambda m: lambda x: m.numpy.linalg.svd(x, full_matrices=False), np.ones((2, 3), np.float32))),
    ("svdvals", (lambda m: m.numpy.linalg.svdvals, np.ones((3, 2), np.float32))),
    ("qr", (lambda m: m.numpy.linalg.qr, np.ones((3, 2), np.float32))),
    ("qr_r", (lambda m: lambda x: m.numpy.linalg.qr(x, mode="r"), np.ones((3, 2), np.float32))),
    ("qr_complete", (lambda m: lambda x: m.numpy.linalg.qr(x, mode="complete"), np.ones((3, 2), np.float32))),
    ("norm2", (lambda m: lambda x: m.numpy.linalg.norm(x, 2), np.ones((3, 2), np.float32))),
    ("matrix_rank", (lambda m: m.numpy.linalg.matrix_rank, np.ones((3, 2), np.float32))),
    ("cond", (lambda m: m.numpy.linalg.cond, np.ones((3, 3), np.float32))),
    ("lax_eigh", (lambda m: lambda x: m.lax.linalg.eigh(x, subset_by_index=(0, 2)), np.ones((3, 3), np.float32))),
])
def test_make_jaxpr_text_matches_jax(name, args):
    fn, x = args
    assert str(irax.make_jaxpr(fn(irax))(x)) == str(jax.make_jaxpr(fn(jax))(x))


def _raises_like_jax(fi, fj, x):
    with pytest.raises(Exception) as want:
        fj(x)
    with pytest.raises(want.type) as got:
        fi(x)
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize("case", [
    (lambda m: m.lax.linalg.svd, np.ones((3,), np.float32)),
    (lambda m: m.lax.linalg.qr, np.ones((3,), np.float32)),
    (lambda m: m.numpy.linalg.svd, np.ones((3,), np.float32)),
    (lambda m: m.numpy.linalg.eigh, np.ones((2, 3), np.float32)),
    (lambda m: lambda x: m.lax.linalg.eigh(x, symmetrize_input=False), np.ones((2, 3), np.float32)),
    (lambda m: lambda x: m.lax.linalg.svd(x, subset_by_index=(0, 1)), np.ones((2, 2), np.float32)),
    (lambda m: lambda x: m.numpy.linalg.eigh(x, UPLO="X"), np.ones((2, 2), np.float32)),
    (lambda m: lambda x: m.numpy.linalg.qr(x, mode="bad"), np.ones((2, 2), np.float32)),
    (lambda m: m.numpy.linalg.cond, np.ones((3,), np.float32)),
])
def test_errors_match_jax(case):
    fn, x = case
    _raises_like_jax(fn(irax), fn(jax), x)


def _cmat(*shape):
    return (_rng.standard_normal(shape) + 1j * _rng.standard_normal(shape)).astype(np.complex64)


def _hermitian(*shape):
    a = _cmat(*shape)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(np.complex64)


def _unitary_close(q, atol=2e-5):
    q = np.asarray(q)
    np.testing.assert_allclose(np.conj(np.swapaxes(q, -1, -2)) @ q, np.broadcast_to(
        np.eye(q.shape[-1]), q.shape[:-2] + (q.shape[-1],) * 2), atol=atol)


@pytest.mark.parametrize("run", ["eager", "jit"])
def test_complex_decompositions_match_jax(run):
    """Hermitian eigh, complex QR (LAPACK's reflectors: Q and R equal JAX's) and SVD; vectors are unique up to a
    phase, so they are checked by reconstruction and unitarity."""
    call = (lambda f: f) if run == "eager" else irax.jit
    h = _hermitian(2, 5, 5)
    v, w = call(ilinalg.eigh)(h)
    assert np.asarray(w).dtype == np.float32 and np.asarray(v).dtype == np.complex64
    np.testing.assert_allclose(w, jax.lax.linalg.eigh(h)[1], atol=3e-5)
    v = np.asarray(v)
    np.testing.assert_allclose(v @ (np.asarray(w)[..., None] * np.conj(np.swapaxes(v, -1, -2))), h, atol=3e-5)
    _unitary_close(v)
    for shape in [(4, 3), (3, 5), (4, 4), (2, 1, 1)]:
        x = _cmat(*shape)
        for full in (False, True):
            got = call(lambda a: ilinalg.qr(a, full_matrices=full))(x)
            for g, want in zip(got, jax.lax.linalg.qr(x, full_matrices=full)):
                np.testing.assert_allclose(g, want, atol=3e-6)
        u, s, vt = (np.asarray(o) for o in call(lambda a: ilinalg.svd(a, full_matrices=False))(x))
        np.testing.assert_allclose(s, jax.lax.linalg.svd(x, compute_uv=False), atol=3e-6)
        np.testing.assert_allclose((u * s[..., None, :]) @ vt, x, atol=3e-6)
        _unitary_close(u)
        _unitary_close(np.conj(np.swapaxes(vt, -1, -2)))


def test_complex_jvps_grads_and_jnp_linalg_match_jax():
    h, th = _hermitian(4, 4), _hermitian(4, 4)
    _jvp_both(lambda a: ilinalg.eigh(a)[1], lambda a: jax.lax.linalg.eigh(a)[1], h, th)
    for shape in [(4, 3), (3, 4), (4, 4)]:
        x, t = _cmat(*shape), _cmat(*shape)
        _jvp_both(lambda a: ilinalg.qr(a, full_matrices=False), lambda a: jax.lax.linalg.qr(a, full_matrices=False),
                  x, t)
        _jvp_both(lambda a: ilinalg.svd(a, compute_uv=False), lambda a: jax.lax.linalg.svd(a, compute_uv=False),
                  x, t)
        _jvp_both(lambda a: [abs(o) for o in ilinalg.svd(a, full_matrices=False)],
                  lambda a: [abs(o) for o in jax.lax.linalg.svd(a, full_matrices=False)], x, t)
    x = _cmat(4, 3)
    for f in (lambda m: m.linalg.pinv, lambda m: lambda a: m.linalg.norm(a, "nuc"),
              lambda m: lambda a: m.linalg.lstsq(a, a[:, 0])[0], lambda m: lambda a: m.linalg.qr(a, mode="r")):
        np.testing.assert_allclose(irax.jit(f(inp))(x), f(jnp)(x), atol=3e-5)
    assert int(inp.linalg.matrix_rank(x)) == int(jnp.linalg.matrix_rank(x))

    def loss(lib):
        return lambda a: (lib.numpy.linalg.svd(a, compute_uv=False) ** 2).sum() + \
            lib.numpy.abs(lib.numpy.linalg.qr(a)[1]).sum()
    np.testing.assert_allclose(irax.grad(loss(irax))(x), jax.grad(loss(jax))(x), atol=3e-5)


def test_float64_and_half_precision():
    from irax.config import enable_x64
    with enable_x64():
        a = _rng.standard_normal((5, 4))
        s = (a[:4] + a[:4].T) / 2
        w = irax.jit(inp.linalg.eigvalsh)(s)
        u, sv, vt = irax.jit(lambda x: inp.linalg.svd(x, full_matrices=False))(a)
        q, r = irax.jit(inp.linalg.qr)(a)
        assert w.dtype == sv.dtype == q.dtype == np.float64
        np.testing.assert_allclose(w, np.linalg.eigvalsh(s), atol=1e-13)
        np.testing.assert_allclose(sv, np.linalg.svd(a, compute_uv=False), atol=1e-13)
        np.testing.assert_allclose((np.asarray(u) * np.asarray(sv)) @ np.asarray(vt), a, atol=1e-13)
        np.testing.assert_allclose(np.asarray(q) @ np.asarray(r), a, atol=1e-13)
    h = _sym(3, 3).astype(np.float16)
    w_jit, w_eager = irax.jit(inp.linalg.eigvalsh)(h), inp.linalg.eigvalsh(h)
    assert w_jit.dtype == w_eager.dtype == np.float16
    np.testing.assert_allclose(w_jit.astype(np.float32), w_eager.astype(np.float32), atol=2e-3)
    np.testing.assert_allclose(w_jit.astype(np.float32), np.linalg.eigvalsh(h.astype(np.float32)), atol=2e-3)


def test_scipy_linalg_matches_jax():
    import irax.scipy.linalg as isl
    import jax.scipy.linalg as jsl
    a = _mat(4, 3)
    s = _sym(3, 3)
    cases = [lambda m: m.qr(a), lambda m: m.qr(a, mode="economic"), lambda m: m.qr(a, mode="r"),
             lambda m: m.svd(a, compute_uv=False), lambda m: m.svd(a)[1], lambda m: m.eigh(s, eigvals_only=True),
             lambda m: m.eigh(s)[0]]
    for fn in cases:
        want = jax.tree.leaves(fn(jsl))
        got = jax.tree.leaves(fn(isl))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, atol=2e-5)
    r_only = [str(m.make_jaxpr(lambda x, sl=sl: sl.qr(x, mode="r"))(a)) for m, sl in ((irax, isl), (jax, jsl))]
    assert r_only[0] == r_only[1]
    assert str(irax.make_jaxpr(isl.eigh)(s)) == str(jax.make_jaxpr(jsl.eigh)(s))


def test_polyfit_matches_jax():
    x = np.linspace(-1, 1, 7).astype(np.float32)
    y = (3 * x ** 2 - x + 0.5 + 0.01 * np.sin(9 * x)).astype(np.float32)
    for kwargs, ys in [({}, y), ({"full": True}, y), ({"cov": True}, np.stack([y, 2 * y], 1)),
                       ({"w": np.full(7, 2, np.float32)}, y)]:
        want = jax.tree.leaves(jnp.polyfit(x, ys, 2, **kwargs))
        got = jax.tree.leaves(inp.polyfit(x, ys, 2, **kwargs))
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(g, w, atol=1e-5, rtol=1e-4)


def test_multivariate_normal_and_orthogonal_match_jax():
    mean = np.array([1.0, -2.0, 0.5], np.float32)
    a = _mat(3, 3)
    cov = (a @ a.T + np.eye(3, dtype=np.float32)).astype(np.float32)
    for method in ("cholesky", "eigh", "svd"):  # one compile each: the samples JAX's and the covariance's
        got = irax.random.multivariate_normal(irax.random.PRNGKey(4), mean, cov, (4000,), method=method)
        want = jax.random.multivariate_normal(jax.random.PRNGKey(4), mean, cov, (4000,), method=method)
        assert got.shape == want.shape == (4000, 3)
        if method == "cholesky":
            np.testing.assert_allclose(got, want, atol=1e-4)
        np.testing.assert_allclose(np.cov(np.asarray(got).T), cov, atol=0.35)
    with pytest.raises(ValueError, match="method must be one of"):
        irax.random.multivariate_normal(irax.random.PRNGKey(0), mean, cov, method="qr")
    for shape in [(4, 3), (3, 5), (3, 3, 2, 4)]:
        got = irax.nn.initializers.orthogonal()(irax.random.PRNGKey(1), shape)
        want = jax.nn.initializers.orthogonal()(jax.random.PRNGKey(1), shape)
        np.testing.assert_allclose(got, want, atol=1e-5)
    got = irax.nn.initializers.delta_orthogonal()(irax.random.PRNGKey(1), (3, 3, 4))
    np.testing.assert_allclose(got, jax.nn.initializers.delta_orthogonal()(jax.random.PRNGKey(1), (3, 3, 4)), atol=1e-5)
    got = irax.random.orthogonal(irax.random.PRNGKey(2), 4, (2,), m=3)
    np.testing.assert_allclose(got, jax.random.orthogonal(jax.random.PRNGKey(2), 4, (2,), m=3), atol=1e-5)


def test_non_finite_matrices_give_nan():
    a = np.stack([np.eye(3, dtype=np.float32)] * 3)
    a[0, 0, 1] = a[0, 1, 0] = np.nan
    a[1, 1, 1] = np.inf
    for fn in (inp.linalg.eigh, lambda x: inp.linalg.svd(x[:, :, :2])):
        for got in (fn(a), irax.jit(fn)(a)):
            for out in got:
                assert np.isnan(np.asarray(out)[:2]).all() and not np.isnan(np.asarray(out)[2]).any()
