"""NumPy rule of ``tridiagonal_solve``: Gaussian elimination with row interchanges, one row at a time, as JAX's CPU
lowering solves. Without ``perturb_singular`` that is LAPACK's ``gtsv`` (JAX makes a system with a zero pivot all
NaN); with it, jaxlib's ``tridiagonal_solve_perturbed`` kernel (the pivot choice of LAPACK's ``xLAGTF``, and tiny
pivots moved away from zero as ``xLAGTS`` moves them, so that inverse iteration on a singular matrix stays finite).
``passes/lower_tridiagonal.py`` runs the same steps on StableHLO values.

Row ``k`` of the eliminated system is ``u0[k] x[k] + u1[k] x[k+1] + u2[k] x[k+2] = y[k]``; a step reads row
``k + 1`` of the input (``a = dl[k+1]``, ``d[k+1]``, ``c = du[k+1]``) and either eliminates ``a`` with row ``k``
or swaps the two rows first.
"""
from __future__ import annotations

import numpy as np

from irax.ir.linalg import check_lapack_dtype

from .numpy_rules import RULES


def pivot_limits(dtype):
    """``xLAMCH``'s safe minimum (1/x does not overflow) and its inverse, of ``dtype``'s real type."""
    finfo = np.finfo(dtype)
    tiny, small = finfo.tiny, finfo.dtype.type(1) / finfo.max
    safemin = tiny if small < tiny else small * (1 + finfo.eps)
    return safemin, 1 / safemin


def magnitude(x, perturb_singular):
    """``gtsv`` compares complex values by ``|re| + |im|`` (LAPACK's ``CABS1``), the perturbed kernel by ``|x|``."""
    if perturb_singular or not np.iscomplexobj(x):
        return np.abs(x)
    return np.abs(x.real) + np.abs(x.imag)


def _perturbed_pivot(p, r, perturb):
    """``xLAGTS``'s guard for ``r / p``: a tiny pivot grows by ``perturb`` (doubling each time, with the pivot's
    sign), or pivot and row are scaled up together, until the quotient cannot overflow."""
    safemin, bignum = pivot_limits(p.dtype)
    abs_p = np.abs(p)
    perturb = np.copysign(np.maximum(np.abs(perturb), safemin), p.real)
    largest = np.abs(r).max(axis=-1, initial=0)
    active = abs_p < 1
    while True:
        small = abs_p < safemin
        add = active & np.where(small, (abs_p == 0) | (largest * safemin > abs_p), largest > abs_p * bignum)
        scale = active & small & ~add
        if not (add | scale).any():
            return p, r
        p = np.where(add, p + perturb, np.where(scale, p * bignum, p))
        r = np.where(scale[:, None], r * bignum, r)
        perturb = np.where(add, perturb * 2, perturb)
        abs_p = np.abs(p)
        active = add & (abs_p < 1)


def _eliminate(dl, d, du, rhs, perturb_singular):
    """The forward sweep: the rows ``u`` (3, batch, n) and right-hand sides ``y``, whether a pivot was zero
    (``gtsv``'s failure) and the largest ``|u|`` the perturbed kernel scales its perturbation by."""
    def mag(x):
        return magnitude(x, perturb_singular)
    batch, n = d.shape
    u = np.zeros((3, batch, n), d.dtype)
    y = np.zeros_like(rhs)
    zero = np.zeros(batch, d.dtype)
    u0, u1, yk = d[:, 0], du[:, 0], rhs[:, 0]
    scale1, largest = mag(u0) + mag(u1), np.maximum(mag(u0), mag(u1))
    singular = np.zeros(batch, bool)
    for k in range(n - 1):
        a, dk1, rk1 = dl[:, k + 1], d[:, k + 1], rhs[:, k + 1]
        c = du[:, k + 1] if k < n - 2 else zero
        scale2 = mag(a) + mag(dk1) + mag(c)
        with np.errstate(all="ignore"):
            if perturb_singular:
                swap = (a != 0) & ~(mag(a) / scale2 <= np.where(u0 == 0, 0, mag(u0) / scale1))
            else:
                swap = ~(mag(u0) >= mag(a))
                singular |= ~swap & (u0 == 0)
            keep, f_keep, f_swap = a == 0, a / u0, u0 / a
            row = [np.where(swap, a, u0), np.where(swap, dk1, u1), np.where(swap, c, zero)]
            y[:, k] = np.where(swap[:, None], rk1, yk)
            u0, u1, yk = (np.where(swap, u1 - f_swap * dk1, np.where(keep, dk1, dk1 - f_keep * u1)),
                          np.where(swap, -f_swap * c, c),
                          np.where(swap[:, None], yk - f_swap[:, None] * rk1,
                                   np.where(keep[:, None], rk1, rk1 - f_keep[:, None] * yk)))
            scale1 = np.where(swap, mag(u0) + mag(u1), scale2)
        u[:, :, k] = row
        if k < n - 2:
            largest = np.maximum(largest, np.max([mag(v) for v in row], axis=0))
    u[0, :, n - 1], y[:, n - 1] = u0, yk
    singular |= u0 == 0
    return u, y, singular, np.maximum(largest, mag(u0))


def _back_substitute(u, y, perturb):
    """``x[k] = (y[k] - u1[k] x[k+1] - u2[k] x[k+2]) / u0[k]`` from the last row up; with a perturbation, tiny
    pivots adjusted and the division a product with the reciprocal, as the perturbed kernel computes."""
    x = np.zeros_like(y)
    n = y.shape[1]
    with np.errstate(all="ignore"):
        for k in reversed(range(n)):
            r = y[:, k]
            if k + 1 < n:
                r = r - u[1, :, k, None] * x[:, k + 1]
            if k + 2 < n:
                r = r - u[2, :, k, None] * x[:, k + 2]
            p = u[0, :, k]
            if perturb is None:
                x[:, k] = r / p[:, None]
            else:
                p, r = _perturbed_pivot(p, r, perturb)
                x[:, k] = r * (1 / p)[:, None]
    return x


def tridiagonal_solve(dl, d, du, b, *, perturb_singular):
    check_lapack_dtype(b.dtype)
    shape = b.shape
    n = shape[-2]
    batch = int(np.prod(shape[:-2], dtype=np.int64))
    dl, d, du = (np.asarray(v).reshape(batch, n) for v in (dl, d, du))
    rhs = b.reshape(batch, n, shape[-1])
    if n == 0:
        return b.copy()
    eps = np.finfo(b.dtype).eps
    if n == 1:  # the kernel divides here, unlike its back substitution
        p, r = d[:, 0], rhs[:, 0]
        if perturb_singular:
            p, r = _perturbed_pivot(p, r, eps * np.abs(p))
        with np.errstate(all="ignore"):
            x = (r / p[:, None])[:, None]
        singular = np.zeros(batch, bool) if perturb_singular else p == 0
    else:
        u, y, singular, largest = _eliminate(dl, d, du, rhs, perturb_singular)
        x = _back_substitute(u, y, eps * largest if perturb_singular else None)
        if perturb_singular:
            singular[:] = False
    x = np.where(singular[:, None, None], np.array(np.nan, b.dtype), x)
    return x.reshape(shape).astype(b.dtype)


RULES["tridiagonal_solve"] = tridiagonal_solve
