"""NumPy rules of ``cholesky``, ``cholesky_update``, ``triangular_solve``, ``lu``, ``lu_pivots_to_permutation`` and
``symmetric_product``: the unblocked column and row loops whose pivot choices and special values the blocked StableHLO
lowerings (``passes/lower_blocked.py``) keep, so that eager and jitted results agree to rounding, written with NumPy
alone (LAPACK's answers through SciPy would tie irax to it).

Every rule flattens the batch dimensions into one and works on stacks of matrices. Half-precision operands are computed
in float32, as the lowerings do.
"""
from __future__ import annotations

import numpy as np

from irax.ir.linalg import check_lapack_dtype
from irax.ir.shapes import issubdtype

from .numpy_rules import RULES, stack_of_matrices as _stack


def cholesky(x):
    """Left-looking Cholesky: column k is a[:, k] less L[:, :k] L[k, :k]^H, over the square root of its diagonal
    entry. A matrix whose pivot is not positive (or NaN) comes out all NaN, as JAX's CPU lowering makes it."""
    a = _stack(x)
    n = a.shape[-1]
    lower = np.zeros_like(a)
    ok = np.ones(a.shape[0], bool)
    rows = np.arange(n)
    for k in range(n):
        v = a[:, :, k] - np.einsum("bij,bj->bi", lower, lower[:, k, :].conj())
        d = v[:, k].real
        ok &= d > 0
        s = np.sqrt(np.where(d > 0, d, np.ones_like(d))).astype(a.dtype)
        lower[:, :, k] = np.where(rows > k, v / s[:, None], np.where(rows == k, s[:, None], 0))
    tri = rows[:, None] >= rows[None, :]
    out = np.where(ok[:, None, None], np.where(tri, lower, a), np.array(np.nan, a.dtype))
    return out.reshape(x.shape).astype(x.dtype)


def canonical_triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a):
    """The equivalent left-side system ``t x = b`` (as views of stacks): a transposed system is solved with
    ``a^T``, a right-side one as the transposed left-side one. Returns ``(t, b, lower, unmap)``: whether ``t`` is
    lower triangular, and ``unmap`` taking its solution back."""
    if conjugate_a:
        a = a.conj()
    if transpose_a != (not left_side):  # a right-side solve transposes a once more
        a = np.swapaxes(a, -1, -2)
        lower = not lower
    if not left_side:
        b = np.swapaxes(b, -1, -2)
    return a, b, lower, (lambda x: x if left_side else np.swapaxes(x, -1, -2))


def triangular_solve(a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """Substitution row by row (forward for a lower triangular matrix, backward from the last row for an upper
    one), reading one strict triangle (and the diagonal unless ``unit_diagonal``); a zero pivot gives inf and
    NaN, as LAPACK's trsm does."""
    a2, b2 = _stack(a), _stack(b)
    conj = conjugate_a and issubdtype(a2.dtype, np.complexfloating)
    tri, rhs, lower, unmap = canonical_triangular_solve(a2, b2, left_side=left_side, lower=lower,
                                                        transpose_a=transpose_a, conjugate_a=conj)
    n = tri.shape[-1]
    rows = np.arange(n)
    below = rows[:, None] > rows[None, :] if lower else rows[:, None] < rows[None, :]
    strict = np.where(below, tri, np.zeros((), tri.dtype))
    x = np.zeros_like(rhs)
    for k in range(n):
        r = k if lower else n - 1 - k
        row = rhs[:, r, :] - np.einsum("bj,bjm->bm", strict[:, r, :], x)
        x[:, r, :] = row if unit_diagonal else row / tri[:, r, r][:, None]
    return unmap(x).reshape(np.shape(b)).astype(np.asarray(b).dtype)


def lu(x):
    """JAX's ``_lu_unblocked``: per column, the pivot is the first row of largest magnitude (``|re| + |im|`` for
    complex) at or below the diagonal; rows swap, the column below the diagonal is divided by the pivot (unless
    it is zero) and the trailing block updated. A singular matrix gives a zero pivot, not NaN, as getrf does."""
    a = _stack(x).copy()
    batch, m, n = a.shape
    k_max = min(m, n)
    pivots = np.zeros((batch, k_max), np.int32)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (batch, m)).copy()
    rows, cols, idx = np.arange(m), np.arange(n), np.arange(batch)
    for k in range(k_max):
        col = a[:, :, k]
        mag = np.abs(col.real) + np.abs(col.imag) if issubdtype(a.dtype, np.complexfloating) else np.abs(col)
        mag = np.where(rows >= k, mag, -np.inf)
        i = np.argmax(np.where(np.isnan(mag), np.inf, mag), axis=1)
        pivots[:, k] = i
        a[:, [k], :], a[idx, i, :] = a[idx, i, :][:, None, :], a[:, k, :].copy()
        perm[:, k], perm[idx, i] = perm[idx, i], perm[:, k].copy()
        pivot = a[:, k, k][:, None]
        divide = (rows > k) & (pivot != 0)
        a[:, :, k] = np.where(divide, a[:, :, k] / np.where(pivot != 0, pivot, 1), a[:, :, k])
        update = a[:, :, k, None] * a[:, k, None, :]
        a = a - np.where((rows[:, None] > k) & (cols[None, :] > k), update, np.zeros((), a.dtype))
    shape = np.shape(x)
    return [a.reshape(shape).astype(np.asarray(x).dtype), pivots.reshape(shape[:-2] + (k_max,)),
            perm.reshape(shape[:-2] + (m,))]


def lu_pivots_to_permutation(pivots, *, permutation_size):
    """The swaps applied to ``range(permutation_size)`` in order, with JAX's indexing: a negative pivot counts from
    the end; one out of range reads the nearest entry and writes nothing."""
    *batch, k = pivots.shape
    m = permutation_size
    swaps = pivots.reshape(int(np.prod(batch, dtype=np.int64)), k)
    perm = np.broadcast_to(np.arange(m, dtype=np.int32), (swaps.shape[0], m)).copy()
    systems = np.arange(swaps.shape[0])
    for i in range(k if m else 0):
        j = np.where(swaps[:, i] < 0, swaps[:, i] + m, swaps[:, i])
        x, y = perm[:, i].copy(), perm[systems, np.clip(j, 0, m - 1)]
        perm[:, i] = y
        inside = (j >= 0) & (j < m)
        perm[systems[inside], j[inside]] = x[inside]
    return perm.reshape(tuple(batch) + (m,))


def symmetric_product(a, c, *, alpha, beta):
    """JAX's generic lowering: ``alpha * (a @ a^T) + beta * c``, the whole matrix (not only the lower triangle that
    syrk guarantees); half precision rounded after the product and after each operation, as XLA's."""
    a2 = _stack(a)
    product = (a2 @ np.swapaxes(a2, -1, -2)).reshape(c.shape).astype(c.dtype)
    return np.asarray(alpha, c.dtype) * product + np.asarray(beta, c.dtype) * c


def cholesky_update(r, w):
    """JAX's loop: row k of ``R`` and ``w`` rotated by the Givens rotation that zeroes ``w[k]`` against ``R[k, k]``
    (``drotg``/``drot``), computed in the operand's dtype (the rows' zeros below the diagonal turn to rounding
    noise there, as in JAX)."""
    dtype = np.asarray(r).dtype
    r, z = np.array(r, dtype), np.array(w, dtype)
    for k in range(z.shape[0]):
        x, y = r[k, k], z[k]
        c, s = dtype.type(1), dtype.type(0)
        if y != 0:
            scale = abs(x) if abs(x) > abs(y) else abs(y)
            x, y = x / scale, y / scale
            rh = dtype.type(1) / np.sqrt(x ** 2 + y ** 2)
            c, s = x * rh, -y * rh
        r[k, :], z = c * r[k, :] - s * z, c * z + s * r[k, :]
    return r


def householder_reflector(a, i):
    """Column ``i`` of the stack ``a`` as the vector of its reflector: zero above row i, one at it, ``a`` below."""
    rows = np.arange(a.shape[1])[None, :]
    return np.where(rows > i, a[:, :, i], (rows == i).astype(a.dtype))


def householder_product(a, taus):
    """``H_0 H_1 ... H_{k-1}`` applied to the first n columns of the identity, the last reflector first."""
    check_lapack_dtype(a.dtype)
    stack = _stack(a)
    batch, m, n = stack.shape
    t = np.asarray(taus).reshape(batch, taus.shape[-1]).astype(stack.dtype)
    q = np.broadcast_to(np.eye(m, n, dtype=stack.dtype), stack.shape).copy()
    for i in reversed(range(t.shape[1])):
        v = householder_reflector(stack, i)
        q = q - t[:, i, None, None] * v[:, :, None] * np.einsum("bm,bmn->bn", v.conj(), q)[:, None, :]
    return q.reshape(a.shape).astype(a.dtype)


RULES["cholesky"] = cholesky
RULES["cholesky_update"] = cholesky_update
RULES["triangular_solve"] = triangular_solve
RULES["lu"] = lu
RULES["lu_pivots_to_permutation"] = lu_pivots_to_permutation
RULES["symmetric_product"] = symmetric_product
RULES["householder_product"] = householder_product
