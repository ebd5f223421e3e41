"""``sqrtm``, ``funm`` and ``solve_sylvester``: matrix functions and equations that start from a Schur form, staged
under JAX's names with JAX's loops so that their jaxprs and results are JAX's."""
from __future__ import annotations

from functools import partial

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.api import jit
from irax.numpy import linalg as jnp_linalg
from irax.numpy._util import promote_args_inexact, promote_dtypes_inexact, staged_as

from .linalg import inv, rsf2csf, schur, solve

_highest = partial(jnp.matmul, precision=lax.Precision.HIGHEST)


@staged_as("_sqrtm_triu")
def _sqrtm_triu(T):
    """Björck and Hammarling's recurrence for the square root of an upper triangular matrix, column by column, each
    column from the diagonal up."""
    diag = jnp.sqrt(jnp.diag(T))
    n = diag.size
    U = jnp.diag(diag)

    def i_loop(l, data):
        j, U = data
        i = j - 1 - l
        s = lax.fori_loop(i + 1, j, lambda k, val: val + U[i, k] * U[k, j], 0.0)
        value = jnp.where(T[i, j] == s, 0.0, (T[i, j] - s) / (diag[i] + diag[j]))
        return j, U.at[i, j].set(value)

    def j_loop(j, U):
        _, U = lax.fori_loop(0, j, i_loop, (j, U))
        return U

    return lax.fori_loop(0, n, j_loop, U)


@staged_as("_sqrtm")
def _sqrtm(A):
    T, Z = schur(A, output="complex")
    return _highest(_highest(Z, _sqrtm_triu(T)), jnp.conj(Z.T))


def sqrtm(A, blocksize=1):
    """The principal square root of a matrix, complex as JAX's: the square root of its complex Schur form's
    triangle, transformed back."""
    if blocksize > 1:
        raise NotImplementedError("Blocked version is not implemented yet.")
    return _sqrtm(A)


@staged_as("_algorithm_11_1_1")
def _algorithm_11_1_1(F, T):
    """Parlett's recurrence (Golub and Van Loan's algorithm 11.1.1): ``F``'s superdiagonals from its diagonal, one
    at a time; also the smallest difference of two diagonal entries of ``T`` it divided by."""
    N = T.shape[0]
    minden = jnp.abs(T[0, 0])

    def _outer_loop(p, F_minden):
        _, F, minden = lax.fori_loop(1, N - p + 1, _inner_loop, (p, *F_minden))
        return F, minden

    def _inner_loop(i, p_F_minden):
        p, F, minden = p_F_minden
        j = i + p
        s = T[i - 1, j - 1] * (F[j - 1, j - 1] - F[i - 1, i - 1])
        T_row, T_col = T[i - 1], T[:, j - 1]
        F_row, F_col = F[i - 1], F[:, j - 1]
        ind = (jnp.arange(N) >= i) & (jnp.arange(N) < j - 1)
        s = s + (jnp.where(ind, T_row, 0) @ jnp.where(ind, F_col, 0)
                 - jnp.where(ind, F_row, 0) @ jnp.where(ind, T_col, 0))
        den = T[j - 1, j - 1] - T[i - 1, i - 1]
        s = jnp.where(den != 0, s / den, s)
        return p, F.at[i - 1, j - 1].set(s), jnp.minimum(minden, jnp.abs(den))

    return lax.fori_loop(1, N, _outer_loop, (F, minden))


def funm(A, func, disp=True):
    """``func`` of a matrix: ``func`` of its complex Schur form's eigenvalues, extended to the triangle by Parlett's
    recurrence; with ``disp=False`` also SciPy's estimate of the relative error."""
    A_arr = jnp.asarray(A)
    if A_arr.ndim != 2 or A_arr.shape[0] != A_arr.shape[1]:
        raise ValueError("expected square array_like input")
    T, Z = rsf2csf(*schur(A_arr))
    F = jnp.diag(func(jnp.diag(T))).astype(T.dtype.char)
    F, minden = _algorithm_11_1_1(F, T)
    F = Z @ F @ Z.conj().T
    if disp:
        return F
    tol = dtypes.finfo(np.float32 if F.dtype.char.lower() == "f" else np.float64).eps
    minden = jnp.where(minden == 0.0, tol, minden)
    err = jnp.where(jnp.any(jnp.isinf(F)), np.inf,
                    jnp.minimum(1, jnp.maximum(tol, (tol / minden) * jnp_linalg.norm(jnp.triu(T, 1), 1))))
    return F, err


def _solve_sylvester_triangular_scan(R, S, F):
    """Bartels and Stewart's back substitution for ``R Y + Y S^T = F`` with ``R`` and ``S`` upper triangular: one
    entry of ``Y`` per scan step, from the bottom right."""
    R, S, F = promote_args_inexact("_solve_sylvester_triangular_scan", R, S, F)
    m, n = F.shape
    total = m * n

    flat_indices = jnp.arange(total - 1, -1, -1)
    Y0 = jnp.zeros((total,), dtype=F.dtype)

    def scan_fn(Y_flat, idx):
        i, j = idx // n, idx % n
        Y = Y_flat.reshape((m, n))
        rhs = F[i, j]
        row_term = jnp.sum(jnp.where(jnp.arange(m) > i, R[i, :] * Y[:, j], 0.0))
        col_term = jnp.sum(jnp.where(jnp.arange(n) > j, Y[i, :] * S[:, j], 0.0))
        val = (rhs - (row_term + col_term)) / (R[i, i] + S[j, j])
        return Y_flat.at[i * n + j].set(val), None

    Y_flat, _ = lax.scan(scan_fn, Y0, flat_indices)
    return Y_flat.reshape((m, n))


@staged_as("_solve_sylvester_2d", static_argnames=("method",))
def _solve_sylvester_2d(A, B, C, *, method, tol):
    m, n = C.shape[-2:]
    if method == "schur":
        R, U = schur(A, output="complex")
        S, V = schur(B.conj().T, output="complex")
        F = U.conj().T @ C.astype(R.dtype) @ V
        Y = _solve_sylvester_triangular_scan(R, S.conj().T, F)
        X = U @ Y @ V.conj().T
    elif method == "eigen":
        RA, UA = jnp_linalg.eig(A)
        RB, UB = jnp_linalg.eig(B)
        F = solve(UA, C.astype(RA.dtype) @ UB)
        Y = F / (RA[:, None] + RB[None, :])
        X = UA[:m, :m] @ Y[:m, :n] @ inv(UB)[:n, :n]
    else:
        raise ValueError(f'Unrecognized method {method}. The two valid methods are either "schur" or "eigen".')
    if not dtypes.issubdtype(C.dtype, np.complexfloating):
        X = X.real
    singular = jnp.any(jnp.abs(jnp_linalg.eigvals(A)[:, None] + jnp_linalg.eigvals(B)[None, :]) < tol)
    return lax.cond(singular, lambda: jnp.zeros_like(X) * np.nan, lambda: X)


@partial(jit, static_argnames=("method",))
def solve_sylvester(A, B, C, *, method="schur", tol=1e-8):
    """``X`` with ``A X + X B = C``: by Bartels and Stewart's method on the complex Schur forms of ``A`` and
    ``B^H`` (``method="schur"``) or by their eigenvectors (``"eigen"``); all NaN where an eigenvalue of ``A`` and
    one of ``B`` sum to less than ``tol`` in magnitude."""
    A, B, C = promote_dtypes_inexact(jnp.asarray(A), jnp.asarray(B), jnp.asarray(C))
    m, n = C.shape[-2:]
    if A.shape[-2:] != (m, m) or B.shape[-2:] != (n, n):
        raise ValueError(f"Incompatible shapes for Sylvester equation:\nA: {A.shape}\nB: {B.shape}\nC: {C.shape}")
    return jnp.vectorize(partial(_solve_sylvester_2d, method=method, tol=tol),
                         signature="(m,m),(n,n),(m,n)->(m,n)")(A, B, C)
