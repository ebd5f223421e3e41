"""``irax.scipy.sparse.linalg.bicgstab`` and ``gmres`` against JAX's: symmetric positive definite, nonsymmetric and
complex systems, pytree operands, preconditioners, ``x0``/``tol``/``atol``/``maxiter``, GMRES's ``restart`` and both
``solve_method``s; eagerly and under ``irax.jit``; ``irax.grad`` through their ``custom_linear_solve``; the
``make_jaxpr`` text and JAX's exceptions.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

import irax
import irax.scipy.sparse.linalg as ispl

jax = pytest.importorskip("jax")
import jax.scipy.sparse.linalg as jspl  # noqa: E402

RNG = np.random.default_rng(0)
_G = RNG.standard_normal((5, 5)).astype(np.float32)
SPD = (_G @ _G.T + 5 * np.eye(5)).astype(np.float32)
NONSYM = (RNG.standard_normal((5, 5)) + 4 * np.eye(5)).astype(np.float32)
B = RNG.standard_normal(5).astype(np.float32)
JACOBI = np.diag(1 / np.diag(NONSYM)).astype(np.float32)
CPLX = (RNG.standard_normal((4, 4)) + 1j * RNG.standard_normal((4, 4)) + 4 * np.eye(4)).astype(np.complex64)
CB = (RNG.standard_normal(4) + 1j * RNG.standard_normal(4)).astype(np.complex64)


def _close(got, want, tol=1e-4):
    got_leaves, want_leaves = jax.tree.leaves(got), jax.tree.leaves(want)
    assert jax.tree.structure(want) == jax.tree.structure(jax.tree.map(np.asarray, got))
    for g, w in zip(got_leaves, want_leaves, strict=True):
        g, w = np.asarray(g), np.asarray(w)
        assert (g.dtype, g.shape) == (w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _tree_matvec(a, c):
    return lambda t: {"x": a @ t["x"], "y": c @ t["y"]}


# name -> (solver, A, b, keyword arguments); ``spl`` is the module, so a case runs on either library
CASES = {
    "bicgstab-spd": lambda spl: spl.bicgstab(SPD, B),
    "bicgstab-nonsym": lambda spl: spl.bicgstab(NONSYM, B),
    "bicgstab-fn-M-matrix": lambda spl: spl.bicgstab(lambda x: NONSYM @ x, B, M=JACOBI, tol=1e-6),
    "bicgstab-M-fn": lambda spl: spl.bicgstab(NONSYM, B, M=lambda x: JACOBI @ x),
    "bicgstab-x0-maxiter": lambda spl: spl.bicgstab(NONSYM, B, x0=B, maxiter=2),
    "bicgstab-atol": lambda spl: spl.bicgstab(NONSYM, B, tol=0.0, atol=0.5),
    "bicgstab-pytree": lambda spl: spl.bicgstab(_tree_matvec(NONSYM, SPD), {"x": B, "y": 2 * B},
                                                x0={"x": B, "y": B}, maxiter=50),
    "bicgstab-complex": lambda spl: spl.bicgstab(CPLX, CB),
    "gmres-batched": lambda spl: spl.gmres(NONSYM, B),
    "gmres-incremental": lambda spl: spl.gmres(NONSYM, B, solve_method="incremental"),
    "gmres-restart2-incremental": lambda spl: spl.gmres(NONSYM, B, restart=2, solve_method="incremental"),
    "gmres-restart2-batched": lambda spl: spl.gmres(NONSYM, B, restart=2, maxiter=3),
    "gmres-M": lambda spl: spl.gmres(lambda x: NONSYM @ x, B, M=JACOBI),
    "gmres-x0-atol": lambda spl: spl.gmres(SPD, B, x0=B, tol=0.0, atol=0.1),
    "gmres-pytree": lambda spl: spl.gmres(_tree_matvec(NONSYM, SPD), {"x": B, "y": 2 * B}),
    "gmres-pytree-incremental": lambda spl: spl.gmres(_tree_matvec(NONSYM, SPD), {"x": B, "y": 2 * B},
                                                      solve_method="incremental"),
    "gmres-complex": lambda spl: spl.gmres(CPLX, CB, solve_method="incremental"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_eager(name):
    _close(CASES[name](ispl), CASES[name](jspl))


def _grads(api, spl):
    def loss(solver):
        return lambda a, b: (solver(a, b)[0] ** 2).sum()
    return lambda a, b: (api.grad(loss(spl.bicgstab), (0, 1))(a, b),
                         api.grad(loss(lambda a, b: spl.gmres(a, b, solve_method="incremental")), (0, 1))(a, b))


def test_grad_eager():
    """Gradients are more solves (``custom_linear_solve``'s transpose_solve), not derivatives of the iteration."""
    _close(_grads(irax, ispl)(NONSYM, B), _grads(jax, jspl)(NONSYM, B), 1e-3)


def _bicgstab_program(api, spl):
    return lambda a, b, t: (spl.bicgstab(a, b)[0], spl.bicgstab(lambda x: a @ x, b, M=JACOBI, tol=1e-6)[0],
                            spl.bicgstab(_tree_matvec(a, SPD), t, x0=t, maxiter=50)[0],
                            api.grad(lambda a, b: (spl.bicgstab(a, b)[0] ** 2).sum(), (0, 1))(a, b))


def test_bicgstab_jit():
    args = (NONSYM, B, {"x": B, "y": 2 * B})
    _close(irax.jit(_bicgstab_program(irax, ispl))(*args), _bicgstab_program(jax, jspl)(*args), 1e-3)


def test_gmres_jit():
    def program(spl):
        return lambda a, b: (spl.gmres(a, b), spl.gmres(lambda x: a @ x, b, restart=2, solve_method="incremental"))
    _close(irax.jit(program(ispl))(NONSYM, B), program(jspl)(NONSYM, B), 1e-3)


@pytest.mark.parametrize("solver", ["bicgstab", "gmres"])
def test_jaxpr_text(solver):
    def program(spl):
        return lambda a, b: getattr(spl, solver)(lambda x: a @ x, b)[0]
    assert str(irax.make_jaxpr(program(ispl))(NONSYM, B)) == str(jax.make_jaxpr(program(jspl))(NONSYM, B))


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the exception itself is compared
        return type(e), str(e)
    return None


ERRORS = {
    "x0-structure": (lambda spl: spl.bicgstab(SPD, B, x0=(B,)), ValueError, "x0 and b must have matching tree"),
    "x0-shape": (lambda spl: spl.bicgstab(SPD, B, x0=B[:2]), ValueError, "arrays in x0 and b must have matching"),
    "not-square": (lambda spl: spl.bicgstab(np.ones((2, 5), np.float32), B), ValueError,
                   re.escape("linear operator must be a square matrix, but has shape: (2, 5)")),
    "not-operator": (lambda spl: spl.bicgstab("A", B), TypeError, "linear operator must be either a function or"),
    "gmres-x0-structure": (lambda spl: spl.gmres(SPD, B, x0=[B]), ValueError, "x0 and b must have matching tree"),
    "gmres-solve-method": (lambda spl: spl.gmres(SPD, B, solve_method="qr"), ValueError,
                           "invalid solve_method qr, must be either 'incremental' or 'batched'"),
    "gmres-M-not-square": (lambda spl: spl.gmres(SPD, B, M=np.ones(5, np.float32)), ValueError,
                           re.escape("linear operator must be a square matrix, but has shape: (5,)")),
}


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors(name):
    fn, kind, match = ERRORS[name]
    with pytest.raises(kind, match=match):
        fn(ispl)
    theirs = _error(lambda: fn(jspl))
    assert theirs is not None and _error(lambda: fn(ispl)) == theirs
