"""The ``jax.scipy.linalg`` functions JAX writes in Python on other ops (the matrix constructors, ``polar``,
``expm_frechet``, ``qr_multiply``, ``rsf2csf``, ``eigh_tridiagonal``) and ``lax.linalg.qdwh``, against JAX: values
and dtypes eagerly and under ``irax.jit`` (few compiles: one jit per group of functions), ``make_jaxpr`` text,
gradients, and JAX's errors.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
from irax.ir.errors import CompileError

jax = pytest.importorskip("jax")

F32, C64 = np.float32, np.complex64
_rng = np.random.default_rng(11)


def _mat(*shape, dtype=F32):
    a = _rng.standard_normal(shape)
    if dtype == C64:
        a = a + 1j * _rng.standard_normal(shape)
    return a.astype(dtype)


def _sl(m):
    return m.scipy.linalg


_A3, _A3B, _A42, _A42C = _mat(3, 3), _mat(2, 3, 3), _mat(4, 2), _mat(4, 2, dtype=C64)
_E3, _E3B = _mat(3, 3), _mat(2, 3, 3)
# A real Schur form (2x2 block for a complex pair), as scipy.linalg.schur gives it, and its Schur vectors.
_TR = np.array([[3.7621, -2.1684, 1.3801], [0., -0.8811, -0.3489], [0., 2.3703, -0.8811]], F32)
_ZR = np.linalg.qr(_mat(3, 3))[0].astype(F32)
_D5, _E4 = _mat(5), _mat(4)

# name -> (function of the module (irax or jax), arguments); values compared eagerly and (CONSTRUCTORS and
# DECOMPOSITIONS) under jit. JAX's side dominates the run time (an XLA compile per case), so the cases are few.
CONSTRUCTORS = {
    "companion": (lambda m: _sl(m).companion, (np.array([1., -10., 31., -30.], F32),)),
    "companion_int_n2": (lambda m: _sl(m).companion, (np.array([2, 3]),)),
    "companion_batched_complex": (lambda m: _sl(m).companion, (_mat(2, 4, dtype=C64),)),
    "leslie": (lambda m: _sl(m).leslie, (np.array([0.1, 2., 1., 0.1], F32), np.array([0.2, 0.8, 0.7], F32))),
    "leslie_batched_int": (lambda m: _sl(m).leslie, (_mat(2, 3), np.array([1, 2], np.int32))),
    "fiedler_companion": (lambda m: _sl(m).fiedler_companion, (np.array([1., -16., 86., -176., 105.], F32),)),
    "fiedler_companion_n1": (lambda m: _sl(m).fiedler_companion, (np.array([2.], F32),)),
    "fiedler_companion_batched_n2": (lambda m: _sl(m).fiedler_companion, (_mat(3, 2),)),
    "convolution_matrix_same_int": (lambda m: lambda a: _sl(m).convolution_matrix(a, 5, mode="same"),
                                    (np.array([-1, 4, -2]),)),
    "convolution_matrix_valid_batched": (lambda m: lambda a: _sl(m).convolution_matrix(a, 4, "valid"), (_mat(2, 3),)),
    "convolution_matrix_m1n1": (lambda m: lambda a: _sl(m).convolution_matrix(a, 1), (_mat(1),)),
    "invhilbert": (lambda m: lambda: _sl(m).invhilbert(4), ()),
    "invhilbert_0": (lambda m: lambda: _sl(m).invhilbert(0), ()),
    "pascal": (lambda m: lambda: _sl(m).pascal(5), ()),
    "pascal_lower_1": (lambda m: lambda: _sl(m).pascal(1, kind="lower"), ()),
    "invpascal": (lambda m: lambda: _sl(m).invpascal(5), ()),
    "invpascal_upper": (lambda m: lambda: _sl(m).invpascal(3, "upper"), ()),
    "helmert_full": (lambda m: lambda: _sl(m).helmert(4, full=True), ()),
    "helmert_1": (lambda m: lambda: _sl(m).helmert(1), ()),
    "hadamard": (lambda m: lambda: _sl(m).hadamard(8), ()),
    "hadamard_1_f32": (lambda m: lambda: _sl(m).hadamard(1, F32), ()),
    "dft_sqrtn": (lambda m: lambda: _sl(m).dft(3, "sqrtn"), ()),
    "dft_n_1": (lambda m: lambda: _sl(m).dft(1, scale="n", dtype=C64), ()),
    "dft_0": (lambda m: lambda: _sl(m).dft(0), ()),
}

DECOMPOSITIONS = {
    "polar_svd_batched": (lambda m: lambda a: _sl(m).polar(a, method="svd"), (_A3B,)),
    "expm_frechet": (lambda m: _sl(m).expm_frechet, (_A3, _E3)),
    "qr_multiply_batched": (lambda m: _sl(m).qr_multiply, (_mat(2, 4, 3), _mat(5, 4))),
    "qr_multiply_left_conjugate": (lambda m: lambda a, c: _sl(m).qr_multiply(a, c, mode="left", conjugate=True),
                                   (_mat(4, 3, dtype=C64), _mat(3, 2))),
    "qr_multiply_pivoting": (lambda m: lambda a, c: _sl(m).qr_multiply(a, c, pivoting=True),
                             (_mat(2, 4, 3), _mat(5, 4))),
    "rsf2csf": (lambda m: _sl(m).rsf2csf, (_TR, _ZR)),
    "eigh_tridiagonal_select": (lambda m: lambda d, e, tol: _sl(m).eigh_tridiagonal(
        d, e, eigvals_only=True, select="i", select_range=(1, 3), tol=tol), (_D5, _E4, F32(1e-3))),
}

# Eager only: they take more compiles than they add (qdwh and polar's default: test_jit_qdwh_polar, one module).
EAGER = {
    "polar_svd_left_complex": (lambda m: lambda a: _sl(m).polar(a, "left", method="svd"), (_A42C,)),
    "expm_frechet_batched_complex": (lambda m: lambda a, e: _sl(m).expm_frechet(a, e, compute_expm=False),
                                     (_mat(2, 2, 2, dtype=C64), _mat(2, 2, 2, dtype=C64))),
    "qr_multiply_wide": (lambda m: _sl(m).qr_multiply, (_mat(2, 3), _mat(4, 2))),
    "qr_multiply_vector": (lambda m: _sl(m).qr_multiply, (_mat(4, 3), _mat(4))),
    "qr_multiply_vector_left": (lambda m: lambda a, c: _sl(m).qr_multiply(a, c, mode="left"), (_mat(4, 3), _mat(3))),
    "rsf2csf_batched": (lambda m: _sl(m).rsf2csf, (np.stack([_TR, np.triu(_mat(3, 3))]), _ZR)),
    "rsf2csf_1": (lambda m: _sl(m).rsf2csf, (_mat(1, 1), _mat(1, 1))),
    "eigh_tridiagonal_complex": (lambda m: lambda d, e: _sl(m).eigh_tridiagonal(d, e, eigvals_only=True),
                                 (_mat(4, dtype=C64), _mat(3, dtype=C64))),
    "eigh_tridiagonal_18": (lambda m: lambda d, e: _sl(m).eigh_tridiagonal(d, e, eigvals_only=True),
                            (np.arange(18, dtype=F32), np.ones(17, F32))),
    "eigh_tridiagonal_vectors_1": (lambda m: _sl(m).eigh_tridiagonal, (_mat(1), _mat(0))),
    "qdwh": (lambda m: m.lax.linalg.qdwh, (_mat(5, 3),)),
    "qdwh_complex": (lambda m: m.lax.linalg.qdwh, (_mat(4, 3, dtype=C64),)),
    "qdwh_dynamic_shape": (lambda m: lambda x: m.lax.linalg.qdwh(x, dynamic_shape=(3, 2), max_iterations=4),
                           (_mat(4, 3),)),
    "polar": (lambda m: _sl(m).polar, (_A3,)),
    "polar_left_batched_complex": (lambda m: lambda a: _sl(m).polar(a, side="left"), (_mat(2, 2, 3, dtype=C64),)),
    "polar_0x0": (lambda m: _sl(m).polar, (np.zeros((0, 0), F32),)),
}

ALL = {**CONSTRUCTORS, **DECOMPOSITIONS, **EAGER}
_JAX_VALUES = {}


def _jax_value(name):
    """JAX's result for a case, computed once (the eager and the jit tests share it)."""
    if name not in _JAX_VALUES:
        fn, args = ALL[name]
        _JAX_VALUES[name] = fn(jax)(*args)
    return _JAX_VALUES[name]


def _assert_like_jax(got, want, rtol=2e-5, atol=2e-5):
    got, want = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.shape, g.dtype) == (w.shape, w.dtype)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol * max(1.0, float(np.abs(w).max(initial=0))))


@pytest.mark.parametrize("name", list(ALL))
def test_eager_values_match_jax(name):
    fn, args = ALL[name]
    _assert_like_jax(fn(irax)(*args), _jax_value(name))


@pytest.mark.parametrize("group", ["constructors", "decompositions"])
def test_jit_values_match_jax(group):
    """One compile for each group: every function's outputs from one jitted program."""
    cases = CONSTRUCTORS if group == "constructors" else DECOMPOSITIONS
    names = list(cases)
    args = {name: cases[name][1] for name in names}
    out = irax.jit(lambda args: {name: cases[name][0](irax)(*args[name]) for name in names})(args)
    for name in names:
        _assert_like_jax(out[name], _jax_value(name))


def test_jit_qdwh_polar():
    """QDWH's choleskys before and in its while loop leave IREE 3.13 with a dispatch outside every execution
    region: the module compiles again with constant expressions hoisted (backends/iree.py)."""
    def both(m):
        return lambda a, c: (_sl(m).polar(a), m.lax.linalg.qdwh(c))
    args = (_A3, _mat(4, 3, dtype=C64))
    _assert_like_jax(irax.jit(both(irax))(*args), both(jax)(*args), rtol=1e-4, atol=1e-4)


_JIT_XFAIL = {
    "rsf2csf_batched": (irax.scipy.linalg.rsf2csf, (np.stack([_TR, _TR]), _ZR), (
        "irax bug: IREE rejects vmap of a fori_loop that does a dynamic_update_slice and then x.at[i, j].set "
        "('linalg.generic' op write affecting operations on global resources are restricted to workgroup "
        "distributed contexts)")),
}


@pytest.mark.parametrize("name", [pytest.param(n, marks=pytest.mark.xfail(strict=True, raises=CompileError,
                                                                          reason=_JIT_XFAIL[n][2]))
                                  for n in _JIT_XFAIL])
def test_jit_xfail(name):
    fn, args, _ = _JIT_XFAIL[name]
    irax.jit(fn)(*args)


# Not compared: qdwh with dynamic_shape (JAX masks x outside its default_matmul_precision context, so its jaxpr
# keeps a second copy of _where that irax's shares), and eigenvectors of eigh_tridiagonal (irax's random.key binds
# no random_seed).
JAXPR_CASES = ["companion", "companion_batched_complex", "leslie_batched_int", "fiedler_companion",
               "fiedler_companion_batched_n2", "convolution_matrix_same_int", "invhilbert", "pascal",
               "invpascal_upper", "helmert_full", "hadamard", "dft_sqrtn", "polar_svd_batched",
               "polar_svd_left_complex", "expm_frechet", "qr_multiply_batched", "qr_multiply_left_conjugate",
               "qr_multiply_pivoting", "rsf2csf", "eigh_tridiagonal_select",
               "eigh_tridiagonal_complex", "qdwh", "qdwh_complex", "polar", "polar_left_batched_complex"]


@pytest.mark.parametrize("name", JAXPR_CASES)
def test_make_jaxpr_text_matches_jax(name):
    fn, args = ALL[name]
    assert str(irax.make_jaxpr(fn(irax))(*args)) == str(jax.make_jaxpr(fn(jax))(*args))


def test_grads_match_jax():
    """Reverse mode through the SVD polar factors and through expm_frechet (a second derivative of expm); QDWH's
    while loop has no reverse mode, in JAX as here."""
    a, e = _A3[:2, :2], _E3[:2, :2]

    def polar_loss(m):
        return lambda a: (_sl(m).polar(a, method="svd")[0] * e).sum() + _sl(m).polar(a, method="svd")[1][0, 1]

    def frechet_loss(m):
        return lambda a, e: (_sl(m).expm_frechet(a, e)[1] * _A3[1:, 1:]).sum()
    _assert_like_jax(irax.grad(polar_loss(irax))(a), jax.grad(polar_loss(jax))(a), rtol=1e-4, atol=1e-5)
    _assert_like_jax(irax.grad(frechet_loss(irax), argnums=(0, 1))(a, e),
                     jax.grad(frechet_loss(jax), argnums=(0, 1))(a, e), rtol=1e-4, atol=1e-5)
    message = "Reverse-mode differentiation does not work for lax.while_loop"
    for m in (jax, irax):
        with pytest.raises(ValueError, match=re.escape(message)):
            m.grad(lambda a: _sl(m).polar(a)[0][0, 1])(a)


def test_polar_eps_is_static():
    """JAX's polar passes ``eps`` on to qdwh's static ``eps`` as a traced value; irax's staged functions run
    eagerly as plain calls, so the error shows under jit."""
    message = "Non-hashable static arguments are not supported"
    with pytest.raises(ValueError, match=message):
        jax.scipy.linalg.polar(_A3, eps=1e-3)
    with pytest.raises(ValueError, match=message):
        irax.jit(lambda a: irax.scipy.linalg.polar(a, eps=1e-3))(_A3)


ERRORS = {
    "companion_short": (lambda m: _sl(m).companion, (np.ones(1, F32),)),
    "leslie_short": (lambda m: _sl(m).leslie, (np.ones(1, F32), np.ones(0, F32))),
    "leslie_lengths": (lambda m: _sl(m).leslie, (np.ones(3, F32), np.ones(3, F32))),
    "leslie_list": (lambda m: _sl(m).leslie, ([1., 2.], np.ones(1, F32))),
    "fiedler_companion_empty": (lambda m: _sl(m).fiedler_companion, (np.ones((2, 0), F32),)),
    "convolution_matrix_n0": (lambda m: lambda a: _sl(m).convolution_matrix(a, 0), (np.ones(3, F32),)),
    "convolution_matrix_scalar": (lambda m: lambda a: _sl(m).convolution_matrix(a, 2), (np.float32(1),)),
    "convolution_matrix_empty": (lambda m: lambda a: _sl(m).convolution_matrix(a, 2), (np.ones(0, F32),)),
    "convolution_matrix_mode": (lambda m: lambda a: _sl(m).convolution_matrix(a, 2, "bad"), (np.ones(3, F32),)),
    "pascal_kind": (lambda m: lambda: _sl(m).pascal(3, "bad"), ()),
    "invpascal_kind": (lambda m: lambda: _sl(m).invpascal(3, "bad"), ()),
    "helmert_0": (lambda m: lambda: _sl(m).helmert(0), ()),
    "hadamard_3": (lambda m: lambda: _sl(m).hadamard(3), ()),
    "dft_scale": (lambda m: lambda: _sl(m).dft(3, "bad"), ()),
    "dft_real_dtype": (lambda m: lambda: _sl(m).dft(3, dtype=F32), ()),
    "polar_1d": (lambda m: _sl(m).polar, (np.ones(3, F32),)),
    "polar_side": (lambda m: lambda a: _sl(m).polar(a, side="up"), (_A3,)),
    "polar_method": (lambda m: lambda a: _sl(m).polar(a, method="bad"), (_A3,)),
    "polar_qdwh_wide": (lambda m: _sl(m).polar, (_A42.T,)),
    "qdwh_wide": (lambda m: m.lax.linalg.qdwh, (_A42.T,)),
    "expm_frechet_1d": (lambda m: _sl(m).expm_frechet, (np.ones(3, F32), np.ones(3, F32))),
    "expm_frechet_4d": (lambda m: _sl(m).expm_frechet, (np.ones((1, 2, 3, 3), F32), np.ones((1, 2, 3, 3), F32))),
    "expm_frechet_e": (lambda m: _sl(m).expm_frechet, (_A3, np.ones((3, 2), F32))),
    "expm_frechet_shapes": (lambda m: _sl(m).expm_frechet, (_A3, np.ones((2, 2), F32))),
    "expm_frechet_int": (lambda m: _sl(m).expm_frechet, (np.eye(2, dtype=np.int32), np.eye(2, dtype=np.int32))),
    "qr_multiply_mode": (lambda m: lambda a, c: _sl(m).qr_multiply(a, c, mode="up"), (_A3, _A3)),
    "qr_multiply_left_shape": (lambda m: lambda a, c: _sl(m).qr_multiply(a, c, mode="left"), (_A42, _A42)),
    "qr_multiply_right_shape": (lambda m: _sl(m).qr_multiply, (_A42, _A42)),
    "rsf2csf_t": (lambda m: _sl(m).rsf2csf, (_A42, _A3)),
    "rsf2csf_z": (lambda m: _sl(m).rsf2csf, (_A3, _A42)),
    "rsf2csf_shapes": (lambda m: _sl(m).rsf2csf, (_A3, np.eye(2, dtype=F32))),
    "eigh_tridiagonal_dtypes": (lambda m: _sl(m).eigh_tridiagonal, (_D5, _E4.astype(C64))),
    "eigh_tridiagonal_int": (lambda m: _sl(m).eigh_tridiagonal, (np.ones(3, np.int32), np.ones(2, np.int32))),
    "eigh_tridiagonal_no_range": (lambda m: lambda d, e: _sl(m).eigh_tridiagonal(d, e, select="i"), (_D5, _E4)),
    "eigh_tridiagonal_empty_range": (lambda m: lambda d, e: _sl(m).eigh_tridiagonal(
        d, e, select="i", select_range=(2, 1)), (_D5, _E4)),
    "eigh_tridiagonal_select_v": (lambda m: lambda d, e: _sl(m).eigh_tridiagonal(
        d, e, eigvals_only=True, select="v"), (_D5, _E4)),
    "eigh_tridiagonal_select": (lambda m: lambda d, e: _sl(m).eigh_tridiagonal(
        d, e, eigvals_only=True, select="x"), (_D5, _E4)),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_jax(name):
    fn, args = ERRORS[name]
    with pytest.raises(Exception) as want:
        fn(jax)(*args)
    with pytest.raises(want.type, match=re.escape(str(want.value))):
        fn(irax)(*args)
