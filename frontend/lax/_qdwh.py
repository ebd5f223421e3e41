"""``lax.linalg.qdwh``'s body: JAX's QR-based dynamically weighted Halley iteration for the polar decomposition, in
JAX's structure (``jax/_src/tpu/linalg/qdwh.py``), so that ``make_jaxpr`` prints JAX's text.

JAX traces it under ``default_matmul_precision('float32')``, which its matmuls record as
``precision=(HIGHEST, HIGHEST)``; here each matmul asks for that precision itself.

Reference: Nakatsukasa, Bai and Gygi, "Optimizing Halley's iteration for computing the matrix polar
decomposition", SIAM J. Matrix Anal. Appl. 31(5), 2010.
"""
from __future__ import annotations

import functools

import numpy as np

from irax import dtypes, lax
from irax import numpy as jnp
from irax.lax import linalg as lax_linalg
from irax.numpy import linalg as jnp_linalg
from irax.numpy._util import staged_as

_matmul = functools.partial(jnp.matmul, precision=lax.Precision.HIGHEST)


def _mask(x, dims, alternative=0):
    """``x`` inside the dynamic shape ``dims`` (``None``: the whole dimension), ``alternative`` outside."""
    mask = None
    for i, d in enumerate(dims):
        if d is not None:
            mask_dim_i = lax.broadcasted_iota(np.int32, x.shape, i) < d
            mask = mask_dim_i if mask is None else (mask & mask_dim_i)
    return x if mask is None else jnp.where(mask, x, alternative)


def _pad_in_dim(x, low=0, high=0, interior=0, fill_value=0, axis=0):
    pads = [(0, 0, 0)] * x.ndim
    pads[axis] = (low, high, interior)
    return lax.pad(x, jnp.array(fill_value, x.dtype), pads)


def _dynamic_concat(a, b, m, axis=0):
    """``a`` (of true size ``m`` along ``axis``) followed by ``b``."""
    if m is None:
        return jnp.concatenate([a, b], axis=axis)
    return lax.dynamic_update_slice_in_dim(_pad_in_dim(a, high=b.shape[axis], axis=axis), b, m, axis)


def _use_qr(u, m, n, params):
    """One QDWH step through the QR decomposition of ``[sqrt(c) u; I]`` (stable while ``c`` is large)."""
    a_minus_e_by_sqrt_c, sqrt_c, e = params
    M, N = u.shape
    y = _dynamic_concat(sqrt_c * u, jnp.eye(N, dtype=dtypes.dtype(u)), m)
    q, _ = lax_linalg.qr(y, full_matrices=False)
    q1 = _mask(lax.slice(q, (0, 0), (M, N)), (m, n))
    q2 = lax.dynamic_slice_in_dim(q, m, N, axis=0)
    q2 = _mask(q2, (n, n)).T.conj()
    return e * u + a_minus_e_by_sqrt_c * _matmul(q1, q2)


def _use_cholesky(u, m, n, params):
    """One QDWH step through the Cholesky factor of ``c u^H u + I`` (cheaper, stable once ``c`` is small)."""
    a_minus_e, c, e = params
    _, N = u.shape
    x = c * _matmul(u.T.conj(), u) + jnp.eye(N, dtype=dtypes.dtype(u))
    # The identity in the padding keeps x positive definite.
    x = _mask(x, (n, n), jnp.eye(N, dtype=x.dtype))
    y = lax_linalg.cholesky(x, symmetrize_input=False)
    z = lax_linalg.triangular_solve(y, u.T, left_side=True, lower=True, conjugate_a=True).conj()
    z = lax_linalg.triangular_solve(y, z, left_side=True, lower=True, transpose_a=True, conjugate_a=True).T.conj()
    return e * u + a_minus_e * z


def _qr_params(a, b, c):
    e = b / c
    sqrt_c = c ** (1 / 2)
    return ((a - e) / sqrt_c, sqrt_c, e)


def _cholesky_params(a, b, c):
    e = b / c
    return (a - e, c, e)


def _coefficients(eps, tol_l, max_iterations):
    """The weights ``(a, b, c)`` of each step, known ahead from the bound ``l`` on the smallest singular value
    (started at ``eps``): QR steps while ``c`` is large, then Cholesky steps."""
    qr_coefs, chol_coefs = [], []
    l, k = eps, 0
    while l + tol_l < 1 and k < max_iterations:
        k += 1
        l2 = l * l
        dd = (4 * (1 / l2 - 1) / l2) ** (1 / 3)
        sqd = (1.0 + dd) ** (1 / 2)
        a = sqd + (2 - dd + 2 * (2 - l2) / (l2 * sqd)) ** (1 / 2)
        b = (a - 1) ** 2 / 4
        c = a + b - 1
        l = l * (a + b * l2) / (1 + c * l2)
        if c > 100:
            qr_coefs.append(_qr_params(a, b, c))
        else:
            chol_coefs.append(_cholesky_params(a, b, c))
    return qr_coefs, chol_coefs


def _qdwh(x, m, n, max_iterations, eps):
    if eps is None:
        eps = float(dtypes.finfo(x.dtype).eps)
    # alpha >= norm(x, 2) scales x so that its singular values lie in (0, 1].
    one_norm = jnp_linalg.norm(x, ord=1)
    inf_norm = jnp_linalg.norm(x, ord=np.inf)
    alpha_inverse = lax.rsqrt(one_norm) * lax.rsqrt(inf_norm)
    alpha_inverse = jnp.where(one_norm == 0, 1, alpha_inverse)
    u = x * alpha_inverse.astype(x.dtype)
    tol_l = 10.0 * eps / 2.0
    tol_norm = jnp.cbrt(tol_l)
    qr_coefs, chol_coefs = _coefficients(eps, tol_l, max_iterations)

    def iteration(k, state, update_fn, coefs, test_convergence):
        u, _ = state
        # Without coefficients (l has reached 1), a, b, c = 3, 1, 3: Halley's method.
        params = _cholesky_params(3, 1, 3) if coefs is None else lax.dynamic_index_in_dim(coefs, k, keepdims=False)
        u_prev = u
        u = update_fn(u, m, n, params)
        is_not_converged = True
        if test_convergence:
            is_not_converged = jnp_linalg.norm(u - u_prev) > tol_norm
        return u, is_not_converged

    def iterate(u, coefs, **kwargs):
        if not coefs:
            return u, True
        coefs = jnp.array(coefs).astype(x.dtype)
        body = functools.partial(iteration, coefs=coefs, **kwargs)
        return lax.fori_loop(0, len(coefs), body, (u, True))

    u, _ = iterate(u, coefs=qr_coefs, update_fn=_use_qr, test_convergence=False)
    u, is_not_converged = iterate(u, coefs=chol_coefs, update_fn=_use_cholesky, test_convergence=True)

    def cond_fun(state):
        k, _, is_not_converged = state
        return jnp.logical_and(is_not_converged, k < max_iterations)

    def body_fun(state):
        k, u, is_not_converged = state
        u, is_not_converged = iteration(k, (u, is_not_converged), coefs=None, update_fn=_use_cholesky,
                                        test_convergence=True)
        return k + 1, u, is_not_converged

    k = len(qr_coefs) + len(chol_coefs)
    num_iters, u, is_not_converged = lax.while_loop(cond_fun, body_fun, (k, u, is_not_converged))
    # A Newton-Schulz step refines u; h is made exactly Hermitian.
    u = 1.5 * u - _matmul(0.5 * u, _matmul(u.T.conj(), u))
    h = _matmul(u.T.conj(), x)
    h = (h + h.T.conj()) / 2
    return u, h, num_iters, jnp.logical_not(is_not_converged)


@staged_as("qdwh", static_argnames=("is_hermitian", "max_iterations", "eps"))
def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None, eps: float | None = None,
         dynamic_shape: tuple[int, int] | None = None):
    """``lax.linalg.qdwh`` (documented there), staged under JAX's name."""
    del is_hermitian
    max_iterations = 10 if max_iterations is None else int(max_iterations)
    M, N = x.shape
    if M < N:
        raise ValueError("The input matrix of shape M x N must have M >= N.")
    if dynamic_shape is not None:
        m, n = dynamic_shape
        x = _mask(x, (m, n))
    else:
        m, n = M, N
    return _qdwh(x, m, n, max_iterations, eps)
