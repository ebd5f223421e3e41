"""``irax.scipy.linalg``: JAX's ``jax.scipy.linalg`` factorizations and solves on the ``cholesky``, ``lu``,
``triangular_solve``, ``eigh``, ``svd`` and ``qr`` primitives, staged under JAX's names
(``jit[name=_solve_triangular]``).

``schur`` is LAPACK's ``gees`` on the host, as JAX's CPU one; ``sqrtm``, ``funm`` and ``solve_sylvester`` start
from it (``_linalg_schur``).
"""
from __future__ import annotations

import functools
import math
import operator
import warnings

import numpy as np

import irax
from irax import dtypes, lax
from irax import numpy as jnp
from irax.lax import linalg as lax_linalg
from irax.lax._linalg_solve import _lu_solve
from irax.numpy import linalg as jnp_linalg
from irax.numpy._util import check_arraylike, promote_args_inexact, promote_dtypes, promote_dtypes_inexact, staged_as
from irax.scipy.fft import _promote_dtypes_complex as promote_dtypes_complex, _to_complex_dtype
from irax.scipy.special import comb

__all__ = ["block_diag", "cho_factor", "cho_solve", "cholesky", "circulant", "companion", "convolution_matrix", "det",
           "dft", "eigh", "eigh_tridiagonal", "expm", "expm_frechet", "fiedler", "fiedler_companion", "funm",
           "hadamard", "hankel", "helmert", "hessenberg", "hilbert", "inv", "invhilbert", "invpascal", "leslie", "lu",
           "lu_factor", "lu_solve", "pascal", "polar", "qr", "qr_multiply", "rsf2csf", "schur", "solve",
           "solve_sylvester", "solve_triangular", "sqrtm", "svd", "toeplitz"]


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


@staged_as("hessenberg", static_argnames=("calc_q", "overwrite_a", "check_finite"))
def hessenberg(a, *, calc_q=False, overwrite_a=False, check_finite=True):
    """The upper Hessenberg form ``h`` of ``a`` (``a = q h q^H``), and with ``calc_q`` the unitary ``q``: LAPACK's
    ``gehrd`` reflectors multiplied out by ``householder_product``."""
    del overwrite_a, check_finite
    n = np.shape(a)[-1]
    if n == 0:
        return (jnp.zeros_like(a), jnp.zeros_like(a)) if calc_q else jnp.zeros_like(a)
    a_out, taus = lax_linalg.hessenberg(a)
    h = jnp.triu(a_out, -1)
    if not calc_q:
        return h
    q = lax_linalg.householder_product(a_out[..., 1:, :-1], taus)
    batch_dims = a_out.shape[:-2]
    q = jnp.block([[jnp.ones(batch_dims + (1, 1), dtype=a_out.dtype),
                    jnp.zeros(batch_dims + (1, n - 1), dtype=a_out.dtype)],
                   [jnp.zeros(batch_dims + (n - 1, 1), dtype=a_out.dtype), q]])
    return h, q


@staged_as("lu_solve", static_argnames=("trans", "overwrite_b", "check_finite"))
def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Solves ``a x = b`` (``trans`` 1: ``a^T``, 2: ``a^H``) given ``lu_factor(a)``."""
    del overwrite_b, check_finite
    lu_, pivots = lu_and_piv
    lu_, b = promote_dtypes_inexact(jnp.asarray(lu_), jnp.asarray(b))
    perm = lax_linalg.lu_pivots_to_permutation(jnp.asarray(pivots), lu_.shape[-2])
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


def _precise_dot(a, b):
    return jnp.dot(a, b, precision=lax.Precision.HIGHEST)


def _pade(degree):
    """The numerator's odd part U and even part V of the degree-``degree`` Pade approximant of exp at A, each
    power and sum in JAX's order."""
    b = _PADE[degree]

    def approximant(a):
        ident = jnp.eye(*a.shape, dtype=a.dtype)
        a2 = _precise_dot(a, a)
        if degree == 13:
            a4 = _precise_dot(a2, a2)
            a6 = _precise_dot(a4, a2)
            u = _precise_dot(a, _precise_dot(a6, b[13] * a6 + b[11] * a4 + b[9] * a2) + b[7] * a6 + b[5] * a4
                             + b[3] * a2 + b[1] * ident)
            v = (_precise_dot(a6, b[12] * a6 + b[10] * a4 + b[8] * a2) + b[6] * a6 + b[4] * a4 + b[2] * a2
                 + b[0] * ident)
            return u, v
        powers = [a2]
        while len(powers) < (degree - 1) // 2:
            powers.append(_precise_dot(powers[-1], a2))
        def series(first):  # b[first] * A^(degree - 1) + ... + b[first - degree + 3] * A2, as JAX's sums
            total = b[first] * powers[-1]
            for k in range(len(powers) - 2, -1, -1):
                total = total + b[first - 2 * (len(powers) - 1 - k)] * powers[k]
            return total
        u = _precise_dot(a, series(degree) + b[1] * ident)
        return u, series(degree - 1) + b[0] * ident
    return approximant


@staged_as("_calc_P_Q")
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


@staged_as("_squaring", static_argnums=(2,))
def _squaring(r, n_squarings, max_squarings):
    """Undoes the scaling: ``r`` squared ``n_squarings`` times, as a scan of ``max_squarings`` conds."""
    def square(c, i):
        return lax.cond(i < n_squarings, lambda x: _precise_dot(x, x), lambda x: x, c), None
    r, _ = lax.scan(square, r, jnp.arange(max_squarings, dtype=n_squarings.dtype))
    return r


@staged_as("expm", static_argnames=("upper_triangular", "max_squarings"))
def expm(A, *, upper_triangular=False, max_squarings=16):
    """The matrix exponential by scaling and squaring with a Pade approximant (degree chosen by the 1-norm); NaN
    where more than ``max_squarings`` squarings would be needed."""
    a, = promote_dtypes_inexact(A)
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        raise ValueError(f"Expected A to be a (batched) square matrix, got A.shape={a.shape}.")
    if a.ndim > 2:
        return jnp.vectorize(functools.partial(expm, upper_triangular=upper_triangular, max_squarings=max_squarings),
                             signature="(n,n)->(n,n)")(a)
    if a.dtype not in (np.float32, np.float64, np.complex64, np.complex128):
        raise TypeError(f"A.dtype={a.dtype} is not supported.")
    p, q, n_squarings = _calc_p_q(jnp.asarray(a))

    def compute(args):
        _, p, q = args
        r = solve_triangular(q, p) if upper_triangular else jnp_linalg.solve(q, p)
        return _squaring(r, n_squarings, max_squarings)
    return lax.cond(n_squarings > max_squarings, lambda args: jnp.full_like(args[0], np.nan), compute, (a, p, q))


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
    q, r, *p = lax_linalg.qr(a, pivoting=pivoting, full_matrices=full_matrices)
    return ((r,) if mode == "r" else (q, r)) + tuple(p)


def qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    """``(q, r)`` with ``a = q r`` (``mode``: 'full', 'economic', or 'r' for ``(r,)``); with ``pivoting``, of
    ``a[:, p]``, and ``p`` last."""
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


def leslie(f, s):
    """The Leslie matrix: fecundities ``f`` as its first row, survival rates ``s`` on its first subdiagonal."""
    check_arraylike("leslie", f, s)
    f_arr = jnp.atleast_1d(f)
    s_arr = jnp.atleast_1d(s)
    if f_arr.shape[-1] < 2:
        raise ValueError(f"The length of f along the last axis must be at least 2; got shape {f_arr.shape}.")
    if s_arr.shape[-1] != f_arr.shape[-1] - 1:
        raise ValueError("Incorrect lengths for f and s. The length of s along the last axis must be one less than "
                         f"the length of f; got f shape {f_arr.shape} and s shape {s_arr.shape}.")
    return _leslie(f_arr, s_arr)


@functools.partial(jnp.vectorize, signature="(n),(m)->(n,n)")
def _leslie(f, s):
    f, s = promote_dtypes(f, s)
    return jnp.diag(s, k=-1).at[0].set(f)


def companion(a):
    """The companion matrix of the polynomial with coefficients ``a`` (highest degree first): its eigenvalues are
    the roots. A zero leading coefficient gives inf or NaN (SciPy raises; a traced value cannot be checked)."""
    a, = promote_args_inexact("companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] < 2:
        raise ValueError(f"The length of `a` along the last axis must be at least 2; got shape {a.shape}.")
    return _companion(a)


@functools.partial(jnp.vectorize, signature="(n)->(m,m)")
def _companion(a):
    first_row = -a[1:] / a[0]
    m = a.shape[0] - 1
    out = jnp.eye(m, m, k=-1, dtype=first_row.dtype)
    return out.at[0].set(first_row)


def fiedler_companion(a):
    """The pentadiagonal companion matrix of Fiedler: the roots of the polynomial ``a`` as its eigenvalues, with
    fewer nonzeros than ``companion``'s."""
    a, = promote_args_inexact("fiedler_companion", a)
    a = jnp.atleast_1d(a)
    if a.shape[-1] == 0:
        raise ValueError("fiedler_companion requires the last axis of 'a' to have nonzero length, but got an array "
                         f"of shape {a.shape}.")
    return _fiedler_companion(a)


@functools.partial(jnp.vectorize, signature="(n)->(m,m)")
def _fiedler_companion(a):
    """Masked selects over the full grid, so the shapes stay static under jit and vectorize."""
    n = a.shape[0] - 1
    if n == 0:
        return jnp.empty_like(a, shape=(0, 0))
    a = a / a[0]
    if n == 1:
        return -a[1:].reshape(1, 1)
    i = jnp.arange(n)[:, None]
    j = jnp.arange(n)[None, :]
    super_val = -a[jnp.minimum(i + 2, n)]
    sub_val = -a[jnp.minimum(i + 1, n)]
    i_even = (i % 2 == 0)
    i_odd = (i % 2 == 1)
    one = jnp.array(1, dtype=a.dtype)
    zero = jnp.array(0, dtype=a.dtype)
    conditions = [(i == 0) & (j == 0), (i == 1) & (j == 0), (j == i + 1) & i_even, (j == i + 2) & i_even,
                  (j == i - 1) & i_even & (i >= 2), (j == i - 2) & i_odd & (i >= 3)]
    choices = [-a[1], one, super_val, one, sub_val, one]
    return jnp.select(conditions, choices, default=zero)


@staged_as("convolution_matrix", static_argnames=("n", "mode"))
def convolution_matrix(a, n, mode="full"):
    """The Toeplitz matrix ``A`` (``n`` columns) with ``A @ v == jnp.convolve(a, v, mode)``."""
    n = operator.index(n)
    if n <= 0:
        raise ValueError(f"n must be a positive integer; got {n}.")
    check_arraylike("convolution_matrix", a)
    a_arr = jnp.asarray(a)
    if a_arr.ndim == 0:
        raise ValueError("convolution_matrix: a must be at least 1-dimensional, got a scalar.")
    m = a_arr.shape[-1]
    if m < 1:
        raise ValueError(f"len(a) must be at least 1; got shape {a_arr.shape}.")
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"mode must be one of 'full', 'valid', 'same'; got {mode!r}.")
    pad_widths = [(0, 0)] * (a_arr.ndim - 1) + [(0, n - 1)]
    az = jnp.pad(a_arr, pad_widths)
    raz = jnp.pad(jnp.flip(a_arr, axis=-1), pad_widths)
    length = m + n - 1
    if mode == "same":
        trim = min(n, m) - 1
        tb = trim // 2
        te = trim - tb
    elif mode == "valid":
        tb = te = min(n, m) - 1
    else:
        tb = te = 0
    col0 = lax.slice_in_dim(az, tb, length - te, axis=-1)
    row0 = lax.slice_in_dim(raz, length - n - tb, length - tb, axis=-1)
    return toeplitz(col0, row0)


@staged_as("invhilbert", static_argnames=("n",))
def invhilbert(n):
    """The inverse of ``hilbert(n)`` by its closed form in binomial coefficients (floating point: SciPy's
    ``exact=True`` has no counterpart)."""
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i = a[:, None]
    j = a[None, :]
    s = i + j
    return (-1.0) ** s * (s + 1.0) * comb(n + i, n - j - 1) * comb(n + j, n - i - 1) * comb(s, i) ** 2


@staged_as("_binom")
def _binom(n, k):
    a = lax.lgamma(n + 1.0)
    b = lax.lgamma(n - k + 1.0)
    c = lax.lgamma(k + 1.0)
    return lax.exp(a - b - c)


def _pascal_kind(kind, article):
    kind = "symmetric" if kind is None else kind
    valid_kind = ["symmetric", "lower", "upper"]
    if kind not in valid_kind:
        raise ValueError(f"Expected kind to be {article}: {valid_kind}; got {kind}")
    return kind


@staged_as("pascal", static_argnames=("n", "kind"))
def pascal(n, kind=None):
    """The Pascal matrix of binomial coefficients (``kind``: 'symmetric', 'lower' or 'upper'), from ``lgamma``, so
    only approximately integer."""
    kind = _pascal_kind(kind, "on of")
    a = jnp.arange(n, dtype=np.float32)
    l_n = _binom(a[:, None], a[None, :])
    if kind == "lower":
        return l_n
    if kind == "upper":
        return l_n.T
    return jnp.dot(l_n, l_n.T)


@staged_as("invpascal", static_argnames=("n", "kind"))
def invpascal(n, kind=None):
    """The inverse of ``pascal(n, kind)`` by its closed form ``(-1)^(i-j) binom(i, j)`` (floating point)."""
    kind = _pascal_kind(kind, "one of")
    a = jnp.arange(n, dtype=dtypes.default_float_dtype())
    i = a[:, None]
    j = a[None, :]
    l_inv = ((-1.0) ** (i - j)) * _binom(i, j)
    if kind == "lower":
        return l_inv
    if kind == "upper":
        return l_inv.T
    return jnp.dot(l_inv.T, l_inv)


@staged_as("helmert", static_argnames=("n", "full"))
def helmert(n, full=False):
    """The Helmert matrix: ``n - 1`` orthonormal contrasts, after a row of ``1 / sqrt(n)`` if ``full``."""
    if n < 1:
        raise ValueError(f"n must be a positive integer; got {n}.")
    i = jnp.arange(n - 1)[:, None]
    j = jnp.arange(n)[None, :]
    k = i + 1
    k_f = k.astype(dtypes.default_float_dtype())
    denom = jnp.sqrt(k_f * (k_f + 1))
    h = jnp.where(j <= i, 1.0 / denom, jnp.where(j == k, -k_f / denom, jnp.zeros_like(denom)))
    if full:
        first_row = jnp.full((1, n), 1.0 / jnp.sqrt(n), dtype=h.dtype)
        h = jnp.concatenate([first_row, h], axis=0)
    return h


@staged_as("hadamard", static_argnames=("n", "dtype"))
def hadamard(n, dtype=int):
    """Sylvester's Hadamard matrix of order ``n`` (a power of 2)."""
    if n < 1 or not math.log2(n).is_integer():
        raise ValueError(f"n must be a positive power of 2; got {n}.")
    h = jnp.ones((1, 1), dtype=dtype)
    for _ in range(int(math.log2(n))):
        h = jnp.block([[h, h], [h, -h]])
    return h


@staged_as("dft", static_argnames=("n", "scale", "dtype"))
def dft(n, scale=None, *, dtype=None):
    """The ``n``-point DFT matrix ``exp(-2 pi i j k / n)``, unscaled or scaled by ``1/sqrt(n)`` or ``1/n``."""
    if scale is not None and scale not in ("sqrtn", "n"):
        raise ValueError(f"scale must be None, 'sqrtn', or 'n'; got {scale!r}.")
    if dtype is None:
        dtype = dtypes.default_complex_dtype()
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
        if not dtypes.issubdtype(dtype, np.complexfloating):
            raise ValueError(f"dtype must be a complex floating-point type; got {dtype}.")
    a = jnp.arange(n, dtype=dtype)
    omegas = jnp.exp(-2j * np.pi * a[:, None] * a[None, :] / n)
    if scale == "sqrtn":
        omegas = omegas / jnp.sqrt(n)
    elif scale == "n":
        omegas = omegas / n
    return omegas


# --- polar, expm_frechet, qr_multiply, rsf2csf, eigh_tridiagonal --------------------------------------------------

# JAX computes the polar decomposition under ``default_matmul_precision('float32')``, which its matmuls record as
# HIGHEST precision; here the matmuls ask for it themselves.
_matmul = functools.partial(jnp.matmul, precision=lax.Precision.HIGHEST)


@staged_as("_polar_2d", static_argnames=("side", "method"))
def _polar_2d(a, side, method, eps, max_iterations):
    m, n = a.shape
    if method == "qdwh":
        if m >= n and side == "right":
            unitary, posdef, _, _ = lax_linalg.qdwh(a, is_hermitian=False, eps=eps)
        elif m < n and side == "left":
            a = a.T.conj()
            unitary, posdef, _, _ = lax_linalg.qdwh(a, is_hermitian=False, eps=eps)
            posdef = posdef.T.conj()
            unitary = unitary.T.conj()
        else:
            raise NotImplementedError("method='qdwh' only supports mxn matrices where m < n where side='right' and "
                                      f"m >= n side='left', got {a.shape} with {side=}")
    elif method == "svd":
        u_svd, s_svd, vh_svd = lax_linalg.svd(a, full_matrices=False)
        s_svd = s_svd.astype(u_svd.dtype)
        unitary = _matmul(u_svd, vh_svd)
        if side == "right":
            posdef = _matmul(vh_svd.T.conj() * s_svd[None, :], vh_svd)
        else:
            posdef = _matmul(u_svd * s_svd[None, :], u_svd.T.conj())
    else:
        raise ValueError(f"Unknown polar decomposition method {method}.")
    return unitary, posdef


@staged_as("polar", static_argnames=("side", "method"))
def polar(a, side="right", *, method="qdwh", eps=None, max_iterations=None):
    """The polar decomposition ``a = u p`` (``side='right'``) or ``a = p u`` (``'left'``): ``u`` with orthonormal
    columns (rows if ``n > m``), ``p`` Hermitian positive semidefinite; by QDWH or from the SVD
    (``u = u_svd vh_svd``). ``max_iterations`` is ignored, as in JAX."""
    arr = jnp.asarray(a)
    if arr.ndim < 2:
        raise ValueError("The input `a` must be at least a 2-D array.")
    if side not in ["right", "left"]:
        raise ValueError("The argument `side` must be either 'right' or 'left'.")
    sig = "(m,n)->(m,n),(n,n)" if side == "right" else "(m,n)->(m,n),(m,m)"
    return jnp.vectorize(functools.partial(_polar_2d, side=side, method=method, eps=eps,
                                           max_iterations=max_iterations), signature=sig)(arr)


@staged_as("expm_frechet", static_argnames=("method", "compute_expm"))
def expm_frechet(A, E, *, method=None, compute_expm=True):
    """The Frechet derivative of ``expm`` at ``A`` in the direction ``E`` (``jvp`` of ``expm``), with ``expm(A)``
    first unless not ``compute_expm``."""
    del method
    a_arr = jnp.asarray(A)
    e_arr = jnp.asarray(E)
    # JAX compares shape[-2] with shape[1] (not shape[-1]): more than one batch dimension is rejected unless the
    # second equals n.
    if a_arr.ndim < 2 or a_arr.shape[-2] != a_arr.shape[1]:
        raise ValueError(f"expected A to be a (batched) square matrix, got A.shape={a_arr.shape}")
    if e_arr.ndim < 2 or e_arr.shape[-2] != e_arr.shape[-1]:
        raise ValueError(f"expected E to be a (batched) square matrix, got E.shape={e_arr.shape}")
    if a_arr.shape != e_arr.shape:
        raise ValueError(f"expected A and E to be the same shape, got A.shape={a_arr.shape} E.shape={e_arr.shape}")
    bound_fun = functools.partial(expm, upper_triangular=False, max_squarings=16)
    expm_a, expm_frechet_ae = irax.jvp(bound_fun, (a_arr,), (e_arr,))
    return (expm_a, expm_frechet_ae) if compute_expm else expm_frechet_ae


def qr_multiply(a, c, mode="right", pivoting=False, conjugate=False, overwrite_a=False, overwrite_c=False):
    """``(Q @ c, R)`` (``mode='left'``) or ``(c @ Q, R)`` (``'right'``) for the economic QR decomposition of ``a``
    (``conj(Q)`` if ``conjugate``); a vector ``c`` is a column (left) or a row (right), and so is the result.
    As JAX's, ``ormqr`` applies ``geqrf``'s (``geqp3``'s, with ``pivoting``: then ``a[:, p]`` is factored and
    ``p`` comes third) reflectors without forming ``Q``; ``conjugate`` transposes ``c`` and multiplies by ``Q^H``
    from the other side.
    """
    del overwrite_a, overwrite_c
    a, c = promote_dtypes_inexact(jnp.asarray(a), jnp.asarray(c))
    if mode not in ("right", "left"):
        raise ValueError(f"mode must be 'right' or 'left', got {mode!r}")
    onedim = c.ndim == 1
    if onedim:
        c = c[:, None] if mode == "left" else c[None, :]
    m, n = a.shape[-2:]
    k = min(m, n)
    if mode == "left":
        if c.shape[-2] != k:
            raise ValueError(f"Array shapes are not compatible for Q @ c operation: a has shape {tuple(a.shape)} so "
                             f"Q has {k} columns, but c has {c.shape[-2]} rows (expected {k}).")
    elif c.shape[-1] != m:
        raise ValueError(f"Array shapes are not compatible for c @ Q operation: a has shape {tuple(a.shape)} so Q "
                         f"has {m} rows, but c has {c.shape[-1]} columns (expected {m}).")
    batch = jnp.broadcast_shapes(a.shape[:-2], c.shape[:-2])
    a = jnp.broadcast_to(a, batch + a.shape[-2:])
    c = jnp.broadcast_to(c, batch + c.shape[-2:])
    if pivoting:
        r, p, taus = lax_linalg.geqp3(a, jnp.zeros(a.shape[:-2] + (n,), dtype=jnp.int32))
        p -= 1
    else:
        r, taus = lax_linalg.geqrf(a)
    if m > n and mode == "left":
        c = jnp.concatenate([c, jnp.zeros(c.shape[:-2] + (m - k,) + c.shape[-1:], dtype=c.dtype)], axis=-2)
    if conjugate:
        c = c.swapaxes(-1, -2)
    cq = lax_linalg.ormqr(r, taus, c, left=(mode == "left") != conjugate, transpose=conjugate)
    if conjugate:
        cq = cq.swapaxes(-1, -2)
    if mode == "right":
        cq = cq[..., :k]
    if onedim:
        cq = cq.ravel()
    r = jnp.triu(r[..., :k, :])
    return (cq, r, p) if pivoting else (cq, r)


@staged_as("_rsf2csf_2d")
def _rsf2csf_2d(T, Z):
    T, Z = promote_dtypes_complex(T, Z)
    eps = dtypes.finfo(T.dtype).eps
    N = T.shape[0]
    if N == 1:
        return T, Z

    def _update_T_Z(m, T, Z):
        """A Givens rotation on rows and columns m-1, m that zeroes ``T[m, m-1]`` (a 2x2 block's eigenvalue)."""
        mu = jnp_linalg.eigvals(lax.dynamic_slice(T, (m - 1, m - 1), (2, 2))) - T[m, m]
        r = jnp_linalg.norm(jnp.array([mu[0], T[m, m - 1]])).astype(T.dtype)
        c = mu[0] / r
        s = T[m, m - 1] / r
        G = jnp.array([[c.conj(), s], [-s, c]], dtype=T.dtype)
        T_rows = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=0)
        col_mask = jnp.arange(N) >= m - 1
        G_dot_T_zeroed_cols = G @ jnp.where(col_mask, T_rows, 0)
        T_rows_new = jnp.where(~col_mask, T_rows, G_dot_T_zeroed_cols)
        T = lax.dynamic_update_slice_in_dim(T, T_rows_new, m - 1, axis=0)
        T_cols = lax.dynamic_slice_in_dim(T, m - 1, 2, axis=1)
        row_mask = jnp.arange(N)[:, np.newaxis] < m + 1
        T_zeroed_rows_dot_GH = jnp.where(row_mask, T_cols, 0) @ G.conj().T
        T_cols_new = jnp.where(~row_mask, T_cols, T_zeroed_rows_dot_GH)
        T = lax.dynamic_update_slice_in_dim(T, T_cols_new, m - 1, axis=1)
        Z_cols = lax.dynamic_slice_in_dim(Z, m - 1, 2, axis=1)
        Z = lax.dynamic_update_slice_in_dim(Z, Z_cols @ G.conj().T, m - 1, axis=1)
        return T, Z

    def _rsf2csf_iter(i, TZ):
        m = N - i
        T, Z = TZ
        T, Z = lax.cond(jnp.abs(T[m, m - 1]) > eps * (jnp.abs(T[m - 1, m - 1]) + jnp.abs(T[m, m])), _update_T_Z,
                        lambda m, T, Z: (T, Z), m, T, Z)
        T = T.at[m, m - 1].set(0.0)
        return T, Z

    return lax.fori_loop(1, N, _rsf2csf_iter, (T, Z))


@staged_as("_schur", static_argnames=("output",))
def _schur(a, output):
    if output == "complex":
        a = a.astype(_to_complex_dtype(a.dtype))
    return lax_linalg.schur(a)


def schur(a, output="real"):
    """``(T, Z)`` with ``a = Z T Z^H``: ``T`` quasi-upper-triangular (``output="real"``, 2x2 blocks for complex
    eigenvalue pairs) or upper triangular (``"complex"``, the input made complex first, as JAX does)."""
    if output not in ("real", "complex"):
        raise ValueError(f"Expected 'output' to be either 'real' or 'complex', got {output=}.")
    return _schur(a, output)


@staged_as("rsf2csf", static_argnames=("check_finite",))
def rsf2csf(T, Z, check_finite=True):
    """The complex Schur form ``(T, Z)`` from the real one (as ``schur`` returns it): each 2x2 diagonal block of
    ``T`` is split by a Givens rotation, applied to ``Z`` too."""
    del check_finite
    T_arr = jnp.asarray(T)
    Z_arr = jnp.asarray(Z)
    if T_arr.ndim < 2 or T_arr.shape[-1] != T_arr.shape[-2]:
        raise ValueError("Input 'T' must be square.")
    if Z_arr.ndim < 2 or Z_arr.shape[-1] != Z_arr.shape[-2]:
        raise ValueError("Input 'Z' must be square.")
    if T_arr.shape[-1] != Z_arr.shape[-1]:
        raise ValueError(f"Input array shapes must match: Z: {Z_arr.shape} vs. T: {T_arr.shape}")
    return jnp.vectorize(_rsf2csf_2d, signature="(n,n),(n,n)->(n,n),(n,n)")(T_arr, Z_arr)


def _sturm(alpha, beta_sq, pivmin, alpha0_perturbation, x):
    """The number of eigenvalues below each ``x`` of the tridiagonal matrix: the negative pivots of the LDL^T
    factorization of ``T - x I`` (Sturm's sequence), its loop unrolled in blocks of 16."""
    n = alpha.shape[0]
    zeros = jnp.zeros(x.shape, dtype=np.int32)
    ones = jnp.ones(x.shape, dtype=np.int32)

    def sturm_step0():
        q = alpha[0] - x
        count = jnp.where(q < 0, ones, zeros)
        q = jnp.where(alpha[0] == x, alpha0_perturbation, q)
        return q, count

    def sturm_step(i, q, count):
        q = alpha[i] - beta_sq[i - 1] / q - x
        count = jnp.where(q <= pivmin, count + 1, count)
        q = jnp.where(q <= pivmin, jnp.minimum(q, -pivmin), q)
        return q, count

    q, count = sturm_step0()
    blocksize = 16
    unroll_cnt = (n - 1) % blocksize

    def unrolled_steps(args):
        start, q, count = args
        for j in range(unroll_cnt):
            q, count = sturm_step(start + j, q, count)
        return start + unroll_cnt, q, count

    i, q, count = unrolled_steps((1, q, count))
    unroll_cnt = blocksize

    def cond(iqc):
        i, q, count = iqc
        return jnp.less(i, n)
    _, _, count = lax.while_loop(cond, unrolled_steps, (i, q, count))
    return count


def _eigh_tridiagonal_select(select, select_range, n):
    if select == "a":
        return jnp.arange(n, dtype=np.int32)
    if select == "i":
        if select_range is None:
            raise ValueError("for select='i', select_range must be specified.")
        if select_range[0] > select_range[1]:
            raise ValueError("Got empty index range in select_range.")
        return jnp.arange(select_range[0], select_range[1] + 1, dtype=np.int32)
    if select == "v":
        raise NotImplementedError("eigh_tridiagonal(..., select='v') is not implemented")
    raise ValueError("'select must have a value in {'a', 'i', 'v'}.")


@staged_as("eigh_tridiagonal", static_argnames=("eigvals_only", "select", "select_range"))
def eigh_tridiagonal(d, e, *, eigvals_only=False, select="a", select_range=None, tol=None, key=None):
    """Eigenvalues (ascending) of the symmetric tridiagonal matrix with diagonal ``d`` and off-diagonal ``e``, by
    bisection on Sturm counts, all in parallel; ``select='i'`` keeps indices ``select_range[0]..[1]``.

    Eigenvectors (the columns of the second result) by inverse iteration from random vectors drawn with ``key``
    (``random.key(42)`` by default), as JAX's.
    """
    if not eigvals_only and key is None:
        key = irax.random.key(42)
    alpha = jnp.asarray(d)
    beta = jnp.asarray(e)
    supported_dtypes = (np.float32, np.float64, np.complex64, np.complex128)
    if alpha.dtype != beta.dtype:
        raise TypeError(f"diagonal and off-diagonal values must have same dtype, got {alpha.dtype} and {beta.dtype}")
    if alpha.dtype not in supported_dtypes or beta.dtype not in supported_dtypes:
        raise TypeError("Only float32 and float64 inputs are supported as inputs to "
                        f"jax.scipy.linalg.eigh_tridiagonal, got {alpha.dtype} and {beta.dtype}")
    n = alpha.shape[0]
    if n <= 1:
        return jnp.real(alpha) if eigvals_only else (jnp.real(alpha), jnp.eye(n, dtype=alpha.dtype))
    if dtypes.issubdtype(alpha.dtype, np.complexfloating):
        alpha = jnp.real(alpha)
        beta_sq = jnp.real(beta * jnp.conj(beta))
        beta_abs = jnp.sqrt(beta_sq)
    else:
        beta_abs = jnp.abs(beta)
        beta_sq = jnp.square(beta)

    # Gershgorin's circles bound the eigenvalues.
    off_diag_abs_row_sum = jnp.concatenate([beta_abs[:1], beta_abs[:-1] + beta_abs[1:], beta_abs[-1:]], axis=0)
    lambda_est_max = jnp.amax(alpha + off_diag_abs_row_sum)
    lambda_est_min = jnp.amin(alpha - off_diag_abs_row_sum)
    t_norm = jnp.maximum(jnp.abs(lambda_est_min), jnp.abs(lambda_est_max))

    # The smallest pivot allowed in the Sturm sequence, against overflow.
    finfo = np.finfo(alpha.dtype)
    one = np.ones([], dtype=alpha.dtype)
    safemin = np.maximum(one / finfo.max, (one + finfo.eps) * finfo.tiny)
    pivmin = safemin * jnp.maximum(1, jnp.amax(beta_sq))
    alpha0_perturbation = jnp.square(finfo.eps * beta_abs[0])
    abs_tol = finfo.eps * t_norm
    if tol is not None:
        abs_tol = jnp.maximum(tol, abs_tol)
    # Bisection halves the interval once per bit of the mantissa, and once more.
    max_it = finfo.nmant + 1
    target_counts = _eigh_tridiagonal_select(select, select_range, n)

    # The search starts from the Gershgorin interval, slightly widened.
    fudge = 2.1
    norm_slack = jnp.array(n, alpha.dtype) * fudge * finfo.eps * t_norm
    lower = lambda_est_min - norm_slack - 2 * fudge * pivmin
    upper = lambda_est_max + norm_slack + fudge * pivmin
    target_shape = np.shape(target_counts)
    lower = jnp.broadcast_to(lower, shape=target_shape)
    upper = jnp.broadcast_to(upper, shape=target_shape)
    mid = 0.5 * (upper + lower)
    pivmin = jnp.broadcast_to(pivmin, target_shape)
    alpha0_perturbation = jnp.broadcast_to(alpha0_perturbation, target_shape)

    def cond(args):
        i, lower, _, upper = args
        return jnp.logical_and(jnp.less(i, max_it), jnp.less(abs_tol, jnp.amax(upper - lower)))

    def body(args):
        i, lower, mid, upper = args
        counts = _sturm(alpha, beta_sq, pivmin, alpha0_perturbation, mid)
        lower = jnp.where(counts <= target_counts, mid, lower)
        upper = jnp.where(counts > target_counts, mid, upper)
        mid = 0.5 * (lower + upper)
        return i + 1, lower, mid, upper

    _, _, mid, _ = lax.while_loop(cond, body, (0, lower, mid, upper))
    if eigvals_only:
        return mid
    return mid, _tridiagonal_eigenvectors(alpha, beta, mid, key).T


def _close_eigenvalue_clusters(eigvals):
    """Starts and ends (padded to ``k // 2 + 1``) of the runs of eigenvalues closer than ``sqrt(eps)`` times the
    largest, and their number: their eigenvectors are orthogonalized against each other. Assumes ascending
    eigenvalues."""
    k = eigvals.shape[0]
    gap = eigvals[1:] - eigvals[:-1]
    eps = np.finfo(eigvals.dtype).eps
    t_norm = jnp.maximum(jnp.abs(eigvals[0]), jnp.abs(eigvals[-1]))
    gaptol = jnp.sqrt(eps) * t_norm
    close = gap < gaptol
    left_neighbor_close = jnp.pad(close, (1, 0), constant_values=False)
    right_neighbor_close = jnp.pad(close, (0, 1), constant_values=False)
    ortho_interval_start = jnp.logical_and(jnp.logical_not(left_neighbor_close), right_neighbor_close)
    ortho_interval_end = jnp.logical_and(left_neighbor_close, jnp.logical_not(right_neighbor_close))
    max_clusters = k // 2 + 1
    starts = jnp.nonzero(ortho_interval_start, size=max_clusters)[0]
    ends = jnp.nonzero(ortho_interval_end, size=max_clusters)[0] + 1
    return starts, ends, jnp.sum(ortho_interval_start)


def _tridiagonal_eigenvectors(alpha, beta, eigvals, key):
    """JAX's inverse iteration: from random unit vectors, all ``k`` systems ``(T - eigvals[i] I) x = v[i]`` solved
    at once (``tridiagonal_solve`` with perturbed pivots, the shifted matrices being singular), normalized and the
    clusters' vectors orthonormalized by QR, until the norms stop growing by 10 % or after LAPACK's ``xSTEIN`` five
    steps."""
    n, k = alpha.shape[0], eigvals.shape[0]
    dl = jnp.pad(jnp.conj(beta), (1, 0))
    du = jnp.pad(beta, (0, 1))
    starts, ends, num_clusters = _close_eigenvalue_clusters(eigvals)
    arange_k = jnp.arange(k)
    solve_dtype = np.result_type(alpha.dtype, beta.dtype)
    base_dtype = np.finfo(solve_dtype).dtype
    v = irax.random.normal(key, (k, n), dtype=base_dtype).astype(solve_dtype)
    v = v / jnp.linalg.norm(v, axis=-1, keepdims=True).astype(solve_dtype)

    def orthogonalize_cluster(i, ev):
        start, end = starts[i], ends[i]
        mask = (arange_k < end - start).astype(ev.dtype)
        v_block = lax.dynamic_slice(jnp.pad(ev, ((0, k), (0, 0))), (start, 0), (k, n)) * mask[:, None]
        q, _ = jnp_linalg.qr(v_block.T)
        update = lax.dynamic_update_slice(jnp.zeros((2 * k, n), dtype=ev.dtype), q.T * mask[:, None],
                                          (start, 0))[:k, :]
        is_in_cluster = (arange_k >= start) & (arange_k < end)
        return jnp.where(is_in_cluster[:, None], update, ev)

    alpha_shifted = alpha[None, :] - eigvals[:, None]
    dl_batched = jnp.broadcast_to(dl[None, :], (k, n))
    du_batched = jnp.broadcast_to(du[None, :], (k, n))

    def inverse_iteration_step(state):
        i, v, nrm_v, nrm_v_old = state
        v_new = lax_linalg.tridiagonal_solve(dl_batched.astype(solve_dtype), alpha_shifted.astype(solve_dtype),
                                             du_batched.astype(solve_dtype), v[:, :, None].astype(solve_dtype),
                                             perturb_singular=True)
        v_new = jnp.squeeze(v_new, axis=-1)
        nrm_v_new = jnp.linalg.norm(v_new, axis=-1, keepdims=True)
        v_new = v_new / nrm_v_new.astype(v_new.dtype)
        nrm_v_new = jnp.squeeze(nrm_v_new, axis=-1)
        v_new = lax.fori_loop(0, num_clusters, orthogonalize_cluster, v_new)
        return i + 1, v_new, nrm_v_new, nrm_v

    def continue_iteration(state):
        i, _, nrm_v, nrm_v_old = state
        return jnp.logical_and(i < 5, jnp.any(nrm_v >= 1.1 * nrm_v_old))

    init = (0, v, jnp.ones(k, dtype=eigvals.dtype), jnp.zeros(k, dtype=eigvals.dtype))
    return lax.while_loop(continue_iteration, inverse_iteration_step, init)[1]


from ._linalg_schur import funm, solve_sylvester, sqrtm  # noqa: E402,F401  (they start from schur)
