"""``jnp.linalg``'s decompositions on the ``eig``, ``eigh``, ``svd`` and ``qr`` primitives and what JAX builds on them
(``eigvalsh``, ``svdvals``, ``pinv`` with its custom JVP, ``matrix_rank``, ``lstsq``), each staged under JAX's
name with JAX's structure so that ``make_jaxpr`` prints JAX's text."""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from irax import lax
from irax.custom_derivatives import custom_jvp
from irax.lax import linalg as lax_linalg

from ._creation import array, asarray, empty, zeros
from ._indexing import take_along_axis
from ._linalg_ops import matmul
from ._reductions import sum as _sum
from ._shape import expand_dims, matrix_transpose
from ._ufuncs import conj, divide, where
from ._util import ensure_arraylike, promote_dtypes_inexact, staged_as

_HIGHEST = lax.Precision.HIGHEST

__all__ = ["eig", "eigh", "eigvals", "eigvalsh", "lstsq", "matrix_rank", "pinv", "qr", "svd", "svdvals"]


class EigResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class EighResult(NamedTuple):
    eigenvalues: object
    eigenvectors: object


class SVDResult(NamedTuple):
    U: object
    S: object
    Vh: object


class QRResult(NamedTuple):
    Q: object
    R: object


def eig(a):
    """Eigenvalues and right eigenvectors (columns, unit norm) of general matrices, complex, as LAPACK's geev."""
    a = ensure_arraylike("jnp.linalg.eig", a)
    a, = promote_dtypes_inexact(a)
    w, v = lax_linalg.eig(a, compute_left_eigenvectors=False)
    return EigResult(w, v)


@staged_as("eigvals")
def eigvals(a):
    """The eigenvalues of general matrices, complex, as LAPACK's geev orders them."""
    a = ensure_arraylike("jnp.linalg.eigvals", a)
    a, = promote_dtypes_inexact(a)
    return lax_linalg.eig(a, compute_left_eigenvectors=False, compute_right_eigenvectors=False)[0]


@staged_as("eigh", static_argnames=("UPLO", "symmetrize_input"))
def eigh(a, UPLO=None, symmetrize_input=True):
    """Eigenvalues (ascending) and eigenvectors (columns) of symmetric matrices; ``UPLO`` ('L' or 'U') names the
    triangle read when not ``symmetrize_input``."""
    a = ensure_arraylike("jnp.linalg.eigh", a)
    if UPLO is None or UPLO == "L":
        lower = True
    elif UPLO == "U":
        lower = False
    else:
        raise ValueError(f"UPLO must be one of None, 'L', or 'U', got {UPLO}")
    a, = promote_dtypes_inexact(a)
    v, w = lax_linalg.eigh(a, lower=lower, symmetrize_input=symmetrize_input)
    return EighResult(w, v)


@staged_as("eigvalsh", static_argnames=("UPLO", "symmetrize_input"))
def eigvalsh(a, UPLO="L", *, symmetrize_input=True):
    """The eigenvalues of symmetric matrices, ascending."""
    a = ensure_arraylike("jnp.linalg.eigvalsh", a)
    a, = promote_dtypes_inexact(a)
    w, _ = eigh(a, UPLO, symmetrize_input=symmetrize_input)
    return w


@staged_as("svd", static_argnames=("full_matrices", "compute_uv", "hermitian", "subset_by_index"))
def svd(a, full_matrices=True, compute_uv=True, hermitian=False, subset_by_index=None):
    """``(U, S, Vh)`` with ``a = U diag(S) Vh`` and ``S`` descending, or ``S`` alone unless ``compute_uv``."""
    a = ensure_arraylike("jnp.linalg.svd", a)
    a, = promote_dtypes_inexact(a)
    if hermitian:
        return _hermitian_svd(a, compute_uv, subset_by_index)
    if compute_uv:
        return SVDResult(*lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=True,
                                         subset_by_index=subset_by_index))
    return lax_linalg.svd(a, full_matrices=full_matrices, compute_uv=False, subset_by_index=subset_by_index)


def _hermitian_svd(a, compute_uv, subset_by_index):
    """JAX's: the eigendecomposition, singular values the eigenvalues' magnitudes sorted descending, their signs
    moved into ``Vh``."""
    vectors, values = lax_linalg.eigh(a, subset_by_index=subset_by_index)
    s = lax.abs(values)
    if not compute_uv:
        return lax.rev(lax.sort(s, dimension=-1), dimensions=[s.ndim - 1])
    sign = lax.sign(values)
    idxs = lax.broadcasted_iota(np.uint32 if s.shape[-1] < 2 ** 32 else np.uint64, s.shape, dimension=s.ndim - 1)
    s, idxs, sign = lax.sort((s, idxs, sign), dimension=-1, num_keys=1)
    s, idxs, sign = (lax.rev(x, dimensions=[s.ndim - 1]) for x in (s, idxs, sign))
    u = take_along_axis(vectors, idxs[..., None, :], axis=-1)
    return SVDResult(u, s, matrix_transpose(u * sign[..., None, :].astype(u.dtype)))


def svdvals(x, /):
    """The singular values of ``x``, descending."""
    x = ensure_arraylike("jnp.linalg.svdvals", x)
    return svd(x, compute_uv=False, hermitian=False)


@staged_as("matrix_rank", static_argnames=("hermitian",))
def matrix_rank(M, rtol=None, *, hermitian=False, tol=None):
    """The number of singular values above ``rtol`` (default: the largest times ``max(m, n) * eps``)."""
    M = ensure_arraylike("jnp.linalg.matrix_rank", M)
    if tol is not None:
        if rtol is not None:
            raise ValueError("matrix_rank: only one of tol or rtol may be specified.")
        rtol = tol
    M, = promote_dtypes_inexact(M)
    if M.ndim < 2:
        return (M != 0).any().astype(np.int32)
    S = svd(M, full_matrices=False, compute_uv=False, hermitian=hermitian)
    if rtol is None:
        rtol = S.max(-1) * np.max(M.shape[-2:]).astype(S.dtype) * np.finfo(S.dtype).eps
    rtol = expand_dims(rtol, np.ndim(rtol))
    return _sum(S > rtol, axis=-1)


def pinv(a, rtol=None, hermitian=False, *, rcond=None):
    """The Moore-Penrose pseudo-inverse, from the SVD (singular values at or below ``rtol`` times the largest
    dropped); its derivative is Golub and Pereyra's, as JAX's."""
    if rcond is not None:
        if rtol is not None:
            raise ValueError("pinv: only one of rtol and rcond may be specified.")
        rtol = rcond
    return _pinv(a, rtol, hermitian)


def _pinv_impl(a, rtol=None, hermitian=False):
    a = ensure_arraylike("jnp.linalg.pinv", a)
    arr, = promote_dtypes_inexact(a)
    m, n = arr.shape[-2:]
    if m == 0 or n == 0:
        return empty(arr.shape[:-2] + (n, m), arr.dtype)
    arr = conj(arr)
    if rtol is None:
        rtol = 10. * max(arr.shape[-2:]) * asarray(np.finfo(arr.dtype).eps)
    rtol = asarray(rtol)
    u, s, vh = svd(arr, full_matrices=False, hermitian=hermitian)
    rtol = lax.expand_dims(rtol[..., np.newaxis], range(s.ndim - rtol.ndim - 1))
    cutoff = rtol * s[..., 0:1]
    s = where(s > cutoff, s, np.inf).astype(u.dtype)
    res = matmul(matrix_transpose(vh), divide(matrix_transpose(u), s[..., np.newaxis]), precision=_HIGHEST)
    return lax.convert_element_type(res, arr.dtype)


_pinv = custom_jvp(staged_as("_pinv", static_argnames=("hermitian",))(_pinv_impl), nondiff_argnums=(1, 2))


@_pinv.defjvp
def _pinv_jvp(rtol, hermitian, primals, tangents):
    (a,), (a_dot,) = primals, tangents
    p = pinv(a, rtol=rtol, hermitian=hermitian)
    if hermitian:  # the SVD reads the symmetrized input, and so must the derivative
        a, a_dot = lax_linalg.symmetrize(a), lax_linalg.symmetrize(a_dot)
    m, n = a.shape[-2:]
    pt, at = matrix_transpose(p), matrix_transpose(a_dot)
    if m >= n:
        s = (p @ pt) @ at
        t = (at @ pt) @ p
        p_dot = -(p @ a_dot) @ p + s - (s @ a) @ p + t - (p @ a) @ t
    else:
        s = p @ (pt @ at)
        t = at @ (pt @ p)
        p_dot = -p @ (a_dot @ p) + s - s @ (a @ p) + t - p @ (a @ t)
    return p, p_dot


def qr(a, mode="reduced"):
    """``(Q, R)`` with ``a = Q R`` (``mode``: 'reduced', 'complete', 'r' for R alone, 'raw' for ``geqrf``'s
    reflectors, transposed, and scale factors)."""
    return _qr(a, mode)


@staged_as("qr", static_argnames=("mode",))
def _qr(a, mode):
    a = ensure_arraylike("jnp.linalg.qr", a)
    a, = promote_dtypes_inexact(a)
    if mode == "raw":
        a, taus = lax_linalg.geqrf(a)
        return QRResult(a.mT, taus)
    if mode in ("reduced", "r", "full"):
        full_matrices = False
    elif mode == "complete":
        full_matrices = True
    else:
        raise ValueError(f"Unsupported QR decomposition mode '{mode}'")
    q, r = lax_linalg.qr(a, pivoting=False, full_matrices=full_matrices)
    if mode == "r":
        return r
    return QRResult(q, r)


def lstsq(a, b, rcond=None, *, numpy_resid=False):
    """The least-squares solution of ``a x = b`` from the SVD: ``(x, residuals, rank, s)``."""
    a, b = ensure_arraylike("jnp.linalg.lstsq", a, b)
    if numpy_resid:
        return _lstsq_impl(a, b, rcond, numpy_resid=True)
    return _lstsq(a, b, rcond)


def _lstsq_impl(a, b, rcond, *, numpy_resid=False):
    from .linalg import norm
    a, b = promote_dtypes_inexact(a, b)
    if a.shape[0] != b.shape[0]:
        raise ValueError("Leading dimensions of input arrays must match")
    b_orig_ndim = b.ndim
    if b_orig_ndim == 1:
        b = b[:, None]
    if a.ndim != 2:
        raise TypeError(f"{a.ndim}-dimensional array given. Array must be two-dimensional")
    if b.ndim != 2:
        raise TypeError(f"{b.ndim}-dimensional array given. Array must be one or two-dimensional")
    m, n = a.shape
    dtype = a.dtype
    if a.size == 0:
        s = empty(0, dtype=a.dtype)
        rank = asarray(np.array(0, dtype=np.int32))
        x = zeros((n, *b.shape[1:]), dtype=a.dtype)
    else:
        if rcond is None:
            rcond = float(np.finfo(dtype).eps) * max(n, m)
        else:
            rcond = where(rcond < 0, np.finfo(dtype).eps, rcond)
        u, s, vt = svd(a, full_matrices=False)
        mask = (s > 0) & (s >= array(rcond, dtype=s.dtype) * s[0])
        rank = mask.sum()
        safe_s = where(mask, s, 1).astype(a.dtype)
        s_inv = where(mask, 1 / safe_s, 0)[:, np.newaxis]
        u_t_b = matmul(u.conj().T, b, precision=_HIGHEST)
        x = matmul(vt.conj().T, s_inv * u_t_b, precision=_HIGHEST)
    if numpy_resid and (rank < n or m <= n):
        resid = asarray(np.array([], dtype))
    else:
        resid = norm(b - matmul(a, x, precision=_HIGHEST), axis=0) ** 2
    if b_orig_ndim == 1:
        x = x.ravel()
    return x, resid, rank, s


_lstsq = staged_as("_lstsq")(_lstsq_impl)
