"""Differences, integrals, products of vectors and selection in ``irax.numpy``, from static slices."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._shape import broadcast_arrays, broadcast_to, concatenate, moveaxis, ravel, stack
from ._util import (canonicalize_axes, canonicalize_axis, check_arraylike, convert, promote_args_inexact,
                    promote_dtypes, promote_dtypes_inexact, staged_as)


def _along(x, axis, start, stop):
    n = x.shape[axis]
    start = start + n if start < 0 else start
    stop = n if stop is None else (stop + n if stop < 0 else stop)
    return lax.slice_in_dim(x, builtins.max(start, 0), builtins.max(stop, 0), axis=axis)


def diff(a, n=1, axis=-1, prepend=None, append=None):
    """The ``n``-th forward difference along ``axis`` (``!=`` for booleans, as NumPy)."""
    check_arraylike("diff", a)
    arr = as_operand(a)
    n, axis = operator.index(n), operator.index(axis)
    if n == 0:
        return arr
    if n < 0:
        raise ValueError(f"order must be non-negative but got {n}")
    if arr.ndim == 0:
        raise ValueError(f"diff requires input that is at least one dimensional; got {a}")
    return _diff(arr, n, canonicalize_axis(axis, arr.ndim), prepend, append)


@staged_as("diff", static_argnums=(1, 2))
def _diff(arr, n, axis, prepend, append):
    combined = [_edge_values(prepend, arr, axis)] if prepend is not None else []
    combined.append(arr)
    if append is not None:
        combined.append(_edge_values(append, arr, axis))
    if len(combined) > 1:
        arr = concatenate(combined, axis)
    from ._ufuncs import not_equal, subtract
    op = not_equal if arr.dtype == np.bool_ else subtract
    for _ in range(n):
        arr = op(_along(arr, axis, 1, None), _along(arr, axis, 0, -1))
    return arr


def _edge_values(values, arr, axis):
    check_arraylike("diff", values)
    values = as_operand(values)
    if values.ndim:
        return values
    shape = list(arr.shape)
    shape[axis] = 1
    return broadcast_to(values, tuple(shape))


def ediff1d(ary, to_end=None, to_begin=None):
    check_arraylike("ediff1d", ary)
    return _ediff1d(ary, to_end, to_begin)


@staged_as("ediff1d")
def _ediff1d(ary, to_end, to_begin):
    arr = ravel(ary)
    result = lax.sub(_along(arr, 0, 1, None), _along(arr, 0, 0, -1))
    if to_begin is not None:
        result = concatenate((ravel(convert(as_operand(to_begin), arr.dtype)), result))
    if to_end is not None:
        result = concatenate((result, ravel(convert(as_operand(to_end), arr.dtype))))
    return result


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` by the trapezoidal rule, over sample points ``x`` or spacing ``dx``."""
    check_arraylike("trapezoid", y)
    return _trapezoid(y, x, dx, operator.index(axis))


@staged_as("trapezoid", static_argnums=(3,))
def _trapezoid(y, x, dx, axis):
    from ._reductions import sum
    from ._ufuncs import add, multiply, subtract
    if x is None:
        (y,) = promote_dtypes_inexact(y)
        dx = as_operand(dx)
        if dx.ndim > 0:
            dx = moveaxis(lax.expand_dims(dx, tuple(range(y.ndim - dx.ndim))), axis, -1)
    else:
        y, x = promote_dtypes_inexact(y, x)
        dx = diff(x) if x.ndim == 1 else moveaxis(diff(x, axis=axis), axis, -1)
    y = moveaxis(y, axis, -1)
    if dx.ndim == 0 or dx.shape[-1] == 1:
        dx = dx if dx.ndim == 0 else lax.index_in_dim(dx, 0, -1, keepdims=False)
        ends = add(lax.index_in_dim(y, 0, -1, False), lax.index_in_dim(y, -1, -1, False))
        return multiply(dx, subtract(sum(y, -1), multiply(0.5, ends)))
    return multiply(0.5, sum(multiply(dx, add(_along(y, -1, 1, None), _along(y, -1, 0, -1))), -1))


def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided differences at the edges, along each of ``axis``."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    check_arraylike("gradient", f, *varargs)
    a, *spacing = promote_dtypes_inexact(f, *varargs)
    axes = canonicalize_axes(axis, a.ndim)
    if not axes:
        return []
    if builtins.min(a.shape[i] for i in axes) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements are "
                         "required.")
    if len(spacing) == 0:
        spacing = [1.0] * len(axes)
    elif len(spacing) == 1:
        spacing = spacing * len(axes)
    elif len(spacing) != len(axes):
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    grads = [_gradient_along(a, h, ax) for ax, h in zip(axes, spacing)]
    return grads[0] if len(axes) == 1 else grads


def _gradient_along(a, h, axis):
    from ._ufuncs import add, divide, multiply, negative, subtract
    cut = lambda x, lo, hi: _along(x, axis, lo, hi)
    upper = subtract(cut(a, 1, 2), cut(a, 0, 1))
    lower = subtract(cut(a, -1, None), cut(a, -2, -1))
    if np.ndim(h) == 0:
        inner = divide(multiply(subtract(cut(a, 2, None), cut(a, 0, -2)), 0.5), h)
        upper, lower = divide(upper, h), divide(lower, h)
    elif np.ndim(h) == 1:
        if h.shape[0] != a.shape[axis]:
            raise ValueError("Spacing arrays must have the same length as the dimension along which the gradient "
                             "is calculated.")
        shape = [1] * a.ndim
        shape[axis] = h.shape[0]
        h = lax.reshape(h, shape)
        upper = divide(upper, subtract(cut(h, 1, 2), cut(h, 0, 1)))
        lower = divide(lower, subtract(cut(h, -1, None), cut(h, -2, -1)))
        dx1, dx2 = subtract(cut(h, 1, -1), cut(h, 0, -2)), subtract(cut(h, 2, None), cut(h, 1, -1))
        wa = divide(negative(dx2), multiply(dx1, add(dx1, dx2)))
        wb = divide(subtract(dx2, dx1), multiply(dx1, dx2))
        wc = divide(dx1, multiply(dx2, add(dx1, dx2)))
        inner = add(add(multiply(wa, cut(a, 0, -2)), multiply(wb, cut(a, 1, -1))), multiply(wc, cut(a, 2, None)))
    else:
        raise ValueError("Spacing arrays must be 1D arrays or scalars.")
    return concatenate((upper, inner, lower), axis=axis)


def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Removes jumps larger than ``discont`` by adding multiples of ``period``."""
    check_arraylike("unwrap", p)
    return _unwrap(p, discont, operator.index(axis), period)


@staged_as("unwrap", static_argnums=(2,))
def _unwrap(p, discont, axis, period):
    from ._reductions import cumsum
    from ._ufuncs import (abs, add, equal, floor_divide, greater, less, logical_and, negative, remainder, subtract,
                          true_divide, where)
    p, period = promote_dtypes(p, period)
    if np.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    discont = true_divide(period, 2) if discont is None else discont
    interval = floor_divide(period, 2) if np.issubdtype(p.dtype, np.integer) else true_divide(period, 2)
    dd = diff(p, axis=axis)
    ddmod = subtract(remainder(add(dd, interval), period), interval)
    ddmod = where(logical_and(equal(ddmod, negative(interval)), greater(dd, 0)), interval, ddmod)
    correction = where(less(abs(dd), discont), 0, subtract(ddmod, dd))
    rest = add(_along(p, axis, 1, None), cumsum(correction, axis=axis))
    return concatenate((_along(p, axis, 0, 1), rest), axis=axis)


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along the given axes."""
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    return _cross(a, b, axisa, axisb, axisc)


@staged_as("cross", static_argnums=(2, 3, 4))
def _cross(a, b, axisa, axisb, axisc):
    from ._ufuncs import multiply, subtract
    a, b = moveaxis(as_operand(a), axisa, -1), moveaxis(as_operand(b), axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    comp = lambda x, i: lax.index_in_dim(x, i, -1, keepdims=False)
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return subtract(multiply(comp(a, 0), comp(b, 1)), multiply(comp(a, 1), comp(b, 0)))
    a0, a1, b0, b1 = comp(a, 0), comp(a, 1), comp(b, 0), comp(b, 1)
    a2 = comp(a, 2) if a.shape[-1] == 3 else lax.full_like(a0, 0)
    b2 = comp(b, 2) if b.shape[-1] == 3 else lax.full_like(b0, 0)
    parts = [subtract(multiply(a1, b2), multiply(a2, b1)), subtract(multiply(a2, b0), multiply(a0, b2)),
             subtract(multiply(a0, b1), multiply(a1, b0))]
    return moveaxis(stack(promote_dtypes(*broadcast_arrays(*parts))), 0, axisc)


def select(condlist, choicelist, default=0):
    """Picks, per element, the choice of the first true condition (``default`` where none is)."""
    if len(condlist) != len(choicelist):
        raise ValueError(f"condlist must have length equal to choicelist ({len(condlist)} vs {len(choicelist)})")
    if len(condlist) == 0:
        raise ValueError("condlist must be non-empty")
    check_arraylike("select", *condlist, *choicelist, default)
    choices = promote_dtypes(default, *choicelist)
    conditions = stack([convert(c, np.bool_) for c in broadcast_arrays(False, *condlist)])
    from ._reductions import argmax
    idx = argmax(conditions, axis=0)
    return lax.select_n(*broadcast_arrays(idx, *choices))


def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-d arrays."""
    check_arraylike("convolve", a, v)
    return _conv(as_operand(a), as_operand(v), mode, "convolve", preferred_element_type)


def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-d arrays (``v`` conjugated)."""
    check_arraylike("correlate", a, v)
    return _conv(as_operand(a), as_operand(v), mode, "correlate", preferred_element_type)


@staged(static_argnums=(2, 3, 4))
def _conv(x, y, mode, op, preferred_element_type):
    from ._ufuncs import conj
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    x, y = promote_dtypes_inexact(x, y) if preferred_element_type is None else promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    reverse = False
    if op == "correlate":
        y = conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = lax.rev(y, (0,))
    m = y.shape[0]
    padding = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}.get(mode)
    if padding is None:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = _sliding_dot(lax.pad(x, convert(0, x.dtype), (padding + (0,),)), y)
    if preferred_element_type is not None:
        out = convert(out, dtypes.canonicalize_dtype(preferred_element_type))
    return lax.rev(out, (0,)) if reverse else out


def _sliding_dot(x, y):
    """``out[k] = sum_j x[k + j] * y[j]``: the outer product, skewed so its diagonals become columns."""
    n, m = x.shape[0], y.shape[0]
    outer = lax.mul(lax.broadcast_in_dim(y, (m, n), (0,)), lax.broadcast_in_dim(x, (m, n), (1,)))
    flat = lax.pad(lax.reshape(outer, (m * n,)), convert(0, x.dtype), ((0, m, 0),))
    skewed = lax.slice(lax.reshape(flat, (m, n + 1)), (0, 0), (m, n - m + 1))
    return lax.reduce_sum(skewed, (0,))


def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """Covariance matrix of the variables in the rows (or columns, ``rowvar=False``) of ``m``."""
    m, *rest = promote_args_inexact("cov", m, *([] if y is None else [y]))
    if rest and rest[0].ndim > 2:
        raise ValueError("y has more than 2 dimensions")
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    return _cov(m, rest[0] if rest else None, bool(rowvar), bool(bias), ddof, fweights, aweights,
                None if dtype is None else dtypes.canonicalize_dtype(dtype))


@staged_as("cov", static_argnums=(2, 3, 4, 7))
def _cov(m, y, rowvar, bias, ddof, fweights, aweights, dtype):
    from ._linalg_ops import dot
    from ._reductions import average, sum
    from ._shape import atleast_2d
    from ._ufuncs import abs, conj, multiply, subtract, true_divide
    X = atleast_2d(m)
    if not rowvar and m.ndim != 1:
        X = lax.transpose(X, (1, 0))
    if X.shape[0] == 0:
        return lax.full((0, 0), 0, dtypes.default_float_dtype())
    if y is not None:
        y = atleast_2d(y)
        if not rowvar and y.shape[0] != 1:
            y = lax.transpose(y, (1, 0))
        X = concatenate((X, y), axis=0)
    if X.shape[1] == 0:
        return lax.full(() if X.shape[0] == 1 else (X.shape[0],) * 2, np.nan, X.dtype)
    ddof = (1 if bias == 0 else 0) if ddof is None else ddof
    w = None
    if fweights is not None:
        fweights = as_operand(fweights)
        if fweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if fweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not np.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = abs(fweights)
    if aweights is not None:
        aweights = as_operand(aweights)
        if aweights.ndim > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if aweights.shape[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = abs(aweights)
        w = aweights if w is None else multiply(w, aweights)
    if dtype is not None:
        X = convert(X, dtype)
        w = None if w is None else convert(w, dtype)
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = lax.index_in_dim(w_sum, 0, 0, keepdims=False)
    if w is None:
        f = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = subtract(w_sum, ddof)
    else:
        f = subtract(w_sum, true_divide(multiply(ddof, sum(multiply(w, aweights))), w_sum))
    X = subtract(X, lax.expand_dims(avg, (1,)))
    X_T = lax.transpose(X if w is None else multiply(X, lax.expand_dims(as_operand(w), (0,))), (1, 0))
    out = true_divide(dot(X, conj(X_T)), f)
    return lax.squeeze(out, tuple(i for i, d in enumerate(out.shape) if d == 1))


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients, clipped into ``[-1, 1]``."""
    from ._matrix import diag
    from ._ufuncs import clip, divide, imag, real, sqrt
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return divide(c, c)
    stddev = convert(sqrt(real(diag(c))), c.dtype)
    c = divide(divide(c, lax.expand_dims(stddev, (1,))), lax.expand_dims(stddev, (0,)))
    real_part = clip(real(c), -1, 1)
    if np.issubdtype(c.dtype, np.complexfloating):
        return lax.complex(real_part, clip(imag(c), -1, 1))
    return real_part
