"""JVP rules of ``eigh``, ``svd`` and ``qr``, ports of JAX's ``_eigh_jvp_rule``, ``_svd_jvp_rule`` and
``qr_jvp_rule`` (``jax/_src/lax/linalg.py``): each binds its primitive again (on the symmetrized input for
``eigh``, thin for ``svd``) and forms the tangents with matrix products carrying the batch dimensions; complex
matrices take conjugate transposes and JAX's extra terms, which a real matrix's trace does not show. Like JAX's,
they assume distinct eigenvalues (singular values)."""
from __future__ import annotations

import numpy as np

from .ad_rules_linalg import _T, _eye, _take_rows, matmul, triangular_solve, tril
from .builder import aval
from .jvp import JVP_RULES


def _square(b, x, axis):
    """The vector ``x`` (``[..., n]``) spread over ``[..., n, n]`` along ``axis`` (-1: varies along columns)."""
    shape = aval(x).shape
    nd = len(shape) + 1
    batch = tuple(range(nd - 2))
    return b.broadcast_in_dim(x, shape=shape + shape[-1:],
                              broadcast_dimensions=batch + ((nd - 1,) if axis == -1 else (nd - 2,)))


def _is_complex(x):
    return np.issubdtype(aval(x).dtype, np.complexfloating)


def _H(b, x):
    """JAX's ``_H``: the conjugate transpose (the transpose of a real matrix)."""
    return b.conj(_T(b, x), input_dtype=None) if _is_complex(x) else _T(b, x)


def _real(b, x):
    return b.real(x) if _is_complex(x) else x


def _as_dtype_of(b, x, like):
    """``x.astype(like.dtype)``: no op when the dtypes agree, as in JAX."""
    dtype = aval(like).dtype
    return x if aval(x).dtype == dtype else b.convert_element_type(x, new_dtype=dtype, weak_type=False)


def _eye_like(b, x):
    """The identity broadcast to ``x``'s (square) shape."""
    shape = aval(x).shape
    eye = _eye(b, aval(x).dtype, shape[-2:])
    if len(shape) == 2:
        return eye
    return b.broadcast_in_dim(eye, shape=shape, broadcast_dimensions=(len(shape) - 2, len(shape) - 1))


def _diagonal(b, x):
    nd = len(aval(x).shape)
    return b.reduce_sum(b.mul(x, _eye_like(b, x)), axes=(nd - 1,), out_sharding=None)


def _eigh_jvp(b, primals, tangents, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    (a,), (a_dot,) = primals, tangents
    n = aval(a).shape[-1]
    if not (subset_by_index is None or tuple(subset_by_index) == (0, n)):
        raise NotImplementedError("Derivatives not defined for partial eigen decomposition.")
    sym = b.div(b.add(a, _H(b, a)), 2)
    v, w_real = b.bind("eigh", sym, lower=lower, sort_eigenvalues=sort_eigenvalues, subset_by_index=subset_by_index,
                       algorithm=algorithm)
    w = _as_dtype_of(b, w_real, a)
    eye = _eye_like(b, v)
    gaps = b.sub(b.add(eye, _square(b, w, -1)), _square(b, w, -2))
    f = b.sub(b.integer_pow(gaps, y=-1), eye)
    vt_adot_v = matmul(b, matmul(b, _H(b, v), a_dot), v)
    return [v, w_real], [matmul(b, v, b.mul(f, vt_adot_v)), _diagonal(b, _real(b, vt_adot_v))]


def _svd_jvp(b, primals, tangents, *, full_matrices, compute_uv, subset_by_index, algorithm):
    (a,), (da,) = primals, tangents
    m, n = aval(a).shape[-2:]
    s, u, vt = b.bind("svd", a, full_matrices=False, compute_uv=True, subset_by_index=subset_by_index,
                      algorithm=algorithm)
    if compute_uv and full_matrices and m != n:
        raise NotImplementedError("Singular value decomposition JVP not implemented for full matrices")
    ut, v = _H(b, u), _H(b, vt)
    ds_mat = matmul(b, matmul(b, ut, da), v)
    ds = _diagonal(b, _real(b, ds_mat))
    if not compute_uv:
        return [s], [ds]
    s_row, s_col = _square(b, s, -1), _square(b, s, -2)
    eye = _eye_like(b, s_row)
    f = _as_dtype_of(b, b.sub(b.div(1.0, b.add(b.mul(b.add(s_row, s_col), b.sub(s_row, s_col)), eye)), eye), a)
    dss, sds = b.mul(_as_dtype_of(b, s_row, a), ds_mat), b.mul(_as_dtype_of(b, s_col, a), ds_mat)
    s_zeros = b.convert_element_type(b.eq(s, 0.0), new_dtype=aval(s).dtype, weak_type=False)
    s_inv = b.sub(b.div(1.0, b.add(s, s_zeros)), s_zeros)
    du_dv_diag = b.mul(b.mul(0.5, b.sub(ds_mat, _H(b, ds_mat))),
                       _as_dtype_of(b, b.mul(eye, _square(b, s_inv, -1)), a))
    du = matmul(b, u, b.add(b.mul(f, b.add(dss, _H(b, dss))), du_dv_diag))
    dv = matmul(b, v, b.mul(f, b.add(sds, _H(b, sds))))
    if m > n:
        dav = matmul(b, da, v)
        du = b.add(du, b.div(b.sub(dav, matmul(b, u, matmul(b, ut, dav))),
                             _as_dtype_of(b, _rows_of(b, s, aval(dav).shape), a)))
    if n > m:
        dahu = matmul(b, _H(b, da), u)
        dv = b.add(dv, b.div(b.sub(dahu, matmul(b, v, matmul(b, vt, dahu))),
                             _as_dtype_of(b, _rows_of(b, s, aval(dahu).shape), a)))
    return [s, u, vt], [ds, du, _H(b, dv)]


def _rows_of(b, s, shape):
    """``s[..., None, :]`` broadcast to ``shape``."""
    nd = len(shape)
    return b.broadcast_in_dim(s, shape=tuple(shape), broadcast_dimensions=tuple(range(nd - 2)) + (nd - 1,))


def _thin_qr_jvp(b, q, r, dx):
    """JAX's ``_thin_qr_jvp``: ``dx r^-1`` split into a skew-Hermitian part and the rest (for a complex matrix
    with the imaginary part of its diagonal too)."""
    dx_rinv = triangular_solve(b, r, dx, left_side=False, lower=False, transpose_a=False, conjugate_a=False,
                               unit_diagonal=False)
    qt_dx_rinv = matmul(b, _H(b, q), dx_rinv)
    lower = tril(b, qt_dx_rinv, -1)
    do = b.sub(lower, _H(b, lower))
    if _is_complex(q):
        imaginary = b.sub(qt_dx_rinv, _as_dtype_of(b, b.real(qt_dx_rinv), qt_dx_rinv))
        do = b.add(do, b.mul(_eye_like(b, do), imaginary))
    dq = b.add(matmul(b, q, b.sub(do, qt_dx_rinv)), dx_rinv)
    dr = matmul(b, b.sub(qt_dx_rinv, do), r)
    return dq, dr


def _last2(b, x, rows, cols, start=(0, 0)):
    shape = aval(x).shape
    nb = len(shape) - 2
    return b.slice(x, start_indices=(0,) * nb + tuple(start), limit_indices=shape[:nb] + (rows, cols), strides=None)


def _qr_jvp(b, primals, tangents, *, pivoting, full_matrices, use_magma):
    """With ``pivoting``, the tangent of the permuted matrix ``x[..., p]`` (the permutation's is zero)."""
    (x,), (dx,) = primals, tangents
    q, r, *p = outs = b.primal()
    m, n = aval(x).shape[-2:]
    nd = len(aval(x).shape)
    if pivoting:
        x, dx = (_T(b, _take_rows(b, _T(b, v), p[0])) for v in (x, dx))
    if m < n:
        dq, dr1 = _thin_qr_jvp(b, q, _last2(b, r, m, m), _last2(b, dx, m, m))
        x2, dx2 = _last2(b, x, m, n, (0, m)), _last2(b, dx, m, n, (0, m))
        dr2 = b.add(matmul(b, _H(b, dq), x2), matmul(b, _H(b, q), dx2))
        return outs, [dq, b.concatenate(dr1, dr2, dimension=nd - 1)] + [None] * len(p)
    if not full_matrices or m == n:
        dq, dr = _thin_qr_jvp(b, q, r, dx)
        return outs, [dq, dr] + [None] * len(p)
    q_mn = _last2(b, q, m, n)
    dq_mn, dr_nn = _thin_qr_jvp(b, q_mn, _last2(b, r, n, n), dx)
    return outs, [_full_qr_dq(b, q, q_mn, dq_mn, n), _pad_rows(b, dr_nn, m - n)] + [None] * len(p)


def _full_qr_dq(b, q, q_mn, dq_mn, n):
    """JAX's full-matrices case (arXiv:2409.13374, eqs. 32-33): the tangent of Q's last m - n columns from
    ``Z = Q_pn (Q_nn - I)^-1``, solved with ``lu`` as JAX's ``lu_solve(..., trans=2)``."""
    m = aval(q).shape[-1]
    nd = len(aval(q).shape)
    q_nn, q_pn = _last2(b, q_mn, n, n), _last2(b, q_mn, m, n, (n, 0))
    q_mp = _last2(b, q, m, m, (0, n))
    dq_nn, dq_pn = _last2(b, dq_mn, n, n), _last2(b, dq_mn, m, n, (n, 0))
    lu, _, perm = b.bind("lu", b.sub(q_nn, _eye_like(b, q_nn)))
    conjugate = _is_complex(q)
    x = triangular_solve(b, lu, _H(b, q_pn), left_side=True, lower=False, transpose_a=True, conjugate_a=conjugate,
                         unit_diagonal=False)
    x = triangular_solve(b, lu, x, left_side=True, lower=True, transpose_a=True, conjugate_a=conjugate,
                         unit_diagonal=True)
    z_pn_t = matmul(b, _T(b, _permutation_matrix(b, perm, aval(x).dtype)), x)
    z_pn = _H(b, z_pn_t)
    inner = b.sub(dq_pn, matmul(b, z_pn, dq_nn))
    dq_mp = b.sub(matmul(b, dq_mn, z_pn_t), matmul(b, b.add(q_mn, matmul(b, q_mp, z_pn)), _H(b, inner)))
    return b.concatenate(dq_mn, dq_mp, dimension=nd - 1)


def _permutation_matrix(b, perm, dtype):
    """``P[..., i, j] = (perm[..., i] == j)``: ``P x`` takes the rows ``perm``, ``P^T x`` puts them back."""
    shape = aval(perm).shape + aval(perm).shape[-1:]
    nd = len(shape)
    rows = b.broadcast_in_dim(perm, shape=shape, broadcast_dimensions=tuple(range(nd - 1)))
    cols = b.iota(dtype=np.dtype(np.int32), shape=shape, dimension=nd - 1, sharding=None)
    return b.convert_element_type(b.eq(rows, cols), new_dtype=np.dtype(dtype), weak_type=False)


def _pad_rows(b, x, rows):
    nd = len(aval(x).shape)
    config = ((0, 0, 0),) * (nd - 2) + ((0, rows, 0), (0, 0, 0))
    return b.pad(x, b.literal(0, aval(x).dtype), padding_config=config)


JVP_RULES["eigh"] = _eigh_jvp
JVP_RULES["svd"] = _svd_jvp
JVP_RULES["qr"] = _qr_jvp
