"""Differences, integrals, products of vectors and selection in ``irax.numpy``, from static slices."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._shape import broadcast_arrays, broadcast_to, concatenate, moveaxis, ravel, stack
from ._util import (canonicalize_axes, canonicalize_axis, check_arraylike, convert, ensure_arraylike,
                    promote_args_inexact, promote_dtypes, promote_dtypes_inexact, staged_as)


def _along(x, axis, start, stop):
    """``x[..., start:stop]`` along ``axis``, as basic indexing slices (no strides in the text)."""
    start, stop, _ = builtins.slice(start, stop).indices(x.shape[axis])
    starts, limits = [0] * x.ndim, list(x.shape)
    starts[axis], limits[axis] = start, builtins.max(start, stop)
    return lax.slice(x, starts, limits)


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


@staged_as("trapezoid", static_argnames=("axis",))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of ``y`` by the trapezoidal rule, over sample points ``x`` or spacing ``dx``."""
    from ._creation import asarray
    if x is None:
        y = ensure_arraylike("trapezoid", y)
        (y_arr,) = promote_dtypes_inexact(y)
        dx_array = asarray(dx)
        if dx_array.ndim > 0:
            dx_array = lax.expand_dims(dx_array, range(y_arr.ndim - dx_array.ndim))
            dx_array = moveaxis(dx_array, axis, -1)
    else:
        y, x = ensure_arraylike("trapezoid", y, x)
        y_arr, x_arr = promote_dtypes_inexact(y, x)
        dx_array = diff(x_arr) if x_arr.ndim == 1 else moveaxis(diff(x_arr, axis=axis), axis, -1)
    y_arr = moveaxis(y_arr, axis, -1)
    if dx_array.ndim == 0 or dx_array.shape[-1] == 1:  # dx constant along the integration axis
        dx_reduced = dx_array if dx_array.ndim == 0 else dx_array[..., 0]
        return dx_reduced * (y_arr.sum(-1) - 0.5 * (y_arr[..., 0] + y_arr[..., -1]))
    return 0.5 * (dx_array * (y_arr[..., 1:] + y_arr[..., :-1])).sum(-1)


@staged_as("gradient", static_argnames=("axis", "edge_order"))
def gradient(f, *varargs, axis=None, edge_order=None):
    """Central differences inside, one-sided differences at the edges, along each of ``axis``."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not supported.")
    a, *spacing = promote_dtypes_inexact(f, *varargs)

    def gradient_along_axis(a, h, axis):
        sliced = lambda start, stop: lax.slice_in_dim(a, start, stop, axis=axis)
        upper_edge = sliced(1, 2) - sliced(0, 1)
        lower_edge = sliced(-1, None) - sliced(-2, -1)
        if np.ndim(h) == 0:
            inner = (sliced(2, None) - sliced(None, -2)) * 0.5 / h
            lower_edge /= h
            upper_edge /= h
        elif np.ndim(h) == 1:
            if len(h) != a.shape[axis]:
                raise ValueError("Spacing arrays must have the same length as the dimension along which the "
                                 "gradient is calculated.")
            h_shape = [1] * a.ndim
            h_shape[axis] = len(h)
            h = h.reshape(h_shape)
            sliced_x = lambda start, stop: lax.slice_in_dim(h, start, stop, axis=axis)
            upper_edge /= sliced_x(1, 2) - sliced_x(0, 1)
            lower_edge /= sliced_x(-1, None) - sliced_x(-2, -1)
            dx1 = sliced_x(1, -1) - sliced_x(0, -2)
            dx2 = sliced_x(2, None) - sliced_x(1, -1)
            wa = -(dx2) / (dx1 * (dx1 + dx2))
            wb = (dx2 - dx1) / (dx1 * dx2)
            wc = dx1 / (dx2 * (dx1 + dx2))
            inner = wa * sliced(0, -2) + wb * sliced(1, -1) + wc * sliced(2, None)
        else:
            raise ValueError("Spacing arrays must be 1D arrays or scalars.")
        return concatenate((upper_edge, inner, lower_edge), axis=axis)

    if axis is None:
        axis_tuple = tuple(range(a.ndim))
    else:
        axis_tuple = canonicalize_axes(tuple(axis) if isinstance(axis, (tuple, list)) else axis, a.ndim)
    if len(axis_tuple) == 0:
        return []
    if builtins.min(s for i, s in enumerate(a.shape) if i in axis_tuple) < 2:
        raise ValueError("Shape of array too small to calculate a numerical gradient, at least 2 elements are "
                         "required.")
    if len(spacing) == 0:
        dx = [1.0] * len(axis_tuple)
    elif len(spacing) == 1:
        dx = list(spacing) * len(axis_tuple)
    elif len(spacing) == len(axis_tuple):
        dx = list(spacing)
    else:
        raise TypeError(f"Invalid number of spacing arguments {len(spacing)} for axis={axis}")
    a_grad = [gradient_along_axis(a, h, ax) for ax, h in zip(axis_tuple, dx)]
    return a_grad[0] if len(axis_tuple) == 1 else a_grad


@staged_as("unwrap", static_argnames=("axis",))
def unwrap(p, discont=None, axis=-1, period=2 * np.pi):
    """Removes jumps larger than ``discont`` by adding multiples of ``period``."""
    from ._reductions import cumsum
    from ._ufuncs import abs, mod, where
    p = ensure_arraylike("unwrap", p)
    p, period = promote_dtypes(p, period)
    if dtypes.issubdtype(p.dtype, np.complexfloating):
        raise ValueError("jnp.unwrap does not support complex inputs.")
    if p.shape[axis] == 0:
        return p
    if discont is None:
        discont = period / 2
    interval = period // 2 if dtypes.issubdtype(p.dtype, np.integer) else period / 2
    dd = diff(p, axis=axis)
    ddmod = mod(dd + interval, period) - interval
    ddmod = where((ddmod == -interval) & (dd > 0), interval, ddmod)
    ph_correct = where(abs(dd) < discont, 0, ddmod - dd)
    return concatenate((lax.slice_in_dim(p, 0, 1, axis=axis),
                        lax.slice_in_dim(p, 1, None, axis=axis) + cumsum(ph_correct, axis=axis)), axis=axis)


@staged_as("cross", static_argnames=("axisa", "axisb", "axisc", "axis"))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors along the given axes."""
    from ._creation import array, zeros_like
    check_arraylike("cross", a, b)
    if axis is not None:
        axisa = axisb = axisc = axis
    a = moveaxis(a, axisa, -1)
    b = moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError("Dimension must be either 2 or 3 for cross product")
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0 = a[..., 0]
    a1 = a[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else zeros_like(a0)
    b0 = b[..., 0]
    b1 = b[..., 1]
    b2 = b[..., 2] if b.shape[-1] == 3 else zeros_like(b0)
    c = array([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0])
    return moveaxis(c, 0, axisc)


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


@staged_as("convolve", static_argnames=("mode", "precision", "preferred_element_type"))
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-d arrays."""
    check_arraylike("convolve", a, v)
    return _conv(as_operand(a), as_operand(v), mode=mode, op="convolve", precision=precision,
                 preferred_element_type=preferred_element_type)


@staged_as("correlate", static_argnames=("mode", "precision", "preferred_element_type"))
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-d arrays (``v`` conjugated)."""
    check_arraylike("correlate", a, v)
    return _conv(as_operand(a), as_operand(v), mode=mode, op="correlate", precision=precision,
                 preferred_element_type=preferred_element_type)


@staged(static_argnames=("mode", "op", "precision", "preferred_element_type"))
def _conv(x, y, mode, op, precision, preferred_element_type=None):
    """JAX's: a 1-d ``conv_general_dilated`` of the longer operand by the (flipped, for convolve) shorter one."""
    from ._shape import flip
    from ._ufuncs import conj
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    x, y = promote_dtypes_inexact(x, y) if preferred_element_type is None else promote_dtypes(x, y)
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and {y.shape}.")
    out_order = slice(None)
    if op == "correlate":
        y = conj(y)
        if x.shape[0] < y.shape[0]:
            x, y = y, x
            out_order = slice(None, None, -1)
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = flip(y)
    m = y.shape[0]
    padding = {"valid": [(0, 0)], "same": [(m // 2, m - m // 2 - 1)], "full": [(m - 1, m - 1)]}.get(mode)
    if padding is None:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    result = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), padding, precision=precision,
                                      preferred_element_type=preferred_element_type)
    return result[0, 0, out_order]


@staged_as("cov", static_argnames=("rowvar", "bias", "ddof", "dtype"))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, dtype=None):
    """Covariance matrix of the variables in the rows (or columns, ``rowvar=False``) of ``m``."""
    from ._creation import array, full
    from ._linalg_ops import dot
    from ._reductions import average, sum
    from ._shape import atleast_2d
    from ._ufuncs import abs, true_divide
    if y is not None:
        m, y = promote_args_inexact("cov", m, y)
        if y.ndim > 2:
            raise ValueError("y has more than 2 dimensions")
    else:
        (m,) = promote_args_inexact("cov", m)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")  # same as numpy error
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"cov: dtype must be a subclass of float or complex; got dtype={dtype}")
    X = atleast_2d(m)
    if not rowvar and m.ndim != 1:
        X = X.T
    if X.shape[0] == 0:
        return array([]).reshape(0, 0)
    if y is not None:
        y_arr = atleast_2d(y)
        if not rowvar and y_arr.shape[0] != 1:
            y_arr = y_arr.T
        X = concatenate((X, y_arr), axis=0)
    if X.shape[1] == 0:
        cov_shape = () if X.shape[0] == 1 else (X.shape[0], X.shape[0])
        return full(cov_shape, np.nan, dtype=X.dtype)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        fweights = ensure_arraylike("cov", fweights)
        if np.ndim(fweights) > 1:
            raise RuntimeError("cannot handle multidimensional fweights")
        if np.shape(fweights)[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and fweights")
        if not dtypes.issubdtype(fweights.dtype, np.integer):
            raise TypeError("fweights must be integer.")
        w = abs(fweights)  # numpy raises on negative fweights
    if aweights is not None:
        aweights = ensure_arraylike("cov", aweights)
        if np.ndim(aweights) > 1:
            raise RuntimeError("cannot handle multidimensional aweights")
        if np.shape(aweights)[0] != X.shape[1]:
            raise RuntimeError("incompatible numbers of samples and aweights")
        aweights = abs(aweights)  # numpy raises on negative aweights
        w = as_operand(aweights if w is None else w * aweights)
    if dtype is not None:
        X = X.astype(dtype)
        w = w.astype(dtype) if w is not None else w
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = w_sum[0]
    if w is None:
        f = X.shape[1] - ddof
    elif ddof == 0:
        f = w_sum
    elif aweights is None:
        f = w_sum - ddof
    else:
        f = w_sum - ddof * sum(w * aweights) / w_sum
    X = X - avg[:, None]
    X_T = X.T if w is None else (X * _broadcast_to_rank(w, X.ndim)).T
    return true_divide(dot(X, X_T.conj()), f).squeeze()


def _broadcast_to_rank(x, rank):
    x = as_operand(x)
    return x if x.ndim == rank else lax.broadcast(x, (1,) * (rank - x.ndim))


@staged_as("corrcoef", static_argnames=("rowvar", "dtype"))
def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients, clipped into ``[-1, 1]``."""
    from ._matrix import diag
    from ._ufuncs import clip, divide, imag, real, sqrt
    check_arraylike("corrcoef", x)
    if dtype is not None and not dtypes.issubdtype(dtype, np.inexact):
        raise ValueError(f"corrcoef: dtype must be a subclass of float or complex; got dtype={dtype}")
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        # scalar: nan for nan/nan, inf/inf and 0/0, 1 otherwise
        return divide(c, c)
    d = diag(c)
    stddev = sqrt(real(d)).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real_part = clip(real(c), -1, 1)
    if dtypes.issubdtype(c.dtype, np.complexfloating):
        return lax.complex(real_part, clip(imag(c), -1, 1))
    return real_part
