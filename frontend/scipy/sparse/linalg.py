"""``irax.scipy.sparse.linalg``: JAX's Krylov solvers ``cg``, ``bicgstab`` and ``gmres``, ported step for step from
``jax/_src/scipy/sparse/linalg.py``. Each is a ``while_loop`` inside ``custom_linear_solve``, so that its derivatives
are more solves of the same kind (implicit differentiation) rather than derivatives of the iteration."""
from __future__ import annotations

import functools
import operator

import numpy as np

from irax import dtypes, lax, tree_util
from irax import numpy as jnp
from irax.device import device_put
from irax.scipy import linalg as jsp_linalg

__all__ = ["bicgstab", "cg", "gmres"]

_dot = functools.partial(jnp.dot, precision=lax.Precision.HIGHEST)
_vdot = functools.partial(jnp.vdot, precision=lax.Precision.HIGHEST)
_einsum = functools.partial(jnp.einsum, precision=lax.Precision.HIGHEST)


def _vdot_real_part(x, y):
    """``x^H y`` without the real-imaginary cross terms: CG's forms ``z^H M z`` are real."""
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(_vdot_real_part, x, y)))


def _vdot_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(_vdot, x, y)))


def _norm(x):
    xs = tree_util.tree_leaves(x)
    return jnp.sqrt(sum(map(_vdot_real_part, xs, xs)))


def _mul(scalar, tree):
    return tree_util.tree_map(functools.partial(operator.mul, scalar), tree)


_add = functools.partial(tree_util.tree_map, operator.add)
_sub = functools.partial(tree_util.tree_map, operator.sub)


def _identity(x):
    return x


def _lattice_result_type(tree):
    """JAX's ``dtypes.lattice_result_type`` of a tree's leaves: the promoted dtype and whether it is weak."""
    return dtypes.result_type(*tree_util.tree_leaves(tree), return_weak_type_flag=True)


def _normalize_matvec(f):
    """A function computing the matrix-vector product, from a function, a square matrix or a matmul-able object."""
    if callable(f):
        return f
    if isinstance(f, (np.ndarray, jnp.ndarray)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(_dot, f)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


def _cg_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value):
        _, r, gamma, _, k = value
        rs = gamma.real if M is _identity else _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter)

    def body_fun(value):
        x, r, gamma, p, k = value
        Ap = A(p)
        alpha = gamma / _vdot_real_tree(p, Ap).astype(dtype)
        x_ = _add(x, _mul(alpha, p))
        r_ = _sub(r, _mul(alpha, Ap))
        z_ = M(r_)
        gamma_ = _vdot_real_tree(r_, z_).astype(dtype)
        beta_ = gamma_ / gamma
        p_ = _add(z_, _mul(beta_, p))
        return x_, r_, gamma_, p_, k + 1

    r0 = _sub(b, A(x0))
    p0 = z0 = M(r0)
    dtype = dtypes.result_type(*tree_util.tree_leaves(p0))
    gamma0 = _vdot_real_tree(r0, z0).astype(dtype)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, r0, gamma0, p0, 0))
    return x_final


def _bicgstab_solve(A, b, x0=None, *, maxiter, tol=1e-5, atol=0.0, M=_identity):
    bs = _vdot_real_tree(b, b)
    atol2 = jnp.maximum(jnp.square(tol) * bs, jnp.square(atol))

    def cond_fun(value):
        x, r, *_, k = value
        rs = _vdot_real_tree(r, r)
        return (rs > atol2) & (k < maxiter) & (k >= 0)  # k < 0 flags a breakdown

    def body_fun(value):
        x, r, rhat, alpha, omega, rho, p, q, k = value
        rho_ = _vdot_tree(rhat, r)
        beta = rho_ / rho * alpha / omega
        p_ = _add(r, _mul(beta, _sub(p, _mul(omega, q))))
        phat = M(p_)
        q_ = A(phat)
        alpha_ = rho_ / _vdot_tree(rhat, q_)
        s = _sub(r, _mul(alpha_, q_))
        exit_early = _vdot_real_tree(s, s) < atol2
        shat = M(s)
        t = A(shat)
        omega_ = _vdot_tree(t, s) / _vdot_tree(t, t)
        x_ = tree_util.tree_map(functools.partial(jnp.where, exit_early), _add(x, _mul(alpha_, phat)),
                                _add(x, _add(_mul(alpha_, phat), _mul(omega_, shat))))
        r_ = tree_util.tree_map(functools.partial(jnp.where, exit_early), s, _sub(s, _mul(omega_, t)))
        k_ = jnp.where((omega_ == 0) | (alpha_ == 0), -11, k + 1)
        k_ = jnp.where((rho_ == 0), -10, k_)
        return x_, r_, rhat, alpha_, omega_, rho_, p_, q_, k_

    r0 = _sub(b, A(x0))
    rho0 = alpha0 = omega0 = lax._convert(1, *_lattice_result_type(b))
    initial_value = (x0, r0, r0, alpha0, omega0, rho0, r0, r0, 0)
    x_final, *_ = lax.while_loop(cond_fun, body_fun, initial_value)
    return x_final


def _shapes(pytree):
    return [np.shape(x) for x in tree_util.tree_leaves(pytree)]


def _check_x0(x0, b):
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_util.tree_structure(x0)} vs "
                         f"{tree_util.tree_structure(b)}")


def _isolve(_isolve_solve, A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None, check_symmetric=False):
    if x0 is None:
        x0 = tree_util.tree_map(jnp.zeros_like, b)
    b, x0 = device_put((b, x0))
    if maxiter is None:
        maxiter = 10 * sum(bi.size for bi in tree_util.tree_leaves(b))  # as SciPy
    if M is None:
        M = _identity
    A = _normalize_matvec(A)
    M = _normalize_matvec(M)
    _check_x0(x0, b)
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    isolve_solve = functools.partial(_isolve_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    # real-valued positive-definite linear operators are symmetric
    symmetric = check_symmetric and all(not issubclass(x.dtype.type, np.complexfloating)
                                        for x in tree_util.tree_leaves(b))
    x = lax.custom_linear_solve(A, b, solve=isolve_solve, transpose_solve=isolve_solve, symmetric=symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` for a hermitian positive definite ``A`` by conjugate gradients
    (``jax.scipy.sparse.linalg.cg``).

    Args:
      A: a square matrix, a function computing ``A x``, or an object supporting ``A @ x``.
      b: the right-hand side, an array or a pytree of arrays.
      x0: the starting guess, of ``b``'s structure (zeros by default).
      tol, atol: stop when ``norm(residual) <= max(tol * norm(b), atol)``.
      maxiter: the most iterations (default ten times ``b``'s size).
      M: a preconditioner approximating ``A``'s inverse, as a matrix or a function.

    Returns:
      ``(x, None)``: the solution, differentiated as the solution of the linear system.

    Raises:
      ValueError: ``x0`` and ``b`` differ in structure or shapes, or ``A`` is not square.
    """
    return _isolve(_cg_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M, check_symmetric=True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` for a general (nonsymmetric) ``A`` by BiCGSTAB (``jax.scipy.sparse.linalg.bicgstab``).

    Args:
      A: a square matrix, a function computing ``A x``, or an object supporting ``A @ x``.
      b: the right-hand side, an array or a pytree of arrays.
      x0: the starting guess, of ``b``'s structure (zeros by default).
      tol, atol: stop when ``norm(residual) <= max(tol * norm(b), atol)``.
      maxiter: the most iterations (default ten times ``b``'s size).
      M: a preconditioner approximating ``A``'s inverse, as a matrix or a function.

    Returns:
      ``(x, None)``: the solution, differentiated by another BiCGSTAB solve (accurate only if both converge).

    Raises:
      ValueError: ``x0`` and ``b`` differ in structure or shapes, or ``A`` is not square.
    """
    return _isolve(_bicgstab_solve, A=A, b=b, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)


# --- GMRES ---------------------------------------------------------------------------------------------------------

def _safe_normalize(x, thresh=None):
    """``x / norm(x)`` and the norm, both zero where the norm is at most ``thresh`` (default: ``x``'s eps)."""
    norm = _norm(x)
    dtype, weak_type = _lattice_result_type(x)
    if thresh is None:
        thresh = dtypes.finfo(norm.dtype).eps
    thresh = thresh.astype(dtype).real
    use_norm = norm > thresh
    norm_cast = lax._convert(norm, dtype, weak_type)
    normalized_x = tree_util.tree_map(lambda y: jnp.where(use_norm, y / norm_cast, 0.0), x)
    norm = jnp.where(use_norm, norm, 0.0)
    return normalized_x, norm


def _project_on_columns(A, v):
    """``A^H v``, for ``A`` a tree of matrices whose columns are the last axis."""
    v_proj = tree_util.tree_map(lambda X, y: _einsum("...n,...->n", X.conj(), y), A, v)
    return tree_util.tree_reduce(operator.add, v_proj)


def _iterative_classical_gram_schmidt(Q, x, xnorm, max_iterations=2):
    """``x`` orthogonalized against ``Q``'s orthonormal columns (and its overlaps ``r`` with them), repeated up to
    ``max_iterations`` times until ``norm(r) < norm(x) / sqrt(2)``: "twice is enough" (Giraud et al., SLEPc
    report STR-1). All of ``Q``'s leaves share the last axis's size."""
    Q0 = tree_util.tree_leaves(Q)[0]
    r = jnp.zeros(Q0.shape[-1], dtype=Q0.dtype)
    q = x
    xnorm_scaled = xnorm / jnp.sqrt(2.0)

    def body_function(carry):
        k, q, r, qnorm_scaled = carry
        h = _project_on_columns(Q, q)
        Qh = tree_util.tree_map(lambda X: _dot(X, h), Q)
        q = _sub(q, Qh)
        r = _add(r, h)

        def qnorm_cond(carry):
            k, not_done, _, _ = carry
            return jnp.logical_and(not_done, k < (max_iterations - 1))

        def qnorm(carry):
            k, _, q, qnorm_scaled = carry
            _, qnorm = _safe_normalize(q)
            qnorm_scaled = qnorm / jnp.sqrt(2.0)
            return (k, False, q, qnorm_scaled)

        init = (k, True, q, qnorm_scaled)
        _, _, q, qnorm_scaled = lax.while_loop(qnorm_cond, qnorm, init)
        return (k + 1, q, r, qnorm_scaled)

    def cond_function(carry):
        k, _, r, qnorm_scaled = carry
        _, rnorm = _safe_normalize(r)
        return jnp.logical_and(k < (max_iterations - 1), rnorm < qnorm_scaled)

    k, q, r, qnorm_scaled = body_function((0, q, r, xnorm_scaled))
    k, q, r, _ = lax.while_loop(cond_function, body_function, (k, q, r, qnorm_scaled))
    return q, r


def _kth_arnoldi_iteration(k, A, M, V, H):
    """One Arnoldi step: ``M(A(V[:, k]))`` orthonormalized into ``V[:, k + 1]``, its overlaps into ``H[k, :]``; a
    vector below ``eps`` times its norm before orthogonalization means an invariant subspace (a breakdown)."""
    dtype, _ = _lattice_result_type(V)
    eps = dtypes.finfo(dtype).eps
    v = tree_util.tree_map(lambda x: x[..., k], V)
    v = M(A(v))
    _, v_norm_0 = _safe_normalize(v)
    v, h = _iterative_classical_gram_schmidt(V, v, v_norm_0, max_iterations=2)
    tol = eps * v_norm_0
    unit_v, v_norm_1 = _safe_normalize(v, thresh=tol)
    V = tree_util.tree_map(lambda X, y: X.at[..., k + 1].set(y), V, unit_v)
    h = h.at[k + 1].set(v_norm_1.astype(dtype))
    H = H.at[k, :].set(h)
    breakdown = v_norm_1 == 0.
    return V, H, breakdown


def _rotate_vectors(H, i, cs, sn):
    x1 = H[i]
    y1 = H[i + 1]
    x2 = cs.conj() * x1 - sn.conj() * y1
    y2 = sn * x1 + cs * y1
    H = H.at[i].set(x2)
    H = H.at[i + 1].set(y2)
    return H


def _givens_rotation(a, b):
    b_zero = abs(b) == 0
    a_lt_b = abs(a) < abs(b)
    t = -jnp.where(a_lt_b, a, b) / jnp.where(a_lt_b, b, a)
    r = lax.rsqrt(1 + abs(t) ** 2).astype(t.dtype)
    cs = jnp.where(b_zero, 1, jnp.where(a_lt_b, r * t, r))
    sn = jnp.where(b_zero, 0, jnp.where(a_lt_b, r, r * t))
    return cs, sn


def _apply_givens_rotations(H_row, givens, k):
    """``H_row`` through the stored rotations ``givens[:k]``, then through a new one that zeroes its element
    ``k + 1``, which is stored too."""
    def apply_ith_rotation(i, H_row):
        return _rotate_vectors(H_row, i, *givens[i, :])
    R_row = lax.fori_loop(0, k, apply_ith_rotation, H_row)
    givens_factors = _givens_rotation(R_row[k], R_row[k + 1])
    givens = givens.at[k, :].set(givens_factors)
    R_row = _rotate_vectors(R_row, k, *givens_factors)
    return R_row, givens


def _gmres_incremental(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of GMRES, projecting the solution on the Krylov space ``K(A, x0)`` of dimension ``restart``,
    whose QR factorization is built by Givens rotations during the Arnoldi process: its residual estimate stops
    the restart early (Saad, https://www-users.cs.umn.edu/~saad/Calais/PREC.pdf)."""
    V = tree_util.tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)
    dtype = dtypes.result_type(*tree_util.tree_leaves(b))
    # the identity, not zeros, so that R stays nonsingular when the loop stops before ``restart`` steps
    R = jnp.eye(restart, restart + 1, dtype=dtype)
    givens = jnp.zeros((restart, 2), dtype=dtype)
    beta_vec = jnp.zeros((restart + 1), dtype=dtype)
    beta_vec = beta_vec.at[0].set(residual_norm.astype(dtype))

    def loop_cond(carry):
        k, err, _, _, _, _ = carry
        return jnp.logical_and(k < restart, err > ptol)

    def arnoldi_qr_step(carry):
        k, _, V, R, beta_vec, givens = carry
        V, H, _ = _kth_arnoldi_iteration(k, A, M, V, R)
        R_row, givens = _apply_givens_rotations(H[k, :], givens, k)
        R = R.at[k, :].set(R_row)
        beta_vec = _rotate_vectors(beta_vec, k, *givens[k, :])
        err = abs(beta_vec[k + 1])
        return k + 1, err, V, R, beta_vec, givens

    carry = (0, residual_norm, V, R, beta_vec, givens)
    carry = lax.while_loop(loop_cond, arnoldi_qr_step, carry)
    _, residual_norm, V, R, beta_vec, _ = carry
    y = jsp_linalg.solve_triangular(R[:, :-1].T, beta_vec[:-1])
    dx = tree_util.tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _lstsq(a, b):
    """The normal equations by Cholesky: faster than ``scipy.linalg.lstsq``."""
    a2 = _dot(a.T.conj(), a)
    b2 = _dot(a.T.conj(), b)
    return jsp_linalg.solve(a2, b2, assume_a='pos')


def _gmres_batched(A, b, x0, unit_residual, residual_norm, ptol, restart, M):
    """One restart of GMRES that builds the whole Krylov space, then solves its dense least-squares problem: no
    early stop within a restart, but less overhead on accelerators."""
    del ptol
    V = tree_util.tree_map(lambda x: jnp.pad(x[..., None], ((0, 0),) * x.ndim + ((0, restart),)), unit_residual)
    dtype, weak_type = _lattice_result_type(b)
    H = lax._convert(jnp.eye(restart, restart + 1, dtype=dtype), dtype, weak_type)

    def loop_cond(carry):
        _, _, breakdown, k = carry
        return jnp.logical_and(k < restart, jnp.logical_not(breakdown))

    def arnoldi_process(carry):
        V, H, _, k = carry
        V, H, breakdown = _kth_arnoldi_iteration(k, A, M, V, H)
        return V, H, breakdown, k + 1

    carry = (V, H, False, 0)
    V, H, _, _ = lax.while_loop(loop_cond, arnoldi_process, carry)
    beta_vec = jnp.zeros_like(H, shape=(restart + 1,)).at[0].set(residual_norm.astype(dtype))
    y = _lstsq(H.T, beta_vec)
    dx = tree_util.tree_map(lambda X: _dot(X[..., :-1], y), V)
    x = _add(x0, dx)
    residual = M(_sub(b, A(x)))
    unit_residual, residual_norm = _safe_normalize(residual)
    return x, unit_residual, residual_norm


def _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func):
    """Restarts ``gmres_func`` from its last solution until ``norm(A(x) - b) <= atol`` or ``maxiter`` restarts;
    ``ptol`` bounds the preconditioned residual within a restart."""
    residual = M(_sub(b, A(x0)))
    unit_residual, residual_norm = _safe_normalize(residual)

    def cond_fun(value):
        _, k, _, residual_norm = value
        return jnp.logical_and(k < maxiter, residual_norm > atol)

    def body_fun(value):
        x, k, unit_residual, residual_norm = value
        x, unit_residual, residual_norm = gmres_func(A, b, x, unit_residual, residual_norm, ptol, restart, M)
        return x, k + 1, unit_residual, residual_norm

    x_final, *_ = lax.while_loop(cond_fun, body_fun, (x0, 0, unit_residual, residual_norm))
    return x_final


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None, solve_method='batched'):
    """Solves ``A x = b`` for a general ``A`` by restarted GMRES (``jax.scipy.sparse.linalg.gmres``).

    Args:
      A: a square matrix, a function computing ``A x``, or an object supporting ``A @ x``.
      b: the right-hand side, an array or a pytree of arrays.
      x0: the starting guess, of ``b``'s structure (zeros by default).
      tol, atol: stop when ``norm(residual) <= max(tol * norm(b), atol)``.
      restart: the dimension of the Krylov space built between restarts (at most ``b``'s size).
      maxiter: the most restarts (default ten times ``b``'s size).
      M: a preconditioner approximating ``A``'s inverse, as a matrix or a function.
      solve_method: ``'batched'`` solves a dense least-squares problem at the end of each restart;
        ``'incremental'`` builds a QR factorization by Givens rotations as it goes, which stops a restart early.

    Returns:
      ``(x, info)``: the solution, differentiated by another GMRES solve, and ``-1`` where it is NaN, else ``0``.

    Raises:
      ValueError: ``x0`` and ``b`` differ in structure, ``A`` is not square, or ``solve_method`` is unknown.
    """
    if x0 is None:
        x0 = tree_util.tree_map(jnp.zeros_like, b)
    if M is None:
        M = _identity
    A = _normalize_matvec(A)
    M = _normalize_matvec(M)
    b, x0 = device_put((b, x0))
    size = sum(bi.size for bi in tree_util.tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size  # as SciPy
    restart = min(restart, size)
    _check_x0(x0, b)
    b_norm = _norm(b)
    atol = jnp.maximum(tol * b_norm, atol)
    Mb = M(b)
    Mb_norm = _norm(Mb)
    ptol = Mb_norm * jnp.minimum(1.0, atol / b_norm)
    if solve_method == 'incremental':
        gmres_func = _gmres_incremental
    elif solve_method == 'batched':
        gmres_func = _gmres_batched
    else:
        raise ValueError(f"invalid solve_method {solve_method}, must be either 'incremental' or 'batched'")

    def _solve(A, b):
        return _gmres_solve(A, b, x0, atol, ptol, restart, maxiter, M, gmres_func)
    x = lax.custom_linear_solve(A, b, solve=_solve, transpose_solve=_solve)
    failed = jnp.isnan(_norm(x))
    info = jnp.where(failed, -1, 0)
    return x, info
