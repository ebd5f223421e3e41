"""Reductions and scans of ``irax.numpy`` with ``axis``, ``keepdims``, ``dtype`` and ``where``."""
from __future__ import annotations

import builtins

import numpy as np

from irax import dtypes, lax
from irax.api import staged
from irax.lax._scalars import as_operand

from ._util import canonicalize_axes, canonicalize_axis, check_arraylike, convert


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
        if dtype is not None:
            a = convert(a, dtypes.canonicalize_dtype(dtype))
        elif upcast_bool and (a.dtype == np.bool_ or (promote_integers and np.issubdtype(a.dtype, np.integer)
                                                        and a.dtype.itemsize < np.dtype(dtypes.default_int_dtype()).itemsize)):
            a = convert(a, _promoted_int(a.dtype))
        if bool_op is not None and a.dtype == np.bool_:
            result = bool_op(a, axes)
        else:
            if builtins.any(a.shape[i] == 0 for i in axes) and init is None and initial is None:
                raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
            result = lax_reduce(a, axes)
        if initial is not None:
            result = (lax.max if name == "max" else lax.min if name == "min" else lax.add)(
                convert(initial, result.dtype), result)
        return _keep(result, axes, a.ndim) if keepdims else result
    reduce.__name__ = name
    reduce.__doc__ = f"``{name}`` over ``axis`` (all axes when None), as ``jax.numpy.{name}``."
    return reduce


def _promoted_int(dtype):
    if dtype == np.bool_ or np.issubdtype(dtype, np.signedinteger):
        return dtypes.default_int_dtype()
    return dtypes.default_uint_dtype()


sum = _reduction("sum", lax.reduce_sum, upcast_bool=True, init=0)
prod = _reduction("prod", lax.reduce_prod, upcast_bool=True, init=1)
max = _reduction("max", lax.reduce_max, bool_op=lax.reduce_or)
min = _reduction("min", lax.reduce_min, bool_op=lax.reduce_and)
amax, amin = max, min


def _boolean(name, lax_reduce):
    def reduce(a, axis=None, out=None, keepdims=False, *, where=None):
        check_arraylike(name, a)
        a = as_operand(a)
        if a.dtype != np.bool_:
            a = lax.ne(a, convert(0, a.dtype))
        axes = canonicalize_axes(axis, a.ndim)
        result = lax_reduce(a, axes)
        return _keep(result, axes, a.ndim) if keepdims else result
    reduce.__name__ = name
    return reduce


all = _boolean("all", lax.reduce_and)
any = _boolean("any", lax.reduce_or)


def _count(shape, axes):
    return int(np.prod([shape[i] for i in axes], dtype=np.int64))


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None, upcast_f16_for_computation=True):
    """Arithmetic mean; integers average in the default float dtype."""
    check_arraylike("mean", a)
    a = as_operand(a)
    axes = canonicalize_axes(axis, a.ndim)
    if dtype is None:
        dtype = dtypes.to_inexact_dtype(a.dtype)
    dtype = dtypes.canonicalize_dtype(dtype)
    total = sum(a, axis, dtype=dtype, keepdims=keepdims)
    return lax.div(total, convert(_count(a.shape, axes), dtype))


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    """Variance (``ddof``/``correction`` degrees of freedom removed)."""
    check_arraylike("var", a)
    if correction is not None:
        ddof = correction
    return _var(as_operand(a), _axis_key(axis), dtype, ddof, keepdims)


def _axis_key(axis):
    return tuple(axis) if isinstance(axis, list) else axis


@staged(static_argnums=(1, 2, 4))
def _var(a, axis, dtype, ddof, keepdims):
    axes = canonicalize_axes(axis, a.ndim)
    computation_dtype = dtypes.to_inexact_dtype(a.dtype) if dtype is None else dtypes.canonicalize_dtype(dtype)
    a = convert(a, computation_dtype)
    centered = lax.sub(a, mean(a, axis, keepdims=True))
    centered = lax.square(centered) if not np.issubdtype(centered.dtype, np.complexfloating) else \
        lax.real(lax.mul(centered, lax.conj(centered)))
    n = _count(a.shape, axes)
    normalizer = lax.sub(convert(n, computation_dtype), convert(ddof, computation_dtype))
    result = sum(centered, axis, keepdims=keepdims)
    return lax.select_n(lax.gt(normalizer, convert(0, computation_dtype)),
                        lax.full_like(result, np.nan), lax.div(result, normalizer))


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, correction=None):
    return lax.sqrt(var(a, axis, dtype, out, ddof, keepdims, correction=correction))


def _arg_extreme(name, lax_fn):
    def fn(a, axis=None, out=None, keepdims=None):
        check_arraylike(name, a)
        a = as_operand(a)
        if axis is None:
            a = lax.reshape(a, (a.size,))
            axis = 0
        axis = canonicalize_axis(axis, a.ndim)
        if a.shape[axis] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        result = lax_fn(a, axis, dtypes.default_int_dtype())
        return _keep(result, (axis,), a.ndim) if keepdims else result
    fn.__name__ = name
    return fn


argmax = _arg_extreme("argmax", lax.argmax)
argmin = _arg_extreme("argmin", lax.argmin)


def _cumulative(name, lax_fn, upcast):
    def fn(a, axis=None, dtype=None, out=None):
        check_arraylike(name, a)
        a = as_operand(a)
        if axis is None:
            a = lax.reshape(a, (a.size,))
            axis = 0
        axis = canonicalize_axis(axis, a.ndim)
        if dtype is not None:
            a = convert(a, dtypes.canonicalize_dtype(dtype))
        elif upcast and (a.dtype == np.bool_ or np.issubdtype(a.dtype, np.integer)):
            a = convert(a, _promoted_int(a.dtype))
        return lax_fn(a, axis)
    fn.__name__ = name
    return fn


cumsum = _cumulative("cumsum", lax.cumsum, True)
cumprod = _cumulative("cumprod", lax.cumprod, True)


def ptp(a, axis=None, out=None, keepdims=False):
    return lax.sub(max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims))


def count_nonzero(a, axis=None, keepdims=False):
    a = as_operand(a)
    return sum(lax.ne(a, convert(0, a.dtype)), axis, dtype=dtypes.default_int_dtype(), keepdims=keepdims)
