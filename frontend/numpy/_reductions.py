"""Reductions and scans of ``irax.numpy``, ported from ``jax._src.numpy.reductions`` with the same
promotions, ``lax`` calls and ``jit`` boundaries (JAX's inlined jits leave nothing in a jaxpr, so those
are plain functions here)."""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from irax import dtypes, lax
from irax.lax._scalars import as_operand

from ._util import (_broadcast_to, _where, canonicalize_axis, convert_element_type, ensure_arraylike, lax_const,
                    promote_dtypes_inexact, promote_dtypes_numeric, staged_as, to_inexact_dtype)

_all = builtins.all


def _upcast_f16(dtype):
    if np.dtype(dtype) in (np.dtype(np.float16), np.dtype(dtypes.bfloat16)):
        return np.dtype("float32")
    return np.dtype(dtype)


def _promote_integer_dtype(dtype):
    # NumPy promotes to 64 bits; JAX to the default (u)int dtype.
    if dtype == np.bool_:
        return dtypes.default_int_dtype()
    if dtypes.issubdtype(dtype, np.unsignedinteger):
        default_uint = dtypes.default_uint_dtype()
        if np.iinfo(dtype).bits < np.iinfo(default_uint).bits:
            return default_uint
    elif dtypes.issubdtype(dtype, np.integer):
        default_int = dtypes.default_int_dtype()
        if np.iinfo(dtype).bits < np.iinfo(default_int).bits:
            return default_int
    return dtype


def _check_where(name, where):
    if where is None:
        return where
    where = ensure_arraylike(name, where)
    if where.dtype != np.bool_:
        raise ValueError(f"jnp.{name}: where must be None or a boolean array; got where.dtype={where.dtype}.")
    return where


def _reduction_dims(a, axis):
    ndim = a.ndim
    if axis is None:
        return tuple(range(ndim))
    axes = tuple(axis) if isinstance(axis, (np.ndarray, tuple, list)) else (axis,)
    canon = tuple(canonicalize_axis(x, ndim) for x in axes)
    if len(canon) != len(set(canon)):
        raise ValueError(f"duplicate value in 'axis': {axis}")
    return canon


def _reduction_init_val(a, init_val):
    a_dtype = a.dtype
    if a_dtype == np.bool_:
        return np.array(init_val > 0, dtype=a_dtype)
    try:
        return np.array(init_val, dtype=a_dtype)
    except (OverflowError, ValueError):
        info = dtypes.iinfo(a_dtype)
        return np.array(info.min if np.sign(init_val) < 0 else info.max, dtype=a_dtype)


_REDUCERS = {"add": lax.reduce_sum, "mul": lax.reduce_prod, "max": lax.reduce_max, "min": lax.reduce_min,
             "and": lax.reduce_and, "or": lax.reduce_or, "xor": lax.reduce_xor}
_OPS = {"add": lax.add, "mul": lax.mul, "max": lax.max, "min": lax.min, "and": lax.bitwise_and,
        "or": lax.bitwise_or, "xor": lax.bitwise_xor}


def _cast_to_bool(operand):
    if dtypes.issubdtype(operand.dtype, np.complexfloating):
        operand = lax.real(operand)
    return convert_element_type(operand, np.bool_)


def _cast_to_numeric(operand):
    return promote_dtypes_numeric(operand)[0]


def _require_integer(arr):
    if not (arr.dtype == np.bool_ or dtypes.issubdtype(arr.dtype, np.integer)):
        raise ValueError(f"integer argument required; got dtype={arr.dtype}")
    return arr


def _reduction(a, name, op, init_val, *, has_identity=True, preproc=None, bool_op=None,
               upcast_f16_for_computation=False, axis=None, dtype=None, out=None, keepdims=False, initial=None,
               where_=None, promote_integers=False):
    """JAX's ``_reduction``: the monoid ``op`` (a key of ``_OPS``) reduced over ``axis``."""
    bool_op = bool_op or op
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported.")
    a = ensure_arraylike(name, a)
    where_ = _check_where(name, where_)
    if initial is None and not has_identity and where_ is not None:
        raise ValueError(f"reduction operation {name} does not have an identity, so to use a where mask one has to "
                         "specify 'initial'")
    a = preproc(a) if preproc else a
    dims = _reduction_dims(a, axis)
    if initial is None and not has_identity:
        if not _all(a.shape[d] >= 1 for d in dims):
            raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    if dtype is None:
        result_dtype = a.dtype
        if promote_integers:
            result_dtype = _promote_integer_dtype(result_dtype)
    else:
        result_dtype = dtypes.canonicalize_dtype(dtype)
    if upcast_f16_for_computation and dtypes.issubdtype(result_dtype, np.inexact):
        computation_dtype = _upcast_f16(result_dtype)
    else:
        computation_dtype = result_dtype
    a = convert_element_type(a, computation_dtype)
    op = op if computation_dtype != np.bool_ else bool_op
    if where_ is not None:
        a = _where(where_, a, _reduction_init_val(a, init_val))
    result = _REDUCERS[op](a, dims)
    if initial is not None:
        initial_arr = convert_element_type(_host_cast(initial, a.dtype), a.dtype)
        if initial_arr.shape != ():
            raise ValueError(f"initial value must be a scalar. Got array of shape {initial_arr.shape}")
        result = _OPS[op](initial_arr, result)
    if keepdims:
        result = lax.expand_dims(result, dims)
    return convert_element_type(result, dtype or result_dtype)


def _host_cast(x, dtype):
    """A Python or NumPy scalar cast as JAX's ``convert_element_type`` casts it on the host (NumPy's
    ``astype``: -inf becomes the integer minimum, where irax's ``lax`` raises)."""
    if type(x) in (bool, int, float, complex) or isinstance(x, np.generic):
        with np.errstate(all="ignore"):
            return np.asarray(x).astype(dtype).item()
    return x


def _ensure_optional_axes(x):
    if x is None:
        return None
    try:
        return operator.index(x)
    except TypeError:
        return tuple(operator.index(i) for i in x)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """Sum over ``axis`` (all axes when None), as ``jax.numpy.sum``."""
    return _reduction(a, "sum", "add", 0, preproc=_cast_to_numeric, bool_op="or",
                      upcast_f16_for_computation=(dtype is None), axis=_ensure_optional_axes(axis), dtype=dtype,
                      out=out, keepdims=keepdims, initial=initial, where_=where, promote_integers=promote_integers)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
    """Product over ``axis`` (all axes when None), as ``jax.numpy.prod``."""
    return _reduction(a, "prod", "mul", 1, preproc=_cast_to_numeric, bool_op="and",
                      upcast_f16_for_computation=(dtype is None), axis=_ensure_optional_axes(axis), dtype=dtype,
                      out=out, keepdims=keepdims, initial=initial, where_=where, promote_integers=promote_integers)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``max`` over ``axis`` (all axes when None); a ``where`` mask needs ``initial`` (as JAX)."""
    return _reduction(a, "max", "max", -np.inf, has_identity=False, axis=_ensure_optional_axes(axis), out=out,
                      keepdims=keepdims, initial=initial, where_=where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``min`` over ``axis`` (all axes when None); a ``where`` mask needs ``initial`` (as JAX)."""
    return _reduction(a, "min", "min", np.inf, has_identity=False, axis=_ensure_optional_axes(axis), out=out,
                      keepdims=keepdims, initial=initial, where_=where)


def all(a, axis=None, out=None, keepdims=False, *, where=None):
    return _reduction(a, "all", "and", True, preproc=_cast_to_bool, axis=_ensure_optional_axes(axis), out=out,
                      keepdims=keepdims, where_=where)


def any(a, axis=None, out=None, keepdims=False, *, where=None):
    return _reduction(a, "any", "or", False, preproc=_cast_to_bool, axis=_ensure_optional_axes(axis), out=out,
                      keepdims=keepdims, where_=where)


def amin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return min(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def amax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return max(a, axis=axis, out=out, keepdims=keepdims, initial=initial, where=where)


def _axis_size(a, axis):
    axes = axis if isinstance(axis, (tuple, list)) else (axis,)
    size = 1
    for i in axes:
        size *= a.shape[i]
    return size


def _count(a, axis, keepdims, where, dtype):
    if where is None:
        count = a.size if axis is None else _axis_size(a, axis)
        return convert_element_type(count, dtype)
    return sum(_broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None, upcast_f16_for_computation=True):
    """Arithmetic mean; integers average in the default float dtype."""
    return _mean(a, _ensure_optional_axes(axis), dtype, out, keepdims, where=where,
                 upcast_f16_for_computation=upcast_f16_for_computation and dtype is None)


def _mean(a, axis=None, dtype=None, out=None, keepdims=False, *, upcast_f16_for_computation=True, where=None):
    a = ensure_arraylike("mean", a)
    where = _check_where("mean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.mean is not supported.")
    if dtype is None:
        result_dtype = to_inexact_dtype(a.dtype)
    else:
        result_dtype = dtypes.canonicalize_dtype(dtype)
    if upcast_f16_for_computation and dtypes.issubdtype(result_dtype, np.inexact):
        computation_dtype = _upcast_f16(result_dtype)
    else:
        computation_dtype = result_dtype
    normalizer = _count(a, axis=axis, keepdims=keepdims, where=where, dtype=computation_dtype)
    return lax.div(sum(a, axis, dtype=computation_dtype, keepdims=keepdims, where=where),
                   normalizer).astype(result_dtype)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean along ``axis``; ``returned=True`` also gives the sum of the weights."""
    return _average(a, _ensure_optional_axes(axis), weights, returned, keepdims)


def _average(a, axis=None, weights=None, returned=False, keepdims=False):
    axis_tuple = () if axis is None else _reduction_dims(as_operand(a), axis)
    if weights is None:
        a = ensure_arraylike("average", a)
        (a,) = promote_dtypes_inexact(a)
        avg = mean(a, axis=axis, keepdims=keepdims)
        if axis is None:
            weights_sum = lax.full((), a.size, dtype=avg.dtype)
        else:
            weights_sum = lax.full((), math.prod(a.shape[d] for d in axis_tuple), dtype=avg.dtype)
    else:
        a, weights = ensure_arraylike("average", a, weights)
        a, weights = promote_dtypes_inexact(a, weights)
        if a.shape != weights.shape:
            if axis is None:
                raise ValueError("Axis must be specified when shapes of a and weights differ.")
            if weights.shape != tuple(a.shape[ax] for ax in axis_tuple):
                raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
            new_shape = tuple(dim if i in axis_tuple else 1 for i, dim in enumerate(a.shape))
            weights = lax.reshape(weights, new_shape, dimensions=tuple(np.argsort(axis_tuple)))
        weights_sum = sum(weights, axis=axis, keepdims=keepdims)
        avg = sum(a * weights, axis=axis, keepdims=keepdims) / weights_sum
    if returned:
        if avg.shape != weights_sum.shape:
            weights_sum = _broadcast_to(weights_sum, avg.shape)
        return avg, weights_sum
    return avg


def _correction(ddof, correction):
    if correction is None:
        return ddof
    if not isinstance(ddof, int) or ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Variance (``ddof``/``correction`` degrees of freedom removed), as ``jnp.var`` (a jit named ``_var``)."""
    correction = _correction(ddof, correction)
    a = ensure_arraylike("var", a)
    return _var(a, axis=_ensure_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                keepdims=keepdims, where=where, a_mean=mean)


@staged_as("_var", static_argnames=("axis", "dtype", "keepdims"))
def _var(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False, where=None, a_mean=None):
    where = _check_where("var", where)
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.var is not supported.")
    computation_dtype, dtype = _var_promote_types(a.dtype, dtype)
    a = as_operand(a).astype(computation_dtype)
    if a_mean is None:
        a_mean = mean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = ensure_arraylike("var", a_mean).astype(computation_dtype)
    centered = lax.sub(a, a_mean)
    if dtypes.issubdtype(computation_dtype, np.complexfloating):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
        computation_dtype = centered.dtype  # avoid casting to complex below
    else:
        centered = lax.square(centered)
    normalizer = _count(a, axis=axis, keepdims=keepdims, where=where, dtype=computation_dtype)
    normalizer = lax.sub(normalizer, convert_element_type(correction, computation_dtype))
    result = sum(centered, axis, dtype=computation_dtype, keepdims=keepdims, where=where)
    result = lax.div(result, normalizer).astype(dtype)
    return _where(normalizer > 0, result, np.nan)


def _var_promote_types(a_dtype, dtype):
    if dtype:
        if not dtypes.issubdtype(dtype, np.complexfloating) and dtypes.issubdtype(a_dtype, np.complexfloating):
            raise ValueError("jax.numpy.var does not yet support real dtype parameters when computing the variance "
                             "of an array of complex values. The semantics of numpy.var seem unclear in this case. "
                             "Please comment on https://github.com/jax-ml/jax/issues/2283 if this behavior is "
                             "important to you.")
        computation_dtype = dtype
    elif not dtypes.issubdtype(a_dtype, np.inexact):
        dtype = to_inexact_dtype(a_dtype)
        computation_dtype = dtype
    else:
        dtype = np.array(0, a_dtype).real.dtype
        computation_dtype = a_dtype
    return _upcast_f16(computation_dtype), np.dtype(dtype)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Standard deviation, as ``jnp.std`` (a jit named ``_std`` around ``var``)."""
    correction = _correction(ddof, correction)
    a = ensure_arraylike("std", a)
    return _std(a, axis=_ensure_optional_axes(axis), dtype=dtype, out=out, correction=correction,
                keepdims=keepdims, where=where, mean=mean)


@staged_as("_std", static_argnames=("axis", "dtype", "keepdims"))
def _std(a, *, axis=None, dtype=None, out=None, correction=0, keepdims=False, where=None, mean=None):
    where = _check_where("std", where)
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
        if not dtypes.issubdtype(dtype, np.inexact):
            raise ValueError(f"dtype argument to jnp.std must be inexact; got {dtype}")
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.std is not supported.")
    return lax.sqrt(var(a, axis=axis, dtype=dtype, correction=correction, keepdims=keepdims, where=where,
                        mean=mean))


def ptp(a, axis=None, out=None, keepdims=False):
    a = ensure_arraylike("ptp", a)
    return _ptp(a, _ensure_optional_axes(axis), out, keepdims)


@staged_as("_ptp", static_argnames=("axis", "keepdims"))
def _ptp(a, axis=None, out=None, keepdims=False):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.ptp is not supported.")
    x = amax(a, axis=axis, keepdims=keepdims)
    y = amin(a, axis=axis, keepdims=keepdims)
    return lax.sub(x, y)


@staged_as("count_nonzero", static_argnames=("axis", "keepdims"))
def count_nonzero(a, axis=None, keepdims=False):
    a = ensure_arraylike("count_nonzero", a)
    return sum(lax.ne(a, lax_const(a, 0)), axis=axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def _isnan(a):
    return lax.ne(a, a)


def _nan_reduction(a, name, jnp_reduction, init_val, nan_if_all_nan, axis=None, keepdims=False, where=None,
                   **kwargs):
    a = ensure_arraylike(name, a)
    where = _check_where(name, where)
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return jnp_reduction(a, axis=axis, keepdims=keepdims, where=where, **kwargs)
    out = jnp_reduction(_where(_isnan(a), _reduction_init_val(a, init_val), a), axis=axis, keepdims=keepdims,
                        where=where, **kwargs)
    if nan_if_all_nan:
        return _where(all(_isnan(a), axis=axis, keepdims=keepdims), lax_const(a, np.nan), out)
    return out


@staged_as("nanmin", static_argnames=("axis", "keepdims"))
def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction(a, "nanmin", min, np.inf, nan_if_all_nan=initial is None, axis=axis, out=out,
                          keepdims=keepdims, initial=initial, where=where)


@staged_as("nanmax", static_argnames=("axis", "keepdims"))
def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nan_reduction(a, "nanmax", max, -np.inf, nan_if_all_nan=initial is None, axis=axis, out=out,
                          keepdims=keepdims, initial=initial, where=where)


@staged_as("nansum", static_argnames=("axis", "dtype", "keepdims"))
def nansum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    return _nan_reduction(a, "nansum", sum, 0, nan_if_all_nan=False, axis=axis, dtype=dtype, out=out,
                          keepdims=keepdims, initial=initial, where=where)


@staged_as("nanprod", static_argnames=("axis", "dtype", "keepdims"))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    return _nan_reduction(a, "nanprod", prod, 1, nan_if_all_nan=False, axis=axis, dtype=dtype, out=out,
                          keepdims=keepdims, initial=initial, where=where)


@staged_as("nanmean", static_argnames=("axis", "dtype", "keepdims"))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean of the non-NaN elements (NaN where there are none)."""
    a = ensure_arraylike("nanmean", a)
    where = _check_where("nanmean", where)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanmean is not supported.")
    if a.dtype == np.bool_ or dtypes.issubdtype(a.dtype, np.integer):
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = to_inexact_dtype(a.dtype) if dtype is None else dtypes.canonicalize_dtype(dtype)
    nan_mask = lax.bitwise_not(_isnan(a))
    normalizer = sum(nan_mask, axis=axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)


@staged_as("nanvar", static_argnames=("axis", "dtype", "keepdims"))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Variance of the non-NaN elements."""
    a = ensure_arraylike("nanvar", a)
    where = _check_where("nanvar", where)
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanvar is not supported.")
    return _nanvar(a, axis=axis, dtype=dtype, out=out, ddof=ddof, keepdims=keepdims, where=where, a_mean=mean)


def _nanvar(a, *, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, a_mean=None):
    computation_dtype, dtype = _var_promote_types(a.dtype, dtype)
    a = as_operand(a).astype(computation_dtype)
    if a_mean is None:
        a_mean = nanmean(a, axis, dtype=computation_dtype, keepdims=True, where=where)
    else:
        a_mean = ensure_arraylike("nanvar", a_mean).astype(computation_dtype)
    centered = _where(_isnan(a), 0, lax.sub(a, a_mean))  # double-where trick for gradients
    if dtypes.issubdtype(centered.dtype, np.complexfloating):
        centered = lax.real(lax.mul(centered, lax.conj(centered)))
    else:
        centered = lax.square(centered)
    normalizer = sum(lax.bitwise_not(_isnan(a)), axis=axis, keepdims=keepdims, where=where)
    normalizer = normalizer - ddof
    normalizer_mask = lax.le(normalizer, lax_const(normalizer, 0))
    result = sum(centered, axis, keepdims=keepdims, where=where)
    result = _where(normalizer_mask, np.nan, result)
    divisor = _where(normalizer_mask, 1, normalizer)
    result = lax.div(result, convert_element_type(divisor, result.dtype))
    return convert_element_type(result, dtype)


@staged_as("nanstd", static_argnames=("axis", "dtype", "keepdims"))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    a = ensure_arraylike("nanstd", a)
    where = _check_where("nanstd", where)
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanstd is not supported.")
    return lax.sqrt(nanvar(a, axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where, mean=mean))


def _cumulative_reduction(name, reduction, a, axis, dtype, out=None, fill_nan=False, fill_value=0,
                          promote_integers=False):
    a = ensure_arraylike(name, a)
    if out is not None:
        raise NotImplementedError(f"The 'out' argument to jnp.{name} is not supported")
    if axis is None or a.ndim == 0:
        a = lax.reshape(a, (a.size,))
    if axis is None:
        axis = 0
    axis = canonicalize_axis(axis, a.ndim)
    if fill_nan:
        a = _where(_isnan(a), lax_const(a, fill_value), a)
    if dtype is None:
        if promote_integers or a.dtype == np.bool_:
            result_type = _promote_integer_dtype(a.dtype)
        else:
            result_type = a.dtype
        computation_type = result_type
    elif np.dtype(dtype) == np.dtype("bool"):
        # lax accumulates numbers only, and the original values could cancel (e.g. [-1, 1]).
        result_type = np.dtype(dtype)
        if a.dtype != result_type:
            a = a != 0
        computation_type = _promote_integer_dtype(result_type)
    else:
        result_type = dtypes.canonicalize_dtype(dtype)
        computation_type = result_type
    a = convert_element_type(a, computation_type)
    result = reduction(a, axis)
    return convert_element_type(result, result_type)


@staged_as("cumsum", static_argnames=("axis", "dtype"))
def cumsum(a, axis=None, dtype=None, out=None):
    """Cumulative sum along ``axis`` (the flattened array when None), as ``jax.numpy.cumsum``."""
    return _cumulative_reduction("cumsum", lax.cumsum, a, axis, dtype, out)


@staged_as("cumprod", static_argnames=("axis", "dtype"))
def cumprod(a, axis=None, dtype=None, out=None):
    """Cumulative product along ``axis`` (the flattened array when None), as ``jax.numpy.cumprod``."""
    return _cumulative_reduction("cumprod", lax.cumprod, a, axis, dtype, out)


@staged_as("nancumsum", static_argnames=("axis", "dtype"))
def nancumsum(a, axis=None, dtype=None, out=None):
    return _cumulative_reduction("nancumsum", lax.cumsum, a, axis, dtype, out, fill_nan=True, fill_value=0)


@staged_as("nancumprod", static_argnames=("axis", "dtype"))
def nancumprod(a, axis=None, dtype=None, out=None):
    return _cumulative_reduction("nancumprod", lax.cumprod, a, axis, dtype, out, fill_nan=True, fill_value=1)


@staged_as("_cumsum_with_promotion", static_argnames=("axis", "dtype"))
def _cumsum_with_promotion(a, axis=None, dtype=None, out=None):
    return _cumulative_reduction("_cumsum_with_promotion", lax.cumsum, a, axis, dtype, out, promote_integers=True)


def _cumulative_array_api_checks(name, x, axis):
    x = ensure_arraylike(name, x)
    if x.ndim == 0:
        raise ValueError(f"The input must be non-scalar to take a {name}, however a scalar value or scalar array "
                         "was given.")
    if axis is None:
        axis = 0
        if x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to an explicit value. "
                             "The axis argument is only optional for one-dimensional arrays.")
    return x, canonicalize_axis(axis, x.ndim)


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's ``cumulative_sum``: ``axis`` is required above one dimension."""
    x, axis = _cumulative_array_api_checks("cumulative_sum", x, axis)
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    out = _cumsum_with_promotion(x, axis=axis, dtype=dtype)
    if include_initial:
        zeros_shape = list(x.shape)
        zeros_shape[axis] = 1
        out = lax.concatenate([lax.full(zeros_shape, 0, dtype=out.dtype), out], axis)
    return out


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """The array API's ``cumulative_prod``: ``axis`` is required above one dimension."""
    x, axis = _cumulative_array_api_checks("cumulative_prod", x, axis)
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
    out = _cumulative_reduction("cumulative_prod", lax.cumprod, x, axis, dtype)
    if include_initial:
        zeros_shape = list(x.shape)
        zeros_shape[axis] = 1
        out = lax.concatenate([lax.full(zeros_shape, 1, dtype=out.dtype), out], axis)
    return out


# --- argmax / argmin (jax._src.numpy.lax_numpy) ---

def argmax(a, axis=None, out=None, keepdims=None):
    arr = ensure_arraylike("argmax", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.argmax is not supported.")
    return _arg_extreme(arr, None if axis is None else operator.index(axis), bool(keepdims), "argmax", lax.argmax)


def argmin(a, axis=None, out=None, keepdims=None):
    arr = ensure_arraylike("argmin", a)
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.argmin is not supported.")
    return _arg_extreme(arr, None if axis is None else operator.index(axis), bool(keepdims), "argmin", lax.argmin)


def _arg_extreme(a, axis, keepdims, name, lax_fn):
    if axis is None:
        dims = list(range(a.ndim))
        a = lax.reshape(a, (a.size,))
        axis = 0
    else:
        dims = [axis]
    if a.shape[axis] == 0:
        raise ValueError(f"attempt to get {name} of an empty sequence")
    result = lax_fn(a, canonicalize_axis(axis, a.ndim), dtypes.canonicalize_dtype(int))
    return lax.expand_dims(result, dims) if keepdims else result


def nanargmax(a, axis=None, out=None, keepdims=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanargmax is not supported.")
    a = ensure_arraylike("nanargmax", a)
    return _nanargmax(a, None if axis is None else operator.index(axis), keepdims=bool(keepdims))


@staged_as("_nanargmax", static_argnames=("axis", "keepdims"))
def _nanargmax(a, axis=None, keepdims=False):
    from ._ufuncs import where
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return argmax(a, axis=axis, keepdims=keepdims)
    nan_mask = _isnan(a)
    a = where(nan_mask, -np.inf, a)
    res = argmax(a, axis=axis, keepdims=keepdims)
    return where(all(nan_mask, axis=axis, keepdims=keepdims), -1, res)


def nanargmin(a, axis=None, out=None, keepdims=None):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.nanargmin is not supported.")
    a = ensure_arraylike("nanargmin", a)
    return _nanargmin(a, None if axis is None else operator.index(axis), keepdims=bool(keepdims))


@staged_as("_nanargmin", static_argnames=("axis", "keepdims"))
def _nanargmin(a, axis=None, keepdims=False):
    from ._ufuncs import where
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return argmin(a, axis=axis, keepdims=keepdims)
    nan_mask = _isnan(a)
    a = where(nan_mask, np.inf, a)
    res = argmin(a, axis=axis, keepdims=keepdims)
    return where(all(nan_mask, axis=axis, keepdims=keepdims), -1, res)
