"""StableHLO lowerings of ``eigh``, ``svd``, ``qr``, ``geqrf``, ``ormqr``, ``householder_product`` and ``hessenberg``:
Jacobi sweeps and Householder steps in ``stablehlo.while`` loops over a stack of matrices, as
``backends/numpy_decompositions.py`` runs them step for step.

JAX's CPU lowerings are LAPACK custom calls (``syevd``, ``gesdd``, ``geqrf``), which IREE does not have. Each
Jacobi step rotates n/2 disjoint index pairs at once (the round-robin tables are constants, one slice per step),
as one rotation matrix and two ``dot_general``s; the sweeps repeat in an outer ``while`` until the matrix is
diagonal (its columns orthogonal) to working precision or ``MAX_SWEEPS`` ran. Eigenvalues and singular values are
sorted by a permutation matrix built from their ranks, so the vectors move exactly.
"""
from __future__ import annotations

import numpy as np

from irax.backends.numpy_decompositions import MAX_SWEEPS, keeps_first_diagonal, pair_masks
from irax.ir.dialect import tensor_type
from irax.ir.linalg import check_lapack_dtype
from irax.ir.mlir import ir
from irax.ir.params import dense_attr

from .lower_linalg import _I32, _Emit, _as_stack, _dtype, _from_stack, _shape
from .to_stablehlo import lowering


class _Linalg(_Emit):
    """``_Emit`` with the masked reductions, products and loops the decompositions share."""

    def array(self, values):
        values = np.asarray(values)
        t = tensor_type(values.shape, values.dtype)
        return ir.Operation.create("stablehlo.constant", results=[t], attributes={
            "value": dense_attr(values, t)}, loc=self.loc, ip=self.ip).result

    def child(self, ip):
        return _Linalg(self.loc, ip)

    def zeros_like(self, x):
        return self.const(0, _dtype(x), _shape(x))

    def where(self, pred, x, y):
        """``select`` with a scalar-valued branch given as a Python number."""
        like = x if not isinstance(x, (int, float)) else y
        x = self.const(x, _dtype(like), _shape(like)) if isinstance(x, (int, float)) else x
        y = self.const(y, _dtype(like), _shape(like)) if isinstance(y, (int, float)) else y
        return self.select(pred, x, y)

    def masked_sum(self, mask, x, dim):
        return self.reduce(self.where(mask, x, 0), dim, "stablehlo.add", 0)

    def matmul(self, x, y, transpose_x=False):
        out = (_shape(x)[0], _shape(x)[2] if transpose_x else _shape(x)[1], _shape(y)[2])
        return self.dot(x, y, (1 if transpose_x else 2, 1), out)

    def slice_static(self, x, limits):
        return self.window(x, [0] * len(limits), limits)

    def window(self, x, starts, limits):
        sizes = [hi - lo for lo, hi in zip(starts, limits)]
        return self.op("stablehlo.slice", [x], sizes, _dtype(x), start_indices=list(starts),
                       limit_indices=list(limits), strides=[1] * len(limits)).result

    def pad(self, x, high, value=0):
        if _is_complex(x):  # IREE 3.13 crashes on a tensor.pad with a complex constant (a segfault, in-process)
            parts = [self.pad(self.part(name, x), high, value) for name in ("real", "imag")]
            return self.op("stablehlo.complex", parts, _shape(parts[0]), _dtype(x)).result
        shape = [d + h for d, h in zip(_shape(x), high)]
        return self.op("stablehlo.pad", [x, self.const(value, _dtype(x))], shape, _dtype(x),
                       edge_padding_low=[0] * len(high), edge_padding_high=list(high),
                       interior_padding=[0] * len(high)).result

    def sqrt(self, x):
        return self.same("stablehlo.sqrt", x)

    def abs(self, x):
        """``|x|``, in x's real dtype."""
        return self.op("stablehlo.abs", [x], _shape(x), _real(_dtype(x))).result

    def abs2(self, x):
        """``|x|**2``, in x's real dtype."""
        if not _is_complex(x):
            return self.mul(x, x)
        re, im = self.part("real", x), self.part("imag", x)
        return self.add(self.mul(re, re), self.mul(im, im))

    def real(self, x):
        return self.part("real", x) if _is_complex(x) else x

    def like(self, x, other):
        """The real ``x`` in ``other``'s dtype (complex with a zero imaginary part)."""
        return self.convert(x, _dtype(other))

    def adjoint(self, x):
        return self.conj(self.transpose_last(x))

    def adjoint_matmul(self, x, y):
        """``x^H y``."""
        return self.matmul(self.conj(x), y, transpose_x=True)

    def neg(self, x):
        return self.same("stablehlo.negate", x)

    def any(self, x, dims):
        for d in sorted(dims, reverse=True):
            x = self.reduce(x, d, "stablehlo.or", False)
        return x

    def diagonal(self, x):
        shape = _shape(x)
        return self.masked_sum(self.cmp(self.iota(shape, 1), self.iota(shape, 2), "EQ"), x, 2)

    def poison_nan(self, a, outs):
        """As ``numpy_decompositions.poison_nan``: all NaN for the matrices of ``a`` not all finite."""
        finite = self.cmp(self.abs(a), self.const(np.inf, _real(_dtype(a)), _shape(a)), "LT")
        bad = self.any(self.same("stablehlo.not", finite), (1, 2))
        return [self.select(self.bcast(bad, _shape(o), (0,)), self.const(np.nan, _dtype(o), _shape(o)), o)
                for o in outs]

    def eye(self, batch, n, dtype):
        shape = (batch, n, n)
        return self.where(self.cmp(self.iota(shape, 1), self.iota(shape, 2), "EQ"), self.const(1, dtype, shape), 0)

    def while_(self, state, cond, body):
        """``cond(emit, state) -> i1`` and ``body(emit, state) -> state`` as one ``stablehlo.while``."""
        types = [v.type for v in state]
        op = ir.Operation.create("stablehlo.while", results=types, operands=list(state), regions=2, loc=self.loc,
                                 ip=self.ip)
        with self.loc:
            cond_block = op.regions[0].blocks.append(*types)
            body_block = op.regions[1].blocks.append(*types)
        inner = self.child(ir.InsertionPoint(cond_block))
        ir.Operation.create("stablehlo.return", results=[], operands=[cond(inner, list(cond_block.arguments))],
                            loc=self.loc, ip=inner.ip)
        inner = self.child(ir.InsertionPoint(body_block))
        ir.Operation.create("stablehlo.return", results=[], operands=list(body(inner, list(body_block.arguments))),
                            loc=self.loc, ip=inner.ip)
        return list(op.results)

    def fori(self, n, state, body):
        def step(s, k, carry):
            return body(self.child(s.ip), k, carry)
        return _Emit.fori(self, n, state, step)


def _linalg(ctx):
    return _Linalg(ctx.loc, ctx.ip)


def _real(dtype):
    return np.finfo(dtype).dtype if np.issubdtype(dtype, np.complexfloating) else dtype


def _is_complex(x):
    return np.issubdtype(_dtype(x), np.complexfloating)


# --- Jacobi rotations --------------------------------------------------------------------------------------------

class _Pairs:
    """The round-robin pair tables of one order (even), as constants sliced per step."""

    def __init__(self, e, size, batch, dtype):
        masks, lows = pair_masks(size)
        self.size, self.steps, self.batch, self.dtype = size, masks.shape[0], batch, dtype
        self.masks, self.lows = e.array(masks.astype(np.int32)), e.array(lows.astype(np.int32))

    def at(self, s, k):
        """Step ``k``'s partner mask (batch, n, n) and lower-index flags (batch, n), as booleans."""
        zero = s.const(0, _I32)
        shape = (self.batch, self.size, self.size)
        mask = s.bcast(s.slice(self.masks, [k, zero, zero], [None, self.size, self.size]), shape, (1, 2))
        low = s.bcast(s.slice(self.lows, [k, zero], [None, self.size]), shape[:2], (1,))
        return (s.cmp(mask, s.zeros_like(mask), "NE"), s.cmp(low, s.zeros_like(low), "NE"))

    def rotation(self, s, diag, off, mask, low, rotate):
        """As ``numpy_decompositions.rotation``: ``diag`` real, ``off`` complex for a Hermitian matrix."""
        shape = _shape(mask)
        real = _real(self.dtype)
        other = s.masked_sum(mask, s.bcast(diag, shape, (0, 2)), 2)
        dp, dq = s.select(low, diag, other), s.select(low, other, diag)
        magnitude = s.abs(off) if _is_complex(off) else off
        tau = s.div(s.sub(dq, dp), s.mul(s.const(2, real, _shape(off)), s.where(rotate, magnitude, 1)))
        one = s.const(1, real, _shape(tau))
        sign = s.where(s.cmp(tau, s.zeros_like(tau), "GE"), one, -1)
        t = s.div(sign, s.add(s.abs(tau), s.sqrt(s.add(one, s.mul(tau, tau)))))
        t = s.where(rotate, t, 0)
        c = s.div(one, s.sqrt(s.add(one, s.mul(t, t))))
        tc = s.mul(t, c)
        sin = s.select(low, tc, s.neg(tc))
        if _is_complex(off):  # J = D R, D turning a_pq real: the upper index's row takes conj(a_pq) / |a_pq|
            unit = s.same("stablehlo.or", low, s.same("stablehlo.not", rotate))
            phase = s.select(unit, s.const(1, self.dtype, _shape(off)),
                             s.div(off, s.like(s.where(rotate, magnitude, 1), off)))
            c, sin = s.mul(s.like(c, off), phase), s.select(low, s.like(sin, off), s.mul(s.like(sin, off), phase))
        eye = s.cmp(s.iota(shape, 1), s.iota(shape, 2), "EQ")
        return s.add(s.where(eye, s.bcast(c, shape, (0, 2)), 0), s.where(mask, s.bcast(sin, shape, (0, 1)), 0))


def _sweeps(e, state, converged, step, pairs):
    """Sweeps of ``pairs.steps`` Jacobi steps until ``converged(emit, state)`` or ``MAX_SWEEPS``. The test runs
    at the end of each sweep, its flag carried: IREE 3.13 fails to compile a ``dot_general`` in a ``while``'s
    condition region ("'stream.async.dispatch' op : streamable op expected to be in an execution region")."""
    def cond(s, carry):
        sweep, done, *_ = carry
        more = s.cmp(sweep, s.const(MAX_SWEEPS, _I32), "LT")
        return s.same("stablehlo.and", more, s.same("stablehlo.not", done))

    def body(s, carry):
        sweep, _, *rest = carry
        rest = s.fori(pairs.steps, rest, lambda t, k, st: step(t, *pairs.at(t, k), st))
        return [s.add(sweep, s.const(1, _I32)), converged(s, rest)] + rest

    state = e.barrier(*state)
    return e.while_([e.const(0, _I32), converged(e, state)] + list(state), cond, body)[2:]


def _off_diagonal_max(s, a):
    shape = _shape(a)
    off = s.cmp(s.iota(shape, 1), s.iota(shape, 2), "NE")
    mags = s.where(off, s.abs(a), 0)
    return s.reduce(s.reduce(mags, 2, "stablehlo.maximum", -np.inf), 1, "stablehlo.maximum", -np.inf)


def _jacobi_eigh(e, a):
    """As ``numpy_decompositions.jacobi_eigh``: unsorted eigenvalues and the eigenvectors of a stack."""
    batch, n, _ = _shape(a)
    dtype = _dtype(a)
    size = n + n % 2
    a = e.pad(a, (0, n % 2, n % 2)) if n % 2 else a
    shape = (batch, size, size)
    tol = e.mul(e.const(np.finfo(dtype).eps, _real(dtype), (batch,)),
                e.sqrt(e.reduce(e.reduce(e.abs2(a), 2, "stablehlo.add", 0), 1, "stablehlo.add", 0)))
    (tol,) = e.barrier(tol)
    pairs = _Pairs(e, size, batch, dtype)

    def converged(s, state):
        return s.same("stablehlo.not", s.any(s.cmp(_off_diagonal_max(s, state[0]), tol, "GT"), (0,)))

    def step(s, mask, low, state):
        a, v = state
        off = s.masked_sum(mask, a, 2)
        rotate = s.cmp(s.abs(off), s.bcast(tol, (batch, size), (0,)), "GT")
        j = pairs.rotation(s, s.real(s.diagonal(a)), off, mask, low, rotate)
        a = s.matmul(s.adjoint_matmul(j, a), j)
        a = s.div(s.add(a, s.adjoint(a)), s.const(2, dtype, shape))
        a = s.where(s.same("stablehlo.and", mask, s.bcast(rotate, shape, (0, 1))), 0, a)
        return [a, s.matmul(v, j)]

    a, v = _sweeps(e, [a, e.eye(batch, size, dtype)], converged, step, pairs)
    return e.slice_static(e.real(e.diagonal(a)), (batch, n)), e.slice_static(v, (batch, n, n))


def _sort_columns(e, w, vectors, descending=False):
    """As ``numpy_decompositions.sort_columns``."""
    batch, n = _shape(w)
    key = e.neg(w) if descending else w
    shape = (batch, n, n)
    ki, kj = e.bcast(key, shape, (0, 1)), e.bcast(key, shape, (0, 2))
    ii, jj = e.iota(shape, 1), e.iota(shape, 2)
    before = e.same("stablehlo.or", e.cmp(kj, ki, "LT"),
                    e.same("stablehlo.and", e.cmp(kj, ki, "EQ"), e.cmp(jj, ii, "LT")))
    rank = e.reduce(e.where(before, e.const(1, _I32, shape), 0), 2, "stablehlo.add", 0)
    perm = e.cmp(e.bcast(rank, shape, (0, 1)), jj, "EQ")
    sorted_w = e.masked_sum(perm, e.bcast(w, shape, (0, 1)), 1)
    return [sorted_w] + [e.matmul(m, e.where(perm, e.const(1, _dtype(m), shape), 0)) for m in vectors]


def _read_triangle(e, a, lower):
    shape = _shape(a)
    tri = e.cmp(e.iota(shape, 1), e.iota(shape, 2), "GE" if lower else "LE")
    return e.select(tri, a, e.adjoint(a))


@lowering("eigh")
def _eigh(ctx, x, *, lower, sort_eigenvalues, subset_by_index, algorithm):
    v_aval, w_aval = ctx.result_avals
    e = _linalg(ctx)
    n = _shape(x)[-1]
    if v_aval.size == 0 or n == 0:
        return [e.const(0, v_aval.dtype, v_aval.shape), e.const(0, w_aval.dtype, w_aval.shape)]
    a = _read_triangle(e, _as_stack(e, x), lower)
    w, v = _jacobi_eigh(e, a)
    w, v = e.poison_nan(a, _sort_columns(e, w, [v]))
    lo, hi = subset_by_index or (0, n)
    batch = _shape(a)[0]
    return [_from_stack(e, e.window(v, (0, 0, lo), (batch, n, hi)), v_aval),
            _from_stack(e, e.window(w, (0, lo), (batch, hi)), w_aval)]


# --- Householder QR ----------------------------------------------------------------------------------------------

def _reflector(s, column, k):
    """As ``numpy_decompositions.reflector``: ``(v, tau, beta)`` for the columns (batch, m) from row ``k`` (an
    i32 scalar)."""
    batch, m = _shape(column)
    dtype = _dtype(column)
    real = _real(dtype)
    rows, kk = s.iota((batch, m), 1), s.at(k, (batch, m))
    x = s.where(s.cmp(rows, kk, "GE"), column, 0)
    alpha = s.slice(column, [s.const(0, _I32), k], [batch, None])
    tail2 = s.masked_sum(s.cmp(rows, kk, "GT"), s.abs2(x), 1)
    reflect = s.cmp(tail2, s.zeros_like(tail2), "NE")
    if _is_complex(column):
        imag = s.part("imag", alpha)
        reflect = s.same("stablehlo.or", reflect, s.cmp(imag, s.zeros_like(imag), "NE"))
    one = s.const(1, real, (batch,))
    re_alpha = s.real(alpha)
    beta = s.like(s.mul(s.where(s.cmp(re_alpha, s.zeros_like(re_alpha), "GE"), s.neg(one), one),
                        s.sqrt(s.add(s.abs2(alpha), tail2))), alpha)
    beta = s.select(reflect, beta, alpha)
    one = s.like(one, alpha)
    tau = s.where(reflect, s.div(s.sub(beta, alpha), s.select(reflect, beta, one)), 0)
    scale = s.div(one, s.select(reflect, s.sub(alpha, beta), one))
    v = s.select(s.cmp(rows, kk, "GT"), s.mul(x, s.bcast(scale, (batch, m), (0,))),
                 s.where(s.cmp(rows, kk, "EQ"), s.const(1, dtype, (batch, m)), 0))
    return v, tau, beta


def _householder_qr(e, a):
    """As ``numpy_decompositions.householder_qr``: the full ``q`` (batch, m, m) and ``r`` (batch, m, n)."""
    batch, m, n = _shape(a)
    dtype = _dtype(a)
    zero_i = e.const(0, _I32)

    def step(s, k, state):
        a, q = state
        rows, kk = s.iota((batch, m), 1), s.at(k, (batch, m))
        v, tau, beta = _reflector(s, s.slice(a, [zero_i, zero_i, k], [batch, m, None]), k)
        row = s.reshape(s.conj(v), (batch, 1, m))
        col = s.reshape(v, (batch, m, 1))
        tau_v = s.mul(s.bcast(s.conj(tau), (batch, m, n), (0,)), s.bcast(v, (batch, m, n), (0, 1)))
        a = s.sub(a, s.mul(tau_v, s.bcast(s.reshape(s.matmul(row, a), (batch, n)), (batch, m, n), (0, 2))))
        column = s.slice(a, [zero_i, zero_i, k], [batch, m, None])
        column = s.select(s.cmp(rows, kk, "EQ"), s.bcast(beta, (batch, m), (0,)),
                          s.where(s.cmp(rows, kk, "LT"), column, 0))
        a = s.update(a, s.reshape(column, (batch, m, 1)), [zero_i, zero_i, k])
        qv = s.bcast(s.reshape(s.matmul(q, col), (batch, m)), (batch, m, m), (0, 1))
        tau_qv = s.mul(s.bcast(tau, (batch, m, m), (0,)), qv)
        q = s.sub(q, s.mul(tau_qv, s.bcast(s.conj(v), (batch, m, m), (0, 2))))
        return [a, q]

    steps = min(m, n) if _is_complex(a) else min(m - 1, n)  # a last complex alpha is turned real too
    q = e.eye(batch, m, dtype)
    if steps <= 0:
        return q, a
    a, q = e.fori(steps, [a, q], step)
    return q, a


def _store_reflector(s, a, taus, column, first_row, v, tau, beta):
    """LAPACK's storage of a reflector: ``beta`` at ``first_row`` of the stack's ``column`` and ``v`` below it, and
    ``tau`` at ``column`` of ``taus``."""
    batch, m, _ = _shape(a)
    zero = s.const(0, _I32)
    rows, first = s.iota((batch, m), 1), s.at(first_row, (batch, m))
    entries = s.slice(a, [zero, zero, column], [batch, m, None])
    entries = s.select(s.cmp(rows, first, "EQ"), s.bcast(beta, (batch, m), (0,)),
                       s.select(s.cmp(rows, first, "GT"), v, entries))
    a = s.update(a, s.reshape(entries, (batch, m, 1)), [zero, zero, column])
    return [a, s.update(taus, s.reshape(tau, (batch, 1)), [zero, column])]


@lowering("geqrf")
def _geqrf(ctx, x):
    """As ``numpy_decompositions.geqrf``: a loop over the columns, reflector j applied to columns j and on."""
    out, taus_aval = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    if out.size == 0:
        return [x, e.const(0, taus_aval.dtype, taus_aval.shape)]
    a = _as_stack(e, x)
    batch, m, n = _shape(a)
    k = min(m, n)
    dtype = _dtype(a)
    zero = e.const(0, _I32)

    def step(s, j, state):
        a, taus = state
        v, tau, beta = _reflector(s, s.slice(a, [zero, zero, j], [batch, m, None]), j)
        update = s.mul(s.bcast(s.conj(tau), (batch, m, n), (0,)),
                       s.matmul(s.reshape(v, (batch, m, 1)), s.matmul(s.reshape(s.conj(v), (batch, 1, m)), a)))
        a = s.sub(a, s.where(s.cmp(s.iota((batch, m, n), 2), s.at(j, (batch, m, n)), "GE"), update, 0))
        return _store_reflector(s, a, taus, j, j, v, tau, beta)

    a, taus = e.fori(k, [a, e.const(0, dtype, (batch, k))], step)
    return [_from_stack(e, a, out), e.convert(e.reshape(taus, taus_aval.shape), taus_aval.dtype)]


def _swap_columns(s, x, i, p):
    """Columns ``i`` and ``p`` (i32 index vectors, one per matrix of the stack) of ``x`` (batch, m, n) or of
    ``x`` (batch, n) exchanged, each read by a masked sum so that no other column's NaN reaches it."""
    shape = _shape(x)
    cols = s.iota(shape, len(shape) - 1)
    at_i, at_p = (s.cmp(cols, s.bcast(k, shape, (0,)), "EQ") for k in (i, p))
    if len(shape) == 2:
        x_i, x_p = (s.bcast(s.masked_sum(mask, x, 1), shape, (0,)) for mask in (at_i, at_p))
    else:
        x_i, x_p = (s.bcast(s.masked_sum(mask, x, 2), shape, (0, 1)) for mask in (at_i, at_p))
    return s.select(at_i, x_p, s.select(at_p, x_i, x))


@lowering("geqp3")
def _geqp3(ctx, x, jpvt, *, use_magma):
    """As ``numpy_decompositions.geqp3``, the stack's matrices side by side: LAPACK's swaps of the marked columns
    to the front, then a loop over the columns, the pivot search and the norm downdating masked to the matrices
    past their marked columns."""
    out, piv_aval, taus_aval = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    a = _as_stack(e, x)
    a, piv, taus = _pivoted_reflectors(e, a, e.reshape(jpvt, (_shape(a)[0], _shape(a)[2])))
    return [_from_stack(e, a, out), e.reshape(piv, piv_aval.shape),
            e.convert(e.reshape(taus, taus_aval.shape), taus_aval.dtype)]


def _pivoted_reflectors(e, a, marks):
    """``geqp3`` of the stack ``a`` (batch, m, n) with the marks ``marks`` (batch, n): the stored reflectors, the
    1-based permutation (in the marks' dtype) and the scale factors (batch, min(m, n))."""
    batch, m, n = _shape(a)
    k = min(m, n)
    dtype, real = _dtype(a), _real(_dtype(a))
    piv_dtype = _dtype(marks)
    piv = e.add(e.convert(e.iota((batch, n), 1), piv_dtype), e.const(1, piv_dtype, (batch, n)))
    fixed = e.const(0, _I32, (batch,))

    def move_marked(s, j, state):
        a, piv, fixed = state
        mark = s.slice(marks, [s.const(0, _I32), j], [batch, None])
        marked = s.cmp(mark, s.zeros_like(mark), "NE")
        at_j = s.at(j, (batch,))
        target = s.select(marked, fixed, at_j)
        fixed = s.add(fixed, s.convert(marked, _I32))
        return [_swap_columns(s, a, at_j, target), _swap_columns(s, piv, at_j, target), fixed]

    if n:
        a, piv, fixed = e.fori(n, [a, piv, fixed], move_marked)
    if k == 0:
        return a, piv, e.const(0, dtype, (batch, 0))
    tol3z = np.sqrt(np.finfo(real).eps / 2).astype(real)
    zero = e.const(0, _I32)

    def step(s, i, state):
        a, piv, taus, norms, reference = state
        cols, rows = s.iota((batch, n), 1), s.iota((batch, m, n), 1)
        at_i = s.at(i, (batch,))
        free = s.cmp(at_i, fixed, "GE")
        below = s.sqrt(s.masked_sum(s.cmp(rows, s.at(i, (batch, m, n)), "GE"), s.abs2(a), 1))
        first_free = s.bcast(s.cmp(at_i, fixed, "EQ"), (batch, n), (0,))
        norms, reference = (s.select(first_free, s.where(s.cmp(cols, s.at(i, (batch, n)), "GE"), below, 0), v)
                            for v in (norms, reference))
        candidates = s.where(s.cmp(cols, s.at(i, (batch, n)), "GE"), norms, -1)
        best = s.reduce(candidates, 1, "stablehlo.maximum", -np.inf)
        first = s.reduce(s.where(s.cmp(candidates, s.bcast(best, (batch, n), (0,)), "EQ"), cols, n), 1,
                         "stablehlo.minimum", n)
        pivot = s.select(s.same("stablehlo.and", free, s.cmp(first, s.const(n, _I32, (batch,)), "LT")), first, at_i)
        a, piv, norms, reference = (_swap_columns(s, v, at_i, pivot) for v in (a, piv, norms, reference))
        v, tau, beta = _reflector(s, s.slice(a, [zero, zero, i], [batch, m, None]), i)
        update = s.mul(s.bcast(s.conj(tau), (batch, m, n), (0,)),
                       s.matmul(s.reshape(v, (batch, m, 1)), s.matmul(s.reshape(s.conj(v), (batch, 1, m)), a)))
        a = s.sub(a, s.where(s.cmp(s.iota((batch, m, n), 2), s.at(i, (batch, m, n)), "GT"), update, 0))
        a, taus = _store_reflector(s, a, taus, i, i, v, tau, beta)
        row = s.abs(s.slice(a, [zero, i, zero], [batch, None, n]))
        nonzero = s.cmp(norms, s.zeros_like(norms), "NE")
        safe = s.where(nonzero, norms, 1)
        ratio = s.div(row, safe)
        temp = s.same("stablehlo.maximum", s.sub(s.const(1, real, (batch, n)), s.mul(ratio, ratio)),
                      s.zeros_like(ratio))
        scale = s.div(norms, s.where(nonzero, reference, 1))
        recompute = s.cmp(s.mul(temp, s.mul(scale, scale)), s.const(tol3z, real, (batch, n)), "LE")
        fresh = s.sqrt(s.masked_sum(s.cmp(rows, s.at(i, (batch, m, n)), "GT"), s.abs2(a), 1))
        downdate = s.same("stablehlo.and", s.same("stablehlo.and", nonzero, s.bcast(free, (batch, n), (0,))),
                          s.cmp(cols, s.at(i, (batch, n)), "GT"))
        norms = s.select(downdate, s.select(recompute, fresh, s.mul(norms, s.sqrt(temp))), norms)
        reference = s.select(s.same("stablehlo.and", downdate, recompute), fresh, reference)
        return [a, piv, taus, norms, reference]

    zeros = e.const(0, real, (batch, n))
    a, piv, taus, _, _ = e.fori(k, [a, piv, e.const(0, dtype, (batch, k)), zeros, zeros], step)
    return a, piv, taus


@lowering("ormqr")
def _ormqr(ctx, a, taus, c, *, left, transpose):
    """As ``numpy_decompositions.ormqr``: a loop over the reflectors, ``c - tau v (v^H c)`` or
    ``c - tau (c v) v^H`` each."""
    (out,) = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    k = _shape(taus)[-1]
    if out.size == 0 or k == 0:
        return [c]
    a, c = _as_stack(e, a), _as_stack(e, c)
    batch, m, _ = _shape(a)
    rows, cols = _shape(c)[1:]
    dtype = _dtype(a)
    t = e.convert(e.reshape(taus, (batch, k)), dtype)
    if transpose:
        t = e.conj(t)
    zero = e.const(0, _I32)

    def step(s, j, state):
        (c,) = state
        i = s.sub(s.const(k - 1, _I32), j) if left != transpose else j
        at_i, indices = s.at(i, (batch, m)), s.iota((batch, m), 1)
        below = s.slice(a, [zero, zero, i], [batch, m, None])
        v = s.select(s.cmp(indices, at_i, "GT"), below,
                     s.where(s.cmp(indices, at_i, "EQ"), s.const(1, dtype, (batch, m)), 0))
        tau = s.bcast(s.slice(t, [zero, i], [batch, None]), (batch, rows, cols), (0,))
        if left:
            update = s.matmul(s.reshape(v, (batch, m, 1)), s.matmul(s.reshape(s.conj(v), (batch, 1, m)), c))
        else:
            update = s.matmul(s.matmul(c, s.reshape(v, (batch, m, 1))), s.reshape(s.conj(v), (batch, 1, m)))
        return [s.sub(c, s.mul(tau, update))]

    (c,) = e.fori(k, [c], step)
    return [_from_stack(e, c, out)]


@lowering("hessenberg")
def _hessenberg(ctx, x):
    """As ``numpy_decompositions.hessenberg``: a loop over the columns, reflector i applied on both sides."""
    out, taus_aval = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    n = out.shape[-1]
    if out.size == 0 or n == 1:
        return [x, e.const(0, taus_aval.dtype, taus_aval.shape)]
    a = _as_stack(e, x)
    batch = _shape(a)[0]
    dtype = _dtype(a)
    zero = e.const(0, _I32)
    shape = (batch, n, n)

    def step(s, i, state):
        a, taus = state
        i1 = s.add(i, s.const(1, _I32))
        v, tau, beta = _reflector(s, s.slice(a, [zero, zero, i], [batch, n, None]), i1)
        col, row = s.reshape(v, (batch, n, 1)), s.reshape(s.conj(v), (batch, 1, n))
        a = s.sub(a, s.mul(s.bcast(tau, shape, (0,)), s.matmul(s.matmul(a, col), row)))
        left = s.mul(s.bcast(s.conj(tau), shape, (0,)), s.matmul(col, s.matmul(row, a)))
        a = s.sub(a, s.where(s.cmp(s.iota(shape, 2), s.at(i, shape), "GT"), left, 0))
        return _store_reflector(s, a, taus, i, i1, v, tau, beta)

    a, taus = e.fori(n - 1, [a, e.const(0, dtype, (batch, n - 1))], step)
    return [_from_stack(e, a, out), e.convert(e.reshape(taus, taus_aval.shape), taus_aval.dtype)]


@lowering("tridiagonal")
def _tridiagonal(ctx, x, *, lower):
    """As ``numpy_decompositions.tridiagonal``: the Hermitian matrix from the read triangle, reflector i applied
    as a rank-2 update each trip; an upper matrix reversed in both axes around the same loop."""
    out, d_aval, e_aval, taus_aval = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    a = _as_stack(e, x)
    batch, n, _ = shape = _shape(a)
    dtype = _dtype(a)
    if not lower:
        a = e.op("stablehlo.reverse", [a], shape, dtype, dimensions=[1, 2]).result
    rows, cols = e.iota(shape, 1), e.iota(shape, 2)
    strict = e.where(e.cmp(rows, cols, "GT"), a, 0)
    diagonal = e.cmp(rows, cols, "EQ")
    s = e.add(e.add(strict, e.adjoint(strict)), e.where(diagonal, e.like(e.real(a), a), 0))

    def step(st, i, state):
        s, out, off, taus = state
        v, tau, beta = _reflector(st, st.slice(s, [st.const(0, _I32)] * 2 + [i], [batch, n, None]), st.add(
            i, st.const(1, _I32)))
        col, row = st.reshape(v, (batch, n, 1)), st.reshape(st.conj(v), (batch, 1, n))
        w = st.mul(st.bcast(tau, (batch, n), (0,)), st.reshape(st.matmul(s, col), (batch, n)))
        v_w = st.reshape(st.matmul(st.reshape(st.conj(w), (batch, 1, n)), col), (batch,))
        coef = st.mul(st.mul(st.const(-0.5, dtype, (batch,)), tau), v_w)
        w = st.add(w, st.mul(st.bcast(coef, (batch, n), (0,)), v))
        w_col, w_row = st.reshape(w, (batch, n, 1)), st.reshape(st.conj(w), (batch, 1, n))
        s = st.sub(st.sub(s, st.matmul(col, w_row)), st.matmul(w_col, row))
        out, taus = _store_reflector(st, out, taus, i, st.add(i, st.const(1, _I32)), v, tau, beta)
        off = st.update(off, st.reshape(st.real(beta), (batch, 1)), [st.const(0, _I32), i])
        return [s, out, off, taus]

    real = _real(dtype)
    state = [s, a, e.const(0, real, (batch, n - 1)), e.const(0, dtype, (batch, n - 1))]
    s, out, off, taus = e.fori(n - 1, state, step) if n > 1 else state
    d = e.real(e.diagonal(s))
    new_diagonal = e.bcast(e.like(d, out), shape, (0, 1))
    if keeps_first_diagonal(dtype, n, lower):
        diagonal = e.same("stablehlo.and", diagonal, e.cmp(rows, e.zeros_like(rows), "NE"))
    out = e.select(diagonal, new_diagonal, out)
    results = [out, d, off, taus]
    if not lower:
        results = [e.op("stablehlo.reverse", [r], _shape(r), _dtype(r), dimensions=list(range(1, len(_shape(r)))))
                   .result for r in results]
    return [_from_stack(e, r, aval) for r, aval in zip(results, ctx.result_avals)]


@lowering("householder_product")
def _householder_product(ctx, a, taus):
    """As ``numpy_linalg.householder_product``: a loop over the reflectors from the last, each applied to the
    first columns of the identity as ``q - tau v (v^H q)``."""
    (out,) = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    if out.size == 0:
        return [e.const(0, out.dtype, out.shape)]
    a = _as_stack(e, a)
    k = _shape(taus)[-1]
    t = e.convert(e.reshape(taus, (_shape(a)[0], k)), _dtype(a))
    return [_from_stack(e, _reflectors_product(e, a, t, out.shape[-1]), out)]


def _reflectors_product(e, a, t, n):
    """The first ``n`` columns of the product of the reflectors stored in the stack ``a`` (batch, m, .) with
    scale factors ``t`` (batch, k), the last applied first."""
    batch, m, _ = _shape(a)
    k = _shape(t)[1]
    dtype = _dtype(a)
    q = e.window(e.eye(batch, m, dtype), [0, 0, 0], [batch, m, n])
    zero = e.const(0, _I32)

    def step(s, j, state):
        (q,) = state
        i = s.sub(s.const(k - 1, _I32), j)
        rows, at_i = s.iota((batch, m), 1), s.at(i, (batch, m))
        below = s.slice(a, [zero, zero, i], [batch, m, None])
        v = s.select(s.cmp(rows, at_i, "GT"), below, s.where(s.cmp(rows, at_i, "EQ"), s.const(1, dtype, (batch, m)), 0))
        w = s.matmul(s.reshape(s.conj(v), (batch, 1, m)), q)
        tau_v = s.mul(s.bcast(s.slice(t, [zero, i], [batch, None]), (batch, m), (0,)), v)
        return [s.sub(q, s.matmul(s.reshape(tau_v, (batch, m, 1)), w))]

    if k:
        (q,) = e.fori(k, [q], step)
    return q


@lowering("qr")
def _qr(ctx, x, *, pivoting, full_matrices, use_magma):
    q_aval, r_aval, *p_aval = ctx.result_avals
    e = _linalg(ctx)
    m, n = _shape(x)[-2:]
    k = q_aval.shape[-1]
    if m == 0 or n == 0 or q_aval.size == 0:
        nb = q_aval.ndim - 2
        eye = e.cmp(e.iota(q_aval.shape, nb), e.iota(q_aval.shape, nb + 1), "EQ")
        q = e.where(eye, e.const(1, q_aval.dtype, q_aval.shape), 0)
        return [q, e.const(0, r_aval.dtype, r_aval.shape)] + [e.const(0, _I32, p.shape) for p in p_aval]
    a = _as_stack(e, x)
    batch = _shape(a)[0]
    if pivoting:
        return _pivoted_qr(e, a, full_matrices, ctx.result_avals)
    q, r = _householder_qr(e, a)
    return [_from_stack(e, e.slice_static(q, (batch, m, k)), q_aval),
            _from_stack(e, e.slice_static(r, (batch, k, n)), r_aval)]


def _pivoted_qr(e, a, full_matrices, avals):
    """As ``numpy_decompositions._pivoted_qr``: ``geqp3``'s reflectors multiplied out."""
    batch, m, n = _shape(a)
    r, piv, taus = _pivoted_reflectors(e, a, e.const(0, _I32, (batch, n)))
    if m < n:
        q = _reflectors_product(e, e.slice_static(r, (batch, m, m)), taus, m)
    elif full_matrices:
        q = _reflectors_product(e, e.pad(r, [0, 0, m - n]), taus, m)
    else:
        q = _reflectors_product(e, r, taus, n)
        r = e.slice_static(r, (batch, n, n))
    shape = _shape(r)
    r = e.where(e.cmp(e.iota(shape, 1), e.iota(shape, 2), "LE"), r, 0)
    p = e.sub(piv, e.const(1, _I32, (batch, n)))
    return [_from_stack(e, v, aval) for v, aval in zip((q, r, p), avals)]


# --- one-sided Jacobi SVD ----------------------------------------------------------------------------------------

def _one_sided_jacobi(e, a):
    """As ``numpy_decompositions.one_sided_jacobi``: ``a J`` (orthogonal columns) and ``V = J``."""
    batch, m, n = _shape(a)
    dtype = _dtype(a)
    size = n + n % 2
    a = e.pad(a, (0, 0, n % 2)) if n % 2 else a
    pairs = _Pairs(e, size, batch, dtype)
    eps = np.finfo(dtype).eps
    shape = (batch, size, size)

    def converged(s, state):
        gram = s.adjoint_matmul(state[0], state[0])
        diag = s.real(s.diagonal(gram))
        bound = s.mul(s.const(eps, _real(dtype), shape), s.sqrt(s.mul(s.bcast(diag, shape, (0, 1)),
                                                                        s.bcast(diag, shape, (0, 2)))))
        off = s.cmp(s.iota(shape, 1), s.iota(shape, 2), "NE")
        bad = s.same("stablehlo.and", off, s.cmp(s.abs(gram), bound, "GT"))
        return s.same("stablehlo.not", s.any(bad, (0, 1, 2)))

    def step(s, mask, low, state):
        a, v = state
        gram = s.adjoint_matmul(a, a)
        diag = s.real(s.diagonal(gram))
        off = s.masked_sum(mask, gram, 2)
        other = s.masked_sum(mask, s.bcast(diag, shape, (0, 1)), 2)
        bound = s.mul(s.const(eps, _real(dtype), (batch, size)), s.sqrt(s.mul(diag, other)))
        rotate = s.cmp(s.abs(off), bound, "GT")
        j = pairs.rotation(s, diag, off, mask, low, rotate)
        return [s.matmul(a, j), s.matmul(v, j)]

    a, v = _sweeps(e, [a, e.eye(batch, size, dtype)], converged, step, pairs)
    return e.slice_static(a, (batch, m, n)), e.slice_static(v, (batch, n, n))


def _left_vectors(e, s, cols, full_matrices):
    """The columns over their norms, completed (and re-orthogonalized) by a Householder QR, signs kept."""
    batch, m, n = _shape(cols)
    dtype = _dtype(cols)
    positive = e.cmp(s, e.zeros_like(s), "GT")
    safe = e.bcast(e.like(e.where(positive, s, 1), cols), (batch, m, n), (0, 2))
    u = e.where(e.bcast(positive, (batch, m, n), (0, 2)), e.div(cols, safe), 0)
    q, r = _householder_qr(e, u)
    width = m if full_matrices else n
    q = e.slice_static(q, (batch, m, width))
    diag = e.real(e.diagonal(e.slice_static(r, (batch, n, n))))
    one = e.const(1, _real(dtype), (batch, n))
    signs = e.where(e.cmp(diag, e.zeros_like(diag), "LT"), e.neg(one), one)
    signs = e.pad(signs, (0, width - n), 1) if width > n else signs
    return e.mul(q, e.bcast(e.like(signs, q), (batch, m, width), (0, 2)))


@lowering("svd")
def _svd(ctx, x, *, full_matrices, compute_uv, subset_by_index, algorithm):
    e = _linalg(ctx)
    avals = ctx.result_avals
    m, n = _shape(x)[-2:]
    if any(a.size == 0 for a in avals) or m == 0 or n == 0:
        return _empty_svd(e, avals, m, n)
    a = _as_stack(e, x)
    batch = _shape(a)[0]
    wide = m < n
    if wide:
        a, (m, n) = e.adjoint(a), (n, m)
    cols, v = _one_sided_jacobi(e, a)
    norms = e.sqrt(e.reduce(e.abs2(cols), 1, "stablehlo.add", 0))
    s, cols, v = e.poison_nan(a, _sort_columns(e, norms, [cols, v], descending=True))
    lo, hi = subset_by_index or (0, n)
    outs = [_from_stack(e, e.window(s, (0, lo), (batch, hi)), avals[0])]
    if not compute_uv:
        return outs
    (u,) = e.poison_nan(a, [_left_vectors(e, s, cols, full_matrices)])
    if not full_matrices:
        u, v = e.window(u, (0, 0, lo), (batch, m, hi)), e.window(v, (0, 0, lo), (batch, n, hi))
    vt = e.adjoint(v)
    if wide:
        u, vt = e.adjoint(vt), e.adjoint(u)
    return outs + [_from_stack(e, u, avals[1]), _from_stack(e, vt, avals[2])]


def _empty_svd(e, avals, m, n):
    """JAX's ``_empty_svd``: identities for the full square factors, zeros elsewhere."""
    outs = []
    for i, aval in enumerate(avals):
        if i > 0 and aval.shape[-1] == aval.shape[-2] and aval.size:
            nb = aval.ndim - 2
            eye = e.cmp(e.iota(aval.shape, nb), e.iota(aval.shape, nb + 1), "EQ")
            outs.append(e.where(eye, e.const(1, aval.dtype, aval.shape), 0))
        else:
            outs.append(e.const(0, aval.dtype, aval.shape))
    return outs
