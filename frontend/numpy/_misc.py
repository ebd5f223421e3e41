"""``nonzero`` and what is built on it (``flatnonzero``, ``argwhere``, ``compress``, ``extract``, ``place``), ``gcd``,
``lcm``, ``interp``, ``apply_along_axis``, ``i0`` and ``kaiser``, ported from ``jax/_src/numpy`` so that they bind
JAX's primitives in JAX's order. A result whose size depends on values (``nonzero`` without ``size=``) exists only
outside a trace, as in JAX."""
from __future__ import annotations

import operator

import numpy as np

from irax import dtypes, errors, lax
from irax.api import staged
from irax.batching import vmap
from irax.core import Tracer
from irax.custom_derivatives import custom_jvp
from irax.lax._scalars import as_operand

from ._util import canonicalize_axis, check_arraylike, promote_args_inexact, promote_dtypes, promote_dtypes_inexact

__all__ = ["apply_along_axis", "argwhere", "compress", "extract", "flatnonzero", "gcd", "i0", "interp", "kaiser",
           "lcm", "nonzero", "place"]


def _jnp():
    import irax.numpy as jnp
    return jnp


def _concrete_size(value, context):
    """JAX's ``core.concrete_dim_or_error``: an int, or a ConcretizationTypeError naming ``context``."""
    if isinstance(value, Tracer) and value.concrete is None:
        raise errors.ConcretizationTypeError(
            f"Abstract tracer value encountered where concrete value is expected: {value._describe()}\n"
            f"{context}{value._context_message()}\n")
    return operator.index(value)


def nonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one array per axis; ``size`` (static) pads or truncates them, with
    ``fill_value`` (0 by default) in the padding.

    Raises:
      ConcretizationTypeError: under a transformation without ``size``.
    """
    jnp = _jnp()
    check_arraylike("nonzero", a)
    arr = as_operand(a)
    if np.ndim(arr) == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use jnp.atleast_1d(scalar).nonzero() instead.")
    mask = arr if arr.dtype == bool else (arr != 0)
    calculated_size = _concrete_size(mask.sum() if size is None else size,
                                     "The size argument of jnp.nonzero must be statically specified to use "
                                     "jnp.nonzero within JAX transformations.")
    if arr.size == 0 or calculated_size == 0:
        return tuple(jnp.zeros(calculated_size, int) for _ in arr.shape)
    flat_indices = jnp.cumsum(jnp.bincount(jnp.cumsum(mask), length=calculated_size))
    strides = (np.cumprod(arr.shape[::-1])[::-1] // arr.shape).astype(flat_indices.dtype)
    out = tuple((flat_indices // stride) % dim for stride, dim in zip(strides, arr.shape))
    if fill_value is not None:
        fill_value_tup = fill_value if isinstance(fill_value, tuple) else arr.ndim * (fill_value,)
        if any(np.shape(val) != () for val in fill_value_tup):
            raise ValueError(f"fill_value must be a scalar or a tuple of length {arr.ndim}; got {fill_value}")
        fill_mask = jnp.arange(calculated_size) >= mask.sum()
        out = tuple(jnp.where(fill_mask, fval, entry) for fval, entry in zip(fill_value_tup, out))
    return out


def flatnonzero(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements of the flattened ``a``."""
    return nonzero(_jnp().ravel(a), size=size, fill_value=fill_value)[0]


def argwhere(a, *, size=None, fill_value=None):
    """The indices of the nonzero elements, one row per element."""
    jnp = _jnp()
    check_arraylike("argwhere", a)
    a = as_operand(a)
    result = jnp.transpose(jnp.vstack(nonzero(jnp.atleast_1d(a), size=size, fill_value=fill_value)))
    if np.ndim(a) == 0:
        return result[:0].reshape(result.shape[0], 0)
    return result.reshape(result.shape[0], np.ndim(a))


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of ``a`` along ``axis`` where ``condition`` is true (``size``: a static count, padded with
    ``fill_value``)."""
    jnp = _jnp()
    check_arraylike("compress", condition, a, fill_value)
    condition_arr, arr = as_operand(condition).astype(bool), as_operand(a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    if condition_arr.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        axis = 0
        arr = jnp.ravel(arr)
    else:
        arr = jnp.moveaxis(arr, axis, 0)
    condition_arr, extra = condition_arr[:arr.shape[0]], condition_arr[arr.shape[0]:]
    arr = arr[:condition_arr.shape[0]]
    if size is None:
        if jnp.any(extra):
            raise ValueError("condition contains entries that are out of bounds")
        result = arr[condition_arr]
    elif not 0 <= size <= arr.shape[0]:
        raise ValueError("size must be positive and not greater than the size of the array axis;"
                         f" got {size=} for a.shape[axis]={arr.shape[0]}")
    else:
        mask = jnp.expand_dims(condition_arr, range(1, arr.ndim))
        arr = jnp.where(mask, arr, jnp.array(fill_value, dtype=arr.dtype))
        result = arr[jnp.argsort(condition_arr, stable=True, descending=True)][:size]
    return jnp.moveaxis(result, 0, axis)


def extract(condition, arr, *, size=None, fill_value=0):
    """The elements of ``arr`` where ``condition`` is true, both flattened."""
    jnp = _jnp()
    check_arraylike("extreact", condition, arr, fill_value)
    return compress(jnp.ravel(condition), jnp.ravel(arr), size=size, fill_value=fill_value)


def _tile_to_size(arr, size):
    if arr.size < size:
        arr = _jnp().tile(arr, int(np.ceil(size / arr.size)))
    return arr[:size] if arr.size > size else arr


def place(arr, mask, vals, *, inplace=True):
    """A copy of ``arr`` with the entries where ``mask`` is true set from ``vals`` (repeated as needed).

    Raises:
      ValueError: unless ``inplace=False`` (JAX arrays are immutable).
    """
    check_arraylike("place", arr, mask, vals)
    data, mask_arr, vals_arr = as_operand(arr), as_operand(mask), as_operand(vals)
    vals_arr = vals_arr.ravel()
    if inplace:
        raise ValueError("jax.numpy.place cannot modify arrays in-place, because JAX arrays are immutable. "
                         "Pass inplace=False to instead return an updated array.")
    if data.size != mask_arr.size:
        raise ValueError("place: arr and mask must be the same size")
    if not vals_arr.size:
        raise ValueError("Cannot place values from an empty array")
    if not data.size:
        return data
    indices = nonzero(mask_arr.ravel(), size=mask_arr.size, fill_value=mask_arr.size)[0]
    vals_arr = _tile_to_size(vals_arr, len(indices))
    return data.ravel().at[indices].set(vals_arr, mode="drop").reshape(data.shape)


def _gcd_cond_fn(xs):
    x1, x2 = xs
    return _jnp().any(x2 != 0)


def _gcd_body_fn(xs):
    jnp = _jnp()
    x1, x2 = xs
    x1, x2 = (jnp.where(x2 != 0, x2, x1), jnp.where(x2 != 0, lax.rem(x1, x2), np.array(0, x2.dtype)))
    return (jnp.where(x1 < x2, x2, x1), jnp.where(x1 < x2, x1, x2))


@staged
def gcd(x1, x2):
    """The greatest common divisor of |x1| and |x2|, elementwise (integers), by Euclid's algorithm in a loop."""
    jnp = _jnp()
    check_arraylike("gcd", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    if not np.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.gcd must be integers.")
    x1, x2 = jnp.broadcast_arrays(x1, x2)
    result, _ = lax.while_loop(_gcd_cond_fn, _gcd_body_fn, (jnp.abs(x1), jnp.abs(x2)))
    return result


@staged
def lcm(x1, x2):
    """The least common multiple of |x1| and |x2|, elementwise (integers)."""
    jnp = _jnp()
    check_arraylike("lcm", x1, x2)
    x1, x2 = promote_dtypes(x1, x2)
    x1, x2 = jnp.abs(x1), jnp.abs(x2)
    if not np.issubdtype(x1.dtype, np.integer):
        raise ValueError("Arguments to jax.numpy.lcm must be integers.")
    d = gcd(x1, x2)
    return jnp.where(d == 0, np.array(0, d.dtype), jnp.multiply(x1, jnp.floor_divide(x2, d)))


def _interp(x, xp, fp, left=None, right=None, period=None):
    jnp = _jnp()
    check_arraylike("interp", x, xp, fp)
    if np.shape(xp) != np.shape(fp) or np.ndim(xp) != 1:
        raise ValueError("xp and fp must be one-dimensional arrays of equal size")
    x_arr, xp_arr = promote_dtypes_inexact(x, xp)
    fp_arr, = promote_dtypes_inexact(fp)
    extrapolate = []
    for name, side in (("left", left), ("right", right)):
        if isinstance(side, str) and side != "extrapolate":
            raise ValueError(f"the only valid string value of `{name}` is 'extrapolate', but got: {side!r}")
        extrapolate.append(isinstance(side, str))
    if np.issubdtype(x_arr.dtype, np.complexfloating):
        raise ValueError("jnp.interp: complex x values not supported.")
    if period is not None:
        if np.ndim(period) != 0:
            raise ValueError(f"period must be a scalar; got {period}")
        period = jnp.abs(period)
        x_arr = x_arr % period
        xp_arr = xp_arr % period
        xp_arr, fp_arr = lax.sort_key_val(xp_arr, fp_arr)
        xp_arr = jnp.concatenate([xp_arr[-1:] - period, xp_arr, xp_arr[:1] + period])
        fp_arr = jnp.concatenate([fp_arr[-1:], fp_arr, fp_arr[:1]])
    i = jnp.clip(jnp.searchsorted(xp_arr, x_arr, side="right"), 1, len(xp_arr) - 1)
    df = fp_arr[i] - fp_arr[i - 1]
    dx = xp_arr[i] - xp_arr[i - 1]
    delta = x_arr - xp_arr[i - 1]
    epsilon = np.spacing(np.finfo(xp_arr.dtype).eps)
    dx0 = lax.abs(dx) <= epsilon  # no NaN gradient where dx is tiny
    f = jnp.where(dx0, fp_arr[i - 1], fp_arr[i - 1] + (delta / jnp.where(dx0, 1, dx)) * df)
    if not extrapolate[0]:
        left_arr = fp_arr[0] if left is None else left
        if period is None:
            f = jnp.where(x_arr < xp_arr[0], left_arr, f)
    if not extrapolate[1]:
        right_arr = fp_arr[-1] if right is None else right
        if period is None:
            f = jnp.where(x_arr > xp_arr[-1], right_arr, f)
    return f


def interp(x, xp, fp, left=None, right=None, period=None):
    """Piecewise-linear interpolation of the points (xp, fp) at x; ``left``/``right`` outside them (a value, or
    'extrapolate'), ``period`` for periodic xp."""
    static_argnames = [name for name, v in (("left", left), ("right", right)) if isinstance(v, str) or v is None]
    if period is None:
        static_argnames.append("period")
    return staged(_interp, static_argnames=static_argnames)(x, xp, fp, left, right, period)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``func1d`` applied to the 1-D slices of ``arr`` along ``axis`` (by vmap over the other axes)."""
    check_arraylike("apply_along_axis", arr)
    num_dims = np.ndim(arr)
    axis = canonicalize_axis(axis, num_dims)
    func = lambda arr: func1d(arr, *args, **kwargs)  # noqa: E731
    for i in range(1, num_dims - axis):
        func = vmap(func, in_axes=i, out_axes=-1)
    for i in range(axis):
        func = vmap(func, in_axes=0, out_axes=0)
    return func(arr)


@custom_jvp
def _i0(x):
    abs_x = lax.abs(x)
    return lax.mul(lax.exp(abs_x), lax.bessel_i0e(abs_x))


@_i0.defjvp
def _i0_jvp(primals, tangents):
    from irax.ad import jvp
    primal_out, tangent_out = jvp(_i0.fun, primals, tangents)
    return primal_out, _jnp().where(primals[0] == 0, 0.0, tangent_out)


@staged
def i0(x):
    """The modified Bessel function of the first kind, order 0 (real floating x)."""
    x_arr, = promote_args_inexact("i0", x)
    if not dtypes.issubdtype(x_arr.dtype, np.floating):
        raise ValueError(f"Unsupported input type to jax.numpy.i0: {x_arr.dtype}")
    return _i0(x_arr)


def kaiser(M, beta):
    """The Kaiser window of ``M`` points with shape parameter ``beta``."""
    from irax import dtypes
    dtype = dtypes.default_float_dtype()
    if M <= 1:
        return lax.full((M,), 1, dtype)
    n = lax.iota(dtype, M)
    alpha = 0.5 * (M - 1)
    return i0(beta * _jnp().sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)
