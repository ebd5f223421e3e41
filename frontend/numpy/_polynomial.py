"""Polynomials as coefficient arrays, highest power first (``jnp.polyval`` and friends)."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._util import check_arraylike, convert, ensure_arraylike, promote_dtypes, promote_dtypes_inexact, staged_as


@staged(static_argnames=("unroll",))
def polyval(p, x, *, unroll=16):
    """Evaluates ``p`` at ``x`` by Horner's rule: a scan over the coefficients, ``unroll`` of them a trip."""
    p, x = ensure_arraylike("polyval", p, x)
    p, x = promote_dtypes(p, x)
    shape = lax.broadcast_shapes(p.shape[1:], x.shape)
    y = lax.full_like(x, 0, shape=shape, dtype=x.dtype)
    y, _ = lax.scan(lambda y, c: (y * x + c, None), y, p, unroll=unroll)
    return y


@staged
def polyadd(a1, a2):
    check_arraylike("polyadd", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    if a2.shape[0] > a1.shape[0]:
        a1, a2 = a2, a1
    return a1.at[-a2.shape[0]:].add(a2)


@staged
def polysub(a1, a2):
    check_arraylike("polysub", a1, a2)
    a1, a2 = promote_dtypes(a1, a2)
    return polyadd(a1, lax.neg(a2))


@staged_as("polyint", static_argnames=("m",))
def polyint(p, m=1, k=None):
    """The ``m``-th antiderivative, with integration constants ``k`` (highest power first)."""
    from ._creation import arange, full
    from ._shape import atleast_1d, concatenate
    from ._ufuncs import maximum, true_divide
    from ._util import ensure_arraylike
    m = operator.index(m)
    k = 0 if k is None else k
    p, k = ensure_arraylike("polyint", p, k)
    p_arr, k_arr = promote_dtypes_inexact(p, k)
    del p, k
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    k_arr = atleast_1d(k_arr)
    if len(k_arr) == 1:
        k_arr = full((m,), k_arr[0])
    if k_arr.shape != (m,):
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    if m == 0:
        return p_arr
    grid = arange(len(p_arr) + m, dtype=p_arr.dtype)[np.newaxis] - arange(m, dtype=p_arr.dtype)[:, np.newaxis]
    coeff = maximum(1, grid).prod(0)[::-1]
    return true_divide(concatenate((p_arr, k_arr)), coeff)


@staged_as("polyder", static_argnames=("m",))
def polyder(p, m=1):
    """The ``m``-th derivative (highest power first)."""
    from ._creation import arange
    from ._util import ensure_arraylike
    p = ensure_arraylike("polyder", p)
    m = operator.index(m)
    (p_arr,) = promote_dtypes_inexact(p)
    del p
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p_arr
    coeff = (arange(m, len(p_arr), dtype=p_arr.dtype)[np.newaxis]
             - arange(m, dtype=p_arr.dtype)[:, np.newaxis]).prod(0)
    return p_arr[:-m] * coeff[::-1]


def polymul(a1, a2, *, trim_leading_zeros=False):
    from ._numeric import convolve
    check_arraylike("polymul", a1, a2)
    a1, a2 = promote_dtypes_inexact(a1, a2)
    if trim_leading_zeros and (a1.shape[0] > 1 or a2.shape[0] > 1):
        a1, a2 = trim_zeros(a1, trim="f"), trim_zeros(a2, trim="f")
    if a1.shape[0] == 0:
        a1 = lax.full((1,), 0, a2.dtype)
    if a2.shape[0] == 0:
        a2 = lax.full((1,), 0, a1.dtype)
    return convolve(a1, a2, mode="full")


def polydiv(u, v, *, trim_leading_zeros=False):
    """Quotient and remainder of polynomial division, by long division over the static degrees."""
    check_arraylike("polydiv", u, v)
    u, v = promote_dtypes_inexact(u, v)
    m, n = u.shape[0] - 1, v.shape[0] - 1
    scale = lax.div(convert(1, v.dtype), v[0])
    q = lax.full((builtins.max(m - n + 1, 1),), 0, u.dtype)
    for k in range(0, m - n + 1):
        d = lax.mul(scale, u[k])
        q = q.at[k].set(d)
        u = u.at[k:k + n + 1].add(lax.mul(lax.neg(d), v))
    if trim_leading_zeros:
        eps = np.sqrt(np.finfo(u.dtype).eps)
        host = np.abs(np.asarray(u))
        start = int(np.argmax(host > eps)) if (host > eps).any() else u.shape[0]
        u = lax.slice(u, (start,), u.shape)
    return q, u


def trim_zeros(filt, trim="fb", axis=None):
    """``filt`` without leading (``'f'``) and trailing (``'b'``) zeros; needs concrete values (as JAX)."""
    from ._util import canonicalize_axes
    check_arraylike("trim_zeros", filt)
    filt = as_operand(filt)
    host = np.asarray(filt)
    axes = set(canonicalize_axes(axis, filt.ndim))
    trim = trim.lower()
    if not axes or ("f" not in trim and "b" not in trim):
        return filt
    starts, stops = [0] * filt.ndim, list(filt.shape)
    for ax in axes:
        mask = host.any(axis=tuple(i for i in range(filt.ndim) if i != ax))
        if not mask.any():
            starts[ax] = stops[ax] = 0
            continue
        if "f" in trim:
            starts[ax] = int(mask.argmax())
        if "b" in trim:
            stops[ax] = filt.shape[ax] - int(mask[::-1].argmax())
    return lax.slice(filt, starts, stops)


@staged_as("polyfit", static_argnames=("deg", "rcond", "full", "cov"))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Least-squares polynomial fit (``lstsq`` on the column-scaled Vandermonde matrix): coefficients, highest
    power first; ``full`` adds residuals, rank, singular values and ``rcond``; ``cov`` the covariance."""
    from . import linalg
    from ._creation import asarray
    from ._matrix import vander
    from ._shape import atleast_1d
    from ._ufuncs import sqrt
    if w is None:
        x_arr, y_arr = ensure_arraylike("polyfit", x, y)
    else:
        x_arr, y_arr, w = ensure_arraylike("polyfit", x, y, w)
    deg = operator.index(deg)
    order = deg + 1
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if x_arr.ndim != 1:
        raise TypeError("expected 1D vector for x")
    if x_arr.size == 0:
        raise TypeError("expected non-empty vector for x")
    if y_arr.ndim < 1 or y_arr.ndim > 2:
        raise TypeError("expected 1D or 2D array for y")
    if x_arr.shape[0] != y_arr.shape[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(x_arr) * float(np.finfo(x_arr.dtype).eps)
    rcond = float(rcond)
    lhs, rhs = vander(x_arr, order), y_arr
    if w is not None:
        w_arr, = promote_dtypes_inexact(w)
        if w_arr.ndim != 1:
            raise TypeError("expected a 1-d array for weights")
        if w_arr.shape[0] != y_arr.shape[0]:
            raise TypeError("expected w and y to have the same length")
        lhs *= w_arr[:, np.newaxis]
        rhs = rhs * (w_arr[:, np.newaxis] if rhs.ndim == 2 else w_arr)
    scale = sqrt((lhs * lhs).sum(axis=0))
    lhs /= scale[np.newaxis, :]
    c, resids, rank, s = linalg.lstsq(lhs, rhs, rcond)
    c = (c.T / scale[np.newaxis, :]).T if c.ndim > 1 else c / scale
    if full:
        return c, resids, rank, s, asarray(rcond)
    if cov:
        vbase = linalg.inv(lhs.T @ lhs)
        vbase /= scale[:, None] * scale[None, :]
        if cov == "unscaled":
            fac = asarray(1.0)
        else:
            if len(x_arr) <= order:
                raise ValueError("the number of data points must exceed order to scale the covariance matrix")
            fac = resids / (len(x_arr) - order)
        if y_arr.ndim == 1:
            return c, vbase * atleast_1d(fac)[np.newaxis]
        return c, vbase[:, :, np.newaxis] * atleast_1d(fac)[np.newaxis, np.newaxis, :]
    return c
