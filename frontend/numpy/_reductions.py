"""Reductions and scans of ``irax.numpy`` with ``axis``, ``keepdims``, ``dtype`` and ``where``."""
from __future__ import annotations

import builtins

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._util import canonicalize_axes, canonicalize_axis, check_arraylike, convert, staged_as


def _keep(result, axes, ndim):
    if not axes:
        return result
    shape = list(result.shape)
    for a in sorted(axes):
        shape.insert(a, 1)
    kept = [i for i in range(ndim) if i not in axes]
    return lax.broadcast_in_dim(result, shape, kept)


def _reduction(name, lax_reduce, *, upcast_bool=False, bool_op=None, init=None):
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None, promote_integers=True):
        check_arraylike(name, a)
        a = as_operand(a)
        axes = canonicalize_axes(axis, a.ndim)
        if dtype is None and a.weak_type:  # JAX's reductions compute, and return, a strong dtype
            a = convert(a, a.dtype)
        if dtype is not None:
            a = convert(a, dtypes.canonicalize_dtype(dtype))
        elif upcast_bool and (a.dtype == np.bool_ or (promote_integers and _narrow_int(a.dtype))):
            a = convert(a, _promoted_int(a.dtype))
        if where is not None:
            if init is None and initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so to use a where mask "
                                 "one has to specify 'initial'")
            a = _masked(a, where, _identity(name, a.dtype))
        if bool_op is not None and a.dtype == np.bool_:
            result = bool_op(a, axes)
        else:
            if builtins.any(a.shape[i] == 0 for i in axes) and init is None and initial is None:
                raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
            result = lax_reduce(a, axes)
        if initial is not None:
            combine = {"max": lax.max, "min": lax.min, "prod": lax.mul}.get(name, lax.add)
            if a.dtype == np.bool_:
                combine = {"max": lax.bitwise_or, "min": lax.bitwise_and}.get(name, combine)
            result = combine(convert(initial, result.dtype), result)
        return _keep(result, axes, a.ndim) if keepdims else result
    reduce.__name__ = name
    reduce.__doc__ = f"``{name}`` over ``axis`` (all axes when None), as ``jax.numpy.{name}``."
    return reduce


def _identity(name, dtype):
    """The value a masked-out element takes: the reduction's identity in ``dtype``."""
    if name in ("sum", "any"):
        return 0
    if name in ("prod", "all"):
        return 1
    if dtype == np.bool_:
        return name == "min"
    big = np.inf if dtypes.issubdtype(dtype, np.inexact) else dtypes.iinfo(dtype).max
    low = -np.inf if dtypes.issubdtype(dtype, np.inexact) else dtypes.iinfo(dtype).min
    return low if name == "max" else big


def _masked(a, where, fill):
    from ._shape import broadcast_to
    from ._ufuncs import where as select
    check_arraylike("where", where)
    return select(broadcast_to(where, a.shape), a, convert(fill, a.dtype))


def _narrow_int(dtype):
    return np.issubdtype(dtype, np.integer) and dtype.itemsize < np.dtype(dtypes.default_int_dtype()).itemsize


def _promoted_int(dtype):
    if dtype == np.bool_ or np.issubdtype(dtype, np.signedinteger):
        return dtypes.default_int_dtype()
    return dtypes.default_uint_dtype()


sum = _reduction("sum", lax.reduce_sum, upcast_bool=True, init=0)
prod = _reduction("prod", lax.reduce_prod, upcast_bool=True, init=1)
_max = _reduction("max", lax.reduce_max, bool_op=lax.reduce_or)
_min = _reduction("min", lax.reduce_min, bool_op=lax.reduce_and)


def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``max`` over ``axis`` (all axes when None); a ``where`` mask needs ``initial`` (as JAX)."""
    return _max(a, axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    """``min`` over ``axis`` (all axes when None); a ``where`` mask needs ``initial`` (as JAX)."""
    return _min(a, axis, None, out, keepdims, initial, where)


amax, amin = max, min


def _boolean(name, lax_reduce):
    def reduce(a, axis=None, out=None, keepdims=False, *, where=None):
        check_arraylike(name, a)
        a = as_operand(a)
        a = convert(a, np.bool_)  # strong bool, as JAX (nonzero is True)
        if where is not None:
            a = _masked(a, where, name == "all")
        axes = canonicalize_axes(axis, a.ndim)
        result = lax_reduce(a, axes)
        return _keep(result, axes, a.ndim) if keepdims else result
    reduce.__name__ = name
    return reduce


all = _boolean("all", lax.reduce_and)
any = _boolean("any", lax.reduce_or)


def _count(shape, axes):
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


def _normalizer(a, axis, keepdims, where, dtype):
    """How many elements each reduced entry counts: static, or the mask's sum."""
    if where is None:
        return convert(_count(a.shape, canonicalize_axes(axis, a.ndim)), dtype)
    from ._shape import broadcast_to
    return sum(broadcast_to(where, a.shape), axis, dtype=dtype, keepdims=keepdims)


def _upcast_f16(dtype):
    return np.dtype(np.float32) if np.dtype(dtype).itemsize < 4 and dtypes.issubdtype(dtype, np.floating) else dtype


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None, upcast_f16_for_computation=True):
    """Arithmetic mean; integers average in the default float dtype."""
    check_arraylike("mean", a)
    a = as_operand(a)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(a.dtype)
    dtype = dtypes.canonicalize_dtype(dtype)
    computation = _upcast_f16(dtype) if upcast_f16_for_computation else dtype
    total = sum(a, axis, dtype=computation, keepdims=keepdims, where=where)
    return convert(lax.div(total, _normalizer(a, axis, keepdims, where, computation)), dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """Variance (``ddof``/``correction`` degrees of freedom removed)."""
    check_arraylike("var", a)
    if correction is not None:
        ddof = correction
    return _var(as_operand(a), _axis_key(axis), dtype, ddof, keepdims, where, mean)


def _axis_key(axis):
    return tuple(axis) if isinstance(axis, list) else axis


def _var_dtypes(a_dtype, dtype):
    if dtype is not None:
        dtype = dtypes.canonicalize_dtype(dtype)
        return _upcast_f16(dtype), dtype
    if not dtypes.issubdtype(a_dtype, np.inexact):
        dtype = dtypes.to_inexact_dtype(a_dtype)
        return _upcast_f16(dtype), dtype
    return _upcast_f16(a_dtype), np.zeros((), a_dtype).real.dtype


def _squared_deviation(centered):
    if np.issubdtype(centered.dtype, np.complexfloating):
        return lax.real(lax.mul(centered, lax.conj(centered)))
    return lax.square(centered)


@staged(static_argnums=(1, 2, 4))
def _var(a, axis, dtype, ddof, keepdims, where, a_mean):
    computation_dtype, dtype = _var_dtypes(a.dtype, dtype)
    a = convert(a, computation_dtype)
    a_mean = mean(a, axis, keepdims=True, where=where) if a_mean is None else convert(a_mean, computation_dtype)
    centered = _squared_deviation(lax.sub(a, a_mean))
    real_dtype = centered.dtype
    normalizer = lax.sub(_normalizer(a, axis, keepdims, where, real_dtype), convert(ddof, real_dtype))
    result = sum(centered, axis, keepdims=keepdims, where=where)
    result = convert(lax.div(result, normalizer), dtype)
    return lax.select_n(lax.gt(normalizer, convert(0, real_dtype)), lax.full_like(result, np.nan), result)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean, correction=correction))


def _arg_extreme(name, lax_fn):
    def fn(a, axis=None, out=None, keepdims=None):
        check_arraylike(name, a)
        a = as_operand(a)
        ndim = a.ndim
        if axis is None:
            a = lax.reshape(a, (a.size,))
        axis = 0 if axis is None else canonicalize_axis(axis, ndim)
        if a.shape[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = lax_fn(a, axis, dtypes.default_int_dtype())
        if not keepdims:
            return result
        return _keep(result, tuple(range(ndim)), ndim) if a.ndim != ndim else _keep(result, (axis,), ndim)
    fn.__name__ = name
    return fn


argmax = _arg_extreme("argmax", lax.argmax)
argmin = _arg_extreme("argmin", lax.argmin)


def _cumulative(name, lax_fn, *, promote_integers=False, fill_nan=None):
    def fn(a, axis=None, dtype=None, out=None):
        check_arraylike(name, a)
        a = as_operand(a)
        if axis is None or a.ndim == 0:
            a = lax.reshape(a, (a.size,))
        axis = canonicalize_axis(0 if axis is None else axis, a.ndim)
        if fill_nan is not None and dtypes.issubdtype(a.dtype, np.inexact):
            a = _where_nan(a, fill_nan)
        result_dtype = _cumulative_dtype(a.dtype, dtype, promote_integers)
        if result_dtype == np.bool_:
            a = a if a.dtype == np.bool_ else lax.ne(a, convert(0, a.dtype))
            return convert(lax_fn(convert(a, _promoted_int(np.bool_)), axis), np.bool_)
        return lax_fn(convert(a, result_dtype), axis)
    fn.__name__ = name
    fn.__doc__ = f"``{name}`` along ``axis`` (the flattened array when None), as ``jax.numpy.{name}``."
    return fn


def _cumulative_dtype(a_dtype, dtype, promote_integers):
    if dtype is not None:
        return dtypes.canonicalize_dtype(dtype)
    if a_dtype == np.bool_ or (promote_integers and _narrow_int(a_dtype)):
        return _promoted_int(a_dtype)
    return a_dtype


def _where_nan(a, fill):
    from ._ufuncs import where
    return where(lax.ne(a, a), convert(fill, a.dtype), a)


cumsum = _cumulative("cumsum", lax.cumsum)
cumprod = _cumulative("cumprod", lax.cumprod)
nancumsum = _cumulative("nancumsum", lax.cumsum, fill_nan=0)
nancumprod = _cumulative("nancumprod", lax.cumprod, fill_nan=1)


def _cumulative_array_api(name, lax_fn, initial):
    def fn(x, /, *, axis=None, dtype=None, include_initial=False):
        check_arraylike(name, x)
        x = as_operand(x)
        if x.ndim == 0:
            raise ValueError(f"The input must be non-scalar to take a {name}, however a scalar value or scalar "
                             "array was given.")
        if axis is None and x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set to an explicit value. "
                             "The axis argument is only optional for one-dimensional arrays.")
        axis = canonicalize_axis(0 if axis is None else axis, x.ndim)
        out = _cumulative(name, lax_fn, promote_integers=name == "cumulative_sum")(x, axis, dtype)
        if not include_initial:
            return out
        shape = list(x.shape)
        shape[axis] = 1
        return lax.concatenate([lax.full(shape, initial, out.dtype), out], axis)
    fn.__name__ = name
    fn.__doc__ = f"The array API's ``{name}``: ``axis`` is required above one dimension."
    return fn


cumulative_sum = _cumulative_array_api("cumulative_sum", lax.cumsum, 0)
cumulative_prod = _cumulative_array_api("cumulative_prod", lax.cumprod, 1)


def ptp(a, axis=None, out=None, keepdims=False):
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = as_operand(a)
    return sum(lax.ne(a, convert(0, a.dtype)), axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)


def _nan_reduction(name, reduction, fill, nan_if_all_nan):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
        check_arraylike(name, a)
        a = as_operand(a)
        if not dtypes.issubdtype(a.dtype, np.inexact):
            return reduction(a, axis, dtype, keepdims=keepdims, initial=initial, where=where)
        out = reduction(_where_nan(a, _identity(fill, a.dtype)), axis, dtype, keepdims=keepdims, initial=initial,
                        where=where)
        if not (nan_if_all_nan and initial is None):
            return out
        from ._ufuncs import where as select
        return select(all(lax.ne(a, a), axis, keepdims=keepdims), convert(np.nan, out.dtype), out)
    fn.__name__ = name
    fn.__doc__ = f"``{reduction.__name__}`` ignoring NaNs (as ``jax.numpy.{name}``)."
    return fn


nansum = _nan_reduction("nansum", sum, "sum", False)
nanprod = _nan_reduction("nanprod", prod, "prod", False)
_nanmax = _nan_reduction("nanmax", _max, "max", True)
_nanmin = _nan_reduction("nanmin", _min, "min", True)


def nanmax(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nanmax(a, axis, None, out, keepdims, initial, where)


def nanmin(a, axis=None, out=None, keepdims=False, initial=None, where=None):
    return _nanmin(a, axis, None, out, keepdims, initial, where)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=None):
    """Mean of the non-NaN elements (NaN where there are none)."""
    check_arraylike("nanmean", a)
    a = as_operand(a)
    if not dtypes.issubdtype(a.dtype, np.inexact):
        return mean(a, axis, dtype, out, keepdims, where=where)
    dtype = dtypes.to_inexact_dtype(a.dtype) if dtype is None else dtypes.canonicalize_dtype(dtype)
    normalizer = sum(lax.eq(a, a), axis, dtype=dtype, keepdims=keepdims, where=where)
    return lax.div(nansum(a, axis, dtype=dtype, keepdims=keepdims, where=where), normalizer)


def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    """Variance of the non-NaN elements."""
    check_arraylike("nanvar", a)
    return _nanvar(as_operand(a), _axis_key(axis), dtype, ddof, keepdims, where, mean)


@staged_as("nanvar", static_argnums=(1, 2, 4))
def _nanvar(a, axis, dtype, ddof, keepdims, where, a_mean):
    from ._ufuncs import where as select
    computation_dtype, dtype = _var_dtypes(a.dtype, dtype)
    a = convert(a, computation_dtype)
    a_mean = nanmean(a, axis, keepdims=True, where=where) if a_mean is None else convert(a_mean, computation_dtype)
    is_nan = lax.ne(a, a)
    centered = _squared_deviation(select(is_nan, convert(0, a.dtype), lax.sub(a, a_mean)))
    count = sum(lax.bitwise_not(is_nan), axis, keepdims=keepdims, where=where)
    normalizer = lax.sub(count, convert(ddof, count.dtype))
    empty = lax.le(normalizer, convert(0, normalizer.dtype))
    result = select(empty, convert(np.nan, centered.dtype), sum(centered, axis, keepdims=keepdims, where=where))
    divisor = select(empty, convert(1, normalizer.dtype), normalizer)
    return convert(lax.div(result, convert(divisor, result.dtype)), dtype)


def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=None, mean=None):
    return lax.sqrt(nanvar(a, axis, dtype, out, ddof, keepdims, where=where, mean=mean))


def _nan_arg_extreme(name, arg_fn, fill):
    def fn(a, axis=None, out=None, keepdims=None):
        check_arraylike(name, a)
        a = as_operand(a)
        if not dtypes.issubdtype(a.dtype, np.inexact):
            return arg_fn(a, axis, keepdims=keepdims)
        from ._ufuncs import where as select
        is_nan = lax.ne(a, a)
        result = arg_fn(select(is_nan, convert(fill, a.dtype), a), axis, keepdims=keepdims)
        return select(all(is_nan, axis, keepdims=bool(keepdims)), convert(-1, result.dtype), result)
    fn.__name__ = name
    fn.__doc__ = f"``{arg_fn.__name__}`` ignoring NaNs; -1 where a slice is all NaN (as JAX)."
    return fn


nanargmax = _nan_arg_extreme("nanargmax", argmax, -np.inf)
nanargmin = _nan_arg_extreme("nanargmin", argmin, np.inf)


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    """Weighted mean along ``axis``; ``returned=True`` also gives the sum of the weights."""
    from ._util import promote_dtypes_inexact
    check_arraylike("average", a)
    axes = canonicalize_axes(axis, np.ndim(a) if not hasattr(a, "ndim") else a.ndim)
    if weights is None:
        (a,) = promote_dtypes_inexact(a)
        avg = mean(a, axis, keepdims=keepdims)
        weights_sum = lax.full((), _count(a.shape, axes), avg.dtype)
    else:
        check_arraylike("average", weights)
        a, weights = promote_dtypes_inexact(a, weights)
        weights = _weights_for(a, weights, axis, axes)
        weights_sum = sum(weights, axis, keepdims=keepdims)
        from ._ufuncs import multiply, true_divide
        avg = true_divide(sum(multiply(a, weights), axis, keepdims=keepdims), weights_sum)
    if not returned:
        return avg
    from ._shape import broadcast_to
    return avg, broadcast_to(weights_sum, avg.shape)


def _weights_for(a, weights, axis, axes):
    if a.shape == weights.shape:
        return weights
    if axis is None:
        raise ValueError("Axis must be specified when shapes of a and weights differ.")
    if weights.shape != tuple(a.shape[ax] for ax in axes):
        raise ValueError("Shape of weights must be consistent with shape of a along specified axis.")
    new_shape = tuple(d if i in axes else 1 for i, d in enumerate(a.shape))
    return lax.reshape(weights, new_shape, dimensions=tuple(np.argsort(axes)))
