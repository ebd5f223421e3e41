"""``irax.lax.linalg`` (``jax.lax.linalg``): the decompositions ``cholesky``, ``lu``, ``eigh``, ``svd`` and ``qr``
and ``triangular_solve`` and ``tridiagonal_solve``,
binding the primitives with JAX 0.10's names and parameters, and JAX's wrappers around them (symmetrizing,
masking a triangle, vector right-hand sides) so that ``make_jaxpr`` prints JAX's text; and ``qdwh``, JAX's polar
decomposition written on ``qr`` and ``cholesky``."""
from __future__ import annotations

import enum

import numpy as np

from irax import dtypes
from irax.core import bind, bind1

from . import add, broadcast, broadcasted_iota, conj, div, expand_dims, full_like, ge, select, squeeze, transpose
from ._scalars import as_operand

__all__ = ["EigImplementation", "EighImplementation", "SvdAlgorithm", "cholesky", "cholesky_update", "eig", "eigh",
           "hessenberg", "householder_product", "lu", "lu_pivots_to_permutation", "ormqr", "qdwh", "qr", "schur", "svd",
           "symmetric_product", "triangular_solve", "tridiagonal", "tridiagonal_solve"]


def _T(x):
    return transpose(x, (*range(x.ndim - 2), x.ndim - 1, x.ndim - 2))


def _H(x):
    return conj(_T(x)) if dtypes.issubdtype(x.dtype, np.complexfloating) else _T(x)


def symmetrize(x):
    """``(x + x^H) / 2``: the Hermitian part a decomposition of a Hermitian matrix reads."""
    return div(add(x, _H(x)), 2)


def _tri(shape, k):
    """JAX's ``lax._tri``: True on and below diagonal ``k``."""
    return ge(add(broadcasted_iota(np.int32, shape, 0), k), broadcasted_iota(np.int32, shape, 1))


def _tril(m, k=0):
    *_, n, w = m.shape
    mask = broadcast(_tri((n, w), k), m.shape[:-2])
    return select(mask, m, full_like(m, 0))


def cholesky(x, *, symmetrize_input: bool = True):
    """The lower Cholesky factor of each matrix of ``x`` (``[..., n, n]``); all NaN where one is not positive
    definite. ``symmetrize_input`` reads ``(x + x^H) / 2``, else only the lower triangle."""
    x = as_operand(x)
    if symmetrize_input:
        x = symmetrize(x)
    return _tril(bind1("cholesky", x))


def cholesky_update(r_matrix, w_vector):
    """The upper Cholesky factor of ``R^T R + w w^T`` from the upper factor ``R`` of ``R^T R``, in O(n^2)."""
    return bind1("cholesky_update", as_operand(r_matrix), as_operand(w_vector))


def lu(x):
    """LU decomposition with partial pivoting: ``(lu, pivots, permutation)`` with ``P A = L U``."""
    return tuple(bind("lu", as_operand(x)))


def hessenberg(a):
    """``(a, taus)``: each square matrix reduced to upper Hessenberg form, the Householder reflectors that did it
    stored below the subdiagonal with scale factors ``taus`` (``[..., n - 1]``), as LAPACK's ``gehrd``."""
    return tuple(bind("hessenberg", as_operand(a)))


def schur(x, *, compute_schur_vectors: bool = True, sort_eig_vals: bool = False, select_callable=None):
    """``[T, Q]`` with ``x = Q T Q^H``, ``T`` quasi-upper-triangular (upper triangular if complex) and ``Q``
    unitary, or ``[T]``; LAPACK's ``gees`` on the host, as JAX's CPU schur (its sorting is not implemented)."""
    return bind("schur", as_operand(x), compute_schur_vectors=bool(compute_schur_vectors),
                select_callable=select_callable, sort_eig_vals=bool(sort_eig_vals))


def geqrf(a):
    """``(a, taus)``: each matrix's QR as LAPACK's ``geqrf`` leaves it, R on and above the diagonal and the
    Householder reflectors below it with their scale factors ``taus`` (``[..., min(m, n)]``)."""
    return tuple(bind("geqrf", as_operand(a)))


def geqp3(a, jpvt, *, use_magma: bool | None = None):
    """``(a, jpvt, taus)``: each matrix's QR with column pivoting as LAPACK's ``geqp3`` leaves it (``geqrf``'s
    outputs for ``a[..., jpvt - 1]``), the columns marked nonzero in ``jpvt`` taken first."""
    return tuple(bind("geqp3", as_operand(a), as_operand(jpvt), use_magma=use_magma))


def ormqr(a, taus, c, *, left: bool = True, transpose: bool = False):
    """``Q c`` (``Q^H c`` with ``transpose``; ``c Q``, ``c Q^H`` unless ``left``) for the ``Q`` of ``geqrf``'s
    reflectors ``(a, taus)``, without forming ``Q`` (LAPACK's ``ormqr``)."""
    return bind1("ormqr", as_operand(a), as_operand(taus), as_operand(c), left=bool(left), transpose=bool(transpose))


def tridiagonal(a, *, lower: bool = True):
    """``(a, d, e, taus)``: each Hermitian matrix (its ``lower`` or upper triangle read) reduced to tridiagonal
    form, as LAPACK's ``sytrd``: the diagonal ``d`` and off-diagonal ``e`` (real), and the Householder reflectors
    stored in the triangle read beyond the off-diagonal, with their scale factors ``taus``."""
    return tuple(bind("tridiagonal", as_operand(a), lower=bool(lower)))


def householder_product(a, taus):
    """The product of the Householder reflectors stored below the diagonal of ``a`` (``[..., m, n]``, m >= n) with
    scale factors ``taus`` (``[..., k]``): the first n columns of a unitary matrix, as LAPACK's ``orgqr``."""
    return bind1("householder_product", as_operand(a), as_operand(taus))


def lu_pivots_to_permutation(pivots, permutation_size: int):
    """The permutation (int32, ``[..., permutation_size]``) that the row swaps ``pivots`` of ``lu`` make."""
    return bind1("lu_pivots_to_permutation", as_operand(pivots), permutation_size=permutation_size)


def symmetric_product(a_matrix, c_matrix, *, alpha: float = 1., beta: float = 0., symmetrize_output: bool = False):
    """``alpha * a a^T + beta * c`` (``[..., m, m]``); only its lower triangle is promised, unless
    ``symmetrize_output`` mirrors it into the upper one."""
    result = bind1("symmetric_product", as_operand(a_matrix), as_operand(c_matrix), alpha=alpha, beta=beta)
    if symmetrize_output:
        upper_half = transpose(_tril(result, k=-1), (*range(result.ndim - 2), result.ndim - 1, result.ndim - 2))
        result = add(_tril(result, k=0), upper_half)
    return result


def triangular_solve(a, b, *, left_side: bool = False, lower: bool = False, transpose_a: bool = False,
                     conjugate_a: bool = False, unit_diagonal: bool = False):
    """Solves ``op(a) x = b`` (``left_side``) or ``x op(a) = b`` for triangular ``a``; ``b`` one dimension short
    of ``a`` is a batch of vectors."""
    a, b = as_operand(a), as_operand(b)
    conjugate_a = bool(conjugate_a) and dtypes.issubdtype(a.dtype, np.complexfloating)
    singleton = b.ndim == a.ndim - 1
    if singleton:
        b = expand_dims(b, (-1 if left_side else -2,))
    out = bind1("triangular_solve", a, b, left_side=bool(left_side), lower=bool(lower),
                transpose_a=bool(transpose_a), conjugate_a=conjugate_a, unit_diagonal=bool(unit_diagonal))
    if singleton:
        out = squeeze(out, (out.ndim - 1,) if left_side else (out.ndim - 2,))
    return out


def tridiagonal_solve(dl, d, du, b, *, perturb_singular: bool = False):
    """Solves ``T x = b`` for the tridiagonal ``T`` with ``T[i, i-1] = dl[i]``, ``T[i, i] = d[i]`` and
    ``T[i, i+1] = du[i]`` (``dl[0]`` and ``du[-1]`` unread), ``b`` of shape ``[..., m, k]``. A singular system
    gives NaN, or with ``perturb_singular`` a finite answer from perturbed pivots (as inverse iteration needs)."""
    return bind1("tridiagonal_solve", *map(as_operand, (dl, d, du, b)), perturb_singular=bool(perturb_singular))


def _index_range(subset_by_index):
    return None if subset_by_index is None else tuple(int(i) for i in subset_by_index)


class EighImplementation(enum.Enum):
    """JAX's eigh implementation names; irax runs cyclic Jacobi for each."""
    QR = "qr"
    JACOBI = "jacobi"
    QDWH = "qdwh"


def eigh(x, *, lower: bool = True, symmetrize_input: bool = True, sort_eigenvalues: bool = True,
         subset_by_index: tuple[int, int] | None = None, implementation=None):
    """Eigendecomposition of symmetric matrices: ``(v, w)`` with ``v[..., :, i]`` the unit eigenvector of the
    eigenvalue ``w[..., i]`` (ascending). ``symmetrize_input`` reads ``(x + x^H) / 2``, else the ``lower`` (upper)
    triangle; ``subset_by_index=(lo, hi)`` keeps eigenvalues lo..hi-1."""
    x = as_operand(x)
    if symmetrize_input:
        x = symmetrize(x)
    v, w = bind("eigh", x, lower=bool(lower), sort_eigenvalues=bool(sort_eigenvalues),
                subset_by_index=_index_range(subset_by_index),
                algorithm=None if implementation is None else str(implementation))
    return v, w


class EigImplementation(enum.Enum):
    """JAX's names of eig's implementations; irax runs LAPACK's geev (NumPy's) on the host for each."""
    LAPACK = "lapack"
    MAGMA = "magma"
    CUSOLVER = "cusolver"


def eig(x, *, compute_left_eigenvectors: bool = True, compute_right_eigenvectors: bool = True,
        enable_eigvec_derivs: bool = False, implementation: EigImplementation | None = None, use_magma=None):
    """Eigendecomposition of general matrices: ``[w, vl, vr]`` (the eigenvectors asked for), complex, as LAPACK's
    geev computes them on the host (JAX's CPU eig does the same)."""
    return bind("eig", as_operand(x), compute_left_eigenvectors=bool(compute_left_eigenvectors),
                compute_right_eigenvectors=bool(compute_right_eigenvectors),
                enable_eigvec_derivs=bool(enable_eigvec_derivs),
                implementation=None if implementation is None else str(implementation))


class SvdAlgorithm(enum.Enum):
    """JAX's SVD algorithm names; irax runs one-sided Jacobi for each."""
    DEFAULT = "default"
    QR = "QR"
    JACOBI = "Jacobi"
    POLAR = "polar"
    DIVIDE_AND_CONQUER = "divide_and_conquer"


def svd(x, *, full_matrices: bool = True, compute_uv: bool = True, subset_by_index: tuple[int, int] | None = None,
        algorithm: SvdAlgorithm | None = None):
    """Singular value decomposition: ``(u, s, vh)`` with ``s`` descending, or ``s`` alone unless ``compute_uv``."""
    outs = bind("svd", as_operand(x), full_matrices=bool(full_matrices), compute_uv=bool(compute_uv),
                subset_by_index=_index_range(subset_by_index), algorithm=None if algorithm is None else str(algorithm))
    if not compute_uv:
        return outs[0]
    s, u, vh = outs
    return u, s, vh


def qr(x, *, pivoting: bool = False, full_matrices: bool = True, use_magma: bool | None = None):
    """QR decomposition ``x = q r``: ``q`` orthogonal (``[..., m, m]``, or ``[..., m, min(m, n)]`` unless
    ``full_matrices``), ``r`` upper triangular; with ``pivoting``, of ``x[..., p]`` and ``p`` too (LAPACK's
    ``geqp3``)."""
    q, r, *p = bind("qr", as_operand(x), pivoting=bool(pivoting), full_matrices=bool(full_matrices),
                    use_magma=use_magma)
    return (q, r, p[0]) if pivoting else (q, r)


def qdwh(x, *, is_hermitian: bool = False, max_iterations: int | None = None, eps: float | None = None,
         dynamic_shape: tuple[int, int] | None = None):
    """The polar decomposition ``x = u h`` of a full-rank ``M x N`` matrix (``M >= N``) by QDWH (QR-based
    dynamically weighted Halley iteration), which needs QR and Cholesky factorizations but no inverse.

    Args:
      x: the matrix, possibly padded from its true shape ``dynamic_shape`` ``(m, n)``.
      is_hermitian: unused (JAX keeps it for compatibility).
      max_iterations: at most this many iterations (default 10).
      eps: the iterates stop when ``|x_k - x_{k-1}| < |x_k| (4 eps)^(1/3)`` (default: the dtype's epsilon).
      dynamic_shape: the unpadded shape ``(m, n)``, or None.

    Returns:
      ``(u, h, num_iters, is_converged)``: the unitary and Hermitian factors, the number of iterations taken and
      whether they converged within ``max_iterations``.

    Raises:
      ValueError: if ``M < N``.
    """
    from ._qdwh import qdwh as staged  # built on irax.numpy, which imports this module
    return staged(x, is_hermitian=is_hermitian, max_iterations=max_iterations, eps=eps, dynamic_shape=dynamic_shape)
