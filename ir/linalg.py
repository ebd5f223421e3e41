"""Shape rules of the linear-algebra primitives (``cholesky``, ``triangular_solve``, ``tridiagonal_solve``,
``symmetric_product``, ``lu``, ``lu_pivots_to_permutation``, ``householder_product``, ``hessenberg``, ``eigh``, ``eig``,
``schur``, ``svd``, ``qr``), as JAX's ``linalg_primitive`` checks them: every operand a batch of matrices (or vectors)
with the same leading batch dimensions, its dtype floating or complex (int32 pivots), the same errors for a wrong rank
or a non-square matrix."""
from __future__ import annotations

import numpy as np

from .avals import ShapedArray
from .shapes import _all_weak, check_dtypes, same_dtypes

INEXACT = (np.inexact,)


LAPACK_DTYPES = tuple(map(np.dtype, (np.float32, np.float64, np.complex64, np.complex128)))


def check_lapack_dtype(dtype):
    """JAX's CPU lowerings of ``tridiagonal_solve``, ``householder_product`` and ``hessenberg`` call LAPACK (or
    jaxlib kernels) for these four dtypes only, and say so when lowered (the ops themselves trace)."""
    if np.dtype(dtype) not in LAPACK_DTYPES:
        raise NotImplementedError(f"Unsupported dtype {np.dtype(dtype)}.")


def _like(x, avals_in):
    """One result of ``x``'s shape and dtype, weakly typed if every operand is."""
    return [ShapedArray(x.shape, x.dtype, _all_weak(avals_in))]


def _batch_and_dims(name, avals_in, ranks, kinds=INEXACT, batched=True):
    """JAX's ``linalg_shape_rule``: the shared batch shape and each operand's trailing ``rank`` dimensions (no
    batch dimensions unless ``batched``)."""
    batch, dims = [], []
    for i, (rank, a) in enumerate(zip(ranks, avals_in)):
        if a.ndim < rank:
            raise TypeError(f"Input {i} to {name} must have rank at least {rank}, but got shape={a.shape}")
        if not batched and a.ndim != rank:
            raise TypeError(f"Input {i} to {name} must have a rank of exactly {rank}, but got shape={a.shape}")
        batch.append(a.shape[:a.ndim - rank])
        dims.append(a.shape[a.ndim - rank:])
    if any(len(b) != len(batch[0]) for b in batch):
        raise TypeError(f"All inputs to {name} must have the same number of batch dimensions, but got "
                        f"{[len(b) for b in batch]} batch dimensions for the inputs.")
    if any(b != batch[0] for b in batch):
        raise TypeError(f"All inputs to {name} must have the same batch dimensions, but got {batch}.")
    check_dtypes(name, avals_in, kinds, name_position=True)
    return batch[0], dims


def cholesky(name, avals_in):
    (x,) = avals_in
    _, ((n, m),) = _batch_and_dims(name, avals_in, (2,))
    if n != m:
        raise ValueError(f"The input to cholesky must be a square matrix. Got shape {(n, m)}.")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)]


def cholesky_update(name, avals_in):
    """JAX's ``cholesky_update`` takes one real matrix and vector (no batching rule either)."""
    _, (r_shape, w_shape) = _batch_and_dims(name, avals_in, (2, 1), (np.floating,), batched=False)
    _same_dtypes(name, avals_in)
    if r_shape[0] != r_shape[1] or w_shape[0] != r_shape[1]:
        raise ValueError("Rank-1 update to Cholesky decomposition takes a square matrix and a vector of the same size "
                         f"as input. Got shapes {r_shape} and {w_shape} instead")
    return _like(avals_in[0], avals_in)


def triangular_solve(name, avals_in, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, b = avals_in
    _, (a_shape, b_shape) = _batch_and_dims(name, avals_in, (2, 2))
    if a_shape[0] != a_shape[1]:
        raise ValueError(f"The first input to triangular_solve must be a square matrix. Got shape {a_shape}.")
    common = -2 if left_side else -1
    if a_shape[-1] != b_shape[common]:
        raise ValueError(f"Incompatible shapes for arguments to triangular_solve: {a_shape} and {b_shape}.")
    dtype = same_dtypes(name, avals_in)
    return [ShapedArray(b.shape, dtype, _all_weak(avals_in))]


def tridiagonal_solve(name, avals_in, *, perturb_singular):
    b = avals_in[-1]
    _, (dl_shape, d_shape, du_shape, b_shape) = _batch_and_dims(name, avals_in, (1, 1, 1, 2))
    _same_dtypes(name, avals_in)
    if dl_shape != d_shape or dl_shape != du_shape:
        raise TypeError(f"{name} requires that all diagonal arguments have the same shape.")
    if dl_shape != b_shape[:-1]:
        raise TypeError(f"{name} requires that the leading ndim-1 dimensions of b equal the dimensions of the "
                        "diagonal arguments.")
    return _like(b, avals_in)


def symmetric_product(name, avals_in, *, alpha, beta):
    _, (a_shape, c_shape) = _batch_and_dims(name, avals_in, (2, 2), (np.floating,))
    _same_dtypes(name, avals_in)
    if a_shape[0] != c_shape[1] or c_shape[0] != c_shape[1]:
        raise ValueError("symmetric_update expects a rectangular matrix of shape (m, n) and a square matrix of shape "
                         f"(n, n). Got shapes {a_shape} and {c_shape}.")
    return _like(avals_in[1], avals_in)


def _same_dtypes(name, avals_in):
    """JAX's message for the linear-algebra primitives' operands of different dtypes."""
    if any(a.dtype != avals_in[0].dtype for a in avals_in):
        raise TypeError(f"lax.{name} requires arguments to have the same dtypes, got "
                        f"{', '.join(a.dtype.name for a in avals_in)}.")


def householder_product(name, avals_in):
    _, ((m, n), (k,)) = _batch_and_dims(name, avals_in, (2, 1))
    _same_dtypes(name, avals_in)
    if m < n:
        raise ValueError(f"The first argument to householder_product must have at least as many rows as columns, got "
                         f"shape {(m, n)}")
    if k > min(m, n):
        raise ValueError("The second argument to householder_product must not have more rows than the minimum of "
                         "the first argument's rows and columns.")
    return _like(avals_in[0], avals_in)


def hessenberg(name, avals_in):
    (x,) = avals_in
    batch, ((m, n),) = _batch_and_dims(name, avals_in, (2,))
    if m != n:
        raise ValueError(f"Argument to Hessenberg reduction must have shape [..., n, n], got shape {x.shape}")
    return [ShapedArray(x.shape, x.dtype, x.weak_type), ShapedArray(batch + (max(n - 1, 0),), x.dtype, x.weak_type)]


def geqrf(name, avals_in):
    """LAPACK's ``geqrf``: R above the diagonal with the reflectors below it, and their ``min(m, n)`` scale factors."""
    (x,) = avals_in
    batch, ((m, n),) = _batch_and_dims(name, avals_in, (2,))
    return [ShapedArray(x.shape, x.dtype, x.weak_type), ShapedArray(batch + (min(m, n),), x.dtype, x.weak_type)]


def geqp3(name, avals_in, *, use_magma):
    """LAPACK's ``geqp3``: ``geqrf``'s outputs with the column permutation (1-based) between them."""
    x, jpvt = avals_in
    batch, ((m, n), (p,)) = _batch_and_dims(name, avals_in, (2, 1), [INEXACT, (np.integer,)])
    if p != n:  # LAPACK would read past its end (JAX does not check)
        raise ValueError(f"geqp3 expects a column permutation of size {n} for a matrix of shape {(m, n)}. Got {p}.")
    return [ShapedArray(x.shape, x.dtype, x.weak_type), ShapedArray(jpvt.shape, jpvt.dtype, jpvt.weak_type),
            ShapedArray(batch + (min(m, n),), x.dtype, x.weak_type)]


def ormqr(name, avals_in, *, left, transpose):
    _, (a_shape, (k,), c_shape) = _batch_and_dims(name, avals_in, (2, 1, 2))
    _same_dtypes(name, avals_in)
    m = a_shape[0]
    if left and c_shape[0] != m:
        raise ValueError("ormqr with left=True expects c to have the same number of rows as the Householder matrix "
                         f"a. Got a shape {a_shape} and c shape {c_shape}.")
    if not left and c_shape[1] != m:
        raise ValueError("ormqr with left=False expects c to have the same number of columns as the Householder "
                         f"matrix a has rows. Got a shape {a_shape} and c shape {c_shape}.")
    if k > min(a_shape):  # LAPACK rejects it (JAX's CPU ormqr fails at run time)
        raise ValueError(f"ormqr expects at most min(m, n) = {min(a_shape)} Householder scale factors for a of shape "
                         f"{a_shape}. Got {k}.")
    return _like(avals_in[2], avals_in)


def tridiagonal(name, avals_in, *, lower):
    """LAPACK's ``sytrd``: the matrix with the reflectors stored, the real diagonal and off-diagonal, the scale
    factors."""
    (x,) = avals_in
    batch, ((n, m),) = _batch_and_dims(name, avals_in, (2,))
    if n != m or n == 0:
        raise ValueError(f"The input to tridiagonal must be a square matrix. Got shape {(n, m)}.")
    real, weak = _real_dtype(x), x.weak_type
    return [ShapedArray(x.shape, x.dtype, weak), ShapedArray(batch + (n,), real, weak),
            ShapedArray(batch + (n - 1,), real, weak), ShapedArray(batch + (n - 1,), x.dtype, weak)]


def lu(name, avals_in):
    (x,) = avals_in
    batch, ((m, n),) = _batch_and_dims(name, avals_in, (2,))
    i32 = np.dtype(np.int32)
    return [ShapedArray(x.shape, x.dtype, x.weak_type), ShapedArray(batch + (min(m, n),), i32, x.weak_type),
            ShapedArray(batch + (m,), i32, x.weak_type)]


def lu_pivots_to_permutation(name, avals_in, *, permutation_size):
    batch, ((k,),) = _batch_and_dims(name, avals_in, (1,), (np.int32,))
    if not permutation_size >= k:
        raise ValueError(f"Output permutation size {permutation_size} has to exceed the trailing dimension of the "
                         f"pivots. Got pivots size {k}")
    return [ShapedArray(batch + (permutation_size,), np.dtype(np.int32), avals_in[0].weak_type)]


def _real_dtype(x):
    return np.finfo(x.dtype).dtype if np.issubdtype(x.dtype, np.complexfloating) else x.dtype


def eigh(name, avals_in, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (x,) = avals_in
    batch, ((n, m),) = _batch_and_dims(name, avals_in, (2,))
    if n != m:
        raise ValueError(f"Argument to symmetric eigendecomposition must have shape [..., n, n], got shape {(n, m)}")
    d = n if subset_by_index is None else subset_by_index[1] - subset_by_index[0]
    return [ShapedArray(batch + (n, d), x.dtype, x.weak_type), ShapedArray(batch + (d,), _real_dtype(x), x.weak_type)]


def eig(name, avals_in, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs,
        implementation):
    """JAX's ``eig_abstract_eval``: complex eigenvalues, then the left and the right eigenvectors asked for."""
    (x,) = avals_in
    batch, ((n, m),) = _batch_and_dims(name, avals_in, (2,))
    if n != m:
        raise ValueError(f"The input to eig must be a square matrix. Got shape {(n, m)}.")
    dtype = np.result_type(x.dtype, np.complex64)
    vectors = ShapedArray(batch + (n, n), dtype)
    return ([ShapedArray(batch + (n,), dtype)] + [vectors] * bool(compute_left_eigenvectors)
            + [vectors] * bool(compute_right_eigenvectors))


def schur(name, avals_in, *, compute_schur_vectors, sort_eig_vals, select_callable):
    """The Schur form, then (``compute_schur_vectors``) the Schur vectors, both of the operand's type."""
    (x,) = avals_in
    _, ((n, m),) = _batch_and_dims(name, avals_in, (2,))
    if n != m:
        raise ValueError(f"The input to schur must be a square matrix. Got shape {(n, m)}.")
    return [ShapedArray(x.shape, x.dtype, x.weak_type)] * (1 + bool(compute_schur_vectors))


def svd(name, avals_in, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (x,) = avals_in
    batch, ((m, n),) = _batch_and_dims(name, avals_in, (2,))
    rank = min(m, n)
    if subset_by_index is not None:
        if full_matrices and tuple(subset_by_index) != (0, rank):
            raise ValueError("full_matrices and subset_by_index cannot both be set")
        rank = min(rank, subset_by_index[1] - subset_by_index[0])
    s = ShapedArray(batch + (rank,), _real_dtype(x), x.weak_type)
    if not compute_uv:
        return [s]
    return [s, ShapedArray(batch + (m, m if full_matrices else rank), x.dtype, x.weak_type),
            ShapedArray(batch + (n if full_matrices else rank, n), x.dtype, x.weak_type)]


def qr(name, avals_in, *, pivoting, full_matrices, use_magma):
    (x,) = avals_in
    batch, ((m, n),) = _batch_and_dims(name, avals_in, (2,))
    k = m if full_matrices else min(m, n)
    return ([ShapedArray(batch + (m, k), x.dtype, x.weak_type), ShapedArray(batch + (k, n), x.dtype, x.weak_type)]
            + [ShapedArray(batch + (n,), np.dtype(np.int32), x.weak_type)] * bool(pivoting))


TRIANGULAR_SOLVE_PARAMS = ("left_side", "lower", "transpose_a", "conjugate_a", "unit_diagonal")
