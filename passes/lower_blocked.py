"""StableHLO lowerings of ``lu``, ``cholesky`` and ``triangular_solve`` by blocks, as LAPACK's ``getrf``, ``potrf``
and ``trsm`` (and ``cholesky_update``'s loop over rows).

Each trip of a ``stablehlo.while`` is a host-scheduled step of a few dispatches, so the number of trips, not the
arithmetic, sets the cost of a loop over columns: one trip per column over the whole matrix took ~30 µs at 256x256.
Here one trip factors a panel of ``PANEL`` columns, its column steps unrolled over the panel alone (a few µs each),
then moves the panel's row swaps through the matrix with one gather, solves the panel's block row with the inverse
of its unit lower triangle and updates the trailing matrix with one product. A matrix of fewer columns than a
panel is one panel, unrolled without a loop; a larger one is padded to whole panels (see ``_padding``; with
zeros for LU: a zero column takes its own row as pivot and changes nothing; with the identity for
Cholesky). The pivot choice and the treatment of zero and NaN pivots are those of
``backends/numpy_linalg.py``: the first row of largest magnitude (a NaN wins), a zero pivot leaves its column
undivided. Cholesky factors its panels in the same way without the search and swaps (a matrix with a
non-positive pivot is all NaN, as there). A triangular solve takes ``SOLVE_BLOCK`` rows a trip. Products with
inverted triangles round differently from substitution (within float32 tolerance of JAX's) and spread a NaN of a
block to the block's other rows.
"""
from __future__ import annotations

import numpy as np

from irax.ir.dialect import tensor_type
from irax.ir.mlir import ir
from irax.ir.shapes import issubdtype

from .lower_decompositions import _Linalg, _real
from .lower_linalg import _I32, _as_stack, _dtype, _from_stack, _shape
from .to_stablehlo import _argminmax_body, lowering

PANEL = 16
SOLVE_BLOCK = 32


def _canonical(e, a, b, *, left_side, lower, transpose_a, conjugate_a):
    """As ``numpy_linalg.canonical_triangular_solve``: the left-side system, whether its matrix is lower
    triangular, and how its solution maps back."""
    if conjugate_a:
        a = e.conj(a)
    if transpose_a != (not left_side):
        a = e.transpose_last(a)
        lower = not lower
    if not left_side:
        b = e.transpose_last(b)
    return a, b, lower, (lambda x: x if left_side else e.transpose_last(x))


def _magnitude(s, x):
    """|x| for real x, |re| + |im| for complex x (LAPACK's ``icamax`` measure)."""
    if _real(_dtype(x)) == _dtype(x):
        return s.abs(x)
    return s.add(s.abs(s.part("real", x)), s.abs(s.part("imag", x)))


def _unit_triangular_inverse(s, tri, width, lower=True, scale=None):
    """``(I + M)^-1`` for the strictly lower (upper) ``M`` of ``tri`` (its rows divided by ``scale`` if given):
    ``(I - M)(I + M^2)(I + M^4)...``, M being nilpotent, stops once a power of M is zero."""
    shape = _shape(tri)
    rows, cols = s.iota(shape, 1), s.iota(shape, 2)
    if scale is not None:
        tri = s.div(tri, s.bcast(scale, shape, (0, 1)))
    power = s.where(s.cmp(rows, cols, "GT" if lower else "LT"), tri, 0)
    eye = s.where(s.cmp(rows, cols, "EQ"), s.const(1, _dtype(tri), shape), 0)
    inverse = s.sub(eye, power)
    span = 2
    while span < width:
        power = s.matmul(power, power)
        inverse = s.matmul(inverse, s.add(eye, power))
        span *= 2
    return inverse


def _flat_rows(s, a, rows):
    """The indices of rows ``rows[b, r]`` of each matrix ``b`` of the stack ``a`` among the stack's rows."""
    batch, count = _shape(rows)
    offsets = s.mul(s.iota((batch, count), 0), s.const(_shape(a)[1], _I32, (batch, count)))
    return s.reshape(s.add(rows, offsets), (batch * count, 1))


def _gather_rows(s, a, rows):
    """``a[b, rows[b, r], :]`` for each matrix ``b`` of the stack."""
    batch, m, n = _shape(a)
    count = _shape(rows)[1]
    numbers = ("#stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], "
               "index_vector_dim = 1>")
    found = s.op("stablehlo.gather", [s.reshape(a, (batch * m, n)), _flat_rows(s, a, rows)], (batch * count, n),
                 _dtype(a), dimension_numbers=numbers, slice_sizes=[1, n], indices_are_sorted=False).result
    return s.reshape(found, (batch, count, n))


def _scatter_rows(s, a, rows, values):
    """``a`` with ``a[b, rows[b, r], :] = values[b, r, :]``: rows given twice must be given the same values."""
    batch, m, n = _shape(a)
    count = _shape(rows)[1]
    numbers = ("#stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], "
               "scatter_dims_to_operand_dims = [0], index_vector_dim = 1>")
    op = s.op("stablehlo.scatter", [s.reshape(a, (batch * m, n)), _flat_rows(s, a, rows),
                                    s.reshape(values, (batch * count, n))], (batch * m, n), _dtype(a), regions=1,
              scatter_dimension_numbers=numbers, indices_are_sorted=False, unique_indices=False)
    scalar = tensor_type((), _dtype(a))
    with s.loc:
        block = op.regions[0].blocks.append(scalar, scalar)
    ir.Operation.create("stablehlo.return", results=[], operands=[block.arguments[1]], loc=s.loc,
                        ip=ir.InsertionPoint(block))
    return s.reshape(op.result, (batch, m, n))


def _concat(s, pieces, dim):
    if len(pieces) == 1:
        return pieces[0]
    shape = list(_shape(pieces[0]))
    shape[dim] = sum(_shape(p)[dim] for p in pieces)
    return s.op("stablehlo.concatenate", pieces, shape, _dtype(pieces[0]), dimension=dim).result


def _pivot_row(s, x, panel):
    """The first row ``i`` of largest ``x`` (a NaN wins) in each matrix of a ``(batch, m)`` stack, and column
    ``i`` of each ``(c, m)`` matrix of ``panel``: one reduce, carrying the panel's columns beside ``x``."""
    batch, m = _shape(x)
    dtype, panel_dtype = _dtype(x), _dtype(panel)
    c = _shape(panel)[1]
    payload = [s.reshape(s.window(panel, [0, r, 0], [batch, r + 1, m]), (batch, m)) for r in range(c)]
    operands = [x, s.iota((batch, m), 1), *payload, s.const(-np.inf, dtype), s.const(0, _I32),
                *[s.const(0, panel_dtype)] * c]
    vt, it, pt = tensor_type((), dtype), tensor_type((), _I32), tensor_type((), panel_dtype)
    results = [tensor_type((batch,), dtype), tensor_type((batch,), _I32)] + [tensor_type((batch,), panel_dtype)] * c
    op = ir.Operation.create("stablehlo.reduce", results=results, operands=operands,
                             attributes={"dimensions": ir.DenseI64ArrayAttr.get([1])}, regions=1, loc=s.loc, ip=s.ip)
    with s.loc:
        block = op.regions[0].blocks.append(*([vt, it] + [pt] * c) * 2)
    _argminmax_body(s, block, vt, it, dtype, True, [pt] * c)
    row = _concat(s, [s.reshape(v, (batch, 1)) for v in op.results[2:]], 1)
    return op.results[1], row


def _padding(columns):
    """Columns to add so that a matrix of more than one panel has whole panels: IREE 3.13 fails to compile some
    modules holding a narrower panel beside the loop ("'stream.async.dispatch' op : streamable op expected to
    be in an execution region")."""
    return (-columns) % PANEL if columns > PANEL else 0


def _run_panels(e, state, columns, factor):
    """``factor(emit, state, start, width)`` over ``columns``: one panel without a loop when they are fewer than
    ``PANEL``, else a loop over whole panels (``_padding`` made them whole)."""
    if columns < PANEL:
        return factor(e, state, e.const(0, _I32), columns)

    def body(s, k, carry):
        return factor(s, carry, s.mul(k, s.const(PANEL, _I32)), PANEL)
    return e.fori(columns // PANEL, e.barrier(*state), body)


def _panel(s, state, start, width, k_max):
    """Factors columns ``start .. start + width`` (``start`` a traced i32 scalar, ``width`` static) and applies
    them to the rest of the matrix. Each column step is one reduction (the pivot row's index and the pivot row)
    and one elementwise update of the panel; the panel carries its rows' original indices as an extra column (exact
    in any float type computed here below 2**24 rows), so that the swaps reach the rest of the matrix after the
    panel as one gather and one scatter of the rows they moved."""
    pivots, perm, a = state
    batch, m, n = _shape(a)
    dtype = _dtype(a)
    zero = s.const(0, _I32)
    rows = s.iota((batch, m), 1)
    shape_p = (batch, width + 1, m)
    cols_p, rows_p = s.iota(shape_p, 1), s.iota(shape_p, 2)
    index = s.convert(s.convert(s.reshape(rows, (batch, 1, m)), _real(dtype)), dtype)
    panel = _concat(s, [s.transpose_last(s.slice(a, [zero, zero, start], [batch, m, width])), index], 1)
    for j in range(width):
        k = s.add(start, s.const(j, _I32))
        kk, kk_p = s.at(k, (batch, m)), s.at(k, shape_p)
        col = s.reshape(s.window(panel, [0, j, 0], [batch, j + 1, m]), (batch, m))
        i, row_i = _pivot_row(s, s.where(s.cmp(rows, kk, "GE"), _magnitude(s, col), -np.inf), panel)
        row_k = s.slice(panel, [zero, zero, k], [batch, width + 1, None])
        pivots = s.select(s.cmp(s.iota((batch, k_max), 1), s.at(k, (batch, k_max)), "EQ"),
                          s.bcast(i, (batch, k_max), (0,)), pivots)
        is_k, is_i = s.cmp(rows_p, kk_p, "EQ"), s.cmp(rows_p, s.bcast(i, shape_p, (0,)), "EQ")
        swapped = s.select(is_k, s.bcast(row_i, shape_p, (0, 1)), s.select(is_i, s.bcast(row_k, shape_p, (0, 1)),
                                                                             panel))
        at_i, at_k = [s.reshape(s.window(r, [0, j], [batch, j + 1]), (batch,)) for r in (row_i, row_k)]
        pivot = s.bcast(at_i, shape_p, (0,))
        # column j after the swap, from the panel before it: ``swapped`` stays one fused elementwise update
        col = s.select(s.cmp(rows, kk, "EQ"), s.bcast(at_i, (batch, m), (0,)),
                       s.select(s.cmp(rows, s.bcast(i, (batch, m), (0,)), "EQ"), s.bcast(at_k, (batch, m), (0,)), col))
        col = s.bcast(col, shape_p, (0, 2))
        below = s.cmp(rows_p, kk_p, "GT")
        scaled = s.select(s.same("stablehlo.and", below, s.cmp(pivot, s.zeros_like(pivot), "NE")),
                          s.div(col, pivot), col)
        at_j = s.cmp(cols_p, s.const(j, _I32, shape_p), "EQ")
        right = s.same("stablehlo.and", s.cmp(cols_p, s.const(j, _I32, shape_p), "GT"),
                       s.cmp(cols_p, s.const(width, _I32, shape_p), "LT"))
        eliminated = s.sub(swapped, s.mul(scaled, s.bcast(row_i, shape_p, (0, 1))))
        panel = s.select(at_j, scaled, s.select(s.same("stablehlo.and", right, below), eliminated, swapped))
    order = s.convert(s.real(s.reshape(s.window(panel, [0, width, 0], [batch, width + 1, m]), (batch, m))), _I32)
    panel = s.transpose_last(s.window(panel, [0, 0, 0], [batch, width, m]))
    perm = s.reshape(_gather_rows(s, s.reshape(perm, (batch, m, 1)), order), (batch, m))
    # the swaps moved the panel's rows and their pivot rows alone: those rows are gathered and written back
    moved = _concat(s, [s.add(s.iota((batch, width), 1), s.at(start, (batch, width))),
                        s.slice(pivots, [zero, start], [batch, width])], 1)
    sources = s.reshape(_gather_rows(s, s.reshape(order, (batch, m, 1)), moved), (batch, 2 * width))
    a = _scatter_rows(s, a, moved, _gather_rows(s, a, sources))
    a = s.update(a, panel, [zero, zero, start])
    end = s.add(start, s.const(width, _I32))
    strip = s.slice(a, [zero, start, zero], [batch, width, n])
    low = s.slice(panel, [zero, start, zero], [batch, width, width])
    block = s.matmul(_unit_triangular_inverse(s, low, width), strip)
    shape_s = (batch, width, n)
    right = s.cmp(s.iota(shape_s, 2), s.at(end, shape_s), "GE")
    block = s.select(right, block, strip)
    a = s.update(a, block, [zero, start, zero])
    shape_a = (batch, m, n)
    trailing = s.same("stablehlo.and", s.cmp(s.iota(shape_a, 1), s.at(end, shape_a), "GE"),
                      s.cmp(s.iota(shape_a, 2), s.at(end, shape_a), "GE"))
    return [pivots, perm, s.select(trailing, s.sub(a, s.matmul(panel, block)), a)]


@lowering("lu")
def _lu(ctx, x):
    out, pivots_aval, perm_aval = ctx.result_avals
    e = _Linalg(ctx.loc, ctx.ip)
    m, n = out.shape[-2:]
    if out.size == 0:
        perm = e.iota(perm_aval.shape, perm_aval.ndim - 1)
        return [x, e.const(0, _I32, pivots_aval.shape), perm]
    a = _as_stack(e, x)
    batch = _shape(a)[0]
    k_max = min(m, n)
    pad = _padding(k_max)
    if pad:
        a = e.pad(a, (0, pad, pad))
    k_all = k_max + pad
    state = [e.const(0, _I32, (batch, k_all)), e.iota((batch, m + pad), 1), a]
    pivots, perm, a = _run_panels(e, state, k_all, lambda s, st, start, width: _panel(s, st, start, width, k_all))
    if pad:
        a = e.window(a, [0, 0, 0], [batch, m, n])
        pivots, perm = e.window(pivots, [0, 0], [batch, k_max]), e.window(perm, [0, 0], [batch, m])
    return [_from_stack(e, a, out), e.reshape(pivots, pivots_aval.shape), e.reshape(perm, perm_aval.shape)]


@lowering("lu_pivots_to_permutation")
def _lu_pivots_to_permutation(ctx, pivots, *, permutation_size):
    """JAX's ``_generic_lu_pivots_to_permutation``: the swaps applied to an iota in a loop, a step a pivot, with
    the NumPy rule's treatment of pivots out of range."""
    (out,) = ctx.result_avals
    e = _Linalg(ctx.loc, ctx.ip)
    k, m = _shape(pivots)[-1], permutation_size
    if out.size == 0 or k == 0:
        return [e.iota(out.shape, out.ndim - 1)]
    batch = out.size // m
    swaps = e.reshape(pivots, (batch, k))
    zero = e.const(0, _I32)

    def step(s, i, state):
        (perm,) = state
        cols, at = s.iota((batch, m), 1), lambda v: s.bcast(v, (batch, m), (0,))  # noqa: E731
        j = s.slice(swaps, [zero, i], [batch, None])
        j = s.select(s.cmp(j, s.zeros_like(j), "LT"), s.add(j, s.const(m, _I32, (batch,))), j)
        nearest = s.same("stablehlo.clamp", s.zeros_like(j), j, s.const(m - 1, _I32, (batch,)))
        x = s.slice(perm, [zero, i], [batch, None])
        y = s.masked_sum(s.cmp(cols, at(nearest), "EQ"), perm, 1)
        perm = s.select(s.cmp(cols, s.at(i, (batch, m)), "EQ"), at(y), perm)
        return [s.select(s.cmp(cols, at(j), "EQ"), at(x), perm)]

    perm = e.fori(k, [e.iota((batch, m), 1)], step)[0]
    return [e.reshape(perm, out.shape)]

@lowering("symmetric_product")
def _symmetric_product(ctx, a, c, *, alpha, beta):
    """JAX's generic lowering, ``alpha * (a @ a^T) + beta * c``: the whole matrix (the product of half-precision
    matrices computed in float32, then rounded)."""
    (out,) = ctx.result_avals
    e = _Linalg(ctx.loc, ctx.ip)
    a = _as_stack(e, a)
    batch, m, _ = _shape(a)
    product = _from_stack(e, e.dot(a, a, (2, 2), (batch, m, m)), out)
    return [e.add(e.mul(e.const(alpha, out.dtype, out.shape), product), e.mul(e.const(beta, out.dtype, out.shape), c))]

def _cholesky_panel(s, state, start, width):
    """Columns ``start .. start + width`` of the lower factor (one reduce and one elementwise update a column),
    then the trailing matrix less their product with their adjoint."""
    a, ok = state
    batch, n, _ = _shape(a)
    zero = s.const(0, _I32)
    rows = s.iota((batch, n), 1)
    shape_p = (batch, width, n)
    cols_p = s.iota(shape_p, 1)
    panel = s.transpose_last(s.slice(a, [zero, zero, start], [batch, n, width]))
    for j in range(width):
        k = s.add(start, s.const(j, _I32))
        kk = s.at(k, (batch, n))
        col = s.reshape(s.window(panel, [0, j, 0], [batch, j + 1, n]), (batch, n))
        d = s.real(s.masked_sum(s.cmp(rows, kk, "EQ"), col, 1))
        positive = s.cmp(d, s.zeros_like(d), "GT")
        ok = s.same("stablehlo.and", ok, positive)
        root = s.bcast(s.like(s.sqrt(s.where(positive, d, 1)), col), (batch, n), (0,))
        col = s.select(s.cmp(rows, kk, "GT"), s.div(col, root), s.where(s.cmp(rows, kk, "EQ"), root, 0))
        across = s.conj(s.slice(col, [zero, start], [batch, width]))
        update = s.sub(panel, s.mul(s.bcast(col, shape_p, (0, 2)), s.bcast(across, shape_p, (0, 1))))
        at_j = s.cmp(cols_p, s.const(j, _I32, shape_p), "EQ")
        right = s.cmp(cols_p, s.const(j, _I32, shape_p), "GT")
        panel = s.select(at_j, s.bcast(col, shape_p, (0, 2)), s.select(right, update, panel))
    low = s.transpose_last(panel)
    a = s.update(a, low, [zero, zero, start])
    end = s.add(start, s.const(width, _I32))
    shape_a = (batch, n, n)
    trailing = s.same("stablehlo.and", s.cmp(s.iota(shape_a, 1), s.at(end, shape_a), "GE"),
                      s.cmp(s.iota(shape_a, 2), s.at(end, shape_a), "GE"))
    return [s.select(trailing, s.sub(a, s.matmul(low, s.adjoint(low))), a), ok]


@lowering("cholesky")
def _cholesky(ctx, x):
    out = ctx.result_avals[0]
    if out.size == 0:
        return x
    e = _Linalg(ctx.loc, ctx.ip)
    (a,) = e.barrier(_as_stack(e, x))
    batch, n, _ = _shape(a)
    pad = _padding(n)
    work = a
    if pad:
        square = (batch, n + pad, n + pad)
        padded = e.same("stablehlo.and", e.cmp(e.iota(square, 1), e.iota(square, 2), "EQ"),
                        e.cmp(e.iota(square, 1), e.const(n, _I32, square), "GE"))
        work = e.add(e.pad(a, (0, pad, pad)), e.where(padded, e.const(1, _dtype(a), square), 0))
    low, ok = _run_panels(e, [work, e.const(True, np.bool_, (batch,))], n + pad, _cholesky_panel)
    low = e.window(low, [0, 0, 0], [batch, n, n]) if pad else low
    shape3 = (batch, n, n)
    tri = e.cmp(e.iota(shape3, 1), e.iota(shape3, 2), "GE")
    result = e.select(e.bcast(ok, shape3, (0,)), e.select(tri, low, a), e.const(np.nan, _dtype(a), shape3))
    return _from_stack(e, result, out)


@lowering("cholesky_update")
def _cholesky_update(ctx, r, w):
    """As ``numpy_linalg.cholesky_update``: one trip per row, its Givens rotation against ``w`` in the loop. The
    rotated row and ``w`` pass a barrier before the row is written back: without it IREE 3.13 computes the new
    ``w`` after the write, from the new row."""
    (out,) = ctx.result_avals
    e = _Linalg(ctx.loc, ctx.ip)
    n = out.shape[0]
    if n == 0:
        return [r]
    dtype = out.dtype

    def step(s, k, state):
        r, z = state
        x, y = s.slice(r, [k, k], [None, None]), s.slice(z, [k], [None])
        ax, ay = s.abs(x), s.abs(y)
        scale = s.select(s.cmp(ax, ay, "GT"), ax, ay)
        nonzero = s.cmp(y, s.zeros_like(y), "NE")
        x, y = s.div(x, s.where(nonzero, scale, 1)), s.div(y, s.where(nonzero, scale, 1))
        rh = s.div(s.const(1, dtype), s.sqrt(s.add(s.mul(x, x), s.mul(y, y))))
        c, sn = s.where(nonzero, s.mul(x, rh), 1), s.where(nonzero, s.neg(s.mul(y, rh)), 0)
        row = s.slice(r, [k, s.const(0, _I32)], [None, n])
        c, sn = s.at(c, (n,)), s.at(sn, (n,))
        new_row, z = s.barrier(s.sub(s.mul(c, row), s.mul(sn, z)), s.add(s.mul(c, z), s.mul(sn, row)))
        return [s.update(r, s.reshape(new_row, (1, n)), [k, s.const(0, _I32)]), z]

    return [e.fori(n, [r, w], step)[0]]


@lowering("triangular_solve")
def _triangular_solve(ctx, a, b, *, left_side, lower, transpose_a, conjugate_a, unit_diagonal):
    """Blocked substitution, ``SOLVE_BLOCK`` rows a step (from the top for a lower triangular matrix, from the
    bottom for an upper one): each block's right-hand side less the product with the rows already solved, times
    the inverse of its diagonal block."""
    out = ctx.result_avals[0]
    e = _Linalg(ctx.loc, ctx.ip)
    if out.size == 0:
        return e.const(0, out.dtype, out.shape)
    a, b = _as_stack(e, a), _as_stack(e, b)
    conjugate = conjugate_a and issubdtype(_dtype(a), np.complexfloating)
    tri, rhs, lower, unmap = _canonical(e, a, b, left_side=left_side, lower=lower, transpose_a=transpose_a,
                                        conjugate_a=conjugate)
    batch, n, m = _shape(rhs)
    zero = e.const(0, _I32)

    def block(s, x, start, width):
        """Solves rows ``start .. start + width``; ``x`` is None before any row is solved. The zeros the rows go
        into are read through a barrier: folded into their update, complex zeros become an ``arith.constant`` that
        IREE 3.13 rejects ("attribute 'value' failed to satisfy constraint: TypedAttr instance")."""
        end = s.add(start, s.const(width, _I32))
        y = s.slice(rhs, [zero, start, zero], [batch, width, m])
        if x is not None:
            shape_t = (batch, width, n)
            cols = s.iota(shape_t, 2)
            solved = s.cmp(cols, s.at(start, shape_t), "LT") if lower else s.cmp(cols, s.at(end, shape_t), "GE")
            strip = s.where(solved, s.slice(tri, [zero, start, zero], [batch, width, n]), 0)
            y = s.sub(y, s.matmul(strip, x))
        else:
            (x,) = s.barrier(s.const(0, _dtype(rhs), (batch, n, m)))
        diagonal = s.slice(tri, [zero, start, start], [batch, width, width])
        scale = None if unit_diagonal else s.diagonal(diagonal)
        if scale is not None:
            y = s.div(y, s.bcast(scale, (batch, width, m), (0, 1)))
        y = s.matmul(_unit_triangular_inverse(s, diagonal, width, lower, scale), y)
        return s.update(x, y, [zero, start, zero])

    whole, rest = divmod(n, SOLVE_BLOCK)

    def first_row(s, k):
        """The first row of the ``k``-th whole block. The narrower block of the rows left over comes first (at the
        top of a lower matrix, at the bottom of an upper one): after the loop, IREE 3.13 fails to compile two such
        solves of one shape in a module ("'stream.async.dispatch' op : streamable op expected to be in an
        execution region")."""
        k = s.mul(k, s.const(SOLVE_BLOCK, _I32))
        return s.add(k, s.const(rest, _I32)) if lower else s.sub(s.const(n - rest - SOLVE_BLOCK, _I32), k)

    tri, rhs = e.barrier(tri, rhs)
    x = block(e, None, e.const(0 if lower else n - rest, _I32), rest) if rest else e.const(0, _dtype(rhs),
                                                                                             (batch, n, m))
    if whole:
        def body(s, k, carry):
            return [block(s, carry[0], first_row(s, k), SOLVE_BLOCK)]
        (x,) = e.fori(whole, [x], body)
    return _from_stack(e, unmap(x), out)
