"""StableHLO lowering of ``tridiagonal_solve``: the row-by-row elimination with interchanges of
``backends/numpy_tridiagonal.py`` (LAPACK's ``gtsv``, or jaxlib's perturbed kernel), as two ``stablehlo.while``
loops over the rows of a stack of systems: the forward sweep writes the eliminated rows ``u0, u1, u2`` and
right-hand sides ``y``, the back substitution reads them from the last row up. JAX's CPU lowering is a LAPACK (or
jaxlib) custom call, which IREE does not have.
"""
from __future__ import annotations

import numpy as np

from irax.backends.numpy_tridiagonal import pivot_limits
from irax.ir.linalg import check_lapack_dtype
from irax.ir.shapes import issubdtype

from .lower_blocked import _magnitude
from .lower_decompositions import _linalg, _real
from .lower_linalg import _BOOL, _I32, _dtype, _shape
from .to_stablehlo import lowering


def _not(s, x):
    return s.same("stablehlo.not", x)


def _and(s, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = s.same("stablehlo.and", out, x)
    return out


def _or(s, x, y):
    return s.same("stablehlo.or", x, y)


def _max(s, x, y):
    return s.same("stablehlo.maximum", x, y)


def _rows(s, x, k):
    """Row ``k`` (a scalar i32) of each system: ``x[:, k]``."""
    zero = s.const(0, _I32)
    shape = _shape(x)
    return s.slice(x, [zero, k] + [zero] * (len(shape) - 2), [shape[0], None] + list(shape[2:]))


def _set_rows(s, x, k, row):
    zero = s.const(0, _I32)
    shape = _shape(x)
    return s.update(x, s.reshape(row, (shape[0], 1) + shape[2:]), [zero, k] + [zero] * (len(shape) - 2))


def _per_system(s, v, like):
    """A value per system broadcast over the right-hand sides of ``like`` (batch, k)."""
    return s.bcast(v, _shape(like), (0,))


def _zeros(s, dtype, shape):
    """Zeros of ``dtype``; complex ones as ``stablehlo.complex`` of real zeros: IREE 3.13 rejects a complex
    constant inside these loops ("'arith.constant' op attribute 'value' failed to satisfy constraint")."""
    if not issubdtype(dtype, np.complexfloating):
        return s.const(0, dtype, shape)
    part = s.const(0, _real(dtype), shape)
    return s.op("stablehlo.complex", [part, part], shape, dtype).result


def _sign_bit(s, x):
    """Whether the real ``x``'s sign bit is set (-0.0 included), as ``copysign`` reads it."""
    width = np.dtype(_dtype(x)).itemsize * 8
    bits = s.op("stablehlo.bitcast_convert", [x], _shape(x), np.dtype(f"int{width}")).result
    return s.cmp(bits, s.zeros_like(bits), "LT")


def _perturbed_pivot(s, p, r, perturb):
    """As ``numpy_tridiagonal._perturbed_pivot``: a ``stablehlo.while`` that runs while some system's pivot
    still needs moving away from zero (or scaling, with its row)."""
    batch = _shape(p)[0]
    real = _real(_dtype(p))
    safemin, bignum = pivot_limits(real)
    const = lambda v: s.const(v, real, (batch,))  # noqa: E731
    magnitude = _max(s, s.abs(perturb), const(safemin))
    perturb = s.select(_sign_bit(s, s.real(p)), s.neg(magnitude), magnitude)
    largest = s.reduce(s.abs(r), 1, "stablehlo.maximum", 0) if _shape(r)[1] else const(0)

    def masks(t, abs_p, active):
        tc = lambda v: t.const(v, real, (batch,))  # noqa: E731
        small = t.cmp(abs_p, tc(safemin), "LT")
        tiny_case = _or(t, t.cmp(abs_p, tc(0), "EQ"), t.cmp(t.mul(largest, tc(safemin)), abs_p, "GT"))
        add = _and(t, active, t.select(small, tiny_case, t.cmp(largest, t.mul(abs_p, tc(bignum)), "GT")))
        return add, _and(t, active, small, _not(t, add))

    def cond(t, state):
        add, scale = masks(t, state[3], state[4])
        return t.any(_or(t, add, scale), (0,))

    def body(t, state):
        p, r, perturb, abs_p, active = state
        add, scale = masks(t, abs_p, active)
        big = t.const(bignum, _dtype(p), (batch,))
        p = t.select(add, t.add(p, t.like(perturb, p)), t.select(scale, t.mul(p, big), p))
        r = t.select(_per_system(t, scale, r), t.mul(r, _per_system(t, big, r)), r)
        perturb = t.select(add, t.add(perturb, perturb), perturb)
        abs_p = t.abs(p)
        return [p, r, perturb, abs_p, _and(t, add, t.cmp(abs_p, t.const(1, real, (batch,)), "LT"))]

    abs_p = s.abs(p)
    p, r, *_ = s.while_([p, r, perturb, abs_p, s.cmp(abs_p, const(1), "LT")], cond, body)
    return p, r


def _eliminate(e, dl, d, du, rhs, perturb_singular):
    """As ``numpy_tridiagonal._eliminate``: the rows ``(u0, u1, u2, y)`` but the last, the last row's pivot and
    right-hand side ``(u0, y)``, whether ``gtsv`` met a zero pivot, and the largest ``|u|``. The last row stays
    out of the arrays: written into them after the loop, IREE 3.13 read row n - 2 of a complex two-row system
    back wrong."""
    batch, n = _shape(d)
    dtype = _dtype(d)
    zero_i = e.const(0, _I32)

    def mag(s, x):
        """``|re| + |im|`` for ``gtsv``'s complex comparisons (as ``numpy_tridiagonal.magnitude``), else ``|x|``."""
        return s.abs(x) if perturb_singular else _magnitude(s, x)

    def step(s, k, state):
        u0, u1, yk, scale1, largest, singular, us0, us1, us2, ys = state
        k1 = s.add(k, s.const(1, _I32))
        a, dk1, rk1 = _rows(s, dl, k1), _rows(s, d, k1), _rows(s, rhs, k1)
        inner = s.cmp(s.at(k1, (batch,)), s.const(n - 1, _I32, (batch,)), "LT")
        zero = _zeros(s, dtype, (batch,))
        c = s.select(inner, _rows(s, du, k1), zero)
        scale2 = s.add(s.add(mag(s, a), mag(s, dk1)), mag(s, c))
        zero_r = s.zeros_like(scale2)
        if perturb_singular:
            piv1 = s.select(s.cmp(u0, zero, "EQ"), zero_r, s.div(mag(s, u0), scale1))
            keep_order = s.cmp(s.div(mag(s, a), scale2), piv1, "LE")
            swap = _and(s, s.cmp(a, zero, "NE"), _not(s, keep_order))
        else:
            swap = _not(s, s.cmp(mag(s, u0), mag(s, a), "GE"))
            singular = _or(s, singular, _and(s, _not(s, swap), s.cmp(u0, zero, "EQ")))
        keep = s.cmp(a, zero, "EQ")
        f_keep, f_swap = s.div(a, u0), s.div(u0, a)
        row = [s.select(swap, a, u0), s.select(swap, dk1, u1), s.select(swap, c, zero)]
        wide_swap = _per_system(s, swap, yk)
        ys = _set_rows(s, ys, k, s.select(wide_swap, rk1, yk))
        new_u0 = s.select(swap, s.sub(u1, s.mul(f_swap, dk1)), s.select(keep, dk1, s.sub(dk1, s.mul(f_keep, u1))))
        new_u1 = s.select(swap, s.neg(s.mul(f_swap, c)), c)
        new_y = s.select(wide_swap, s.sub(yk, s.mul(_per_system(s, f_swap, yk), rk1)),
                         s.select(_per_system(s, keep, yk), rk1, s.sub(rk1, s.mul(_per_system(s, f_keep, yk), yk))))
        scale1 = s.select(swap, s.add(mag(s, new_u0), mag(s, new_u1)), scale2)
        grown = largest
        for v in row:
            grown = _max(s, grown, mag(s, v))
        before_last = s.cmp(s.at(k, (batch,)), s.const(n - 2, _I32, (batch,)), "LT")
        largest = s.select(before_last, grown, largest)
        us0, us1, us2 = (_set_rows(s, us, k, v) for us, v in zip((us0, us1, us2), row))
        return [new_u0, new_u1, new_y, scale1, largest, singular, us0, us1, us2, ys]

    u0, u1, yk = _rows(e, d, zero_i), _rows(e, du, zero_i), _rows(e, rhs, zero_i)
    state = [u0, u1, yk, e.add(mag(e, u0), mag(e, u1)), _max(e, mag(e, u0), mag(e, u1)),
             e.const(False, _BOOL, (batch,)), *(_zeros(e, dtype, (batch, n)) for _ in range(3)),
             _zeros(e, dtype, _shape(rhs))]
    u0, _, yk, _, largest, singular, us0, us1, us2, ys = e.fori(n - 1, state, step)
    singular = _or(e, singular, e.cmp(u0, e.zeros_like(u0), "EQ"))
    return (us0, us1, us2, ys), (u0, yk), singular, _max(e, largest, mag(e, u0))


def _solve_row(s, p, r, perturb):
    """``r / p``; with a perturbation, the pivot guarded first and the division a product with ``1 / p``."""
    if perturb is None:
        return s.div(r, _per_system(s, p, r))
    p, r = _perturbed_pivot(s, p, r, perturb)
    return s.mul(r, _per_system(s, s.div(s.const(1, _dtype(p), _shape(p)), p), r))


def _back_substitute(e, rows, last, perturb):
    """As ``numpy_tridiagonal._back_substitute``: the last two rows, then a loop over the others upwards."""
    us0, us1, us2, ys = rows
    n = _shape(ys)[1]

    def row(s, us, k):
        return _rows(s, us, s.const(k, _I32) if isinstance(k, int) else k)

    x1 = _solve_row(e, *last, perturb)
    r = e.sub(row(e, ys, n - 2), e.mul(_per_system(e, row(e, us1, n - 2), x1), x1))
    x0 = _solve_row(e, row(e, us0, n - 2), r, perturb)
    xs = _set_rows(e, _zeros(e, _dtype(ys), _shape(ys)), e.const(n - 1, _I32), x1)
    xs = _set_rows(e, xs, e.const(n - 2, _I32), x0)

    def step(s, j, state):
        x1, x2, xs = state
        k = s.sub(s.const(n - 3, _I32), j)
        r = s.sub(row(s, ys, k), s.mul(_per_system(s, row(s, us1, k), x1), x1))
        r = s.sub(r, s.mul(_per_system(s, row(s, us2, k), x2), x2))
        x = _solve_row(s, row(s, us0, k), r, perturb)
        return [x, x1, _set_rows(s, xs, k, x)]

    return e.fori(n - 2, [x0, x1, xs], step)[2] if n > 2 else xs


@lowering("tridiagonal_solve")
def _tridiagonal_solve(ctx, dl, d, du, b, *, perturb_singular):
    (out,) = ctx.result_avals
    check_lapack_dtype(out.dtype)
    e = _linalg(ctx)
    if out.size == 0:
        return [e.const(0, out.dtype, out.shape)]
    *batch_shape, n, k = out.shape
    batch = int(np.prod(batch_shape, dtype=np.int64))
    dl, d, du = (e.reshape(v, (batch, n)) for v in (dl, d, du))
    rhs = e.reshape(b, (batch, n, k))
    eps = np.finfo(out.dtype).eps
    if n == 1:
        p, r = _rows(e, d, e.const(0, _I32)), _rows(e, rhs, e.const(0, _I32))
        if perturb_singular:
            p, r = _perturbed_pivot(e, p, r, e.mul(e.abs(p), e.const(eps, _real(out.dtype), (batch,))))
        x = e.reshape(e.div(r, _per_system(e, p, r)), (batch, 1, k))
        singular = e.cmp(p, e.zeros_like(p), "EQ")
    else:
        rows, last, singular, largest = _eliminate(e, dl, d, du, rhs, perturb_singular)
        perturb = e.mul(largest, e.const(eps, _dtype(largest), (batch,))) if perturb_singular else None
        x = _back_substitute(e, rows, last, perturb)
    if not perturb_singular:
        x = e.select(e.bcast(singular, (batch, n, k), (0,)), e.const(np.nan, out.dtype, (batch, n, k)), x)
    return [e.reshape(x, out.shape)]
