"""NumPy rules of ``eigh``, ``svd``, ``qr``, ``geqrf``, ``ormqr`` and ``hessenberg``: the same Jacobi sweeps and
Householder steps the StableHLO lowerings run (``passes/lower_decompositions.py``), so that eager and jitted results
agree to rounding, written with NumPy alone.

``eigh`` is cyclic Jacobi in the parallel (round-robin) ordering: each step rotates n/2 disjoint index pairs at once
with one rotation matrix ``J`` (``A <- J^T A J``), a sweep is n - 1 steps, and sweeps repeat until every off-diagonal
entry is below ``eps * |A|_F`` (or a sweep cap). ``svd`` is one-sided (Hestenes) Jacobi with the same rotations computed
from the Gram matrix ``A^T A`` and applied to the columns of ``A``; its left singular vectors are completed to an
orthonormal basis by a Householder QR. ``qr`` is LAPACK's ``geqrf`` (same reflector signs) with the reflectors
accumulated into ``Q``; ``geqrf`` leaves them stored, and ``ormqr`` applies them. Complex matrices take the Hermitian
forms (``A^H``, unitary rotations); half precision is computed in float32.
"""
from __future__ import annotations

import numpy as np

from irax.ir.linalg import check_lapack_dtype

from . import numpy_linalg  # read at call time: it may be the module imported first
from .numpy_rules import RULES, stack_of_matrices as _stack

MAX_SWEEPS = 30


def round_robin(n):
    """The partner of each index in each of the n - 1 steps of a round-robin tournament (n even): every pair
    meets exactly once per sweep, and the pairs of one step are disjoint."""
    players = list(range(n))
    partners = np.zeros((max(n - 1, 1), n), np.int32)
    for step in range(n - 1):
        for i in range(n // 2):
            a, b = players[i], players[n - 1 - i]
            partners[step, a], partners[step, b] = b, a
        players = [players[0], players[-1]] + players[1:-1]
    return partners


def pair_masks(n):
    """Per step, the partner matrix (``M[i, j]``: j is i's partner) and whether i is the lower index of its pair."""
    partners = round_robin(n)
    masks = partners[:, :, None] == np.arange(n)[None, None, :]
    return masks, partners > np.arange(n)[None, :]


def rotation(diag, off, mask, low, rotate):
    """The rotation ``J`` zeroing the (p, q) entries of a symmetric matrix with diagonal ``diag`` and pair entries
    ``off`` (Golub and Van Loan's ``sym.schur2``): ``J[p, p] = J[q, q] = c``, ``J[p, q] = s``, ``J[q, p] = -s``;
    identity for pairs where ``rotate`` is False. For a Hermitian matrix (complex ``off``, real ``diag``) ``J`` is
    ``D R``: ``D`` turns ``a_pq`` real (``D[q, q] = conj(a_pq) / |a_pq|``), ``R`` is the rotation of that."""
    one, zero = np.ones((), diag.dtype), np.zeros((), diag.dtype)
    other = _pair_entries(diag[:, None, :], mask)
    dp, dq = np.where(low, diag, other), np.where(low, other, diag)
    magnitude = np.abs(off) if np.iscomplexobj(off) else off
    tau = (dq - dp) / (2 * np.where(rotate, magnitude, one))
    t = np.where(tau >= 0, one, -one) / (np.abs(tau) + np.sqrt(1 + tau * tau))
    t = np.where(rotate, t, zero)
    c = 1 / np.sqrt(1 + t * t)
    eye = np.eye(diag.shape[-1], dtype=bool)
    if not np.iscomplexobj(off):
        s = np.where(low, t * c, -(t * c))
        return np.where(eye, c[:, None, :], zero) + np.where(mask, s[:, :, None], zero)
    phase = np.where(low | ~rotate, np.ones((), off.dtype), off / np.where(rotate, magnitude, one))
    s = np.where(low, t * c, -(t * c) * phase)
    return np.where(eye, (c * phase)[:, None, :], 0) + np.where(mask, s[:, :, None], 0)


def _pad_even(a):
    """``a`` with a zero row and column appended when its order is odd: the extra index pairs with no rotation."""
    n = a.shape[-1]
    return np.pad(a, ((0, 0), (0, n % 2), (0, n % 2))) if n % 2 else a


def _pair_entries(a, mask):
    return np.sum(np.where(mask, a, np.zeros((), a.dtype)), axis=-1)


def jacobi_eigh(a):
    """Eigenvalues (unsorted) and eigenvectors of a stack of symmetric matrices ``a`` (batch, n, n)."""
    n = a.shape[-1]
    a = _pad_even(a)
    size = a.shape[-1]
    masks, lows = pair_masks(size)
    tol = np.finfo(a.dtype).eps * np.sqrt(np.sum(_abs2(a), axis=(1, 2)))
    v = np.broadcast_to(np.eye(size, dtype=a.dtype), a.shape).copy()
    off_diagonal = ~np.eye(size, dtype=bool)
    sweep = 0
    while sweep < MAX_SWEEPS and np.any(np.max(np.where(off_diagonal, np.abs(a), 0), axis=(1, 2), initial=0) > tol):
        for mask, low in zip(masks, lows):
            off = _pair_entries(a, mask)
            rotate = np.abs(off) > tol[:, None]
            j = rotation(np.diagonal(a, axis1=1, axis2=2).real, off, mask, low, rotate)
            a = _adjoint(j) @ a @ j
            a = np.where(mask & rotate[:, :, None], np.zeros((), a.dtype), (a + _adjoint(a)) / 2)
            v = v @ j
        sweep += 1
    return np.diagonal(a, axis1=1, axis2=2).real[:, :n], v[:, :n, :n]


def _adjoint(a):
    return np.conj(np.swapaxes(a, 1, 2))


def _abs2(x):
    """``|x|**2`` in x's real dtype."""
    return x.real * x.real + x.imag * x.imag if np.iscomplexobj(x) else x * x


def sort_columns(w, vectors, descending=False):
    """``w`` sorted (stable) with the columns of each ``vectors`` matrix, by a permutation matrix built from the
    ranks (as the lowering does, so that the columns move exactly)."""
    key = -w if descending else w
    idx = np.arange(w.shape[-1])
    ties = (key[:, None, :] == key[:, :, None]) & (idx[None, :] < idx[:, None])
    before = (key[:, None, :] < key[:, :, None]) | ties
    perm = np.sum(before, axis=-1)[:, :, None] == idx[None, None, :]
    sorted_w = np.sum(np.where(perm, w[:, :, None], np.zeros((), w.dtype)), axis=1)
    return [sorted_w] + [m @ perm.astype(m.dtype) for m in vectors]


def poison_nan(a, outs):
    """Each of ``outs`` (stacks) all NaN for the matrices of ``a`` holding a NaN or an infinity: the sweeps would
    take them for converged, and LAPACK's answer there is NaN too."""
    bad = ~np.all(np.abs(a) < np.inf, axis=(1, 2))
    return [np.where(bad.reshape((-1,) + (1,) * (o.ndim - 1)), np.array(np.nan, o.dtype), o) for o in outs]


def eigh(x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    """Reads the ``lower`` (else upper) triangle, mirrored, as LAPACK's syevd does."""
    del sort_eigenvalues, algorithm
    a = _stack(x)
    n = a.shape[-1]
    tri = np.tri(n, dtype=bool) if lower else np.tri(n, dtype=bool).T
    a = np.where(tri, a, _adjoint(a))
    w, v = jacobi_eigh(a)
    w, v = poison_nan(a, sort_columns(w, [v]))
    lo, hi = subset_by_index or (0, n)
    shape = np.shape(x)
    dtype = np.asarray(x).dtype
    return [v[:, :, lo:hi].reshape(shape[:-1] + (hi - lo,)).astype(dtype),
            w[:, lo:hi].reshape(shape[:-2] + (hi - lo,)).astype(_real(dtype))]


def _real(dtype):
    return np.finfo(dtype).dtype if np.issubdtype(dtype, np.complexfloating) else dtype


def reflector(x, k):
    """LAPACK's ``larfg`` for the entries of the columns ``x`` (batch, m) from row ``k``: ``(v, tau, beta)`` with
    ``(I - tau v v^H) x[k:] = (beta, 0, ...)``, ``v`` zero above row k and one at it."""
    one, zero = np.ones((), x.dtype), np.zeros((), x.dtype)
    rows = np.arange(x.shape[1])
    x = np.where(rows >= k, x, zero)
    alpha = x[:, k]
    tail2 = np.sum(np.where(rows > k, _abs2(x), 0), axis=-1)
    reflect = (tail2 != 0) | (alpha.imag != 0)
    beta = np.where(alpha.real >= 0, -1, 1).astype(tail2.dtype) * np.sqrt(_abs2(alpha) + tail2)
    beta = np.where(reflect, beta, alpha)
    tau = np.where(reflect, (beta - alpha) / np.where(reflect, beta, one), zero)
    scale = 1 / np.where(reflect, alpha - beta, one)
    return np.where(rows > k, x * scale[:, None], np.where(rows == k, one, zero)), tau, beta


def householder_qr(a, columns):
    """LAPACK's ``geqrf`` on a stack ``a`` (batch, m, n) with R kept explicit (zeros below the diagonal), and the
    product of its reflectors: ``(q, r)`` with ``q`` (batch, m, columns). A complex reflector also turns a lone
    complex ``alpha`` real (``zlarfg``), and ``A`` is multiplied by ``H^H = I - conj(tau) v v^H``."""
    batch, m, n = a.shape
    zero = np.zeros((), a.dtype)
    q = np.broadcast_to(np.eye(m, dtype=a.dtype), (batch, m, m)).copy()
    rows = np.arange(m)
    steps = min(m, n) if np.iscomplexobj(a) else min(m - 1, n)  # a last complex alpha is turned real too
    for k in range(steps):
        v, tau, beta = reflector(a[:, :, k], k)
        a = a - np.conj(tau)[:, None, None] * v[:, :, None] * (np.conj(v)[:, None, :] @ a)
        a[:, :, k] = np.where(rows == k, beta[:, None], np.where(rows < k, a[:, :, k], zero))
        q = q - tau[:, None, None] * (q @ v[:, :, None]) * np.conj(v)[:, None, :]
    return q[:, :, :columns], a


def qr(x, *, pivoting, full_matrices, use_magma):
    if pivoting:
        return _pivoted_qr(x, full_matrices)
    a = _stack(x)
    _, m, n = a.shape
    k = m if full_matrices else min(m, n)
    q, r = householder_qr(a, k)
    shape = np.shape(x)
    dtype = np.asarray(x).dtype
    return [q.reshape(shape[:-2] + (m, k)).astype(dtype), r[:, :k, :].reshape(shape[:-2] + (k, n)).astype(dtype)]


def geqrf(x):
    """LAPACK's ``geqr2``: reflector j (from row j of column j) applied to columns j and on, ``A <- H^H A``; R kept
    on and above the diagonal, the reflectors stored below it, and their ``taus``."""
    check_lapack_dtype(np.asarray(x).dtype)
    a = _stack(x)
    batch, m, n = a.shape
    k = min(m, n)
    rows, cols = np.arange(m), np.arange(n)
    taus = np.zeros((batch, k), a.dtype)
    for j in range(k):
        v, tau, beta = reflector(a[:, :, j], j)
        update = np.conj(tau)[:, None, None] * v[:, :, None] * (np.conj(v)[:, None, :] @ a)
        a = a - np.where(cols >= j, update, 0)
        a[:, :, j] = np.where(rows == j, beta[:, None], np.where(rows > j, v, a[:, :, j]))
        taus[:, j] = tau
    shape, dtype = np.shape(x), np.asarray(x).dtype
    return [a.reshape(shape).astype(dtype), taus.reshape(shape[:-2] + (k,)).astype(dtype)]


def geqp3(x, jpvt, *, use_magma):
    """LAPACK's ``geqp3`` (its unblocked ``laqp2``): columns marked in ``jpvt`` (nonzero) swapped to the front and
    factored in order, then at each step the remaining column of largest partial norm (the first such) swapped
    in, reflected as ``geqrf`` does, and the partial norms downdated, recomputed where cancellation made them
    inaccurate. ``jpvt`` comes back 1-based, as LAPACK's."""
    del use_magma
    check_lapack_dtype(np.asarray(x).dtype)
    a = _stack(x).copy()
    batch, m, n = a.shape
    k = min(m, n)
    perm = np.asarray(jpvt).reshape(batch, n)
    taus = np.zeros((batch, k), a.dtype)
    out_perm = np.zeros((batch, n), perm.dtype)
    real = _real(a.dtype)
    tol3z = np.sqrt(real.type(np.finfo(real).eps) / 2)
    for b in range(batch):
        h, piv, nfixed = a[b], np.arange(1, n + 1), 0
        for j in np.flatnonzero(perm[b]):  # LAPACK's swaps: each marked column to the next place at the front
            h[:, [nfixed, j]], piv[[nfixed, j]] = h[:, [j, nfixed]], piv[[j, nfixed]]
            nfixed += 1
        norms = None
        for i in range(k):
            if i >= nfixed:
                if norms is None:  # the free columns' norms below the fixed ones' rows
                    norms = np.zeros(n, real)
                    norms[i:] = np.sqrt(np.sum(np.abs(h[i:, i:]) ** 2, axis=0))
                    reference = norms.copy()
                p = i + int(np.argmax(norms[i:]))
                h[:, [i, p]], piv[[i, p]] = h[:, [p, i]], piv[[p, i]]
                norms[p], reference[p] = norms[i], reference[i]
            v, tau, beta = reflector(h[None, :, i], i)
            v, tau, beta = v[0], tau[0], beta[0]
            h[:, i + 1:] -= np.conj(tau) * np.outer(v, np.conj(v) @ h[:, i + 1:])
            h[:, i] = np.where(np.arange(m) == i, beta, np.where(np.arange(m) > i, v, h[:, i]))
            taus[b, i] = tau
            if norms is not None:
                for j in range(i + 1, n):
                    if norms[j] != 0:
                        temp = max(real.type(1) - (np.abs(h[i, j]) / norms[j]) ** 2, real.type(0))
                        if temp * (norms[j] / reference[j]) ** 2 <= tol3z:
                            norms[j] = reference[j] = np.sqrt(np.sum(np.abs(h[i + 1:, j]) ** 2)) if i + 1 < m else 0
                        else:
                            norms[j] = norms[j] * np.sqrt(temp)
        a[b], out_perm[b] = h, piv
    shape, dtype = np.shape(x), np.asarray(x).dtype
    return [a.reshape(shape).astype(dtype), out_perm.reshape(np.shape(jpvt)).astype(np.asarray(jpvt).dtype),
            taus.reshape(shape[:-2] + (k,)).astype(dtype)]


def ormqr(a, taus, c, *, left, transpose):
    """``Q c``, ``Q^H c``, ``c Q`` or ``c Q^H`` for ``Q = H_1 ... H_k``, one reflector at a time: the last first for
    ``Q c`` and ``c Q^H``, with ``conj(tau)`` for ``Q^H``."""
    check_lapack_dtype(np.asarray(c).dtype)
    stack, out = _stack(a), _stack(c)
    batch, m, _ = stack.shape
    k = np.shape(taus)[-1]
    t = np.asarray(taus).reshape(batch, k).astype(stack.dtype)
    if transpose:
        t = np.conj(t)
    for i in (reversed(range(k)) if left != transpose else range(k)):
        v = numpy_linalg.householder_reflector(stack, i)
        tau = t[:, i, None, None]
        if left:
            out = out - tau * v[:, :, None] * (np.conj(v)[:, None, :] @ out)
        else:
            out = out - tau * (out @ v[:, :, None]) * np.conj(v)[:, None, :]
    return out.reshape(np.shape(c)).astype(np.asarray(c).dtype)


def _pivoted_qr(x, full_matrices):
    """JAX's ``_qr_lowering`` with pivoting: ``geqp3`` from no marked columns, its reflectors multiplied out by
    ``householder_product`` (the stored matrix padded to m columns for a full Q of a tall one)."""
    x = np.asarray(x)
    *batch, m, n = x.shape
    k = m if full_matrices else min(m, n)
    if m == 0 or n == 0:
        q = np.broadcast_to(np.eye(m, k, dtype=x.dtype), (*batch, m, k))
        return [q.copy(), np.zeros((*batch, k, n), x.dtype), np.zeros((*batch, n), np.int32)]
    r, p, taus = geqp3(x, np.zeros((*batch, n), np.int32), use_magma=None)
    if m < n:
        q = numpy_linalg.householder_product(r[..., :m, :m], taus)
    elif full_matrices:
        q = numpy_linalg.householder_product(np.pad(r, [(0, 0)] * (r.ndim - 1) + [(0, m - n)]), taus)
    else:
        q = numpy_linalg.householder_product(r, taus)
        r = r[..., :n, :n]
    return [q, np.triu(r), p - 1]


def hessenberg(x):
    """LAPACK's ``gehd2``: reflector i (from row i + 1 of column i) applied on both sides, ``A <- H A H^H``, the
    Hessenberg matrix returned with the reflectors stored below its subdiagonal and their ``taus``."""
    check_lapack_dtype(np.asarray(x).dtype)
    a = _stack(x)
    batch, n, _ = a.shape
    rows = np.arange(n)
    taus = np.zeros((batch, max(n - 1, 0)), a.dtype)
    for i in range(n - 1):
        v, tau, beta = reflector(a[:, :, i], i + 1)
        a = a - tau[:, None, None] * (a @ v[:, :, None]) * np.conj(v)[:, None, :]
        left = np.conj(tau)[:, None, None] * v[:, :, None] * (np.conj(v)[:, None, :] @ a)
        a = a - np.where(rows > i, left, 0)
        a[:, :, i] = np.where(rows == i + 1, beta[:, None], np.where(rows > i + 1, v, a[:, :, i]))
        taus[:, i] = tau
    shape, dtype = np.shape(x), np.asarray(x).dtype
    return [a.reshape(shape).astype(dtype), taus.reshape(shape[:-2] + (max(shape[-1] - 1, 0),)).astype(dtype)]


BLOCKED_SYTRD_FROM = 33


def keeps_first_diagonal(dtype, n, lower):
    """LAPACK's blocked ``hetrd`` (``n >= BLOCKED_SYTRD_FROM``) leaves the last diagonal entry of an upper matrix
    as it came, imaginary part and all, where the unblocked one makes it real."""
    return np.issubdtype(dtype, np.complexfloating) and not lower and n >= BLOCKED_SYTRD_FROM


def tridiagonal(x, *, lower):
    """LAPACK's ``sytd2``/``hetd2``: reflector i (from row i + 1 of column i) applied to the trailing Hermitian
    matrix as the rank-2 update ``A - v w^H - w v^H``; the reflectors stored below the subdiagonal, ``d`` and ``e``
    on the diagonal and subdiagonal, the other triangle left as it came. ``lower=False`` is the same steps on the
    matrix reversed in both axes (LAPACK's upper loop runs from the last column to the first, its reflectors
    upwards)."""
    check_lapack_dtype(np.asarray(x).dtype)
    a = _stack(x)
    if not lower:
        a = a[:, ::-1, ::-1]
    batch, n, _ = a.shape
    rows = np.arange(n)
    strict = np.tril(a, -1)
    s = strict + np.conj(np.swapaxes(strict, -1, -2)) + np.real(np.diagonal(a, 0, 1, 2))[:, :, None] * np.eye(n)
    out = a.copy()
    d, e = np.zeros((batch, n), _real(a.dtype)), np.zeros((batch, n - 1), _real(a.dtype))
    taus = np.zeros((batch, n - 1), a.dtype)
    for i in range(n - 1):
        v, tau, beta = reflector(s[:, :, i], i + 1)
        w = tau[:, None] * np.einsum("bij,bj->bi", s, v)
        w = w - 0.5 * tau[:, None] * np.sum(np.conj(w) * v, axis=-1, keepdims=True) * v
        s = s - v[:, :, None] * np.conj(w)[:, None, :] - w[:, :, None] * np.conj(v)[:, None, :]
        out[:, :, i] = np.where(rows == i + 1, beta[:, None], np.where(rows > i + 1, v, out[:, :, i]))
        d[:, i], e[:, i], taus[:, i] = np.real(s[:, i, i]), np.real(beta), tau
    d[:, n - 1] = np.real(s[:, n - 1, n - 1])
    out[:, rows, rows] = np.where(keeps_first_diagonal(a.dtype, n, lower) & (rows == 0), out[:, rows, rows], d)
    if not lower:
        out, d, e, taus = out[:, ::-1, ::-1], d[:, ::-1], e[:, ::-1], taus[:, ::-1]
    shape, dtype = np.shape(x), np.asarray(x).dtype
    batch_shape = shape[:-2]
    return [out.reshape(shape).astype(dtype), d.reshape(batch_shape + (n,)).astype(_real(dtype)),
            e.reshape(batch_shape + (n - 1,)).astype(_real(dtype)), taus.reshape(batch_shape + (n - 1,)).astype(dtype)]


def one_sided_jacobi(a):
    """Columns of ``a`` (batch, m, n) made orthogonal by rotations (``a <- a J``), and the product ``V`` of the
    rotations: ``a = (a J) J^T`` with ``a J`` having orthogonal columns."""
    n = a.shape[-1]
    a = np.pad(a, ((0, 0), (0, 0), (0, n % 2)))
    size = a.shape[-1]
    masks, lows = pair_masks(size)
    eps = np.finfo(a.dtype).eps
    v = np.broadcast_to(np.eye(size, dtype=a.dtype), (a.shape[0], size, size)).copy()
    sweep = 0
    while sweep < MAX_SWEEPS and not _orthogonal(a, eps):
        for mask, low in zip(masks, lows):
            gram = _adjoint(a) @ a
            diag = np.diagonal(gram, axis1=1, axis2=2).real
            off = _pair_entries(gram, mask)
            other = _pair_entries(diag[:, None, :], mask)
            rotate = np.abs(off) > eps * np.sqrt(diag * other)
            j = rotation(diag, off, mask, low, rotate)
            a = a @ j
            v = v @ j
        sweep += 1
    return a[:, :, :n], v[:, :n, :n]


def _orthogonal(a, eps):
    gram = _adjoint(a) @ a
    diag = np.diagonal(gram, axis1=1, axis2=2).real
    bound = eps * np.sqrt(diag[:, :, None] * diag[:, None, :])
    off_diagonal = ~np.eye(a.shape[-1], dtype=bool)
    return not np.any(off_diagonal & (np.abs(gram) > bound))


def svd(x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    del algorithm
    a = _stack(x)
    batch, m, n = a.shape
    wide = m < n
    if wide:
        a = _adjoint(a)
        m, n = n, m
    cols, v = one_sided_jacobi(a)
    s = np.sqrt(np.sum(_abs2(cols), axis=1))
    s, cols, v = poison_nan(a, sort_columns(s, [cols, v], descending=True))
    lo, hi = subset_by_index or (0, n)
    shape, dtype = np.shape(x), np.asarray(x).dtype
    s_out = s[:, lo:hi].reshape(shape[:-2] + (hi - lo,)).astype(_real(dtype))
    if not compute_uv:
        return [s_out]
    one = np.ones((), s.dtype)
    u = np.where(s[:, None, :] > 0, cols / np.where(s > 0, s, one)[:, None, :], np.zeros((), cols.dtype))
    q, r = householder_qr(u, m if full_matrices else n)
    signs = np.where(np.diagonal(r, axis1=1, axis2=2).real < 0, -one, one)
    u = q * np.pad(signs, ((0, 0), (0, q.shape[-1] - n)), constant_values=1)[:, None, :]
    u, = poison_nan(a, [u])
    if not full_matrices:
        u, v = u[:, :, lo:hi], v[:, :, lo:hi]
    vt = _adjoint(v)
    if wide:
        u, vt = _adjoint(vt), _adjoint(u)
    return [s_out, u.reshape(shape[:-2] + u.shape[1:]).astype(dtype),
            vt.reshape(shape[:-2] + vt.shape[1:]).astype(dtype)]


RULES["eigh"] = eigh
RULES["qr"] = qr
RULES["geqrf"] = geqrf
RULES["geqp3"] = geqp3
RULES["ormqr"] = ormqr
RULES["tridiagonal"] = tridiagonal
RULES["hessenberg"] = hessenberg
RULES["svd"] = svd
