"""``irax.scipy.sparse.linalg.cg``: JAX's conjugate gradient, a ``while_loop`` inside ``custom_linear_solve`` (so
that its derivatives are more CG solves), step for step as ``jax.scipy.sparse.linalg`` writes it."""
from __future__ import annotations

import functools
import operator

import numpy as np

from irax import dtypes, lax, tree_util
from irax import numpy as jnp

__all__ = ["cg"]

_dot = functools.partial(jnp.dot, precision=lax.Precision.HIGHEST)
_vdot = functools.partial(jnp.vdot, precision=lax.Precision.HIGHEST)


def _vdot_real_part(x, y):
    """``x^H y`` without the real-imaginary cross terms: CG's forms ``z^H M z`` are real."""
    result = _vdot(x.real, y.real)
    if jnp.iscomplexobj(x) or jnp.iscomplexobj(y):
        result += _vdot(x.imag, y.imag)
    return result


def _vdot_real_tree(x, y):
    return sum(tree_util.tree_leaves(tree_util.tree_map(_vdot_real_part, x, y)))


def _mul(scalar, tree):
    return tree_util.tree_map(functools.partial(operator.mul, scalar), tree)


_add = functools.partial(tree_util.tree_map, operator.add)
_sub = functools.partial(tree_util.tree_map, operator.sub)


def _identity(x):
    return x


def _normalize_matvec(f):
    """A function computing the matrix-vector product, from a function or a square matrix."""
    if callable(f):
        return f
    if isinstance(f, np.ndarray) or hasattr(f, "__matmul__") and hasattr(f, "shape"):
        if len(f.shape) != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: {f.shape}")
        return functools.partial(_dot, f)
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


def _shapes(pytree):
    return [np.shape(x) for x in tree_util.tree_leaves(pytree)]


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves ``A x = b`` for a hermitian positive definite ``A`` by conjugate gradients
    (``jax.scipy.sparse.linalg.cg``).

    Args:
      A: a square matrix, or a function computing ``A x``.
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
    if x0 is None:
        x0 = tree_util.tree_map(jnp.zeros_like, b)
    if maxiter is None:
        maxiter = 10 * sum(np.size(bi) for bi in tree_util.tree_leaves(b))
    M = _identity if M is None else _normalize_matvec(M)
    A = _normalize_matvec(A)
    if tree_util.tree_structure(x0) != tree_util.tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: {tree_util.tree_structure(x0)} vs "
                         f"{tree_util.tree_structure(b)}")
    if _shapes(x0) != _shapes(b):
        raise ValueError(f"arrays in x0 and b must have matching shapes: {_shapes(x0)} vs {_shapes(b)}")
    solve = functools.partial(_cg_solve, x0=x0, tol=tol, atol=atol, maxiter=maxiter, M=M)
    symmetric = all(not np.issubdtype(jnp.result_type(x), np.complexfloating) for x in tree_util.tree_leaves(b))
    return lax.custom_linear_solve(A, b, solve=solve, transpose_solve=solve, symmetric=symmetric), None
