"""Array creation in ``irax.numpy``."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.array import Array
from irax.core import Tracer
from irax.ir.avals import ShapedArray
from irax.lax._scalars import as_operand

from ._util import convert


def _canonical(dtype):
    return None if dtype is None else dtypes.canonicalize_dtype(dtype)


def _shape(shape):
    if isinstance(shape, (int, np.integer)):
        return (operator.index(shape),)
    try:
        return tuple(map(operator.index, shape))
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, got {shape}.") from None


def array(object, dtype=None, copy=True, order="K", ndmin=0):
    """An array from nested sequences, scalars or arrays, with JAX's default dtypes."""
    if isinstance(object, (Array, Tracer)):
        out = object if dtype is None else convert(object, _canonical(dtype))
    elif isinstance(object, (list, tuple)) and _has_traced(object):
        out = _stack_leaves(object, dtype)
    else:
        out = _from_host(object, dtype)
    if ndmin > out.ndim:
        out = lax.reshape(out, (1,) * (ndmin - out.ndim) + tuple(out.shape))
    return out


def _has_traced(seq):
    return builtins.any(isinstance(x, (Array, Tracer)) or (isinstance(x, (list, tuple)) and _has_traced(x))
                        for x in seq)


def _stack_leaves(seq, dtype):
    from ._shape import stack
    items = [array(x, dtype) if isinstance(x, (list, tuple)) else as_operand(x) for x in seq]
    from ._util import promote_dtypes
    items = promote_dtypes(*items)
    out = stack(items) if items else _from_host([], dtype)
    return out if dtype is None else convert(out, _canonical(dtype))


def _from_host(object, dtype):
    weak = dtype is None and type(object) in (int, float, complex)
    if dtype is None:
        host = np.asarray(object)
        if host.dtype == np.dtype("O"):
            raise TypeError(f"JAX only supports number and bool dtypes, got object dtype for {object!r}")
        dtype = dtypes.canonicalize_dtype(dtypes.dtype(object) if not isinstance(object, (list, tuple))
                                          else _infer_sequence_dtype(object, host))
    else:
        dtype = dtypes.canonicalize_dtype(dtype)
    if type(object) is int:
        dtypes.check_int_range(object, dtype)
    with np.errstate(all="ignore"):
        host = np.array(object, dtype=dtype)
    return Array._from_host(host, ShapedArray(host.shape, dtype, weak))


def _infer_sequence_dtype(seq, host):
    if host.size == 0:
        return dtypes.default_float_dtype()
    return dtypes.result_type(*[x for x in np.asarray(seq, dtype=object).reshape(-1)])


def asarray(a, dtype=None, order=None, *, copy=None, device=None):
    if isinstance(a, (Array, Tracer)) and dtype is None:
        return a
    return array(a, dtype=dtype, copy=False)


def zeros(shape, dtype=None, *, device=None):
    return lax.full(_shape(shape), 0, _canonical(dtype) or dtypes.default_float_dtype())


def ones(shape, dtype=None, *, device=None):
    return lax.full(_shape(shape), 1, _canonical(dtype) or dtypes.default_float_dtype())


def empty(shape, dtype=None, *, device=None):
    return zeros(shape, dtype)


def full(shape, fill_value, dtype=None, *, device=None):
    fill = as_operand(fill_value) if not isinstance(fill_value, (int, float, bool, complex)) else fill_value
    if getattr(fill, "ndim", 0):
        from ._shape import broadcast_to
        return broadcast_to(fill if dtype is None else convert(fill, _canonical(dtype)), _shape(shape))
    return lax.full(_shape(shape), fill_value, _canonical(dtype))


def _like(name, value):
    def fn(a, dtype=None, shape=None, *, device=None):
        a_shape = np.shape(a) if not hasattr(a, "shape") else a.shape
        dt = _canonical(dtype) or dtypes.dtype(a)
        return lax.full(a_shape if shape is None else _shape(shape), value, dt)
    fn.__name__ = name
    return fn


zeros_like = _like("zeros_like", 0)
ones_like = _like("ones_like", 1)
empty_like = _like("empty_like", 0)


def full_like(a, fill_value, dtype=None, shape=None, *, device=None):
    a_shape = np.shape(a) if not hasattr(a, "shape") else a.shape
    return lax.full(a_shape if shape is None else _shape(shape), fill_value, _canonical(dtype) or dtypes.dtype(a))


def arange(start, stop=None, step=None, dtype=None, *, device=None):
    """Evenly spaced values; bounds must be concrete (as in JAX)."""
    for v in (start, stop, step):
        if isinstance(v, Tracer):
            from irax.errors import ConcretizationTypeError
            raise ConcretizationTypeError("jnp.arange requires concrete values for start, stop and step; got a "
                                          f"traced value {v!r}. Use lax.iota for traced sizes.")
    if dtype is None:
        dtype = dtypes.result_type(*[v for v in (start, stop, step) if v is not None])
    dtype = dtypes.canonicalize_dtype(dtype)
    if stop is None and step is None:
        start = operator.index(start) if isinstance(start, (int, np.integer)) else start
        if isinstance(start, (int, np.integer)) and np.issubdtype(dtype, np.integer):
            return lax.iota(dtype, builtins.max(int(start), 0))
    host = np.arange(start, stop, step, dtype=dtype if not np.issubdtype(dtype, np.floating) else None).astype(dtype)
    return Array._from_host(host, ShapedArray(host.shape, dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    dtype = dtypes.canonicalize_dtype(dtype) if dtype is not None else dtypes.to_inexact_dtype(
        dtypes.result_type(start, stop))
    host = np.linspace(np.asarray(start, np.float64), np.asarray(stop, np.float64), num, endpoint=endpoint,
                       axis=axis)
    out = Array._from_host(host.astype(dtype), ShapedArray(host.shape, dtype))
    if retstep:
        div = (num - 1) if endpoint else num
        step = (np.asarray(stop, np.float64) - np.asarray(start, np.float64)) / div if div > 0 else np.nan
        return out, Array._from_host(np.asarray(step, dtype), ShapedArray(np.shape(step), dtype))
    return out


def eye(N, M=None, k=0, dtype=None, *, device=None):
    M = N if M is None else M
    dtype = _canonical(dtype) or dtypes.default_float_dtype()
    rows = lax.broadcasted_iota(dtypes.default_int_dtype(), (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.default_int_dtype(), (N, M), 1)
    offset = lax.add(rows, convert(k, rows.dtype)) if k else rows
    return lax.convert_element_type(lax.eq(offset, cols), dtype)


def identity(n, dtype=None):
    return eye(n, dtype=dtype)


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dtype = _canonical(dtype) or dtypes.default_float_dtype()
    rows = lax.broadcasted_iota(dtypes.default_int_dtype(), (N, M), 0)
    cols = lax.broadcasted_iota(dtypes.default_int_dtype(), (N, M), 1)
    return lax.convert_element_type(lax.ge(lax.add(rows, convert(k, rows.dtype)), cols), dtype)


def copy(a, order=None):
    return as_operand(a)
