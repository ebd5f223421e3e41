"""JVP rules of ``cholesky``, ``triangular_solve``, ``lu`` and ``eig`` and the transpose rule of
``triangular_solve`` (linear in its right-hand side), ports of JAX's (``jax/_src/lax/linalg.py``):
``_cholesky_jvp_rule``, ``_triangular_solve_jvp_rule_a``, ``_triangular_solve_transpose_rule``, ``_lu_jvp_rule``
and ``eig_jvp_rule`` (its solves by LU and triangular solves, not ``custom_linear_solve``), binding the same
primitives in the same order so that ``make_jaxpr(jvp(f))`` prints JAX's text for single matrices. JAX's
``_lu_jvp_rule`` vmaps its inner rule over batch dimensions; here the same ops carry the batch dimensions."""
from __future__ import annotations

import numpy as np

from irax.ir.gather_scatter import GatherDimensionNumbers, GatherScatterMode, ScatterDimensionNumbers

from . import ad_util as U
from .ad_rules_gather_scatter import scatter
from .builder import aval
from .jvp import JVP_RULES, LINEAR_OPS, add_tangents
from .transpose import TRANSPOSE_RULES, is_undefined

_I32 = np.dtype(np.int32)


def _is_complex(x):
    return np.issubdtype(aval(x).dtype, np.complexfloating)


def _tri(b, shape, k):
    """``lax._tri``: True on and below diagonal ``k``."""
    rows = b.add(b.iota(dtype=_I32, shape=shape, dimension=0, sharding=None), k)
    return b.ge(rows, b.iota(dtype=_I32, shape=shape, dimension=1, sharding=None))


def _batched_mask(b, mask, shape):
    """``lax.broadcast(mask, batch shape)``: nothing for a single matrix."""
    if len(shape) == 2:
        return mask
    return b.broadcast_in_dim(mask, shape=tuple(shape), broadcast_dimensions=(len(shape) - 2, len(shape) - 1))


def tril(b, m, k=0):
    shape = aval(m).shape
    mask = _batched_mask(b, _tri(b, shape[-2:], k), shape)
    return b.select_n(mask, b.full_like(m, 0), m)


def triu(b, m, k=0):
    shape = aval(m).shape
    mask = _batched_mask(b, _tri(b, shape[-2:], k - 1), shape)
    return b.select_n(mask, m, b.full_like(m, 0))


def _eye(b, dtype, shape):
    """``lax._eye``: ones on the diagonal, by comparing iotas."""
    rows = b.add(b.iota(dtype=_I32, shape=shape, dimension=0, sharding=None), 0)
    same = b.eq(rows, b.iota(dtype=_I32, shape=shape, dimension=1, sharding=None))
    return b.convert_element_type(same, new_dtype=np.dtype(dtype), weak_type=False)


def _T(b, x):
    nd = len(aval(x).shape)
    return b.transpose(x, permutation=(*range(nd - 2), nd - 1, nd - 2))


# The precision JAX's cholesky, triangular_solve and lu derivatives ask of their matmuls.
HIGHEST = ("HIGHEST", "HIGHEST")


def matmul(b, x, y, preferred_element_type=None, precision=None):
    """``lax.dot`` of matrices or ``lax.batch_matmul`` of stacks of them."""
    nd = len(aval(x).shape)
    batch = tuple(range(nd - 2))
    return b.dot_general(x, y, dimension_numbers=(((nd - 1,), (nd - 2,)), (batch, batch)), precision=precision,
                         preferred_element_type=preferred_element_type)


def triangular_solve(b, a, rhs, **params):
    return b.triangular_solve(a, rhs, **params)


# --- cholesky ---------------------------------------------------------------------------------------------------

def _cholesky_jvp(b, primals, tangents):
    (x,), (sigma_dot,) = primals, tangents
    (raw,) = b.primal()
    low = tril(b, raw)
    nd = len(aval(x).shape)
    n = aval(x).shape[-1]
    tmp = triangular_solve(b, low, sigma_dot, left_side=False, transpose_a=True, conjugate_a=_is_complex(x),
                           lower=True, unit_diagonal=False)
    solved = triangular_solve(b, low, tmp, left_side=True, transpose_a=False, conjugate_a=False, lower=True,
                              unit_diagonal=False)
    phi = tril(b, solved)
    scale = b.add(1, _eye(b, aval(x).dtype, (n, n)))
    scale = U.expand_dims(b, scale, tuple(range(nd - 2)))
    return [low], [matmul(b, low, b.div(phi, scale), precision=HIGHEST)]


# --- triangular_solve -------------------------------------------------------------------------------------------

def _triangular_solve_jvp(b, primals, tangents, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    a, rhs = primals
    g_a, g_b = tangents
    (ans,) = b.primal()
    params = dict(left_side=left_side, lower=lower, transpose_a=transpose_a, conjugate_a=conjugate_a,
                  unit_diagonal=unit_diagonal)
    out = None
    if g_a is not None:
        m, n = aval(rhs).shape[-2:]
        k = 1 if unit_diagonal else 0
        g = tril(b, g_a, -k) if lower else triu(b, g_a, k)
        g = b.neg(g)
        g = _T(b, g) if transpose_a else g
        g = b.conj(g, input_dtype=None) if conjugate_a else g

        def a_inverse(x):
            return triangular_solve(b, a, x, **params)

        def dot(x, y):
            return matmul(b, x, y, precision=HIGHEST)
        if left_side:
            out = a_inverse(dot(g, ans)) if m > n else dot(a_inverse(g), ans)
        else:
            out = a_inverse(dot(ans, g)) if m < n else dot(ans, a_inverse(g))
    if g_b is not None:
        out = add_tangents(b, out, triangular_solve(b, a, g_b, **params))
    return [ans], [out]


def _triangular_solve_transpose(b, ct, a, rhs, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    assert not is_undefined(a) and is_undefined(rhs)
    return [None, triangular_solve(b, a, ct, left_side=left_side, lower=lower, transpose_a=not transpose_a,
                                   conjugate_a=conjugate_a, unit_diagonal=unit_diagonal)]


# --- tridiagonal_solve ----------------------------------------------------------------------------------------

def _tridiagonal_product(b, dl, d, du, x):
    """JAX's ``_tridiagonal_product``: ``T x``, the products with the off-diagonals added in by
    ``.at[..., 1:, :].add`` and ``.at[..., :-1, :].add`` (scatter-adds at one row index)."""
    shape = aval(x).shape
    nd, n = len(shape), shape[-2]
    y = b.mul(b.reshape(d, new_sizes=aval(d).shape + (1,), dimensions=None), x)
    for diag, diag_rows, x_rows, at in ((dl, (1, n), (0, n - 1), 1), (du, (0, n - 1), (1, n), 0)):
        part = _slice_rows(b, diag, *diag_rows, nd - 2)
        part = b.broadcast_in_dim(part, shape=aval(part).shape + (1,), broadcast_dimensions=tuple(range(nd - 1)))
        term = b.mul(part, _slice_rows(b, x, *x_rows, nd - 2))
        index = U.broadcast_in_dim(b, b.literal(at, _I32), (1,), ())
        dnums = ScatterDimensionNumbers(update_window_dims=tuple(range(nd)), inserted_window_dims=(),
                                        scatter_dims_to_operand_dims=(nd - 2,))
        y = scatter(b, "scatter_add", y, index, term, dnums, indices_are_sorted=True, unique_indices=True)
    return y


def _slice_rows(b, x, start, stop, axis):
    """``x[..., start:stop]`` along ``axis``, as JAX's indexing slices."""
    shape = aval(x).shape
    starts = tuple(start if i == axis else 0 for i in range(len(shape)))
    limits = tuple(stop if i == axis else d for i, d in enumerate(shape))
    return b.slice(x, start_indices=starts, limit_indices=limits, strides=None)


def _tridiagonal_solve_jvp(b, primals, tangents, *, perturb_singular):
    dl, d, du, _ = primals
    *diag_dots, b_dot = tangents
    (ans,) = b.primal()
    if all(t is None for t in diag_dots):
        rhs = b_dot
    else:
        dl_dot, d_dot, du_dot = (b.full_like(p, 0) if t is None else t for p, t in zip((dl, d, du), diag_dots))
        rhs = add_tangents(b, b_dot, b.neg(_tridiagonal_product(b, dl_dot, d_dot, du_dot, ans)))
    return [ans], [b.tridiagonal_solve(dl, d, du, rhs, perturb_singular=perturb_singular)]


def _tridiagonal_solve_transpose(b, ct, dl, d, du, rhs, *, perturb_singular):
    """Linear in the right-hand side: ``T^T`` has ``du`` shifted down one row as its lower diagonal and ``dl``
    shifted up as its upper one."""
    assert not any(map(is_undefined, (dl, d, du))) and is_undefined(rhs)
    n, axis = aval(du).shape[-1], len(aval(du).shape) - 1
    zeros = b.full_like(_slice_rows(b, du, n - 1, n, axis), 0)
    dl_t = b.concatenate(zeros, _slice_rows(b, du, 0, n - 1, axis), dimension=axis)
    head = _slice_rows(b, dl, 1, n, axis)
    du_t = b.concatenate(head, b.full_like(_slice_rows(b, dl, 0, 1, axis), 0), dimension=axis)
    return [None, None, None, b.tridiagonal_solve(dl_t, d, du_t, ct, perturb_singular=perturb_singular)]


# --- lu ---------------------------------------------------------------------------------------------------------

def _take_rows(b, x, permutation):
    """``x[..., permutation, :]`` as JAX's indexing emits it: negative indices wrapped, then a gather."""
    shape = aval(x).shape
    nb, m = len(shape) - 2, shape[-2]
    wrapped = b.select_n(b.lt(permutation, 0), permutation, b.add(permutation, m))
    idx_shape = aval(permutation).shape + (1,)
    idx = b.broadcast_in_dim(wrapped, shape=idx_shape, broadcast_dimensions=tuple(range(nb + 1)))
    batch = tuple(range(nb))
    dnums = GatherDimensionNumbers(offset_dims=(nb + 1,), collapsed_slice_dims=(nb,), start_index_map=(nb,),
                                   operand_batching_dims=batch, start_indices_batching_dims=batch)
    return b.gather(x, idx, dimension_numbers=dnums, slice_sizes=(1,) * (nb + 1) + (shape[-1],),
                    indices_are_sorted=False, unique_indices=False, mode=GatherScatterMode.PROMISE_IN_BOUNDS,
                    fill_value=None)


def _slice_last2(b, x, rows, cols):
    """``x[..., :rows, :cols]``: nothing when that is all of ``x``, as JAX's indexing."""
    shape = aval(x).shape
    if shape[-2:] == (rows, cols):
        return x
    nb = len(shape) - 2
    return b.slice(x, start_indices=(0,) * len(shape), limit_indices=shape[:nb] + (rows, cols), strides=None)


def _pad_last2(b, x, rows, cols):
    nb = len(aval(x).shape) - 2
    config = ((0, 0, 0),) * nb + (rows, cols)
    return b.pad(x, b.literal(0, aval(x).dtype), padding_config=config)


def _lu_jvp(b, primals, tangents):
    (a,), (a_dot,) = primals, tangents
    lu, pivots, permutation = b.primal()
    shape = aval(a).shape
    m, n = shape[-2:]
    nb = len(shape) - 2
    dtype = aval(a).dtype
    k = min(m, n)
    l = _pad_last2(b, tril(b, _slice_last2(b, lu, m, k), -1), (0, 0, 0), (0, m - k, 0))
    l = b.add(l, _expand_batch(b, _eye(b, dtype, (m, m)), shape[:nb]))
    u_eye = _pad_last2(b, _eye(b, dtype, (n - k, n - k)), (k, 0, 0), (k, 0, 0))
    u = b.add(_pad_last2(b, triu(b, _slice_last2(b, lu, k, n)), (0, n - k, 0), (0, 0, 0)),
              _expand_batch(b, u_eye, shape[:nb]))
    la = triangular_solve(b, l, _take_rows(b, a_dot, permutation), left_side=True, transpose_a=False,
                          conjugate_a=False, lower=True, unit_diagonal=True)
    lau = triangular_solve(b, u, la, left_side=False, transpose_a=False, conjugate_a=False, lower=False,
                           unit_diagonal=False)
    l_dot = matmul(b, l, tril(b, lau, -1), preferred_element_type=dtype, precision=HIGHEST)
    u_dot = matmul(b, triu(b, lau), u, preferred_element_type=dtype, precision=HIGHEST)
    return [lu, pivots, permutation], [b.add(l_dot, u_dot), None, None]


def _expand_batch(b, x, batch_shape):
    """A matrix broadcast over the batch dimensions (JAX's vmap of its inner rule broadcasts it so)."""
    if not batch_shape:
        return x
    full = tuple(batch_shape) + aval(x).shape
    return b.broadcast_in_dim(x, shape=full, broadcast_dimensions=(len(batch_shape), len(batch_shape) + 1))


# --- eig ----------------------------------------------------------------------------------------------------------

_EIGVEC_DERIVS = ("Derivatives of non-symmetric eigenvectors are only valid under assumptions on the input that JAX "
                  "cannot check (see the enable_eigvec_derivs argument to jax.lax.linalg.eig). Pass "
                  "enable_eigvec_derivs=True to jax.lax.linalg.eig to opt in. See "
                  "https://github.com/jax-ml/jax/issues/2748 for discussion.")


def _solve(b, a, rhs):
    """``a^-1 rhs`` by ``a``'s LU: linear in ``rhs`` (a gather and two triangular solves)."""
    lu, _, permutation = b.bind("lu", a)
    y = triangular_solve(b, lu, _take_rows(b, rhs, permutation), left_side=True, lower=True, transpose_a=False,
                         conjugate_a=False, unit_diagonal=True)
    return triangular_solve(b, lu, y, left_side=True, lower=False, transpose_a=False, conjugate_a=False,
                            unit_diagonal=False)


def _diagonal(b, m):
    shape = aval(m).shape
    eye = _expand_batch(b, _eye(b, aval(m).dtype, shape[-2:]), shape[:-2])
    return b.reduce_sum(b.mul(m, eye), axes=(len(shape) - 1,), out_sharding=None)


def _column_sums(b, m):
    return b.reduce_sum(m, axes=(len(aval(m).shape) - 2,), out_sharding=None)


def _eig_vec_jvp(b, w, v, da):
    """JAX's ``_eig_vec_jvp``: first-order perturbation of the eigenpairs, the eigenvectors kept at LAPACK's
    normalization (unit norm, largest component real)."""
    shape, dtype = aval(v).shape, aval(v).dtype
    nb, n = len(shape) - 2, shape[-1]
    batch = tuple(range(nb))
    eye = _expand_batch(b, _eye(b, dtype, (n, n)), shape[:nb])
    w_cols = b.broadcast_in_dim(w, shape=shape, broadcast_dimensions=batch + (nb + 1,))
    w_rows = b.broadcast_in_dim(w, shape=shape, broadcast_dimensions=batch + (nb,))
    f = b.sub(b.div(b.full_like(eye, 1), b.sub(b.add(eye, w_cols), w_rows)), eye)
    p = matmul(b, _solve(b, v, da), v)
    u = matmul(b, v, b.mul(f, p))
    k = b.argmax(b.abs(v), axes=(nb,), index_dtype=_I32)
    rows = b.iota(dtype=_I32, shape=shape, dimension=nb, sharding=None)
    mask = b.eq(rows, b.broadcast_in_dim(k, shape=shape, broadcast_dimensions=batch + (nb + 1,)))
    mask = b.convert_element_type(mask, new_dtype=dtype, weak_type=False)
    c = b.complex(b.neg(b.real(_column_sums(b, b.mul(b.conj(v, input_dtype=dtype), u)))),
                  b.div(b.neg(b.imag(_column_sums(b, b.mul(mask, u)))), b.real(_column_sums(b, b.mul(mask, v)))))
    c = b.broadcast_in_dim(c, shape=shape, broadcast_dimensions=batch + (nb + 1,))
    return _diagonal(b, p), b.add(u, b.mul(v, c))


def _eig_jvp(b, primals, tangents, *, compute_left_eigenvectors, compute_right_eigenvectors, enable_eigvec_derivs,
             implementation):
    """JAX's ``eig_jvp_rule``: the eigenvalues' tangents ``diag(V^-1 dA V)``; the eigenvectors' only when asked
    (``enable_eigvec_derivs``)."""
    left, right = compute_left_eigenvectors, compute_right_eigenvectors
    if (left or right) and not enable_eigvec_derivs:
        raise NotImplementedError(_EIGVEC_DERIVS)
    (a,), (da,) = primals, tangents
    outs = b.bind("eig", a, compute_left_eigenvectors=left, compute_right_eigenvectors=True,
                  enable_eigvec_derivs=enable_eigvec_derivs, implementation=implementation)
    w, vr = outs[0], outs[-1]
    dtype = aval(vr).dtype
    da = b.convert_element_type(da, new_dtype=dtype, weak_type=False)
    if not (left or right):
        return [w], [_diagonal(b, matmul(b, _solve(b, vr, da), vr))]
    dw, dvr = _eig_vec_jvp(b, w, vr, da)
    primal_out, tangent_out = [w], [dw]
    if left:
        da_h = b.conj(_T(b, da), input_dtype=dtype)
        primal_out.append(outs[1])
        tangent_out.append(_eig_vec_jvp(b, b.conj(w, input_dtype=dtype), outs[1], da_h)[1])
    if right:
        primal_out.append(vr)
        tangent_out.append(dvr)
    return primal_out, tangent_out


JVP_RULES["eig"] = _eig_jvp
JVP_RULES["cholesky"] = _cholesky_jvp
JVP_RULES["triangular_solve"] = _triangular_solve_jvp
JVP_RULES["lu"] = _lu_jvp
TRANSPOSE_RULES["triangular_solve"] = _triangular_solve_transpose
JVP_RULES["tridiagonal_solve"] = _tridiagonal_solve_jvp
TRANSPOSE_RULES["tridiagonal_solve"] = _tridiagonal_solve_transpose
LINEAR_OPS.update({"triangular_solve", "tridiagonal_solve"})
