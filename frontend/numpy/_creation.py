"""Array creation in ``irax.numpy``."""
from __future__ import annotations

import builtins
import operator

import numpy as np

from irax import dtypes, lax
from irax.api import staged
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


def empty_like(prototype, dtype=None, shape=None, *, device=None):
    return zeros_like(prototype, dtype, shape)


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
    host = np.arange(start, stop, step, dtype=dtype if not dtypes.issubdtype(dtype, np.floating) else None).astype(dtype)
    return Array._from_host(host, ShapedArray(host.shape, dtype))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, *, device=None):
    """``num`` points from ``start`` to ``stop``, computed as JAX does (so traced bounds work)."""
    num = operator.index(num)
    if num < 0:
        raise ValueError(f"Number of samples, {num}, must be non-negative.")
    from ._util import check_arraylike
    check_arraylike("linspace", start, stop)
    return _linspace(start, stop, num, bool(endpoint), bool(retstep), _canonical(dtype), operator.index(axis))


@staged(static_argnums=(2, 3, 4, 5, 6))
def _linspace(start, stop, num, endpoint, retstep, dtype, axis):
    from ._shape import broadcast_to
    dtype = dtype or dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    computation = dtypes.to_inexact_dtype(dtype)
    start, stop = convert(start, computation), convert(stop, computation)
    bounds = list(np.broadcast_shapes(start.shape, stop.shape))
    start, stop = broadcast_to(start, tuple(bounds)), broadcast_to(stop, tuple(bounds))
    axis = len(bounds) + axis + 1 if axis < 0 else axis
    bounds.insert(axis, 1)
    div = num - 1 if endpoint else num
    if num > 1:
        delta = lax.div(lax.sub(stop, start), convert(div, computation))
        iota_shape = [1] * len(bounds)
        iota_shape[axis] = div
        real = np.zeros((), computation).real.dtype
        step = convert(lax.div(lax.reshape(lax.iota(real, div), iota_shape), convert(div, real)), computation)
        shape = list(bounds)
        shape[axis] = div
        lo, hi = (lax.broadcast_in_dim(lax.reshape(x, bounds), shape, tuple(range(len(shape))))
                  for x in (start, stop))
        step = lax.broadcast_in_dim(step, shape, tuple(range(len(shape))))
        out = lax.add(lax.mul(lo, lax.sub(convert(1, computation), step)), lax.mul(hi, step))
        if endpoint:
            out = lax.concatenate([out, lax.expand_dims(stop, (axis,))], axis)
    elif num == 1:
        delta = lax.full((), np.nan, computation) if endpoint else lax.sub(stop, start)
        out = lax.reshape(start, bounds)
    else:
        delta = lax.full((), np.nan, computation)
        bounds[axis] = 0
        out = lax.full(bounds, 0, dtype)
    if np.issubdtype(dtype, np.integer) and not np.issubdtype(out.dtype, np.integer):
        out = lax.floor(out)
    out = convert(out, dtype)
    return (out, delta) if retstep else out


def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)``."""
    return _logspace(start, stop, operator.index(num), bool(endpoint), base, _canonical(dtype),
                     operator.index(axis))


@staged(static_argnums=(2, 3, 5, 6))
def _logspace(start, stop, num, endpoint, base, dtype, axis):
    from ._ufuncs import power
    dtype = dtype or dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    computation = dtypes.to_inexact_dtype(dtype)
    lin = linspace(convert(start, computation), convert(stop, computation), num, endpoint=endpoint, axis=axis)
    return convert(power(base, lin), dtype)


def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Points evenly spaced on a log scale between ``start`` and ``stop`` (same sign)."""
    return _geomspace(start, stop, operator.index(num), bool(endpoint), _canonical(dtype), operator.index(axis))


@staged(static_argnums=(2, 3, 4, 5))
def _geomspace(start, stop, num, endpoint, dtype, axis):
    from ._shape import moveaxis
    from ._ufuncs import divide, log10, multiply, sign
    dtype = dtype or dtypes.to_inexact_dtype(dtypes.result_type(start, stop))
    computation = dtypes.to_inexact_dtype(dtype)
    start, stop = convert(start, computation), convert(stop, computation)
    signs = sign(start)
    res = multiply(signs, logspace(log10(divide(start, signs)), log10(divide(stop, signs)), num,
                                   endpoint=endpoint, base=10.0, dtype=computation, axis=0))
    return convert(moveaxis(res, 0, axis) if axis % res.ndim else res, dtype)


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
    rows = lax.add(lax.broadcasted_iota(np.int32, (N, M), 0), convert(k, np.int32))
    return lax.convert_element_type(lax.ge(rows, lax.broadcasted_iota(np.int32, (N, M), 1)), dtype)


def copy(a, order=None):
    return as_operand(a)


def _window(name, formula):
    def fn(M):
        M = operator.index(M)
        dtype = dtypes.default_float_dtype()
        if M <= 1:
            return lax.full((M,), 1, dtype)
        return formula(lax.iota(dtype, M), M)
    fn.__name__ = name
    fn.__doc__ = f"The {name} window of ``M`` points (as ``jax.numpy.{name}``)."
    return fn


def _cos_terms(n, M, *coefficients):
    from ._ufuncs import add, cos, multiply, true_divide
    out = coefficients[0]
    for j, c in enumerate(coefficients[1:], 1):
        out = add(out, multiply(c, cos(true_divide(multiply(2 * j * np.pi, n), M - 1))))
    return out


def _bartlett(n, M):
    from ._ufuncs import abs, add, multiply, subtract, true_divide
    return subtract(1, true_divide(abs(subtract(add(multiply(2, n), 1), M)), M - 1))


bartlett = _window("bartlett", _bartlett)
blackman = _window("blackman", lambda n, M: _cos_terms(n, M, 0.42, -0.5, 0.08))
hamming = _window("hamming", lambda n, M: _cos_terms(n, M, 0.54, -0.46))
hanning = _window("hanning", lambda n, M: _cos_terms(n, M, 0.5, -0.5))


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """``function`` called on index grids; JAX maps it over scalars with ``vmap``, here it gets
    broadcastable grids, which gives the same result for elementwise functions."""
    from irax import tree_util
    from ._matrix import indices
    from ._shape import broadcast_to
    shape = _shape(shape)
    out = function(*indices(shape, dtype=dtype, sparse=True), **kwargs)
    return tree_util.tree_map(lambda leaf: broadcast_to(leaf, shape), out)


def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return array(np.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return array(np.fromstring(string, dtype=dtype, count=count, sep=sep))


def fromiter(iterable, dtype, count=-1):
    return array(np.fromiter(iterable, dtype=dtype, count=count))


def from_dlpack(x, /, *, device=None, copy=None):
    return array(np.from_dlpack(x))
