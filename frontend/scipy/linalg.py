"""``irax.scipy.linalg``: JAX's ``jax.scipy.linalg`` factorizations and solves on the ``cholesky``, ``lu``,
``triangular_solve``, ``eigh``, ``svd`` and ``qr`` primitives, staged under JAX's names
(``jit[name=_solve_triangular]``).

JAX's ``lu_solve`` turns the pivots into a permutation with the ``lu_pivots_to_permutation`` primitive; here that
is a ``fori_loop`` of swaps (the same permutation, a different jaxpr).
"""
from __future__ import annotations

import warnings

import numpy as np

import irax
from irax import lax
from irax import numpy as jnp
from irax.lax import linalg as lax_linalg
from irax.lax._linalg_solve import _lu_solve
from irax.numpy import linalg as jnp_linalg
from irax.numpy._util import promote_dtypes_inexact, staged_as

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "det", "eigh", "expm", "fiedler",
           "hankel", "hilbert", "inv", "lu", "lu_factor", "lu_solve", "qr", "solve", "solve_triangular", "svd",
           "toeplitz"]


def _batched_1d(name, a, b):
    """Whether ``b`` is a batch of vectors: one dimension, or (deprecated, as JAX warns) one short of ``a``."""
    if b.ndim == 1:
        return True
    if a.ndim == b.ndim + 1 and a.shape[-1] == b.shape[-1]:
        warnings.warn(f"jax.scipy.linalg.{name}: batched 1D solves with b.ndim > 1 are deprecated, and in the future "
                      "will be treated as a batched 2D solve. Use "
                      f"{name}(a, b[..., None]).squeeze(-1) to avoid this warning.", category=FutureWarning)
        return True
    return False


def _vectorized(fn, a, b, vector):
    """JAX's ``vectorize`` with signature ``(n,n),(n)->(n)`` or ``(n,n),(n,k)->(n,k)``: the loop dimensions of
    both broadcast, and the primitives take them as batch dimensions."""
    core = 1 if vector else 2
    if a.ndim < 2 or b.ndim < core:
        raise ValueError(f"input with shape {a.shape if a.ndim < 2 else b.shape} does not have enough dimensions")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:b.ndim - core])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    b = jnp.broadcast_to(b, batch + b.shape[b.ndim - core:])
    return fn(a, b)


@staged_as("_solve_triangular", static_argnames=("trans", "lower", "unit_diagonal"))
def _solve_triangular(a, b, trans, lower, unit_diagonal):
    if trans == 0 or trans == "N":
        transpose_a, conjugate_a = False, False
    elif trans == 1 or trans == "T":
        transpose_a, conjugate_a = True, False
    elif trans == 2 or trans == "C":
        transpose_a, conjugate_a = True, True
    else:
        raise ValueError(f"Invalid 'trans' value {trans}")
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    vector = _batched_1d("solve_triangular", a, b)
    return _vectorized(lambda a, b: lax_linalg.triangular_solve(
        a, b, left_side=True, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
        unit_diagonal=unit_diagonal), a, b, vector)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, debug=None,
                     check_finite=True):
    """Solves ``op(a) x = b`` for triangular ``a`` (``trans``: 0 or 'N' a, 1 or 'T' a^T, 2 or 'C' a^H)."""
    del overwrite_b, debug, check_finite
    return _solve_triangular(a, b, trans, lower, unit_diagonal)


@staged_as("_cholesky", static_argnames=("lower",))
def _cholesky(a, lower):
    a, = promote_dtypes_inexact(jnp.asarray(a))
    low = lax_linalg.cholesky(a if lower else jnp.conj(jnp.matrix_transpose(a)), symmetrize_input=False)
    return low if lower else jnp.conj(jnp.matrix_transpose(low))


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    """The Cholesky factor (upper unless ``lower``), reading only that triangle of ``a``."""
    del overwrite_a, check_finite
    return _cholesky(a, lower)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    """``(c, lower)`` for ``cho_solve``: the Cholesky factor and which triangle holds it."""
    del overwrite_a, check_finite
    return (cholesky(a, lower=lower), lower)


@staged_as("_cho_solve", static_argnames=("lower",))
def _cho_solve(c, b, lower):
    c, b = promote_dtypes_inexact(jnp.asarray(c), jnp.asarray(b))
    vector = _batched_1d("cho_solve", c, b)

    def solve(c, b):
        b = lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=not lower,
                                        conjugate_a=not lower)
        return lax_linalg.triangular_solve(c, b, left_side=True, lower=lower, transpose_a=lower, conjugate_a=lower)
    return _vectorized(solve, c, b, vector)


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    """Solves ``a x = b`` given ``cho_factor(a)``."""
    del overwrite_b, check_finite
    c, lower = c_and_lower
    return _cho_solve(c, b, lower)


@staged_as("lu_factor", static_argnames=("overwrite_a", "check_finite"))
def lu_factor(a, overwrite_a=False, check_finite=True):
    """``(lu, pivots)``: L and U in one matrix and the row swaps, as LAPACK's getrf."""
    del overwrite_a, check_finite
    a, = promote_dtypes_inexact(jnp.asarray(a))
    lu_, pivots, _ = lax_linalg.lu(a)
    return lu_, pivots


def lu_pivots_to_permutation(pivots, permutation_size):
    """The permutation the row swaps ``pivots`` make of ``range(permutation_size)`` (swap i with pivots[i], in
    order)."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    iota = lax.broadcasted_iota(np.int32, batch + (permutation_size,), len(batch))
    if permutation_size == 0 or k == 0:
        return iota

    def swap(i, perm):
        j = pivots[..., i, None]
        x, y = perm[..., i, None], jnp.take_along_axis(perm, j, axis=-1)
        return jnp.where(iota == i, y, jnp.where(iota == j, x, perm))
    return lax.fori_loop(np.int32(0), np.int32(k), swap, iota)


@staged_as("lu_solve", static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves ``a x = b`` (``trans`` 1: ``a^T``, 2: ``a^H``) given ``lu_factor(a)``."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
    perm = lu_pivots_to_permutation(jnp.asarray(pivots), lu_.shape[-2])
    vector = _batched_1d("lu_solve", lu_, b)
    return _vectorized(lambda l, x: _lu_solve(l, perm, x, trans), lu_, b, vector)


@staged_as("_lu", static_argnums=(1,))
def _lu(a, permute_l):
    a, = promote_dtypes_inexact(jnp.asarray(a))
    lu_, _, permutation = lax_linalg.lu(a)
    dtype = a.dtype
    m, n = a.shape[-2:]
    p = jnp.real(jnp.array(permutation[..., None, :] == jnp.arange(m, dtype=permutation.dtype)[:, None],
                           dtype=dtype))
    k = min(m, n)
    l = jnp.tril(lu_, -1)[..., :, :k] + jnp.eye(m, k, dtype=dtype)
    u = jnp.triu(lu_)[..., :k, :]
    if permute_l:  # p @ l, as the rows of l in inverse-permutation order (exact, as p is a permutation)
        inverse = jnp.argsort(permutation, axis=-1)
        return jnp.take_along_axis(l, inverse[..., None], axis=-2), u
    return p, l, u


@staged_as("lu", static_argnames=("permute_l", "overwrite_a", "check_finite"))
def lu(a, permute_l=False, overwrite_a=False, check_finite=True):
    """``(p, l, u)`` with ``a = p @ l @ u`` (``permute_l``: ``(p @ l, u)``)."""
    del overwrite_a, check_finite
    return _lu(a, permute_l)


# --- expm: scaling and squaring with Pade approximants, as JAX's -------------------------------------------------

_PADE = {
    3: (120., 60., 12., 1.),
    5: (30240., 15120., 3360., 420., 30., 1.),
    7: (17297280., 8648640., 1995840., 277200., 25200., 1512., 56., 1.),
    9: (17643225600., 8821612800., 2075673600., 302702400., 30270240., 2162160., 110880., 3960., 90., 1.),
    13: (64764752532480000., 32382376266240000., 7771770303897600., 1187353796428800., 129060195264000.,
         10559470521600., 670442572800., 33522128640., 1323241920., 40840800., 960960., 16380., 182., 1.),
}


def _pade(degree):
    """The numerator's odd part U and even part V of the degree-``degree`` Pade approximant of exp at A."""
    b = _PADE[degree]

    def approximant(a):
        ident = jnp.eye(*a.shape, dtype=a.dtype)
        a2 = jnp.dot(a, a)
        if degree == 13:
            a4 = jnp.dot(a2, a2)
            a6 = jnp.dot(a4, a2)
            u = jnp.dot(a, jnp.dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4 + b[3] * a2
                        + b[1] * ident)
            v = jnp.dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2 + b[0] * ident
            return u, v
        powers = [ident, a2]
        while len(powers) < (degree + 1) // 2:
            powers.append(jnp.dot(powers[-1], a2) if len(powers) > 2 else jnp.dot(a2, a2))
        odd = sum(b[2 * i + 1] * p for i, p in reversed(list(enumerate(powers))) if i)
        u = jnp.dot(a, odd + b[1] * ident)
        v = sum(b[2 * i] * p for i, p in reversed(list(enumerate(powers))) if i) + b[0] * ident
        return u, v
    return approximant


def _calc_p_q(a):
    a_l1 = jnp_linalg.norm(a, 1)
    if a.dtype in (np.float64, np.complex128):
        maxnorm, conds, degrees = 5.371920351148152, (1.495585217958292e-002, 2.539398330063230e-001,
                                                      9.504178996162932e-001, 2.097847961257068e+000), (3, 5, 7, 9, 13)
    else:
        maxnorm, conds, degrees = 3.925724783138660, (4.258730016922831e-001, 1.880152677804762e+000), (3, 5, 7)
    n_squarings = jnp.maximum(0, jnp.floor(jnp.log2(a_l1 / maxnorm)))
    a = a / 2 ** n_squarings.astype(a.dtype)
    idx = jnp.digitize(a_l1, jnp.array(conds, dtype=a_l1.dtype))
    u, v = lax.switch(idx, [_pade(d) for d in degrees], a)
    return u + v, -u + v, n_squarings


def _expm_matrix(a, upper_triangular, max_squarings):
    p, q, n_squarings = _calc_p_q(a)

    def compute(args):
        _, p, q = args
        r = solve_triangular(q, p) if upper_triangular else jnp_linalg.solve(q, p)

        def square(c, i):
            return lax.cond(i < n_squarings, lambda x: jnp.dot(x, x), lambda x: x, c), None
        r, _ = lax.scan(square, r, jnp.arange(max_squarings, dtype=n_squarings.dtype))
        return r
    return lax.cond(n_squarings > max_squarings, lambda args: jnp.full_like(args[0], np.nan), compute, (a, p, q))


@staged_as("expm", static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential by scaling and squaring with a Pade approximant (degree chosen by the 1-norm); NaN
    where more than ``max_squarings`` squarings would be needed."""
    a, = promote_dtypes_inexact(jnp.asarray(A))
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    if a.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    if a.ndim == 2:
        return _expm_matrix(a, upper_triangular, max_squarings)
    flat = a.reshape((-1,) + a.shape[-2:])
    out = irax.vmap(lambda m: _expm_matrix(m, upper_triangular, max_squarings))(flat)
    return out.reshape(a.shape)


@staged_as("_eigh", static_argnames=("lower", "eigvals_only", "eigvals", "type"))
def _eigh(a, b, lower, eigvals_only, eigvals, type):
    if b is not None:
        raise NotImplementedError("Only the b=None case of eigh is implemented")
    if type != 1:
        raise NotImplementedError("Only the type=1 case of eigh is implemented.")
    if eigvals is not None:
        raise NotImplementedError("Only the eigvals=None case of eigh is implemented.")
    a, = promote_dtypes_inexact(jnp.asarray(a))
    v, w = lax_linalg.eigh(a, lower=lower)
    return w if eigvals_only else (w, v)


def eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, turbo=True, eigvals=None,
         type=1, check_finite=True):
    """Eigenvalues (ascending) and eigenvectors of symmetric matrices (the standard problem only: ``b`` None)."""
    del overwrite_a, overwrite_b, turbo, check_finite
    return _eigh(a, b, lower, eigvals_only, eigvals, type)


@staged_as("_svd", static_argnames=("full_matrices", "compute_uv"))
def _svd(a, *, full_matrices, compute_uv):
    a, = promote_dtypes_inexact(jnp.asarray(a))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


def svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
    """``(u, s, vh)`` with ``s`` descending, or ``s`` alone unless ``compute_uv``."""
    del overwrite_a, check_finite, lapack_driver
    return _svd(a, full_matrices=full_matrices, compute_uv=compute_uv)


@staged_as("_qr", static_argnames=("mode", "pivoting"))
def _qr(a, mode, pivoting):
    if mode in ("full", "r"):
        full_matrices = True
    elif mode == "economic":
        full_matrices = False
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    a, = promote_dtypes_inexact(jnp.asarray(a))
    q, r = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    return (r,) if mode == "r" else (q, r)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(q, r)`` with ``a = q r`` (``mode``: 'full', 'economic', or 'r' for ``(r,)``)."""
    del overwrite_a, lwork, check_finite
    return _qr(a, mode, pivoting)


def det(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return jnp_linalg.det(a)


def inv(a, overwrite_a=False, check_finite=True):
    del overwrite_a, check_finite
    return jnp_linalg.inv(a)


@staged_as("_solve", static_argnames=("assume_a", "lower"))
def _solve(a, b, assume_a, lower):
    """A general solve by LU; a positive definite one (``assume_a='pos'``) by Cholesky, inside
    ``custom_linear_solve`` so that derivatives reuse the factorization, as JAX's."""
    if assume_a != "pos":
        return jnp_linalg.solve(a, b)
    from irax.batching import vmap
    from irax.lax._linalg_solve import _broadcasted_matvec, check_solve_shapes
    a, b = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(b))
    check_solve_shapes(a, b)
    factors = cho_factor(lax.stop_gradient(a), lower=lower)

    def solve(b):
        return lax.custom_linear_solve(lambda x: _broadcasted_matvec(a, x), b,
                                       solve=lambda _, x: cho_solve(factors, x), symmetric=True)
    return solve(b) if a.ndim == b.ndim + 1 else vmap(solve, b.ndim - 1, max(a.ndim, b.ndim) - 1)(b)


def solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, debug=False, check_finite=True, assume_a="gen"):
    del overwrite_a, overwrite_b, debug, check_finite
    valid = ["gen", "sym", "her", "pos"]
    if assume_a not in valid:
        raise ValueError(f"Expected assume_a to be one of {valid}; got {assume_a!r}")
    return _solve(a, b, assume_a, lower)


def block_diag(*arrs):
    """The arrays (at most 2-D) along the diagonal of one matrix, as JAX builds it: each padded to the full width,
    then concatenated."""
    if len(arrs) == 0:
        arrs = (jnp.zeros((1, 0)),)
    arrs = tuple(jnp.asarray(a) for a in arrs)
    dtype = jnp.result_type(*arrs)
    bad = [i for i, a in enumerate(arrs) if a.ndim > 2]
    if bad:
        raise ValueError(f"Arguments to jax.scipy.linalg.block_diag must have at most 2 dimensions, got "
                         f"{arrs[bad[0]]} at argument {bad[0]}.")
    arrs = [jnp.atleast_2d(a).astype(dtype) for a in arrs]
    total = sum(a.shape[1] for a in arrs)
    padded, col = [], 0
    for a in arrs:
        cols = a.shape[1]
        padded.append(lax.pad(a, np.zeros((), dtype)[()], ((0, 0, 0), (col, total - cols - col, 0))))
        col += cols
    return jnp.concatenate(padded, axis=0)


def _patches(v, rows):
    """The ``rows``-long windows of ``v`` as the columns of a matrix (JAX builds Toeplitz and Hankel matrices
    with ``conv_general_dilated_patches``)."""
    return lax.conv_general_dilated_patches(v.reshape((1, v.shape[0], 1)), (rows,), (1,), "VALID",
                                            dimension_numbers=("NTC", "IOT", "NTC"),
                                            precision=lax.Precision.HIGHEST)[0]


def _toeplitz_1d(c, r):
    if c.shape[0] == 0 or r.shape[0] == 0:
        return jnp.empty((c.shape[0], r.shape[0]), dtype=jnp.promote_types(c.dtype, r.dtype))
    return jnp.flip(_patches(jnp.concatenate((c[::-1], r[1:])), r.shape[0]), axis=0)


def _hankel_1d(c, r):
    if c.shape[0] == 0 or r.shape[0] == 0:
        return jnp.empty((c.shape[0], r.shape[0]), dtype=jnp.result_type(c, r))
    return _patches(jnp.concatenate((c, r[1:])), r.shape[0])


def toeplitz(c, r=None):
    """The matrix with first column ``c`` and first row ``r`` (``conj(c)`` if not given), batched over leading
    dimensions."""
    c = jnp.atleast_1d(jnp.asarray(c))
    r = jnp.conjugate(c) if r is None else jnp.atleast_1d(jnp.asarray(r))
    return jnp.vectorize(_toeplitz_1d, signature="(m),(n)->(m,n)")(c, r)


def hankel(c, r=None):
    """The matrix with first column ``c`` and last row ``r`` (zeros if not given; ``r[0]`` is ignored)."""
    c = jnp.asarray(c)
    r = jnp.zeros_like(c) if r is None else jnp.asarray(r)
    if c.ndim == 0:
        raise ValueError("hankel: c must be at least 1-dimensional, got a scalar.")
    if r.ndim == 0:
        raise ValueError("hankel: r must be at least 1-dimensional, got a scalar.")
    if c.ndim < r.ndim:
        c = lax.expand_dims(c, range(r.ndim - c.ndim))
    elif r.ndim < c.ndim:
        r = lax.expand_dims(r, range(c.ndim - r.ndim))
    return jnp.vectorize(_hankel_1d, signature="(m),(n)->(m,n)")(c, r)


def circulant(c):
    """The matrix whose columns are the cyclic shifts of ``c``."""
    def one(c):
        n = c.shape[0]
        return c[(jnp.arange(n)[:, None] - jnp.arange(n)[None, :]) % n]
    return jnp.vectorize(one, signature="(n)->(n,n)")(jnp.atleast_1d(jnp.asarray(c)))


def fiedler(a):
    a = jnp.atleast_1d(jnp.asarray(a))
    return jnp.abs(a[..., None] - a[..., None, :])


def hilbert(n):
    a = lax.broadcasted_iota(float, (n, 1), 0)
    return 1 / (a + a.T + 1)
