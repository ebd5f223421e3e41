"""JAX's ``lax.linalg._solve``: an LU solve wrapped in ``custom_linear_solve``, so that its derivatives reuse the
factorization (``jnp.linalg.solve`` maps it over batch axes with ``vectorize``). Ported with JAX's structure, down
to the ``jit[name=_lu_solve]`` of each solve and the ``HIGHEST``-precision matvec, because both show in the jaxpr.
"""
from __future__ import annotations

import math

import numpy as np

from irax import api
from irax.batching import vmap

from . import Precision, broadcast_in_dim, broadcast_shapes, dot_general, iota, reshape, sort_key_val, stop_gradient
from . import linalg as lax_linalg
from ._solves import custom_linear_solve


def _broadcast_to(x, shape):
    """JAX's ``lax.linalg._broadcast_to``: leading axes added by ``broadcast_in_dim`` (an identity one only shows
    where JAX records it, in a linear transposition)."""
    return broadcast_in_dim(x, shape, tuple(range(len(shape) - x.ndim, len(shape))))


def _lu_solve_core(lu, permutation, b, trans):
    m = lu.shape[0]
    x = reshape(b, (m, math.prod(b.shape[1:])))
    if trans == 0:
        x = x[permutation, :]
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False)
    elif trans in (1, 2):
        conj = trans == 2
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=False, transpose_a=True, conjugate_a=conj)
        x = lax_linalg.triangular_solve(lu, x, left_side=True, lower=True, unit_diagonal=True, transpose_a=True,
                                        conjugate_a=conj)
        _, ind = sort_key_val(permutation, iota(np.int32, permutation.shape[0]))
        x = x[ind, :]
    else:
        raise ValueError(f"'trans' value must be 0, 1, or 2, got {trans}")
    return reshape(x, b.shape)


@api.staged(static_argnums=(3,))
def _lu_solve(lu, permutation, b, trans):
    """Solves ``a x = b`` (``trans`` 1: ``aᵀ x = b``, 2: ``aᴴ x = b``) from ``lu(a)``; ``b`` one axis short of
    ``lu`` is a batch of vectors."""
    if lu.ndim < 2 or lu.shape[-1] != lu.shape[-2]:
        raise ValueError(f"last two dimensions of LU decomposition must be equal, got shape {lu.shape}")
    if b.ndim < 1:
        raise ValueError(f"b matrix must have rank >= 1, got shape {b.shape}")
    rhs_vector = lu.ndim == b.ndim + 1
    if rhs_vector:
        if b.shape[-1] != lu.shape[-1]:
            raise ValueError("When LU decomposition matrix and b have the same number of dimensions, last axis of "
                             f"LU decomposition matrix (shape {lu.shape}) and b array (shape {b.shape}) must match")
        b = b[..., np.newaxis]
    elif b.shape[-2] != lu.shape[-1]:
        raise ValueError("When LU decomposition matrix and b different numbers of dimensions, last axis of LU "
                         f"decomposition matrix (shape {lu.shape}) and second to last axis of b array (shape "
                         f"{b.shape}) must match")
    batch_shape = broadcast_shapes(lu.shape[:-2], permutation.shape[:-1], b.shape[:-2])
    lu = _broadcast_to(lu, (*batch_shape, *lu.shape[-2:]))
    permutation = _broadcast_to(permutation, (*batch_shape, permutation.shape[-1]))
    b = _broadcast_to(b, (*batch_shape, *b.shape[-2:]))
    fn = _lu_solve_core
    for _ in batch_shape:
        fn = vmap(fn, in_axes=(0, 0, 0, None))
    x = fn(lu, permutation, b, trans)
    return x[..., 0] if rhs_vector else x


def _broadcasted_matvec(a, b):
    """A dot_general of signature ``(...,n,m),(...,m)->(...,n)`` at ``HIGHEST`` precision."""
    batch_shape = broadcast_shapes(a.shape[:-2], b.shape[:-1])
    n_batch = len(batch_shape)
    a = _broadcast_to(a, (*batch_shape, *a.shape[-2:]))
    b = _broadcast_to(b, (*batch_shape, b.shape[-1]))
    dimension_numbers = (([a.ndim - 1], [b.ndim - 1]), (list(range(n_batch)), list(range(n_batch))))
    return dot_general(a, b, dimension_numbers=dimension_numbers, precision=Precision.HIGHEST)


def check_solve_shapes(a, b):
    if not (a.ndim >= 2 and b.ndim in [a.ndim, a.ndim - 1] and a.shape[-1] == a.shape[-2] == b.shape[a.ndim - 2]):
        raise ValueError("The arguments to solve must have shapes a=[..., m, m] and b=[..., m, k] or b=[..., m]; "
                         f"got a={a.shape} and b={b.shape}")


def solve(a, b):
    """``a x = b`` for one matrix ``a`` and ``b`` of shape ``[m]`` or ``[m, k]`` (JAX's ``lax.linalg._solve``)."""
    check_solve_shapes(a, b)
    out_shape = tuple(d_a if d_b == 1 else d_b for d_a, d_b in zip(a.shape[:-1] + (1,), b.shape))
    b = broadcast_in_dim(b, out_shape, tuple(range(b.ndim)))
    lu_, _, permutation = lax_linalg.lu(stop_gradient(a))

    def custom_solve(x):
        return custom_linear_solve(lambda y: _broadcasted_matvec(a, y), x,
                                   solve=lambda _, y: _lu_solve(lu_, permutation, y, 0),
                                   transpose_solve=lambda _, y: _lu_solve(lu_, permutation, y, 1))
    if a.ndim == b.ndim + 1:
        return custom_solve(b)
    return vmap(custom_solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)
